//! `kruise-tui plan` end to end: the fixture CloneSet, Advanced StatefulSet and Advanced DaemonSet
//! (with its nodes) and their pods are created through the API of the embedded cluster, then the
//! binary reads them with a kubeconfig and prints the plan.

use crate::kubectl;

use std::{path::Path, process::Command};

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kruise_tui::cluster::server::{EmbeddedCluster, ServerOptions};
use kube::{
    Api, Client,
    api::{
        ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
    },
};
use kubectl::Kubeconfig;
use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/plan")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn take(v: &mut Value, pointer: &str, key: &str) -> Value {
    v.pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .and_then(|o| o.remove(key))
        .unwrap_or(Value::Null)
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

async fn plan(kubeconfig: &Path, args: &[&str]) -> Run {
    let kubeconfig = kubeconfig.to_owned();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let out = Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
            .arg("plan")
            .args(&args)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env_remove("KUBECONFIG")
            .output()
            .expect("the binary runs");
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    })
    .await
    .expect("joins")
}

/// The embedded cluster with a `shop` namespace, and a client for it.
async fn shop_cluster() -> (EmbeddedCluster, Client) {
    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .expect("starts");
    let client = cluster.client().await.expect("client");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let shop: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "shop"}})).expect("ns");
    namespaces
        .create(&PostParams::default(), &shop)
        .await
        .expect("namespace");
    (cluster, client)
}

/// The `shop` namespace's objects of an apps.kruise.io kind.
fn shop_api(client: &Client, version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", version, kind),
        plural,
    );
    Api::namespaced_with(client.clone(), "shop", &resource)
}

/// Creates `object`, then writes its `status` (no controller runs here, so it stays as written);
/// returns the uid the server assigned.
async fn create_with_status(api: &Api<DynamicObject>, object: Value, status: Value) -> String {
    let created = api
        .create(
            &PostParams::default(),
            &serde_json::from_value(object).expect("object"),
        )
        .await
        .expect("created");
    let name = created.metadata.name.expect("name");
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": status })),
    )
    .await
    .expect("status");
    created.metadata.uid.expect("server assigns a uid")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_reads_the_cloneset_and_pods_from_the_embedded_cluster() {
    let (cluster, client) = shop_cluster().await;

    // The CloneSet, then its status (no CloneSet controller runs here, so it stays as written).
    let mut cs: Value = serde_saphyr::from_str(&fixture("cloneset.yaml")).expect("fixture");
    take(&mut cs, "/metadata", "uid");
    let status = take(&mut cs, "", "status");
    let clonesets = shop_api(&client, "v1alpha1", "CloneSet", "clonesets");
    let uid = create_with_status(&clonesets, cs, status).await;

    // The pods: owned by the new uid (except the foreign one), status written separately, and
    // one held by a finalizer then deleted so it is terminating.
    #[derive(serde::Deserialize)]
    struct List {
        items: Vec<Value>,
    }
    let list: List = serde_saphyr::from_str(&fixture("pods.yaml")).expect("fixture");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    for mut pod in list.items {
        let name = pod["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let status = take(&mut pod, "", "status");
        let terminating = !take(&mut pod, "/metadata", "deletionTimestamp").is_null();
        if let Some(owner) = pod.pointer_mut("/metadata/ownerReferences/0/uid")
            && owner == "cs-uid-1"
        {
            *owner = Value::String(uid.clone());
        }
        if terminating {
            pod["metadata"]["finalizers"] = json!(["example.com/hold"]);
        }
        let pod: Pod = serde_json::from_value(pod).expect("pod");
        pods.create(&PostParams::default(), &pod)
            .await
            .expect("pod created");
        pods.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .expect("pod status");
        if terminating {
            pods.delete(&name, &DeleteParams::default())
                .await
                .expect("delete accepted");
        }
    }

    let config = Kubeconfig::write(&cluster, "shop");
    let kubeconfig = &config.path;

    let run = plan(kubeconfig, &["cs/web", "--partition", "2"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        fixture("expected-partition-2.txt"),
        "stdout:\n{}",
        run.stdout
    );

    let run = plan(kubeconfig, &["cloneset/web", "--partition", "40%"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert!(
        run.stdout
            .contains("partition 5 -> 40% (3 pod(s) stay on old revisions)"),
        "{}",
        run.stdout
    );

    let run = plan(kubeconfig, &["cs/missing", "--partition", "2"]).await;
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("CloneSet shop/missing not found"),
        "{}",
        run.stderr
    );

    // Malformed whatever the cluster holds: a usage error.
    let run = plan(kubeconfig, &["cs/web", "--partition", "150%"]).await;
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("over 100%"), "{}", run.stderr);
    assert!(run.stdout.is_empty());

    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_reads_an_advanced_statefulset_from_the_embedded_cluster() {
    let (cluster, client) = shop_cluster().await;

    let mut sts: Value = serde_saphyr::from_str(&fixture("asts.yaml")).expect("fixture");
    let status = take(&mut sts, "", "status");
    let sets = shop_api(&client, "v1beta1", "StatefulSet", "statefulsets");
    let uid = create_with_status(&sets, sts, status).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    for ordinal in 0..5 {
        let name = format!("db-{ordinal}");
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {
                "name": name,
                "labels": {"app": "db", "controller-revision-hash": "db-old"},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
                    "name": "db", "uid": uid, "controller": true}]
            },
            "spec": {"nodeName": "n1", "containers": [{"name": "db", "image": "postgres:15"}]}
        }))
        .expect("pod");
        pods.create(&PostParams::default(), &pod)
            .await
            .expect("pod created");
        let status = json!({"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T10:00:00Z"}]}});
        pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(status))
            .await
            .expect("pod status");
    }
    let config = Kubeconfig::write(&cluster, "shop");
    let kubeconfig = &config.path;

    let run = plan(kubeconfig, &["asts/db", "--partition", "2"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "Advanced StatefulSet shop/db", "{}", run.stdout);
    assert!(
        run.stdout
            .contains("3 pod(s) update to db-new, in this order:"),
        "{}",
        run.stdout
    );
    let order: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.trim_start().strip_prefix(|c: char| c.is_ascii_digit()))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter(|w| w.starts_with("db-"))
        .collect();
    assert_eq!(order, vec!["db-4", "db-3", "db-2"], "{}", run.stdout);
    assert!(
        run.stdout.contains("expectedUpdatedReplicas 3"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("after next step: updated 2"),
        "{}",
        run.stdout
    );

    // A percent for a kind whose partition counts pods: a usage error, whatever the cluster.
    let run = plan(kubeconfig, &["asts/db", "--partition", "40%"]).await;
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("not a percent"), "{}", run.stderr);
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_reads_an_advanced_daemonset_and_the_nodes_from_the_embedded_cluster() {
    let (cluster, client) = shop_cluster().await;

    let node_list: Value = serde_saphyr::from_str(&fixture("ads-nodes.yaml")).expect("fixture");
    let nodes: Api<Node> = Api::all(client.clone());
    for node in node_list["items"].as_array().expect("items") {
        let node: Node = serde_json::from_value(node.clone()).expect("node");
        nodes
            .create(&PostParams::default(), &node)
            .await
            .expect("node created");
    }
    let mut ads: Value = serde_saphyr::from_str(&fixture("ads.yaml")).expect("fixture");
    // Kruise v1.9 stores Advanced DaemonSets at v1beta1 and this server has no conversion
    // webhook (no kruise-manager): written at v1alpha1, `status.daemonSetHash` would be pruned,
    // as a real server prunes it. Write the fixture at the stored version.
    kruise_tui::api::conversion::convert(
        "apps.kruise.io",
        "DaemonSet",
        "v1alpha1",
        "v1beta1",
        &mut ads,
    )
    .expect("converts");
    let status = take(&mut ads, "", "status");
    take(&mut ads, "/metadata", "uid");
    let sets = shop_api(&client, "v1beta1", "DaemonSet", "daemonsets");
    let uid = create_with_status(&sets, ads, status).await;
    let pod_list: Value = serde_saphyr::from_str(&fixture("ads-pods.yaml")).expect("fixture");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    for pod in pod_list["items"].as_array().expect("items") {
        let mut pod = pod.clone();
        let status = take(&mut pod, "", "status");
        let owner = pod
            .pointer_mut("/metadata/ownerReferences/0/uid")
            .expect("owner");
        if owner == "ads-uid-1" {
            *owner = json!(uid);
        }
        let name = pod["metadata"]["name"].as_str().expect("name").to_owned();
        let pod: Pod = serde_json::from_value(pod).expect("pod");
        pods.create(&PostParams::default(), &pod)
            .await
            .expect("pod created");
        pods.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .expect("pod status");
    }
    let config = Kubeconfig::write(&cluster, "shop");
    let kubeconfig = &config.path;

    let run = plan(kubeconfig, &["ads/log-agent", "--partition", "1"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0], "Advanced DaemonSet shop/log-agent",
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("3 node(s) update to agent-new, in this order:"),
        "{}",
        run.stdout
    );
    let order: Vec<(&str, &str)> = lines
        .iter()
        .filter_map(|l| l.trim_start().strip_prefix(|c: char| c.is_ascii_digit()))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            Some((words.next()?, words.next()?))
        })
        .filter(|(node, _)| node.starts_with("node-"))
        .collect();
    assert_eq!(
        order,
        vec![
            ("node-d", "log-d"),
            ("node-c", "log-c"),
            ("node-b", "log-b")
        ],
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("blocked: maxUnavailable budget used up"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("held back log-a: on node node-a, kept on the old revision by the partition"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("stray-x"), "{}", run.stdout);
    for numbers in [
        "now:            replicas 5  ready 4  available 4  updated 1  updatedReady 1",
        "expectedUpdatedReplicas 4",
        "after next step: updated 3",
        "at convergence:  updated 4",
    ] {
        assert!(run.stdout.contains(numbers), "{numbers}: {}", run.stdout);
    }

    // More than the nodes is the cluster's answer (1).
    let run = plan(kubeconfig, &["ads/log-agent", "--partition", "6"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stderr.contains("more than the 5 nodes"),
        "{}",
        run.stderr
    );
    // A Kruise v1.9.0 cluster (its CRDs say so) takes a percent: 70% of the 5 nodes the status
    // counted is 3 (rounded down, where a CloneSet would round up to 4), leaving 2 to update.
    let run = plan(kubeconfig, &["ads/log-agent", "--partition", "70%"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    for text in [
        "partition 70% is 3 of the 5 nodes the last status counted (rounded down)",
        "expectedUpdatedReplicas 2",
    ] {
        assert!(run.stdout.contains(text), "{text}: {}", run.stdout);
    }
    cluster.shutdown().await;
}
