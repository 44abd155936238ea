//! The kruise-tui binary run as a user runs its subcommands: against a kubeconfig, with its own
//! state dir (so the journal is the test's), and its exit code, stdout and stderr.
#![allow(dead_code)]

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::Command,
};

use kruise_tui::journal::{Entry, Journal};

/// What one run left.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The binary bound to one kubeconfig and one state dir.
pub struct Cli {
    kubeconfig: PathBuf,
    state: tempfile::TempDir,
}

impl Cli {
    pub fn new(kubeconfig: &Path) -> Cli {
        Cli {
            kubeconfig: kubeconfig.to_owned(),
            state: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn kubeconfig(&self) -> &str {
        self.kubeconfig.to_str().expect("a UTF-8 path")
    }

    /// `kruise-tui ARGS --kubeconfig K`.
    pub async fn run(&self, args: &[&str]) -> Run {
        let mut all: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        all.extend(["--kubeconfig".to_owned(), self.kubeconfig().to_owned()]);
        self.run_raw(all).await
    }

    /// `kruise-tui ARGS` (the caller places `--kubeconfig`).
    pub async fn run_raw(&self, args: Vec<String>) -> Run {
        let state = self.state.path().to_owned();
        tokio::task::spawn_blocking(move || {
            let out = Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
                .args(&args)
                .env_remove("KUBECONFIG")
                .env("KRUISE_TUI_STATE_DIR", &state)
                .output()
                .expect("the binary runs");
            Run {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }
        })
        .await
        .expect("joins")
    }

    /// Runs and expects exit 0 and nothing on stderr; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        let run = self.run(args).await;
        assert_eq!(
            (run.code, run.stderr.as_str()),
            (0, ""),
            "kruise-tui {args:?}\nstdout:\n{}",
            run.stdout
        );
        run.stdout
    }

    /// Runs and expects exit `code` with `reason` on stderr and nothing on stdout.
    pub async fn fails(&self, args: &[&str], code: i32, reason: &str) -> String {
        let run = self.run(args).await;
        assert_eq!(run.code, code, "kruise-tui {args:?}: {run:?}");
        assert!(
            run.stderr.contains(reason),
            "kruise-tui {args:?}: stderr lacks {reason:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "kruise-tui {args:?}: {}", run.stdout);
        run.stderr
    }

    /// The journal of every mutation the runs sent.
    pub fn journal(&self) -> Vec<Entry> {
        let (entries, bad) = Journal::new(self.state.path().join("journal.jsonl"))
            .read()
            .expect("the journal reads");
        assert_eq!(bad, 0, "every journal line parses");
        entries
    }
}

/// The prediction a mutating subcommand printed: the revision the pods move to and the pods, in
/// order (`N pod(s) update to REV, in this order:` then one numbered line per pod).
pub fn predicted(stdout: &str) -> (String, Vec<String>) {
    let mut lines = stdout
        .lines()
        .skip_while(|l| !l.contains(", in this order:"));
    let Some(header) = lines.next() else {
        return (String::new(), Vec::new());
    };
    let revision = header
        .split(" to ")
        .nth(1)
        .and_then(|r| r.strip_suffix(", in this order:"))
        .unwrap_or_default()
        .to_owned();
    let pods = lines
        .skip(1)
        .map_while(|l| {
            let mut words = l.split_whitespace();
            let number = words.next()?;
            number.parse::<usize>().ok()?;
            words.next().map(str::to_owned)
        })
        .collect();
    (revision, pods)
}

/// The set of `names`.
pub fn set(names: &[String]) -> BTreeSet<String> {
    names.iter().cloned().collect()
}
