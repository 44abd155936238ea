//! `S`: the console steps aside for `kubectl exec -it`. The event loop has stopped reading the
//! terminal (its event stream is dropped first, so no keystroke is stolen from the shell); here
//! the alternate screen is left and raw mode disabled, kubectl runs on the real terminal, and
//! then the console's terminal is set up again and cleared so the next frame redraws it whole.
//! kubectl's own errors (stderr) pass through and the last line is kept for the status line.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Command, Stdio},
};

use crossterm::{
    cursor,
    terminal::{self, EnterAlternateScreen, LeaveAlternateScreen},
};
use ratatui::{Terminal, backend::Backend};

use crate::{
    app::shell::{ShellOutcome, ShellRequest},
    cli::KubeArgs,
    kube::shell::{command_line, find_kubectl, kubectl_args, kubectl_missing},
};

/// Runs the shell with the terminal handed over, and takes it back.
pub async fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    kube: &KubeArgs,
    req: &ShellRequest,
) -> ShellOutcome {
    let Some(kubectl) = find_kubectl(std::env::var_os("PATH").as_deref()) else {
        return ShellOutcome::Failed(kubectl_missing());
    };
    let args = kubectl_args(kube, req);
    let shown = command_line(&args);
    tracing::info!("shell: {shown}");
    if let Err(err) = suspend() {
        let _ = resume(terminal);
        return ShellOutcome::Failed(format!("cannot hand the terminal to kubectl: {err}"));
    }
    let mut out = std::io::stdout();
    let _ = writeln!(out, "kruise-tui: {shown}");
    if let Some(note) = &req.note {
        let _ = writeln!(out, "kruise-tui: {note}");
    }
    let _ = writeln!(
        out,
        "kruise-tui: exit the shell (exit or ctrl-d) to return to the console"
    );
    let _ = out.flush();
    let ran = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(kubectl)
            .args(&args)
            .stderr(Stdio::piped())
            .spawn()?;
        // Pass kubectl's errors through and keep the last line.
        let mut last = None;
        if let Some(stderr) = child.stderr.take() {
            let mut err = std::io::stderr();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = writeln!(err, "{line}");
                if !line.trim().is_empty() {
                    last = Some(line.trim().to_owned());
                }
            }
        }
        let status = child.wait()?;
        Ok::<_, std::io::Error>((status.code(), last))
    })
    .await;
    let restored = resume(terminal);
    let outcome = match ran {
        Ok(Ok((code, error))) => ShellOutcome::Exited {
            pod: req.pod.clone(),
            container: req.container.clone(),
            code,
            error,
        },
        Ok(Err(err)) => ShellOutcome::Failed(format!("cannot run kubectl: {err}")),
        Err(err) => ShellOutcome::Failed(format!("the shell task failed: {err}")),
    };
    match restored {
        Ok(()) => outcome,
        Err(err) => ShellOutcome::Failed(format!("cannot take the terminal back: {err}")),
    }
}

/// Leaves the alternate screen and raw mode, with the cursor shown.
fn suspend() -> std::io::Result<()> {
    crossterm::execute!(std::io::stdout(), LeaveAlternateScreen, cursor::Show)?;
    terminal::disable_raw_mode()
}

/// Back to raw mode and the alternate screen, cleared; the next draw repaints everything.
///
/// Not `Terminal::clear`: it asks the terminal for the cursor position first, and that answer
/// can be lost right after another program had the terminal. Swapping the buffers empties
/// both, so ratatui takes the (cleared) screen for blank and draws every cell.
fn resume<B: Backend>(terminal: &mut Terminal<B>) -> std::io::Result<()> {
    terminal::enable_raw_mode()?;
    crossterm::execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        terminal::Clear(terminal::ClearType::All),
        cursor::Hide
    )?;
    terminal.swap_buffers();
    Ok(())
}
