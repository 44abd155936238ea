//! Thin binary: parse the command line, pick the mode, run it.

use std::process::ExitCode;

use kruise_tui::{
    cli::{Cli, Command, ConfigCommand, SetCommand},
    cmd,
};

fn main() -> ExitCode {
    let cli = Cli::parse_checked();
    let kube = cli.console.kube.clone();
    let result = match cli.command {
        None => kruise_tui::runtime::run_console(cli.console),
        Some(Command::DemoServer(args)) => cmd::serve::demo_server(args),
        Some(Command::SimNodes(args)) => cmd::serve::sim_nodes(args),
        Some(Command::Controllers(args)) => cmd::serve::controllers(args),
        Some(Command::Plan(args)) => cmd::plan::run(&kube, args),
        Some(Command::Rollout(command)) => cmd::rollout::run(&kube, command),
        Some(Command::Set(SetCommand::Image(args))) => cmd::set_image::run(&kube, args),
        Some(Command::Scale(args)) => cmd::scale::run(&kube, args),
        Some(Command::Restart(args)) => cmd::restart::run(&kube, args),
        Some(Command::Protect(args)) => cmd::protect::run(&kube, args),
        Some(Command::Triage(args)) => cmd::triage::run(&kube, args),
        Some(Command::Report(args)) => cmd::report::run(&kube, args),
        Some(Command::Journal(args)) => cmd::report::journal(&kube, args),
        Some(Command::Top(args)) => cmd::top::run(&kube, args),
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
