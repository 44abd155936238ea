//! The demo's Kruise Rollout chapter: a CloneSet `cart` released step by step by the Rollout
//! `cart` (steps `1`, `50%` with a 60 s pause, `100%`), made as a user makes it: the CloneSet and
//! the Rollout are created, and once the Rollout has armed (it labels the workload for the
//! workload webhook), the image is changed with an ordinary merge patch. The Rollout intercepts
//! it, updates one pod and waits there for approval, so `--demo` opens on a release to approve.
//! Without the controllers (or without Kruise Rollout served) the objects are created and
//! nothing is released.

use std::time::Duration;

use anyhow::Result;
use kube::Client;
use serde_json::json;

use crate::api::keys::ROLLOUT_WORKLOAD_TYPE;

use super::{Obj, StoryOptions, api, create, objects::kruise, patch, resource};

/// Pods of the chapter (the CloneSet's replicas).
pub(crate) const PODS: usize = 6;

/// The CloneSet and the Rollout's name.
pub const NAME: &str = "cart";

const FIRST: &str = "demo/cart:2.3.0";
const SECOND: &str = "demo/cart:2.4.0";

fn cloneset(ns: &str) -> Obj {
    kruise(
        "CloneSet",
        "clonesets",
        "v1alpha1",
        Some(ns),
        json!({
            "metadata": {"name": NAME, "labels": {"app": NAME}},
            "spec": {
                "replicas": PODS,
                "selector": {"matchLabels": {"app": NAME}},
                "template": {"metadata": {"labels": {"app": NAME}},
                             "spec": {"containers": [{"name": "cart", "image": FIRST}]}},
                "updateStrategy": {"type": "ReCreate", "maxUnavailable": 1},
            },
        }),
    )
}

fn rollout(ns: &str) -> Obj {
    Obj {
        ar: resource("rollouts.kruise.io", "v1beta1", "Rollout", "rollouts"),
        namespace: Some(ns.to_owned()),
        body: json!({
            "apiVersion": "rollouts.kruise.io/v1beta1",
            "kind": "Rollout",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {
                "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                                "name": NAME},
                "strategy": {"canary": {"steps": [
                    {"replicas": 1},
                    {"replicas": "50%", "pause": {"duration": 60}},
                    {"replicas": "100%"},
                ]}},
            },
        }),
    }
}

/// Creates the chapter and, with controllers, releases the second image through the Rollout.
/// Returns how many objects it created.
pub(crate) async fn play(client: &Client, opts: &StoryOptions) -> Result<usize> {
    if !opts.kruise_rollout {
        return Ok(0);
    }
    let cs = cloneset(&opts.namespace);
    let ro = rollout(&opts.namespace);
    let created = usize::from(create(client, &cs).await?) + usize::from(create(client, &ro).await?);
    if opts.controllers && armed(client, &cs, &ro).await {
        patch(
            client,
            &cs,
            &json!({"spec": {"template": {"spec": {"containers": [
                {"name": "cart", "image": SECOND}
            ]}}}}),
        )
        .await?;
    }
    Ok(created)
}

/// Waits (bounded) until the CloneSet's first revision is out and the Rollout is Healthy with
/// the workload labelled for its webhook: a change made before that would not be intercepted.
async fn armed(client: &Client, cs: &Obj, ro: &Obj) -> bool {
    let sets = api(client, &cs.ar, cs.namespace.as_deref());
    let rollouts = api(client, &ro.ar, ro.namespace.as_deref());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::time::Instant::now() < deadline {
        if let (Ok(set), Ok(rollout)) = (sets.get(NAME).await, rollouts.get(NAME).await) {
            let labelled = set
                .metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(ROLLOUT_WORKLOAD_TYPE));
            let status = &set.data["status"];
            let out = status["updatedReadyReplicas"].as_i64() == Some(PODS as i64);
            let healthy = rollout.data["status"]["phase"].as_str() == Some("Healthy");
            if labelled && out && healthy {
                return true;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tracing::warn!("demo: the Rollout {NAME} did not arm in time; its release is left out");
    false
}
