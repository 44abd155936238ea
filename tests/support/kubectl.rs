//! kubectl as an outside client of the embedded cluster, shared by the cluster tests: a
//! kubeconfig written to a temporary directory, kubectl run against it (with or without stdin),
//! and its exit code and output. kubectl must be on PATH (or named by $KUBECTL).
#![allow(dead_code)]

use std::{path::PathBuf, process::Stdio};

use kruise_tui::cluster::server::EmbeddedCluster;
use tokio::process::Command;

/// A kubeconfig for the embedded cluster in a temporary directory (removed on drop).
pub struct Kubeconfig {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Kubeconfig {
    /// Writes the cluster's kubeconfig with `namespace` as the context's default namespace.
    pub fn write(c: &EmbeddedCluster, namespace: &str) -> Kubeconfig {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, c.kubeconfig_yaml("embedded", namespace)).expect("kubeconfig");
        Kubeconfig { dir, path }
    }
}

/// What a kubectl run left: exit code (-1 when killed), stdout and stderr.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// kubectl bound to one cluster (namespace `default` unless given), with its own cache
/// directory.
pub struct Kubectl {
    config: Kubeconfig,
    namespace: Option<String>,
}

impl Kubectl {
    pub fn new(c: &EmbeddedCluster) -> Kubectl {
        Kubectl {
            config: Kubeconfig::write(c, "default"),
            namespace: None,
        }
    }

    /// kubectl with the kubeconfig at `path` (the embedded cluster's or an existing one's),
    /// every command in `namespace`.
    pub fn at(path: &std::path::Path, namespace: &str) -> Kubectl {
        let dir = tempfile::tempdir().expect("tempdir");
        Kubectl {
            config: Kubeconfig {
                dir,
                path: path.to_path_buf(),
            },
            namespace: Some(namespace.to_string()),
        }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let bin = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into());
        let mut cmd = Command::new(bin);
        cmd.arg("--kubeconfig")
            .arg(&self.config.path)
            .arg("--cache-dir")
            .arg(self.config.dir.path().join("cache"))
            .args(
                self.namespace
                    .iter()
                    .flat_map(|n| ["--namespace".to_string(), n.clone()]),
            )
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    pub async fn run_stdin(&self, args: &[&str], stdin: &str) -> Out {
        let mut child = self
            .cmd(args)
            .spawn()
            .expect("kubectl runs (install kubectl or set $KUBECTL)");
        if let Some(mut i) = child.stdin.take() {
            tokio::io::AsyncWriteExt::write_all(&mut i, stdin.as_bytes())
                .await
                .unwrap();
        }
        let out = child.wait_with_output().await.unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub async fn run(&self, args: &[&str]) -> Out {
        self.run_stdin(args, "").await
    }

    /// Run and expect success; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        self.ok_stdin(args, "").await
    }

    /// Run with `stdin` and expect success; returns stdout.
    pub async fn ok_stdin(&self, args: &[&str], stdin: &str) -> String {
        let o = self.run_stdin(args, stdin).await;
        assert_eq!(
            o.code, 0,
            "kubectl {args:?} failed: {}{}",
            o.stdout, o.stderr
        );
        o.stdout
    }

    /// `kubectl apply FLAGS -f -` with `yaml` on stdin, expected to succeed; returns stdout.
    pub async fn apply(&self, flags: &[&str], yaml: &str) -> String {
        let mut args = vec!["apply"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["-f", "-"]);
        self.ok_stdin(&args, yaml).await
    }

    /// `kubectl get WHAT -o jsonpath=PATH`, expected to succeed.
    pub async fn jsonpath(&self, what: &[&str], path: &str) -> String {
        let mut args = vec!["get"];
        args.extend_from_slice(what);
        let p = format!("jsonpath={path}");
        args.extend_from_slice(&["-o", &p]);
        self.ok(&args).await
    }

    /// Asserts that `kubectl get WHAT -o jsonpath=PATH` prints `want`.
    pub async fn assert_jsonpath(&self, what: &[&str], path: &str, want: &str) {
        let got = self.jsonpath(what, path).await;
        assert_eq!(got, want, "kubectl get {what:?} -o jsonpath={path}");
    }
}

/// `kubectl ARGS` against the cluster with a fresh kubeconfig: (exit code, stdout, stderr).
pub async fn kubectl(c: &EmbeddedCluster, args: &[&str]) -> (i32, String, String) {
    let o = Kubectl::new(c).run(args).await;
    (o.code, o.stdout, o.stderr)
}
