//! Pod graceful deletion on the embedded API server, as the real server does it: a pod bound to
//! a node gets a deletionTimestamp (now + grace) and stays until a delete with grace 0 (the
//! kubelet's, when the grace period ends); an unbound pod or a grace-0 delete removes it at once.
//! Checked with kube-rs and kubectl (on PATH or named by $KUBECTL), and with the simulated
//! kubelet finishing the deletion kubectl waits for.

use crate::common;
use crate::kubectl as support_kubectl;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kruise_tui::cluster::sim::{self, SimOptions};
use kube::{
    Api,
    api::{DeleteParams, WatchEvent, WatchParams},
};
use serde_json::{Value, json};
use support_kubectl::kubectl;
use tokio_util::sync::CancellationToken;

fn bound_pod(name: &str, node: &str, grace: Option<i64>) -> Value {
    let mut pod = common::pod_json(name, json!({"app": name}));
    pod["spec"]["nodeName"] = json!(node);
    if let Some(g) = grace {
        pod["spec"]["terminationGracePeriodSeconds"] = json!(g);
    }
    pod
}

fn deadline(pod: &Pod) -> jiff::Timestamp {
    pod.metadata
        .deletion_timestamp
        .as_ref()
        .expect("deletionTimestamp set")
        .0
}

#[tokio::test]
async fn a_bound_pod_terminates_for_its_grace_period_then_goes_with_grace_zero() {
    let c = common::start().await;
    let client = c.client().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client, "default");
    c.store()
        .create(bound_pod("web", "node-a", Some(60)))
        .unwrap();
    let rv = pods
        .get("web")
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut events = pods
        .watch(&WatchParams::default().fields("metadata.name=web"), &rv)
        .await
        .unwrap()
        .boxed();

    // The spec's grace period applies: the pod stays, terminating, and a watch sees MODIFIED.
    let before = jiff::Timestamp::now();
    let answer = pods.delete("web", &DeleteParams::default()).await.unwrap();
    let terminating = answer.left().expect("the object comes back, not a Status");
    assert_eq!(terminating.metadata.deletion_grace_period_seconds, Some(60));
    let first = deadline(&terminating);
    assert!(first.as_second() >= before.as_second() + 59, "{first}");
    match events.try_next().await.unwrap() {
        Some(WatchEvent::Modified(p)) => assert!(p.metadata.deletion_timestamp.is_some()),
        other => panic!("expected MODIFIED, got {other:?}"),
    }
    assert!(pods.get_opt("web").await.unwrap().is_some());

    // A longer grace keeps the deadline; a shorter one brings it forward.
    let again = pods
        .delete("web", &DeleteParams::default().grace_period(120))
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(deadline(&again), first);
    let shorter = pods
        .delete("web", &DeleteParams::default().grace_period(5))
        .await
        .unwrap()
        .left()
        .unwrap();
    assert!(deadline(&shorter) < first);
    assert_eq!(shorter.metadata.deletion_grace_period_seconds, Some(5));

    // The kubelet's grace-0 delete removes it.
    pods.delete("web", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    assert!(pods.get_opt("web").await.unwrap().is_none());
}

#[tokio::test]
async fn unbound_finished_and_grace_zero_pods_go_at_once_finalizers_still_hold() {
    let c = common::start().await;
    let client = c.client().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client, "default");
    c.store()
        .create(common::pod_json("pending", json!({})))
        .unwrap();
    pods.delete("pending", &DeleteParams::default())
        .await
        .unwrap();
    assert!(pods.get_opt("pending").await.unwrap().is_none());

    c.store()
        .create(bound_pod("forced", "node-a", None))
        .unwrap();
    pods.delete("forced", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    assert!(pods.get_opt("forced").await.unwrap().is_none());

    // A finished pod goes at once too.
    let mut done = bound_pod("done", "node-a", Some(60));
    done["status"] = json!({"phase": "Succeeded"});
    c.store().create(done).unwrap();
    pods.delete("done", &DeleteParams::default()).await.unwrap();
    assert!(pods.get_opt("done").await.unwrap().is_none());

    // Default grace 30 without a spec value; a finalizer keeps the pod after the grace-0 delete.
    let mut held = bound_pod("held", "node-a", None);
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    c.store().create(held).unwrap();
    let p = pods
        .delete("held", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(p.metadata.deletion_grace_period_seconds, Some(30));
    pods.delete("held", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    let still = pods.get("held").await.unwrap();
    assert!(still.metadata.deletion_timestamp.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_force_deletes_at_once_and_waits_for_the_kubelet_otherwise() {
    let c = common::start().await;
    let client = c.client().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");

    // --grace-period=0 --force: gone at once, no kubelet needed.
    c.store()
        .create(bound_pod("forced", "node-a", None))
        .unwrap();
    let (code, _, err) = kubectl(
        &c,
        &["delete", "pod", "forced", "--grace-period=0", "--force"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(pods.get_opt("forced").await.unwrap().is_none());

    // --wait=false: the pod stays, terminating, with kubectl's grace period.
    c.store().create(bound_pod("left", "node-a", None)).unwrap();
    let (code, _, err) = kubectl(
        &c,
        &["delete", "pod", "left", "--wait=false", "--grace-period=45"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let left = pods.get("left").await.unwrap();
    assert_eq!(left.metadata.deletion_grace_period_seconds, Some(45));

    // With the simulated kubelet running, `kubectl delete pod` returns once the grace period
    // has ended and the kubelet removed the pod.
    let stop = CancellationToken::new();
    let opts = SimOptions {
        nodes: 1,
        ..SimOptions::default()
    };
    let sim = tokio::spawn(sim::run(client.clone(), opts, stop.clone()));
    c.store()
        .create(bound_pod("graceful", "sim-node-0", Some(1)))
        .unwrap();
    let (code, out, err) = kubectl(&c, &["delete", "pod", "graceful", "--timeout=60s"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.trim(), "pod \"graceful\" deleted");
    assert!(pods.get_opt("graceful").await.unwrap().is_none());
    stop.cancel();
    let _ = sim.await;
}

/// A pod written back on an old read is a conflict (409) before its spec is validated, as the
/// real server's GuaranteedUpdate compares the resourceVersion first: the writer re-reads.
/// Validated first, the stale copy (unbound, while the pod was bound since) would be a 422
/// that no re-read follows.
#[tokio::test]
async fn a_stale_pod_update_is_a_conflict_before_its_spec_is_judged() {
    let c = common::start().await;
    let client = c.client().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client, "default");
    pods.create(
        &kube::api::PostParams::default(),
        &serde_json::from_value(common::pod_json("web", json!({"app": "web"}))).unwrap(),
    )
    .await
    .unwrap();
    let stale = pods.get("web").await.unwrap();
    let mut bound = stale.clone();
    bound.spec.as_mut().unwrap().node_name = Some("node-a".into());
    bound.metadata.resource_version = None;
    // Bind it (as the scheduler's binding does): the pod's spec now names a node.
    c.store()
        .update(serde_json::to_value(&bound).unwrap())
        .unwrap();
    let mut again = stale.clone();
    again
        .metadata
        .labels
        .get_or_insert_default()
        .insert("touched".into(), "yes".into());
    let err = pods
        .replace("web", &kube::api::PostParams::default(), &again)
        .await
        .expect_err("a stale write");
    match err {
        kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"), "{s:?}"),
        other => panic!("{other:?}"),
    }
    // Re-read, the same change goes through.
    let mut fresh = pods.get("web").await.unwrap();
    fresh
        .metadata
        .labels
        .get_or_insert_default()
        .insert("touched".into(), "yes".into());
    pods.replace("web", &kube::api::PostParams::default(), &fresh)
        .await
        .unwrap();
}
