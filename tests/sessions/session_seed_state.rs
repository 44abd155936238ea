//! Scripted key sessions against the test bed (the embedded cluster, or an existing one under
//! KRUISE_TUI_TEST_KUBECONFIG; simulated nodes, controllers) for `:pps`,
//! `:distributor` and `:bcj`: each view is opened from `:` on an empty list, an object created
//! with kubectl appears in it without a key press, and Enter drills into it.

use crate::live;
use crate::testbed;

use kruise_tui::app::{
    App,
    route::{Fetch, Route},
};
use live::Live;

const ASTS: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: store}
spec:
  replicas: 1
  serviceName: store
  selector: {matchLabels: {app: store}}
  template:
    metadata: {labels: {app: store}}
    spec:
      containers: [{name: main, image: "nginx:1.26"}]
"#;

const PPS: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: PersistentPodState
metadata: {name: store}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1beta1, kind: StatefulSet, name: store}
  requiredPersistentTopology:
    nodeTopologyKeys: [topology.kubernetes.io/zone]
"#;

const RD: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ResourceDistribution
metadata: {name: shared-settings}
spec:
  resource:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: shared-settings}
    data: {level: info}
  targets:
    includedNamespaces:
      list: [{name: team-a}, {name: team-b}]
"#;

const BCJ: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: BroadcastJob
metadata: {name: warm}
spec:
  completionPolicy: {type: Always, ttlSecondsAfterFinished: 600}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pull, image: "nginx:1.26"}]
"#;

fn pps_listed(app: &App, name: &str) -> bool {
    matches!(app.current(), Route::PersistentPodStates(v)
        if v.states().iter().any(|s| s.metadata.name.as_deref() == Some(name)))
}

fn row_state(app: &App, pod: &str) -> Option<String> {
    let Route::PersistentPodStates(v) = app.current() else {
        return None;
    };
    let s = v.current()?;
    let rows = v.rows(s);
    let row = rows.iter().find(|r| r.name == pod)?;
    Some(row.placement.word().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persistent_pod_state_created_with_kubectl_appears_with_its_pods() {
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    live.press(&[":"]).await;
    live.type_text("pps").await;
    live.press(&["enter"]).await;
    live.until(
        "the empty list",
        30,
        |app| matches!(app.current(), Route::PersistentPodStates(v) if matches!(v.listing, Fetch::Loaded(_))),
    )
    .await;
    assert!(live.screen().contains("No PersistentPodState here"));

    kubectl.apply(&[], ASTS).await;
    kubectl.apply(&[], PPS).await;
    // No key is pressed: the periodic list brings it in.
    live.until("store listed", 30, |app| pps_listed(app, "store"))
        .await;
    assert!(live.screen().contains("StatefulSet/store"));
    live.press(&["enter"]).await;
    // The controllers run the pod; nothing is kept for it yet (no PersistentPodState
    // controller runs here).
    live.until("store-0 running, not kept", 60, |app| {
        row_state(app, "store-0").as_deref() == Some("not kept")
    })
    .await;

    // Record it as upstream's controller does: its node and the node's zone.
    let node = kubectl
        .jsonpath(&["pod", "store-0"], "{.spec.nodeName}")
        .await;
    let zone = kubectl
        .jsonpath(
            &["node", node.trim()],
            "{.metadata.labels.topology\\.kubernetes\\.io/zone}",
        )
        .await;
    let patch = serde_json::json!({"status": {"observedGeneration": 1, "podStates": {
        "store-0": {"nodeName": node.trim(),
                    "nodeTopologyLabels": {"topology.kubernetes.io/zone": zone.trim()}}}}});
    kubectl
        .ok(&[
            "patch",
            "persistentpodstate",
            "store",
            "--subresource=status",
            "--type=merge",
            "-p",
            &patch.to_string(),
        ])
        .await;
    live.until("store-0 matches its record", 30, |app| {
        row_state(app, "store-0").as_deref() == Some("match")
    })
    .await;
    let screen = live.screen();
    assert!(
        screen.contains(&format!("zone={}", zone.trim())),
        "{screen}"
    );
    assert!(screen.contains("same node"), "{screen}");

    // Enter on the pod opens it.
    live.press(&["enter"]).await;
    assert!(
        matches!(live.app.current(), Route::Pod(p) if p.name == "store-0"),
        "{}",
        live.screen()
    );
    live.shutdown().await;
}

fn rd_row(app: &App, ns: &str) -> Option<String> {
    let Route::Distributions(v) = app.current() else {
        return None;
    };
    let Fetch::Loaded(l) = &v.listing else {
        return None;
    };
    let rows = kruise_tui::app::distributions::namespace_rows(v.current()?, l).ok()?;
    let row = rows.iter().find(|r| r.namespace == ns)?;
    Some(row.check.state.word().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_distribution_created_with_kubectl_appears_with_its_namespaces() {
    if testbed::skip_on_existing_cluster(
        "creates namespace team-a and a cluster-scoped distribution; expects none other",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    live.press(&[":"]).await;
    live.type_text("distributor").await;
    live.press(&["enter"]).await;
    live.until(
        "the empty list",
        30,
        |app| matches!(app.current(), Route::Distributions(v) if matches!(v.listing, Fetch::Loaded(_))),
    )
    .await;
    assert!(
        live.screen()
            .contains("No ResourceDistribution in this cluster")
    );

    kubectl.ok(&["create", "namespace", "team-a"]).await;
    kubectl.apply(&[], RD).await;
    live.until(
        "shared-settings listed",
        30,
        |app| matches!(app.current(), Route::Distributions(v) if v.len() == 1),
    )
    .await;
    let screen = live.screen();
    assert!(screen.contains("ConfigMap/shared-settings"), "{screen}");
    assert!(screen.contains("team-a,team-b"), "{screen}");

    live.press(&["enter"]).await;
    live.until("team-a missing", 30, |app| {
        rd_row(app, "team-a").as_deref() == Some("missing")
    })
    .await;
    assert_eq!(rd_row(&live.app, "team-b").as_deref(), Some("no namespace"));
    // A ConfigMap of that name made by hand: upstream would not touch it.
    kubectl
        .ok(&[
            "create",
            "configmap",
            "shared-settings",
            "-n",
            "team-a",
            "--from-literal=level=debug",
        ])
        .await;
    live.until("team-a in conflict", 30, |app| {
        rd_row(app, "team-a").as_deref() == Some("conflict")
    })
    .await;
    assert!(live.screen().contains("not made by this distribution"));
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broadcast_job_created_with_kubectl_appears_with_its_pods() {
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    live.press(&[":"]).await;
    live.type_text("bcj").await;
    live.press(&["enter"]).await;
    live.until(
        "the empty list",
        30,
        |app| matches!(app.current(), Route::BroadcastJobs(v) if matches!(v.listing, Fetch::Loaded(_))),
    )
    .await;
    assert!(live.screen().contains("No BroadcastJob here"));

    kubectl.apply(&[], BCJ).await;
    live.until(
        "warm listed",
        30,
        |app| matches!(app.current(), Route::BroadcastJobs(v) if v.len() == 1),
    )
    .await;
    assert!(live.screen().contains("warm"));

    // A pod the job controls, on a node (as upstream's controller makes one per node).
    let uid = kubectl
        .jsonpath(&["broadcastjob", "warm"], "{.metadata.uid}")
        .await;
    let node = kubectl
        .jsonpath(&["nodes"], "{.items[0].metadata.name}")
        .await;
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: warm-a\n  ownerReferences:\n  - \
         {{apiVersion: apps.kruise.io/v1alpha1, kind: BroadcastJob, name: warm, uid: {}, \
         controller: true}}\nspec:\n  nodeName: {}\n  restartPolicy: Never\n  containers: \
         [{{name: pull, image: \"nginx:1.26\"}}]\n",
        uid.trim(),
        node.trim()
    );
    kubectl.apply(&[], &pod).await;
    live.press(&["enter"]).await;
    live.until("the pod on its node", 30, |app| {
        matches!(app.current(), Route::BroadcastJobs(v)
            if v.current().is_some_and(|j| v.pods_of(j).iter().any(|p| p.name == "warm-a")))
    })
    .await;
    let screen = live.screen();
    assert!(
        screen.contains(&format!("BroadcastJob {}/warm", live.ns())),
        "{screen}"
    );
    assert!(screen.contains("Pods per node (1)"), "{screen}");
    assert!(screen.contains(node.trim()), "{screen}");
    live.shutdown().await;
}

/// The demo (`kruise-tui --demo`) holds one of each, consistent with its pods and nodes: db's
/// pods kept where they run, the job's pod on every node, the copies in sync but for the
/// namespace whose own Secret is in the way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_holds_one_of_each() {
    if testbed::skip_on_existing_cluster(
        "plays the demo story, which only the embedded cluster seeds",
    ) {
        return;
    }
    let mut live = Live::start_story().await;
    live.press(&[":"]).await;
    live.type_text("pps").await;
    live.press(&["enter"]).await;
    live.until("db listed", 60, |app| pps_listed(app, "db"))
        .await;
    live.press(&["enter"]).await;
    live.until("db's three pods kept where they run", 150, |app| {
        ["db-0", "db-1", "db-2"]
            .iter()
            .all(|p| row_state(app, p).as_deref() == Some("match"))
    })
    .await;

    live.press(&["esc", "esc", ":"]).await;
    live.type_text("distributor").await;
    live.press(&["enter"]).await;
    live.until(
        "registry-creds listed",
        30,
        |app| matches!(app.current(), Route::Distributions(v) if v.len() == 1),
    )
    .await;
    live.press(&["enter"]).await;
    live.until("the copies judged", 30, |app| {
        rd_row(app, "team-a").is_some()
    })
    .await;
    assert_eq!(rd_row(&live.app, "team-a").as_deref(), Some("in sync"));
    assert_eq!(rd_row(&live.app, "team-b").as_deref(), Some("in sync"));
    assert_eq!(rd_row(&live.app, "team-c").as_deref(), Some("conflict"));
    let screen = live.screen();
    assert!(
        screen.contains("3 desired, 2 succeeded, 1 failed"),
        "{screen}"
    );
    assert!(screen.contains("ConflictOccurred      team-c"), "{screen}");

    live.press(&["esc", "esc", ":"]).await;
    live.type_text("bcj").await;
    live.press(&["enter"]).await;
    live.until(
        "node-probe listed",
        30,
        |app| matches!(app.current(), Route::BroadcastJobs(v) if v.len() == 1),
    )
    .await;
    live.press(&["enter"]).await;
    live.until("a pod on each of the three nodes", 60, |app| {
        matches!(app.current(), Route::BroadcastJobs(v)
        if v.current().is_some_and(|j| {
            let nodes: std::collections::BTreeSet<&str> =
                v.pods_of(j).iter().map(|p| p.node.as_str()).collect();
            nodes.len() == 3 && !nodes.contains("")
                && j.status.as_ref().is_some_and(|s| s.desired == 3 && s.active == 3)
        }))
    })
    .await;
    live.shutdown().await;
}
