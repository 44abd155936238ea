//! `kruise-tui restart cs/web` as on-call runs it under a PodUnavailableBudget with
//! maxUnavailable 1: every pod is restarted exactly once (one ContainerRecreateRequest each),
//! never two pods unready at once (sampled every 100 ms while it runs), exit 0; a second run
//! interrupted with Ctrl-C after its first request stops after the pod in flight (exit 1). On
//! the test bed (the embedded cluster or an existing one under KRUISE_TUI_TEST_KUBECONFIG), in
//! the test's namespace.

use crate::cli::Cli;
use crate::kubectl::Kubectl;
use crate::testbed::Testbed;

use std::{collections::BTreeMap, process::Stdio, time::Duration};

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::api::{ContainerRecreateRequest, pod::is_ready};
use kube::{Api, Client, api::ListParams};

const WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: "web:1"}]
---
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: web-pub}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  maxUnavailable: 1
"#;

/// Requests per pod.
async fn requests(client: &Client) -> BTreeMap<String, usize> {
    let mut per_pod = BTreeMap::new();
    for crr in Api::<ContainerRecreateRequest>::default_namespaced(client.clone())
        .list(&ListParams::default())
        .await
        .expect("CRRs")
        .items
    {
        *per_pod.entry(crr.spec.pod_name.clone()).or_default() += 1;
    }
    per_pod
}

async fn unready(client: &Client) -> usize {
    Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels("app=web"))
        .await
        .expect("pods")
        .items
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none() && !is_ready(p))
        .count()
}

fn spawn(cli: &Cli, state: &std::path::Path) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
        .args([
            "restart",
            "cs/web",
            "--timeout",
            "60s",
            "--kubeconfig",
            cli.kubeconfig(),
        ])
        .env_remove("KUBECONFIG")
        .env("KRUISE_TUI_STATE_DIR", state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_of_a_cloneset_goes_one_pod_at_a_time_under_its_budget_and_stops_on_ctrl_c() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    kubectl.apply(&[], WEB).await;
    cli.ok(&["rollout", "status", "cs/web", "-w", "--timeout", "60s"])
        .await;
    let state = tempfile::tempdir().expect("tempdir");

    let mut child = spawn(&cli, state.path());
    let mut most_unready = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        most_unready = most_unready.max(unready(&client).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let out = child.wait_with_output().await.expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.success(),
        "exit {status}\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with("restarting 3 pod(s) of CloneSet "),
        "the order and the pace first:\n{stdout}"
    );
    assert!(stdout.contains("restarted 3 pod(s) in place"), "{stdout}");
    assert!(
        most_unready <= 1,
        "{most_unready} pods unready at once:\n{stdout}"
    );
    // The sampling saw the restarts (each pod is kept unready a few seconds).
    assert_eq!(most_unready, 1, "no pod was seen unready:\n{stdout}");
    let per_pod = requests(&client).await;
    assert_eq!(per_pod.len(), 3, "{per_pod:?}");
    assert!(
        per_pod.values().all(|n| *n == 1),
        "each pod once: {per_pod:?}"
    );

    // Ctrl-C after the first request of a second run: it stops after that pod.
    let child = spawn(&cli, state.path());
    let pid = child.id().expect("a pid");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while requests(&client).await.values().sum::<usize>() < 4 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no request of the second run"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let out = tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
        .await
        .expect("it stops")
        .expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("stopped after"), "{stderr}");
    let total: usize = requests(&client).await.values().sum();
    assert!(
        (4..=5).contains(&total),
        "the pod in flight finished, no more started: {total} requests"
    );
    tb.shutdown().await;
}
