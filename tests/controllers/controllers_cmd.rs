//! `kruise-tui controllers` as a user runs it against a cluster without Kruise's manager (here
//! the embedded cluster with simulated nodes and no built-in controllers): it reconciles, a
//! second instance waits on the leader Lease and takes over when the first stops, it refuses a
//! cluster where a kruise-manager runs unless `--force`, and a bad flag is a usage error.

use std::{
    io::{BufRead as _, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use kruise_tui::cluster::demo::{DemoCluster, DemoOptions};

struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proc {
    /// Waits up to `secs` for a stderr line containing `what`.
    fn wait_line(&self, what: &str, secs: u64) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(what) => return line,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        panic!("no stderr line with {what:?} within {secs}s");
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().expect("waits")
    }
}

fn controllers(kubeconfig: &Path, extra: &[&str]) -> Proc {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
        .arg("controllers")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(extra)
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    Proc { child, lines }
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> std::process::Output {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs")
}

fn kubectl_stdin(kubeconfig: &Path, args: &[&str], stdin: &str) -> std::process::Output {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), stdin.as_bytes())
        .expect("writes");
    child.wait_with_output().expect("kubectl ends")
}

async fn bare_cluster() -> (DemoCluster, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let demo = DemoCluster::start(DemoOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        kubeconfig_out: kubeconfig.clone(),
        pods: None,
        seed: false,
        nodes: true,
        controllers: false,
        kruise_webhooks: true,
        remove_kubeconfig: false,
        kruise_version: kruise_tui::kruise::KruiseVersion::V1_9,
        kruise_rollout: true,
        streaming_lists: true,
        metrics: true,
    })
    .await
    .expect("starts");
    (demo, dir, kubeconfig)
}

fn cloneset(name: &str, replicas: u32) -> String {
    format!(
        r#"apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: main, image: "nginx:1.25"}}]}}
"#
    )
}

/// Waits until `kubectl get cloneset NAME` reports `ready` ready replicas.
async fn wait_ready(kubeconfig: &Path, name: &str, ready: u32) {
    for _ in 0..300 {
        let out = kubectl(
            kubeconfig,
            &[
                "get",
                "cloneset",
                name,
                "-o",
                "jsonpath={.status.readyReplicas}",
            ],
        );
        if String::from_utf8_lossy(&out.stdout) == ready.to_string() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cloneset {name} never had {ready} ready replicas");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_reconcile_and_a_second_instance_takes_over_the_lease() {
    let (demo, _dir, kubeconfig) = bare_cluster().await;
    let first = controllers(&kubeconfig, &[]);
    first.wait_line("reconciling Kruise objects", 30);
    let out = kubectl_stdin(&kubeconfig, &["apply", "-f", "-"], &cloneset("one", 2));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_ready(&kubeconfig, "one", 2).await;

    // A second instance waits while the first holds the lease ...
    let second = controllers(&kubeconfig, &[]);
    second.wait_line("holds the Lease kube-system/kruise-tui-controllers", 30);
    // ... and takes over once the first stops (it releases the lease on SIGTERM).
    let exit = first.terminate();
    assert!(exit.success(), "{exit:?}");
    let out = kubectl_stdin(&kubeconfig, &["apply", "-f", "-"], &cloneset("two", 2));
    assert!(out.status.success());
    wait_ready(&kubeconfig, "two", 2).await;
    let holder = kubectl(
        &kubeconfig,
        &[
            "get",
            "lease",
            "-n",
            "kube-system",
            "kruise-tui-controllers",
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ],
    );
    assert!(
        String::from_utf8_lossy(&holder.stdout).ends_with(&format!("_{}", second.child.id())),
        "the second instance holds the lease: {}",
        String::from_utf8_lossy(&holder.stdout)
    );
    drop(second);
    demo.shutdown().await;
}

/// At start the command says which controllers run, with which gates, and that without
/// Kruise's webhook configurations nothing enforces protection, budgets or injection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_say_what_runs_with_which_gates_and_what_no_webhook_enforces() {
    let (demo, _dir, kubeconfig) = bare_cluster().await;
    let proc = controllers(
        &kubeconfig,
        &[
            "--feature-gates",
            "KruiseDaemon=false,ResourcesDeletionProtection=true",
        ],
    );
    proc.wait_line("reconciling Kruise objects", 30);
    let running = proc.wait_line("controllers: running ", 30);
    assert!(
        running.ends_with(
            "controllers: running cloneset, statefulset, daemonset, sidecarset, \
             podunavailablebudget, podprobemarker, rollout, batchrelease"
        ),
        "KruiseDaemon=false leaves out the daemon's controllers: {running}"
    );
    let gates = proc.wait_line("controllers: feature gates ", 30);
    for gate in [
        "KruiseDaemon=false",
        "ResourcesDeletionProtection=true",
        "PodWebhook=true",
        "CloneSetPartitionRollback=false",
    ] {
        assert!(gates.contains(gate), "{gate} missing: {gates}");
    }
    proc.wait_line(
        "controllers: no Kruise webhook is registered (no kruise-* \
         Mutating/ValidatingWebhookConfiguration)",
        30,
    );
    proc.wait_line(
        "controllers: deletion protection, PodUnavailableBudget and SidecarSet injection are \
         advice only here: nothing enforces them at admission",
        30,
    );
    proc.wait_line(
        "controllers: no Kruise Rollout workload webhook is registered \
         (kruise-rollout-mutating-webhook-configuration): a template change of a workload a \
         Rollout names is not intercepted and rolls out without steps",
        30,
    );
    let exit = proc.terminate();
    assert!(exit.success(), "{exit:?}");
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_refuse_a_cluster_with_a_kruise_manager_unless_forced() {
    let (demo, _dir, kubeconfig) = bare_cluster().await;
    let manager = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: kruise-controller-manager, namespace: kruise-system}
spec:
  replicas: 2
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec: {containers: [{name: manager, image: "openkruise/kruise-manager:v1.8.4"}]}
"#;
    let out = kubectl(&kubeconfig, &["create", "namespace", "kruise-system"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = kubectl_stdin(&kubeconfig, &["apply", "-f", "-"], manager);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let refused = Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
        .args(["controllers", "--kubeconfig"])
        .arg(&kubeconfig)
        .env_remove("KUBECONFIG")
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("a kruise-manager appears to be running")
            && stderr.contains("the Deployment kruise-system/kruise-controller-manager exists")
            && stderr.contains("--force"),
        "{stderr}"
    );

    let forced = controllers(&kubeconfig, &["--force"]);
    forced.wait_line("reconciling Kruise objects", 30);
    let out = kubectl_stdin(&kubeconfig, &["apply", "-f", "-"], &cloneset("forced", 1));
    assert!(out.status.success());
    wait_ready(&kubeconfig, "forced", 1).await;
    drop(forced);
    demo.shutdown().await;
}

#[test]
fn an_unknown_feature_gate_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
        .args([
            "controllers",
            "--feature-gates",
            "CloneSetPartitionRollback=true,Bogus=true",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unrecognized feature gate: Bogus"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
        .args([
            "controllers",
            "--feature-gates",
            "CloneSetPartitionRollback=maybe",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}
