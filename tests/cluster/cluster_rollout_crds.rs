//! The Kruise Rollout v0.6.2 CRDs on the embedded cluster, seen through kubectl as on a cluster
//! running kruise-rollout: `kubectl get rollouts` answers, a Rollout written at v1alpha1 is stored
//! at v1beta1 through Kruise Rollout's conversion (the rolling-style annotation becomes
//! `enableExtraWorkloadForCanary`, `weight` becomes `traffic` and `replicas`), and read back at
//! v1alpha1 the same way; without the webhooks (a CRDs-only cluster) a version read only prunes.

use crate::kubectl::Kubectl;

use kruise_tui::{
    cluster::{
        install_kruise_webhooks,
        server::{EmbeddedCluster, ServerOptions},
    },
    kruise::FeatureGates,
};
use serde_json::Value;

const V1ALPHA1: &str = r#"
apiVersion: rollouts.kruise.io/v1alpha1
kind: Rollout
metadata:
  name: web
  annotations:
    rollouts.kruise.io/rolling-style: partition
spec:
  objectRef:
    workloadRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  strategy:
    canary:
      steps:
      - replicas: 1
      - weight: 50
        pause: {duration: 60}
      - replicas: "100%"
"#;

async fn cluster(webhooks: bool) -> (EmbeddedCluster, Kubectl) {
    let c = EmbeddedCluster::start(ServerOptions::default())
        .await
        .expect("embedded cluster starts");
    if webhooks {
        install_kruise_webhooks(&c, FeatureGates::new());
    }
    let k = Kubectl::new(&c);
    (c, k)
}

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("kubectl printed JSON ({e}): {s}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1alpha1_rollout_is_stored_and_served_as_kruise_rollout_converts_it() {
    let (_c, k) = cluster(true).await;
    k.apply(&[], V1ALPHA1).await;
    let stored = json(
        &k.ok(&[
            "get",
            "rollouts.v1beta1.rollouts.kruise.io",
            "web",
            "-o",
            "json",
        ])
        .await,
    );
    let spec = &stored["spec"];
    assert_eq!(spec["workloadRef"]["name"], "web", "{stored}");
    assert!(spec.get("objectRef").is_none(), "{stored}");
    let canary = &spec["strategy"]["canary"];
    assert!(
        canary.get("enableExtraWorkloadForCanary").is_none(),
        "{stored}"
    );
    assert_eq!(canary["steps"][1]["replicas"], "50%", "{stored}");
    assert_eq!(canary["steps"][1]["traffic"], "50%", "{stored}");
    let alpha = json(
        &k.ok(&[
            "get",
            "rollouts.v1alpha1.rollouts.kruise.io",
            "web",
            "-o",
            "json",
        ])
        .await,
    );
    assert_eq!(
        alpha["spec"]["objectRef"]["workloadRef"]["kind"], "CloneSet",
        "{alpha}"
    );
    assert_eq!(
        alpha["spec"]["strategy"]["canary"]["steps"][1]["weight"], 50,
        "{alpha}"
    );
    assert_eq!(
        alpha["metadata"]["annotations"]["rollouts.kruise.io/rolling-style"], "partition",
        "{alpha}"
    );
    // The short kind name and the printer columns of the stored version answer.
    let table = k.ok(&["get", "rollouts"]).await;
    assert!(
        table.contains("CANARY_STEP") && table.contains("web"),
        "{table}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_kruise_rollout_a_version_read_only_prunes() {
    let (_c, k) = cluster(false).await;
    k.apply(&[], V1ALPHA1).await;
    let stored = json(
        &k.ok(&[
            "get",
            "rollouts.v1beta1.rollouts.kruise.io",
            "web",
            "-o",
            "json",
        ])
        .await,
    );
    // No conversion: v1alpha1's objectRef has no place in v1beta1's schema.
    assert!(stored["spec"].get("workloadRef").is_none(), "{stored}");
    assert!(stored["spec"].get("objectRef").is_none(), "{stored}");
}
