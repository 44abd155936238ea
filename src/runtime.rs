//! The console's runtime: terminal setup and restore (panic hook), tracing to a file, the
//! `tokio::select!` loop over terminal events, store messages and ticks, and effect dispatch.
//!
//! [`run_console_with`] does all of it for any [`Console`]; [`run_console`] plugs in `app::App`
//! with the theme and keymap from `config::load`.
//! Order matters: the cluster connection is made before the terminal switches to raw mode, so a
//! bad kubeconfig prints a plain error, and the terminal is restored before the process exits.
//! With `--demo` the embedded cluster (seeded, with simulated nodes) starts in this process first
//! and the console connects to it through its private kubeconfig; it is shut down on exit.

pub mod console;
pub mod event_loop;
pub mod logging;
pub mod shell;
pub mod terminal;
pub mod timings;

use anyhow::{Context as _, Result};
use crossterm::event::EventStream;
use tokio::sync::mpsc;

pub use console::Console;

use crate::{
    app::{App, AppInit, Msg, Stores},
    cli::{ConsoleArgs, KubeArgs},
    config::{self, Paths},
    kube::Executor,
};

/// What the console state is built from once the cluster is connected.
pub struct ConsoleInit {
    /// The command line (theme, keymap names...).
    pub args: ConsoleArgs,
    /// Read handles of the watched stores.
    pub stores: Stores,
    /// The namespace watched; None for all namespaces.
    pub namespace: Option<String>,
    /// The current kubeconfig context, if any.
    pub context: Option<String>,
    /// Where config, themes, keymaps and logs live.
    pub paths: Paths,
    /// The clock at start.
    pub now: jiff::Timestamp,
    /// The terminal size (columns, rows) at start.
    pub size: (u16, u16),
}

/// Runs the console (or, with `--demo`, the embedded cluster plus the console).
pub fn run_console(args: ConsoleArgs) -> Result<()> {
    run_console_with(args, |init| {
        let readonly = init.args.kube.readonly;
        let config = config::load(
            init.args.theme.as_deref(),
            init.args.keymap.as_deref(),
            &init.paths,
        );
        App::new(AppInit {
            stores: init.stores,
            config,
            namespace: init.namespace,
            now: init.now,
            context: init.context,
            size: init.size,
            readonly,
        })
    })
}

/// Runs the console with the state `make` builds: logging, tokio runtime, connection and
/// watches, terminal, event loop; restores the terminal on every exit path.
pub fn run_console_with<C, F>(args: ConsoleArgs, make: F) -> Result<()>
where
    C: Console,
    F: FnOnce(ConsoleInit) -> C,
{
    // First: `start` is the moment the process began, as near as the console can tell.
    let timings = timings::Timings::from_env();
    let paths = Paths::resolve()?;
    logging::init(&paths.log_file)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(console_main(args, paths, timings, make));
    if let Err(err) = &result {
        tracing::error!("console failed: {err:#}");
    }
    // Watch tasks may be mid-request: do not wait for them.
    runtime.shutdown_background();
    result
}

async fn console_main<C, F>(
    args: ConsoleArgs,
    paths: Paths,
    timings: Option<timings::Timings>,
    make: F,
) -> Result<()>
where
    C: Console,
    F: FnOnce(ConsoleInit) -> C,
{
    if !args.demo {
        let kube_args = args.kube.clone();
        if !args.controllers {
            return console_on(kube_args, args, paths, timings, make).await;
        }
        // The embedded controllers beside the console, against the same cluster.
        let connection = crate::kube::connect::connect(&kube_args.source(), None).await?;
        crate::controllers::refuse_if_kruise_manager(&connection.client).await?;
        crate::controllers::refuse_if_kruise_rollout_manager(&connection.client).await?;
        let stop = tokio_util::sync::CancellationToken::new();
        let controllers = tokio::spawn(crate::controllers::run(
            connection.client,
            crate::controllers::Options::default(),
            stop.clone(),
        ));
        let result = console_on(kube_args, args, paths, timings, make).await;
        stop.cancel();
        if let Ok(Err(err)) = controllers.await {
            tracing::warn!("the embedded controllers stopped: {err:#}");
        }
        return result;
    }
    eprintln!("kruise-tui: starting the demo cluster…");
    let kubeconfig_out = paths
        .state_dir
        .join(format!("demo-{}.kubeconfig", std::process::id()));
    let demo = crate::cluster::demo::start_in_process(
        args.pods,
        true,
        kubeconfig_out,
        args.kruise_version.into(),
    )
    .await
    .context("cannot start the demo cluster")?;
    // The demo kubeconfig has one context, whose namespace holds the scenario.
    let kube_args = KubeArgs {
        kubeconfig: Some(demo.kubeconfig_path().to_path_buf()),
        context: None,
        namespace: args.kube.namespace.clone(),
        all_namespaces: args.kube.all_namespaces,
        readonly: args.kube.readonly,
    };
    let result = console_on(kube_args, args, paths, timings, make).await;
    demo.shutdown().await;
    result
}

/// Connects with `kube_args`, builds the console and runs it in the terminal.
async fn console_on<C, F>(
    kube_args: KubeArgs,
    args: ConsoleArgs,
    paths: Paths,
    timings: Option<timings::Timings>,
    make: F,
) -> Result<()>
where
    C: Console,
    F: FnOnce(ConsoleInit) -> C,
{
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let (effect_tx, effect_rx) = mpsc::unbounded_channel();
    let executor = Executor::start(kube_args.clone(), msg_tx).await?;
    let init = ConsoleInit {
        stores: executor.stores(),
        namespace: executor.namespace().map(str::to_owned),
        context: executor.connection().context.clone(),
        args,
        paths,
        now: jiff::Timestamp::now(),
        size: crossterm::terminal::size().unwrap_or((80, 24)),
    };
    let mut console = make(init);
    let executor_task = tokio::spawn(executor.run(effect_rx));
    let mut guard = terminal::TerminalGuard::enter()?;
    let mut io = event_loop::LoopIo {
        terminal_events: EventStream::new(),
        msgs: msg_rx,
        effects: effect_tx,
        timings,
    };
    let result = loop {
        match event_loop::run_until(guard.terminal(), &mut console, &mut io).await {
            Ok(event_loop::Stop::Shell(req)) => {
                // Stop reading the terminal first (the old stream is dropped): the keys are
                // the shell's until it exits. A fresh stream reads nothing until polled.
                io.terminal_events = EventStream::new();
                let outcome = shell::run(guard.terminal(), &kube_args, &req).await;
                // The clock stood still for the console meanwhile: move it before the
                // outcome's status line is stamped.
                let tick = Msg::Tick(jiff::Timestamp::now());
                if let Some(event_loop::Stop::Quit) =
                    event_loop::apply(&mut console, tick, &io.effects)
                {
                    break Ok(());
                }
                if let Some(event_loop::Stop::Quit) =
                    event_loop::apply(&mut console, Msg::Shell(outcome), &io.effects)
                {
                    break Ok(());
                }
            }
            Ok(event_loop::Stop::Quit) => break Ok(()),
            Err(err) => break Err(err),
        }
    };
    drop(guard);
    executor_task.abort();
    result
}
