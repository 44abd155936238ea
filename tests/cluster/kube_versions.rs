//! CloneSet served at both versions, as upstream HEAD's bare CRD serves it
//! (tests/fixtures/crds/apps.kruise.io_clonesets.head.yaml: v1alpha1 and v1beta1 served, v1beta1
//! stored, no conversion webhook). The embedded server answers like a real one (one stored
//! object; each version's view rewritten and pruned to its schema), the console reads the
//! stored version (PARTITION 3, PAUSED, UPDATED 0/5 rather than `-`, `-`, 0/8), and `plan`
//! plans from it.

use crate::harness;
use crate::kubectl;
use crate::msgs;

use std::{path::Path, process::Command};

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::{
    app::Kind,
    cluster::server::{EmbeddedCluster, ServerOptions},
    config::LoadedConfig,
    kube::{
        WatchSet,
        connect::Connection,
        discovery::{discover_kruise, preferred_cloneset_version, storage_version_hash},
    },
};
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams},
};
use kubectl::{Kubeconfig, Kubectl};
use msgs::{PATIENCE, ready, until};
use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;

const HEAD_CRD: &str = "tests/fixtures/crds/apps.kruise.io_clonesets.head.yaml";

fn clonesets(client: &Client, version: &str) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", version, "CloneSet"),
        "clonesets",
    );
    Api::namespaced_with(client.clone(), "default", &ar)
}

/// Replaces the built-in CloneSet CRD with upstream HEAD's.
async fn install_head_crd(client: &Client) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(HEAD_CRD);
    let head: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("yaml");
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    let mut crd =
        serde_json::to_value(crds.get("clonesets.apps.kruise.io").await.unwrap()).unwrap();
    crd["spec"] = head["spec"].clone();
    crds.replace(
        "clonesets.apps.kruise.io",
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .expect("HEAD's CRD replaces the built-in one");
}

/// The CloneSet of the issue: created as v1beta1, 8 replicas, partition 3, paused, none updated.
async fn create_paused_cloneset(client: &Client) {
    let cs = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 8,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"partition": 3, "paused": true,
                                                 "podUpdatePolicy": "InPlaceIfPossible"}}
        }
    });
    let api = clonesets(client, "v1beta1");
    api.create(&PostParams::default(), &serde_json::from_value(cs).unwrap())
        .await
        .expect("created as v1beta1");
    api.patch_status(
        "web",
        &PatchParams::default(),
        &Patch::Merge(
            json!({"status": {"replicas": 8, "readyReplicas": 8, "availableReplicas": 8,
            "updatedReplicas": 0, "updatedReadyReplicas": 0, "observedGeneration": 1,
            "currentRevision": "web-old", "updateRevision": "web-new"}}),
        ),
    )
    .await
    .expect("status");
}

async fn head_cluster() -> (EmbeddedCluster, Client) {
    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .expect("starts");
    let client = cluster.client().await.unwrap();
    install_head_crd(&client).await;
    create_paused_cloneset(&client).await;
    (cluster, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_versions_serve_one_stored_object_pruned_per_version() {
    let (cluster, client) = head_cluster().await;
    // Stored once, at the storage version.
    let stored = cluster
        .store()
        .get_value("apps.kruise.io/v1beta1", "CloneSet", "default", "web")
        .expect("stored");
    assert_eq!(stored["apiVersion"], "apps.kruise.io/v1beta1");

    let beta =
        serde_json::to_value(clonesets(&client, "v1beta1").get("web").await.unwrap()).unwrap();
    let alpha =
        serde_json::to_value(clonesets(&client, "v1alpha1").get("web").await.unwrap()).unwrap();
    assert_eq!(
        beta["metadata"]["uid"], alpha["metadata"]["uid"],
        "one object"
    );
    assert_eq!(beta["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(alpha["apiVersion"], "apps.kruise.io/v1alpha1");
    assert_eq!(
        beta["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        3
    );
    assert_eq!(
        beta["spec"]["updateStrategy"]["rollingUpdate"]["paused"],
        true
    );
    // v1alpha1 has no rollingUpdate: the real server prunes it, and has no partition to show.
    assert_eq!(
        alpha["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate"})
    );
    assert_eq!(alpha["spec"]["replicas"], 8);
    assert_eq!(alpha["status"]["updatedReplicas"], 0);

    // kubectl sees the same through either version.
    let k = Kubectl::new(&cluster);
    k.assert_jsonpath(
        &["clonesets.v1beta1.apps.kruise.io", "web"],
        "{.spec.updateStrategy.rollingUpdate.partition}",
        "3",
    )
    .await;
    k.assert_jsonpath(
        &["clonesets.v1alpha1.apps.kruise.io", "web"],
        "{.spec.updateStrategy.partition}",
        "",
    )
    .await;

    // A write through v1alpha1 is stored at v1beta1: fields v1beta1 does not know are lost, as
    // on a real server without a conversion webhook.
    clonesets(&client, "v1alpha1")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}},
                "spec": {"updateStrategy": {"partition": 1}}})),
        )
        .await
        .expect("patched through v1alpha1");
    let stored = cluster
        .store()
        .get_value("apps.kruise.io/v1beta1", "CloneSet", "default", "web")
        .unwrap();
    assert_eq!(stored["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(stored["metadata"]["labels"]["touched"], "yes");
    assert_eq!(
        stored["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate"})
    );

    // Discovery tells which version is stored, with the real server's hash.
    let apis = discover_kruise(&client).await.unwrap();
    let mut hashes: Vec<_> = apis
        .served
        .iter()
        .filter(|s| s.kind == "CloneSet")
        .map(|s| (s.version.clone(), s.storage_hash.clone()))
        .collect();
    hashes.sort();
    let want = Some(storage_version_hash(
        "apps.kruise.io",
        "v1beta1",
        "CloneSet",
    ));
    assert_eq!(
        hashes,
        vec![
            ("v1alpha1".to_owned(), want.clone()),
            ("v1beta1".to_owned(), want)
        ]
    );
    assert_eq!(
        preferred_cloneset_version(&apis).map(|r| r.version.as_str()),
        Some("v1beta1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_shows_partition_paused_and_updated_of_the_stored_version() {
    let (cluster, client) = head_cluster().await;
    let (tx, mut rx) = unbounded_channel();
    let conn = Connection {
        client,
        context: Some("embedded".into()),
        contexts: vec!["embedded".into()],
        default_namespace: "default".into(),
        cluster_url: cluster.url(),
    };
    let watches = WatchSet::start(&conn, Some("default".into()), tx, false);
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        ready(s, Kind::CloneSet) && ready(s, Kind::Pod)
    })
    .await;
    let cs = watches
        .stores()
        .clonesets
        .find(|c| c.metadata.name.as_deref() == Some("web"))
        .expect("the CloneSet is listed");
    let strategy = &cs.spec.update_strategy;
    assert_eq!(
        strategy.partition,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(3))
    );
    assert!(strategy.paused);

    // The Workloads view, from the messages the watches sent.
    let (_, writers) = harness::empty_stores();
    let mut h = harness::Harness::bare(
        watches.stores().clone(),
        writers,
        LoadedConfig::default(),
        (120, 12),
    );
    for msg in seen {
        h.feed(msg);
    }
    let screen = h.screen();
    let row = screen
        .lines()
        .find(|l| l.contains(" web "))
        .unwrap_or_else(|| panic!("a row for web:\n{screen}"));
    let header = screen
        .lines()
        .find(|l| l.contains("PARTITION"))
        .unwrap_or_else(|| panic!("a header:\n{screen}"));
    // The cell under a column title (titles and cells start at the same terminal column).
    let cell = |title: &str| -> String {
        let header: Vec<char> = header.chars().collect();
        let t: Vec<char> = title.chars().collect();
        let at = (0..header.len())
            .find(|&i| header[i..].starts_with(&t))
            .unwrap_or_else(|| panic!("{title} in {header:?}"));
        row.chars()
            .skip(at)
            .take_while(|c| !c.is_whitespace())
            .collect()
    };
    assert_eq!(cell("PARTITION"), "3", "{screen}");
    assert_eq!(cell("UPDATED"), "0/5", "{screen}");
    assert_ne!(cell("PAUSED"), "-", "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_plans_the_cloneset_from_its_stored_version() {
    let (cluster, client) = head_cluster().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let owner = clonesets(&client, "v1beta1").get("web").await.unwrap();
    let uid = owner.metadata.uid.clone().unwrap();
    for i in 0..8 {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": format!("web-{i}"),
                "labels": {"app": "web", "controller-revision-hash": "web-old"},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
                    "name": "web", "uid": uid, "controller": true}]},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
        }))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
        pods.patch_status(
            &format!("web-{i}"),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}]}})),
        )
        .await
        .unwrap();
    }
    let config = Kubeconfig::write(&cluster, "default");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
            .args(["plan", "cs/web", "--partition", "1", "--kubeconfig"])
            .arg(&config.path)
            .env_remove("KUBECONFIG")
            .output()
            .expect("the binary runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Read from v1alpha1 the partition would be gone ("partition 0 -> 1") and pause unknown.
    assert!(stdout.contains("partition 3 -> 1"), "{stdout}");
    assert!(stdout.contains("paused yes"), "{stdout}");
}
