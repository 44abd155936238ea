//! Thin binary: parse the command line, pick the mode, run it.

use std::process::ExitCode;

use clap::Parser;
use kruise_tui::cli::{Cli, Command, ConfigCommand};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => kruise_tui::runtime::run_console(cli.console),
        Some(Command::DemoServer(args)) => kruise_tui::cluster::run_demo_server(args),
        Some(Command::SimNodes(args)) => kruise_tui::cluster::run_sim_nodes(args),
        Some(Command::Controllers(args)) => kruise_tui::controllers::run_headless(args),
        Some(Command::Plan(args)) => kruise_tui::kube::run_plan(args),
        Some(Command::Config(ConfigCommand::Paths)) => kruise_tui::config::print_paths(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("kruise-tui: {err:#}");
            ExitCode::from(1)
        }
    }
}
