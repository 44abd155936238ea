//! The CloneSet `Progressing` condition end to end (Kruise v1.9.0, #2108): a CloneSet with
//! `progressDeadlineSeconds: 30` whose new pods crash is declared
//! `Progressing=False/ProgressDeadlineExceeded` with upstream's message once the deadline has
//! passed; on Kruise v1.8.4 the same object gets no such condition. Read through the API only
//! (so the test also runs on an existing cluster of either release); what is asserted is the
//! state reached, the timeouts are only guards.

use crate::testbed;
use crate::workloads::wait_for;

use kruise_tui::kruise::KruiseVersion;
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};
use testbed::Testbed;

const NAME: &str = "deadline";
/// Guard against a hung test (the deadline is 30 s; the controller looks again just after it).
const PATIENCE: u64 = 180;

fn clonesets(client: &Client) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", "v1alpha1", "CloneSet"),
        "clonesets",
    );
    Api::default_namespaced_with(client.clone(), &ar)
}

fn cloneset() -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": NAME, "labels": {"app": NAME}},
        "spec": {
            "replicas": 2,
            "progressDeadlineSeconds": 30,
            "selector": {"matchLabels": {"app": NAME}},
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
            }
        }
    }))
    .expect("a CloneSet")
}

async fn status(api: &Api<DynamicObject>) -> Value {
    api.get(NAME)
        .await
        .map(|o| o.data["status"].clone())
        .unwrap_or(Value::Null)
}

fn progressing(status: &Value) -> Option<Value> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Progressing")
        .cloned()
}

/// Creates the CloneSet, waits until all its pods run the first template, then gives it a
/// crashing image; returns the new update revision.
async fn start_crashing_rollout(api: &Api<DynamicObject>) -> String {
    api.create(&PostParams::default(), &cloneset())
        .await
        .expect("the CloneSet is admitted");
    wait_for(PATIENCE, "the first template available", || async {
        let s = status(api).await;
        let done = s["availableReplicas"] == 2
            && s["updatedReplicas"] == 2
            && s["currentRevision"] == s["updateRevision"];
        done.then_some(())
    })
    .await;
    let first = status(api).await["updateRevision"].clone();
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "nginx:1.26-crash"}]}}}});
    api.patch(NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("the image change is admitted");
    wait_for(PATIENCE, "a new update revision", || async {
        let s = status(api).await;
        let rev = s["updateRevision"].clone();
        (rev != first && rev.is_string()).then(|| rev.as_str().unwrap_or_default().to_owned())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_rollout_exceeds_its_progress_deadline_on_v1_9() {
    let Some(tb) = Testbed::start_at(KruiseVersion::V1_9).await else {
        return;
    };
    let api = clonesets(&tb.client);
    let revision = start_crashing_rollout(&api).await;
    let progressing_now = progressing(&status(&api).await);
    let exceeded = wait_for(
        PATIENCE,
        "Progressing=False/ProgressDeadlineExceeded",
        || async {
            progressing(&status(&api).await).filter(|c| c["reason"] == "ProgressDeadlineExceeded")
        },
    )
    .await;
    assert_eq!(exceeded["status"], "False", "{exceeded}");
    assert_eq!(
        exceeded["message"],
        format!("CloneSet revision {revision} has timed out progressing"),
        "{exceeded}"
    );
    // The rollout had been progressing first (the deadline runs from there).
    let before = progressing_now.unwrap_or(Value::Null);
    assert!(
        before["reason"] == "CloneSetUpdated" || before["reason"] == "ProgressDeadlineExceeded",
        "{before}"
    );
    let pods_crashed = status(&api).await["updatedAvailableReplicas"].as_i64() < Some(2);
    assert!(pods_crashed, "the crashing pods never became available");
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_8_writes_no_progressing_condition() {
    let Some(tb) = Testbed::start_at(KruiseVersion::V1_8).await else {
        return;
    };
    let api = clonesets(&tb.client);
    start_crashing_rollout(&api).await;
    // Past the deadline v1.9 would apply (30 s), with the controller busy with the crash loop.
    tokio::time::sleep(std::time::Duration::from_secs(40)).await;
    let s = status(&api).await;
    assert!(progressing(&s).is_none(), "{s}");
    assert!(s["updatedAvailableReplicas"].as_i64() < Some(2), "{s}");
    tb.shutdown().await;
}
