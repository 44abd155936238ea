//! `demo-server --churn`: the embedded cluster's steady stream of pod status changes. A watch
//! sees them as MODIFIED events at about the asked rate, spread over the chosen pods, and none
//! of them changes a pod's spec, readiness or restarts.

use crate::common;

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kruise_tui::cluster::demo::churn::{self, ChurnOptions, HEARTBEAT_CONDITION};
use kube::{
    Api,
    api::{WatchEvent, WatchParams},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const PODS: usize = 40;
const RATE: u32 = 200;

fn running_pod(ns: &str, i: usize) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("bulk-{i:03}"), "namespace": ns, "labels": {"app": "bulk"}},
        "spec": {"nodeName": "sim-node-0", "containers": [{"name": "app", "image": "nginx:1.25.4"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"}],
            "containerStatuses": [{"name": "app", "image": "nginx:1.25.4", "imageID": "", "ready": true,
                "restartCount": 2, "started": true, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}],
        },
    })
}

fn restarts(pod: &Pod) -> Option<i32> {
    Some(pod.status.as_ref()?.container_statuses.as_ref()?[0].restart_count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn churn_makes_status_only_changes_at_about_the_rate() {
    let c = common::start().await;
    let store = c.store();
    for ns in ["demo-scale-0", "other"] {
        store
            .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .unwrap();
    }
    for i in 0..PODS {
        store.create(running_pod("demo-scale-0", i)).unwrap();
    }
    store.create(running_pod("other", 0)).unwrap();
    let api: Api<Pod> = Api::all(c.client().await.unwrap());
    let rv = store.current_rv().to_string();
    let mut stream = api
        .watch(&WatchParams::default().timeout(60), &rv)
        .await
        .unwrap()
        .boxed();
    let token = CancellationToken::new();
    let task = churn::spawn(
        store.clone(),
        ChurnOptions {
            per_second: RATE,
            namespace_prefix: "demo-scale-".into(),
        },
        token.clone(),
    );
    let mut per_pod: BTreeMap<String, usize> = BTreeMap::new();
    let mut versions = BTreeSet::new();
    let until = tokio::time::Instant::now() + Duration::from_secs(2);
    while let Ok(next) = tokio::time::timeout_at(until, stream.try_next()).await {
        match next.unwrap() {
            Some(WatchEvent::Modified(pod)) => {
                let ns = pod.metadata.namespace.clone().unwrap_or_default();
                let name = pod.metadata.name.clone().unwrap_or_default();
                assert_eq!(ns, "demo-scale-0", "only the chosen namespaces churn");
                assert!(kruise_tui::api::pod::is_ready(&pod), "{name} readiness");
                assert_eq!(restarts(&pod), Some(2), "{name} restarts");
                let spec = serde_json::to_value(pod.spec.as_ref().unwrap()).unwrap();
                assert_eq!(spec["containers"][0]["image"], "nginx:1.25.4");
                let beats = pod.status.as_ref().unwrap().conditions.as_ref().unwrap();
                assert!(beats.iter().any(|c| c.type_ == HEARTBEAT_CONDITION));
                assert!(versions.insert(pod.metadata.resource_version.clone().unwrap()));
                *per_pod.entry(name).or_default() += 1;
            }
            Some(WatchEvent::Bookmark(_)) => {}
            Some(other) => panic!("unexpected watch event {other:?}"),
            None => break,
        }
    }
    token.cancel();
    task.await.unwrap();
    let total: usize = per_pod.values().sum();
    // A loose lower bound: at least half of what the rate asks for over the 2 s.
    assert!(
        total >= RATE as usize,
        "only {total} changes in 2 s at {RATE}/s"
    );
    assert_eq!(
        per_pod.len(),
        PODS,
        "round-robin reaches every pod: {per_pod:?}"
    );
    let (least, most) = (
        per_pod.values().min().copied().unwrap_or(0),
        per_pod.values().max().copied().unwrap_or(0),
    );
    assert!(most - least <= 1, "spread evenly: {least}..{most}");
    // The spec did not change: no new generation.
    let pod = store
        .get_value("v1", "Pod", "demo-scale-0", "bulk-000")
        .unwrap();
    assert!(pod["metadata"].get("generation").is_none_or(|g| g == 1));
}
