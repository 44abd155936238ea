//! Scripted key sessions of `:ws` and `:ud` against the embedded cluster (simulated nodes in
//! zone-a/b/c, embedded controllers). A WorkloadSpread and its CloneSet created with kubectl
//! appear without a key press; the pod webhook puts the first pod in zone-a (maxReplicas 1) and
//! the rest in zone-b, which the detail shows per subset; Enter on a pod opens it. A
//! UnitedDeployment created with kubectl appears; its subset CloneSet (made as upstream's
//! controller makes it) shows in the detail, and Enter opens that CloneSet's rollout view.

use crate::live;
use crate::testbed;

use kruise_tui::app::{
    App, Kind,
    route::{Fetch, Route},
};
use live::Live;

const SPREAD: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: api-spread}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: api}
  subsets:
  - name: zone-a
    requiredNodeSelectorTerm:
      matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
    maxReplicas: 1
  - name: zone-b
    requiredNodeSelectorTerm:
      matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: api}
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "demo/api:1"}]
"#;

const UD: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: UnitedDeployment
metadata: {name: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: shop}}
  template:
    cloneSetTemplate:
      metadata: {labels: {app: shop}}
      spec:
        selector: {matchLabels: {app: shop}}
        template:
          metadata: {labels: {app: shop}}
          spec:
            containers: [{name: shop, image: "demo/shop:1"}]
  topology:
    subsets:
    - name: zone-a
      nodeSelectorTerm:
        matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
"#;

fn subset_cloneset(uid: &str) -> String {
    format!(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: shop-zone-a-x7k2p
  labels: {{app: shop, apps.kruise.io/subset-name: zone-a}}
  ownerReferences:
  - {{apiVersion: apps.kruise.io/v1alpha1, kind: UnitedDeployment, name: shop, uid: "{uid}",
     controller: true, blockOwnerDeletion: true}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: shop, apps.kruise.io/subset-name: zone-a}}}}
  updateStrategy: {{partition: 0}}
  template:
    metadata: {{labels: {{app: shop, apps.kruise.io/subset-name: zone-a}}}}
    spec:
      containers: [{{name: shop, image: "demo/shop:1"}}]
"#
    )
}

/// Pods per subset of api-spread, as the detail holds them.
fn per_subset(app: &App) -> Vec<(String, usize)> {
    let Route::WorkloadSpreads(v) = app.current() else {
        return Vec::new();
    };
    let Some(s) = v.current() else {
        return Vec::new();
    };
    let pods = v.pods_of(s);
    ["zone-a", "zone-b"]
        .iter()
        .map(|z| {
            (
                z.to_string(),
                pods.iter().filter(|p| p.subset == *z).count(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spreads_and_united_deployments_created_with_kubectl_appear_and_drill_down() {
    if testbed::skip_on_existing_cluster(
        "the embedded WorkloadSpread pod webhook places the pods in their subsets",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    live.press(&[":"]).await;
    live.type_text("workloadspread").await;
    live.press(&["enter"]).await;
    live.until("the empty list", 30, |app| {
        matches!(app.current(), Route::WorkloadSpreads(v) if matches!(v.listing, Fetch::Loaded(_)))
    })
    .await;
    assert!(live.screen().contains("No WorkloadSpread here"));

    kubectl.apply(&[], SPREAD).await;
    // No key is pressed: the periodic list brings it in.
    live.until(
        "api-spread listed",
        30,
        |app| matches!(app.current(), Route::WorkloadSpreads(v) if !v.spreads().is_empty()),
    )
    .await;
    assert!(live.screen().contains("CloneSet/api"));
    live.press(&["enter"]).await;
    live.until("three pods matched", 60, |app| {
        per_subset(app).iter().map(|(_, n)| n).sum::<usize>() == 3
    })
    .await;
    assert_eq!(
        per_subset(&live.app),
        [("zone-a".to_owned(), 1), ("zone-b".to_owned(), 2)]
    );
    // The webhook pinned each pod to its subset's zone: zone-a's pod runs on sim-node-0.
    let zone_a_pod = match live.app.current() {
        Route::WorkloadSpreads(v) => v.selected_pod().map(|p| p.name.clone()),
        _ => None,
    }
    .expect("a pod under the cursor");
    let affinity = kubectl
        .jsonpath(
            &["pod", &zone_a_pod],
            "{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]}",
        )
        .await;
    assert_eq!(affinity.trim(), "zone-a");
    let screen = live.screen();
    assert!(screen.contains("Pods per subset [3]"), "{screen}");
    live.press(&["enter"]).await;
    match live.app.current() {
        Route::Pod(p) => assert_eq!(p.name, zone_a_pod),
        other => panic!("{other:?}"),
    }

    live.press(&[":"]).await;
    live.type_text("ud").await;
    live.press(&["enter"]).await;
    kubectl.apply(&[], UD).await;
    live.until(
        "shop listed",
        30,
        |app| matches!(app.current(), Route::UnitedDeployments(v) if !v.deployments().is_empty()),
    )
    .await;
    assert!(live.screen().contains("CloneSet"));
    live.press(&["enter"]).await;
    assert!(live.screen().contains("(not created yet)"));
    let uid = kubectl
        .jsonpath(&["uniteddeployment", "shop"], "{.metadata.uid}")
        .await;
    kubectl.apply(&[], &subset_cloneset(uid.trim())).await;
    live.until("the subset workload shown", 30, |app| {
        matches!(app.current(), Route::UnitedDeployments(v)
            if v.selected_subset().is_some_and(|r| r.workload.is_some()))
    })
    .await;
    assert!(live.screen().contains("CloneSet/shop-zone-a-x7k2p"));
    live.press(&["enter"]).await;
    match live.app.current() {
        Route::Rollout(v) => {
            assert_eq!(v.owner.kind, Kind::CloneSet);
            assert_eq!(v.owner.name, "shop-zone-a-x7k2p");
        }
        other => panic!("{other:?}"),
    }
    live.shutdown().await;
}
