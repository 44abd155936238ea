//! The resource metrics API (`metrics.k8s.io/v1beta1`) the embedded cluster serves from its
//! simulated containers' usage, as metrics-server serves it: the raw API (shapes, selectors,
//! the ignored `limit`, not-found and refused requests, discovery, RBAC) on pods and nodes
//! seeded in the store, kubectl top on the demo cluster, and the API absent when switched off.
//!
//! These tests need the embedded server (they seed its store or switch its API); under
//! `KRUISE_TUI_TEST_KUBECONFIG` only the kubectl top test runs, and only where that cluster
//! lists `metrics.k8s.io`.

mod raw;

use kruise_tui::cluster::{
    demo::{DemoCluster, DemoOptions},
    server::{EmbeddedCluster, ServerOptions},
};
use serde_json::{Value, json};

use crate::kubectl::Kubectl;

const EXISTING: &str = "KRUISE_TUI_TEST_KUBECONFIG";

fn existing() -> Option<std::path::PathBuf> {
    std::env::var_os(EXISTING)
        .filter(|v| !v.is_empty())
        .map(Into::into)
}

fn skip_on_existing(reason: &str) -> bool {
    if existing().is_some() {
        eprintln!("skipped on {EXISTING}: {reason}");
        return true;
    }
    false
}

/// A pod in `ns`, `Running` with its containers started an hour ago (old enough for figures),
/// on `node`.
fn running_pod(name: &str, ns: &str, app: &str, node: &str) -> Value {
    let hour_ago = jiff::Timestamp::now().as_second() - 3600;
    let started = jiff::Timestamp::from_second(hour_ago).unwrap().to_string();
    let status = |c: &str| {
        json!({"name": c, "image": "nginx", "imageID": "", "ready": true, "restartCount": 0,
               "state": {"running": {"startedAt": started}}})
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
        "spec": {"nodeName": node, "containers": [
            {"name": "main", "image": "nginx", "resources": {
                "requests": {"cpu": "100m", "memory": "64Mi"},
                "limits": {"cpu": "200m", "memory": "128Mi"}}},
            {"name": "side", "image": "nginx"},
        ]},
        "status": {"phase": "Running", "containerStatuses": [status("main"), status("side")]},
    })
}

/// An embedded server with pods in `m1` (web-0, web-1, db-0 running; idle-0 pending) and a
/// Ready simulated node.
async fn seeded(metrics: bool) -> EmbeddedCluster {
    let c = EmbeddedCluster::start(ServerOptions {
        metrics,
        ..ServerOptions::default()
    })
    .await
    .expect("embedded cluster starts");
    let store = c.store();
    store
        .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "m1"}}))
        .expect("namespace");
    let node = kruise_tui::sim::nodes::node_object(0, jiff::Timestamp::now());
    store
        .create(serde_json::to_value(node).expect("node json"))
        .expect("node stored");
    for (name, app) in [("web-1", "web"), ("web-0", "web"), ("db-0", "db")] {
        store
            .create(running_pod(name, "m1", app, "sim-node-0"))
            .expect("pod stored");
    }
    let mut pending = running_pod("idle-0", "m1", "idle", "");
    pending["status"] = json!({"phase": "Pending"});
    store.create(pending).expect("pod stored");
    c
}

/// `kubectl top` against the demo cluster: pods of a namespace and of every namespace, one
/// pod's containers, a selector, and the nodes. The demo's db runs near its CPU limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_top_reads_the_demo_clusters_usage() {
    if let Some(path) = existing() {
        let k = Kubectl::at(&path, "kube-system");
        let groups = k.ok(&["api-versions"]).await;
        if !groups.lines().any(|l| l == "metrics.k8s.io/v1beta1") {
            eprintln!("skipped on {EXISTING}: no metrics.k8s.io there");
            return;
        }
        let out = k.ok(&["top", "pods", "-A"]).await;
        assert!(out.starts_with("NAMESPACE"), "{out}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    let demo = DemoCluster::start(DemoOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        kubeconfig_out: path.clone(),
        pods: None,
        seed: true,
        nodes: true,
        controllers: true,
        kruise_webhooks: true,
        remove_kubeconfig: true,
        kruise_version: kruise_tui::kruise::KruiseVersion::V1_9,
        kruise_rollout: true,
        streaming_lists: true,
        metrics: true,
    })
    .await
    .expect("the demo cluster starts");
    let k = Kubectl::at(&path, "demo");
    // Figures come once containers ran 10 s before a 15 s scrape.
    let mut out = String::new();
    for _ in 0..120 {
        let o = k.run(&["top", "pods"]).await;
        out = o.stdout;
        let rows = |prefix: &str| out.lines().filter(|l| l.starts_with(prefix)).count();
        if rows("db-") == 3 && rows("web-") == 10 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "CPU(cores)", "MEMORY(bytes)"], "{out}");
    let cpu_of = |row: &str| -> u64 {
        let cell = row.split_whitespace().nth(1).unwrap_or("");
        cell.trim_end_matches('m').parse().unwrap_or(0)
    };
    let db: Vec<&str> = out.lines().filter(|l| l.starts_with("db-")).collect();
    assert_eq!(db.len(), 3, "{out}");
    for row in &db {
        // Hot: 90-98 % of its 500m limit.
        assert!((450..=500).contains(&cpu_of(row)), "{row}\n{out}");
    }
    let web: Vec<&str> = out.lines().filter(|l| l.starts_with("web-")).collect();
    assert_eq!(web.len(), 10, "{out}");
    assert!(web.iter().all(|r| cpu_of(r) < 250), "{out}");

    let one = k.ok(&["top", "pod", "db-0", "--containers"]).await;
    let row: Vec<&str> = one
        .lines()
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(row.get(..2), Some(&["db-0", "postgres"][..]), "{one}");
    assert!(row[3].ends_with("Mi"), "{one}");

    let selected = k.ok(&["top", "pods", "-l", "app=db", "--no-headers"]).await;
    assert_eq!(selected.lines().count(), 3, "{selected}");

    let all = k.ok(&["top", "pods", "-A"]).await;
    assert!(all.starts_with("NAMESPACE"), "{all}");
    assert!(
        all.lines()
            .any(|l| l.starts_with("demo ") && l.contains("db-0")),
        "{all}"
    );

    let nodes = k.ok(&["top", "nodes"]).await;
    let header: Vec<&str> = nodes
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"],
        "{nodes}"
    );
    for node in ["sim-node-0", "sim-node-1", "sim-node-2"] {
        let row = nodes.lines().find(|l| l.starts_with(node)).unwrap_or("");
        assert!(!row.contains("<unknown>") && row.contains('%'), "{nodes}");
    }
    drop(demo);
}

/// Off (`ServerOptions::metrics: false`, `demo-server --no-metrics`): no group in discovery,
/// the paths answer as for any unknown group, and kubectl top says the API is not available.
/// The switch also works while serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_metrics_api_the_cluster_answers_as_one_without_metrics_server() {
    if skip_on_existing("switches the embedded server's metrics API") {
        return;
    }
    let c = seeded(false).await;
    let client = c.client().await.unwrap();
    let apis = raw::get(&client, "/apis").await;
    assert_eq!(apis.0, 200);
    assert!(!apis.1.contains("metrics.k8s.io"), "{}", apis.1);
    let (code, body, _) =
        raw::get(&client, "/apis/metrics.k8s.io/v1beta1/namespaces/m1/pods").await;
    assert_eq!(code, 404, "{body}");
    let status: Value = serde_json::from_str(&body).expect("a Status");
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(
        status["message"],
        "the server could not find the requested resource"
    );
    assert!(
        raw::api_resource_names(&client)
            .await
            .iter()
            .all(|g| g != "metrics.k8s.io")
    );
    let k = Kubectl::new(&c);
    let top = k.run(&["top", "pods", "-n", "m1"]).await;
    assert_ne!(top.code, 0);
    assert!(
        top.stderr.contains("Metrics API not available"),
        "{}",
        top.stderr
    );
    let top = k.run(&["top", "nodes"]).await;
    assert!(
        top.stderr.contains("Metrics API not available"),
        "{}",
        top.stderr
    );

    // Switched on while serving: discovery lists it at once.
    c.metrics_api().set(true);
    assert!(
        raw::api_resource_names(&client)
            .await
            .iter()
            .any(|g| g == "metrics.k8s.io")
    );
    let top = k.ok(&["top", "pods", "-n", "m1", "--no-headers"]).await;
    assert_eq!(top.lines().count(), 3, "{top}");
}
