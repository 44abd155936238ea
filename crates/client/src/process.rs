//! What every long-running subcommand (`demo-server`, `sim-nodes`, `controllers`) does the same
//! way: stop on Ctrl-C or SIGTERM, log to stderr.

use tokio_util::sync::CancellationToken;

/// Cancels `token` on Ctrl-C or SIGTERM.
pub async fn cancel_on_signal(token: CancellationToken) {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    token.cancel();
}

/// Warnings from the headless commands go to stderr (`RUST_LOG` filters them), and the
/// controllers' word that a failing object reconciles again.
pub fn init_stderr_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,kruise_controllers::runner=info")
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only for a person at a terminal, not in a log file or a pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
