//! Scale benchmark (harness = false): the console against `demo-server --pods N`, measured by
//! scripts/measure-console, for N = 10,000 (and 100,000 with `KRUISE_TUI_BENCH_100K=1`):
//!
//! - idle: first pod rows and all pod rows from the launch beside the server's own full JSON
//!   LIST of pods, RSS after the load, CPU over 20 s after it and the HTTP requests meanwhile,
//!   keypress-to-frame while loading and after;
//! - churn: the same with `demo-server --churn 200` (200 pod status changes a second), for the
//!   CPU under churn (skipped, saying so, when the server has no such flag);
//! - paged: the same with `demo-server --no-streaming-lists` (the LIST+WATCH fallback; skipped
//!   likewise).
//!
//! Each run gets a fresh server, started and left to bring its pods up (Running counts stable)
//! before the console starts. Prints every run's table as the script prints it and a summary
//! table at the end; asserts nothing about time.
//!
//! Run: `cargo bench --bench scale` (needs tmux and kubectl; builds the release binary).
//! `KRUISE_TUI_BENCH_IDLE=S` changes the idle window (default 20 s); `KRUISE_TUI_BENCH_PODS=N`
//! measures N pods instead of 10,000 (a quick check of the bench itself).

use std::{
    io::{BufRead as _, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_kruise-tui");
const CHURN: u32 = 200;

fn main() {
    for (tool, args) in [
        ("tmux", &["-V"][..]),
        ("kubectl", &["version", "--client"][..]),
    ] {
        if Command::new(tool)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_err()
        {
            println!("scale: skipped: needs {tool} on the PATH");
            return;
        }
    }
    let help = Command::new(BIN)
        .args(["demo-server", "--help"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let has = |flag: &str| help.contains(flag);
    let idle = std::env::var("KRUISE_TUI_BENCH_IDLE").unwrap_or_else(|_| "20".to_owned());
    let first = std::env::var("KRUISE_TUI_BENCH_PODS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000usize);
    let mut sizes = vec![first];
    if std::env::var("KRUISE_TUI_BENCH_100K").is_ok_and(|v| v == "1") {
        sizes.push(100_000);
    }
    let mut results: Vec<(String, Option<Value>)> = Vec::new();
    for pods in sizes {
        let variants: [(&str, Vec<String>, Option<&str>); 3] = [
            ("idle", vec![], None),
            (
                "churn",
                vec!["--churn".into(), CHURN.to_string()],
                Some("--churn"),
            ),
            (
                "paged",
                vec!["--no-streaming-lists".into()],
                Some("--no-streaming-lists"),
            ),
        ];
        for (name, flags, needs) in variants {
            let label = format!("{pods} pods, {name}");
            if let Some(flag) = needs
                && !has(flag)
            {
                println!("scale: {label}: skipped: demo-server has no {flag} flag yet");
                results.push((label, None));
                continue;
            }
            let note = (name == "churn").then(|| format!("{CHURN} pod changes/s"));
            let figures = run(pods, &flags, &label, note.as_deref(), &idle);
            results.push((label, figures));
        }
    }
    summary(&results);
}

/// One fresh server with `flags`, its pods up, and one measure-console run against it.
fn run(
    pods: usize,
    flags: &[String],
    label: &str,
    note: Option<&str>,
    idle: &str,
) -> Option<Value> {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            println!("scale: {label}: cannot make a temporary directory: {err}");
            return None;
        }
    };
    let kubeconfig = dir.path().join("kubeconfig");
    println!(
        "scale: {label}: starting demo-server --pods {pods} {}",
        flags.join(" ")
    );
    let mut server = match Server::start(pods, flags, &kubeconfig) {
        Ok(server) => server,
        Err(err) => {
            println!("scale: {label}: demo-server did not start: {err}");
            return None;
        }
    };
    let started = Instant::now();
    let (total, running) = settle(&kubeconfig, pods);
    println!(
        "scale: {label}: {total} pods, {running} Running, {:.0} s after the server started",
        started.elapsed().as_secs_f64()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/measure-console");
    let mut cmd = Command::new(script);
    cmd.arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--bin", BIN, "--idle", idle, "--label", label]);
    if let Some(note) = note {
        cmd.args(["--churn-note", note]);
    }
    let output = cmd.stderr(Stdio::inherit()).output();
    server.stop();
    drop(dir);
    let output = match output {
        Ok(output) => output,
        Err(err) => {
            println!("scale: {label}: cannot run scripts/measure-console: {err}");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&output.stdout);
    print!("{text}");
    if !output.status.success() {
        println!("scale: {label}: measure-console failed ({})", output.status);
        return None;
    }
    text.lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .and_then(|l| serde_json::from_str(l).ok())
}

/// A demo-server child, stopped with SIGTERM (then killed) on drop.
struct Server {
    child: Child,
}

impl Server {
    fn start(pods: usize, flags: &[String], kubeconfig: &Path) -> Result<Server, String> {
        let mut child = Command::new(BIN)
            .arg("demo-server")
            .args(["--pods", &pods.to_string(), "--kubeconfig-out"])
            .arg(kubeconfig)
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut server = Server { child };
        // `ready <url>` once it serves (the pods come up afterwards); its stdout stays drained.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("ready ") {
                    let _ = tx.send(());
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(600)) {
            Ok(()) => Ok(server),
            Err(_) => {
                server.stop();
                Err("no `ready` line (it exited, or took over 10 minutes)".to_owned())
            }
        }
    }

    fn stop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// Waits until the server holds about `pods` pods and the Running count stopped moving (two
/// polls alike), or 20 minutes; returns (pods, Running).
fn settle(kubeconfig: &Path, pods: usize) -> (usize, usize) {
    let pause = Duration::from_secs(if pods > 20_000 { 15 } else { 3 });
    let deadline = Instant::now() + Duration::from_secs(20 * 60);
    let mut last = (0, 0);
    loop {
        let now = count(kubeconfig);
        if now == last && now.0 * 10 >= pods * 9 && now.1 > 0 {
            return now;
        }
        if Instant::now() > deadline {
            println!("scale: pods never settled; measuring anyway");
            return now;
        }
        last = now;
        std::thread::sleep(pause);
    }
}

/// (pods, Running) from the server's full LIST.
fn count(kubeconfig: &Path) -> (usize, usize) {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["get", "--raw", "/api/v1/pods"])
        .stderr(Stdio::null())
        .output();
    let Ok(out) = out else { return (0, 0) };
    let text = String::from_utf8_lossy(&out.stdout);
    (
        text.matches("\"phase\":\"").count(),
        text.matches("\"phase\":\"Running\"").count(),
    )
}

fn summary(results: &[(String, Option<Value>)]) {
    println!();
    println!(
        "{:<22} {:>7} {:>8} {:>8} {:>8} {:>6} {:>7} {:>7} {:>5} {:>9} {:>9}",
        "run",
        "pods",
        "LIST s",
        "first s",
        "all s",
        "xLIST",
        "RSS MiB",
        "CPU %",
        "reqs",
        "key p99 L",
        "key p99 A"
    );
    for (label, figures) in results {
        let Some(f) = figures else {
            println!("{label:<22} (no figures)");
            continue;
        };
        let v = |k: &str| match &f[k] {
            Value::Null => "-".to_owned(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let p99 = |k: &str| match &f[k]["p99_ms"] {
            Value::Null => "-".to_owned(),
            other => other.to_string(),
        };
        println!(
            "{:<22} {:>7} {:>8} {:>8} {:>8} {:>6} {:>7} {:>7} {:>5} {:>9} {:>9}",
            label,
            v("pods"),
            v("list_best_s"),
            v("first_rows_s"),
            v("all_rows_s"),
            v("all_rows_over_list"),
            v("rss_mib"),
            v("idle_cpu_pct"),
            v("idle_requests"),
            p99("keys_loading"),
            p99("keys_after"),
        );
    }
    println!(
        "(key p99 L/A: keypress to frame in the console while loading / after, ms; CPU %: over the idle window after the load, under churn for the churn run)"
    );
}
