//! Behaviour tests of the CRR webhook, manager decisions and daemon steps.

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use super::{
    ACTIVE_KEY, POD_UID_KEY,
    admission::{Lookup, admit_create, admit_update},
    controller::reconcile,
    daemon::{kill_failed, sync_step},
    types::{
        ContainerRecreateRequest, ContainerRecreateRequestContainerRecreateState,
        ContainerRecreateRequestStrategy, phase,
    },
};
use crate::kruise::{FeatureGates, KruiseVersion, admission::json_patch};

fn crr(value: serde_json::Value) -> ContainerRecreateRequest {
    serde_json::from_value(value).expect("valid CRR")
}

fn pod() -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
        "spec": {"nodeName": "n1", "containers": [{"name": "app"}], "terminationGracePeriodSeconds": 30},
        "status": {"phase": "Running", "containerStatuses": [{"name": "app", "containerID": "containerd://a", "restartCount": 1,
            "image": "i", "imageID": "x", "ready": true}]}
    }))
    .expect("valid pod")
}

fn state(name: &str, p: &str) -> ContainerRecreateRequestContainerRecreateState {
    ContainerRecreateRequestContainerRecreateState {
        name: name.to_owned(),
        phase: p.to_owned(),
        ..Default::default()
    }
}

#[test]
fn create_defaults_and_patch() {
    let request = crr(json!({"metadata": {"name": "c", "namespace": "default"},
        "spec": {"podName": "p", "containers": [{"name": "app"}, {"name": "app"}]}}));
    let p = pod();
    // At v1.9.0 (edge class B, upstream main's fix) a container named twice is denied.
    let out = admit_create(
        KruiseVersion::V1_9,
        &FeatureGates::new(),
        &request,
        Lookup::Found(&p),
        |_| Ok(Some(Node::default())),
    );
    assert!(!out.verdict.allowed);
    assert_eq!(out.verdict.code, 400);
    assert_eq!(
        out.verdict.message_text(),
        "can not recreate app multi times"
    );
    assert!(out.patched.is_none());
    let out = admit_create(
        KruiseVersion::V1_8,
        &FeatureGates::new(),
        &request,
        Lookup::Found(&p),
        |_| Ok(Some(Node::default())),
    );
    // v1.8.4's duplicate check never fires (it tests a set it never fills): both entries
    // are accepted and filled.
    assert!(out.verdict.allowed, "{:?}", out.verdict);
    let twice = out.patched.expect("patched object");
    assert!(
        twice
            .spec
            .containers
            .iter()
            .all(|c| c.status_context.is_some())
    );

    let request = crr(json!({"metadata": {"name": "c", "namespace": "default"},
        "spec": {"podName": "p", "containers": [{"name": "app"}]}}));
    let out = admit_create(
        KruiseVersion::V1_9,
        &FeatureGates::new(),
        &request,
        Lookup::Found(&p),
        |_| Ok(Some(Node::default())),
    );
    assert!(out.verdict.allowed);
    let patched = out.patched.expect("patched object");
    assert_eq!(patched.label(ACTIVE_KEY), "true");
    assert_eq!(patched.label(POD_UID_KEY), "u1");
    let strategy = patched.spec.strategy.clone().unwrap_or_default();
    assert_eq!(strategy.failure_policy, "Fail");
    assert_eq!(strategy.termination_grace_period_seconds, Some(30));
    let patch = serde_json::to_value(json_patch(&request, &patched)).unwrap();
    let ops: Vec<&str> = patch
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["path"].as_str().unwrap())
        .collect();
    assert!(ops.contains(&"/spec/strategy"), "{ops:?}");

    let out = admit_create(
        KruiseVersion::V1_9,
        &FeatureGates::new(),
        &request,
        Lookup::NotFound,
        |_| Ok(None),
    );
    assert_eq!(out.verdict.message_text(), "no found Pod named p");
    let out = admit_create(
        KruiseVersion::V1_9,
        &FeatureGates::new(),
        &request,
        Lookup::Failed("timeout"),
        |_| Ok(None),
    );
    assert_eq!(out.verdict.code, 500);
}

#[test]
fn update_keeps_spec_immutable() {
    let old = crr(
        json!({"metadata": {"name": "c"}, "spec": {"podName": "p", "containers": [{"name": "app"}]}}),
    );
    let mut new = old.clone();
    new.spec.active_deadline_seconds = Some(10);
    let v = admit_update(&FeatureGates::new(), &old, &new);
    assert_eq!((v.allowed, v.code), (false, 403));
    assert_eq!(
        v.message_text(),
        "spec of ContainerRecreateRequest is immutable"
    );
    assert!(admit_update(&FeatureGates::new(), &old, &old).allowed);
}

#[test]
fn manager_removes_active_label_then_waits_for_ttl() {
    let now = jiff::Timestamp::from_second(1000).unwrap();
    let done = Time(jiff::Timestamp::from_second(999).unwrap());
    let mut c = crr(
        json!({"metadata": {"name": "c", "labels": {ACTIVE_KEY: "true"}},
        "spec": {"podName": "p", "containers": [{"name": "app"}], "ttlSecondsAfterFinished": 5},
        "status": {"phase": "Completed"}}),
    );
    c.status.as_mut().unwrap().completion_time = Some(done);
    assert!(reconcile(&c, None, now).remove_active_label);
    c.metadata.labels = None;
    let d = reconcile(&c, None, now);
    assert!(!d.delete);
    assert_eq!(d.requeue_after_seconds, Some(4));
}

#[test]
fn daemon_kills_one_at_a_time_and_honours_order() {
    let plain = ContainerRecreateRequestStrategy::default();
    let step = sync_step(
        vec![state("a", phase::PENDING), state("b", phase::PENDING)],
        &plain,
        &|_| true,
    );
    assert_eq!(step.kill.as_deref(), Some("a"));
    assert!(step.states[0].is_killed);
    assert_eq!(step.states[1].phase, phase::PENDING);

    let ordered = ContainerRecreateRequestStrategy {
        ordered_recreate: true,
        ..Default::default()
    };
    let step = sync_step(
        vec![state("a", phase::RECREATING), state("b", phase::PENDING)],
        &ordered,
        &|_| true,
    );
    assert_eq!(step.kill, None);
    let step = sync_step(
        vec![state("a", phase::RECREATING), state("b", phase::PENDING)],
        &plain,
        &|_| true,
    );
    assert_eq!(step.kill.as_deref(), Some("b"));

    let step = sync_step(
        vec![state("a", phase::SUCCEEDED), state("b", phase::SUCCEEDED)],
        &plain,
        &|_| true,
    );
    assert_eq!(step.complete.as_deref(), Some(""));
}

#[test]
fn kill_errors_follow_the_failure_policy() {
    let ignore = ContainerRecreateRequestStrategy {
        failure_policy: "Ignore".to_owned(),
        ..Default::default()
    };
    let mut step = sync_step(vec![state("a", phase::PENDING)], &ignore, &|_| true);
    kill_failed(&mut step, "a", "boom", &ignore);
    assert_eq!(step.states[0].phase, phase::FAILED);
    assert_eq!(step.states[0].message, "kill container error: boom");
    assert_eq!(step.complete, None);
    let fail = ContainerRecreateRequestStrategy::default();
    let mut step = sync_step(vec![state("a", phase::PENDING)], &fail, &|_| true);
    kill_failed(&mut step, "a", "boom", &fail);
    assert!(step.complete.is_some());
}

#[test]
fn daemon_waits_for_unready_grace_then_steps() {
    use super::daemon::{DaemonAction, daemon_sync};
    use std::collections::BTreeMap;

    let mut c = crr(
        json!({"metadata": {"name": "c", "creationTimestamp": "2025-01-01T00:00:00Z"},
        "spec": {"podName": "p", "containers": [{"name": "app", "statusContext": {"containerID": "x", "restartCount": 0}}],
                 "strategy": {"unreadyGracePeriodSeconds": 10}},
        "status": {"phase": ""}}),
    );
    let now: jiff::Timestamp = "2025-01-01T00:00:05Z".parse().unwrap();
    let runtime = BTreeMap::new();
    assert_eq!(
        daemon_sync(KruiseVersion::V1_8, &c, &runtime, now),
        DaemonAction::StartRecreating
    );
    c.status.as_mut().unwrap().phase = phase::RECREATING.to_owned();
    assert_eq!(
        daemon_sync(KruiseVersion::V1_8, &c, &runtime, now),
        DaemonAction::Wait(1)
    );
    c.metadata.annotations = Some(
        [(
            super::UNREADY_ACQUIRED_KEY.to_owned(),
            "2025-01-01T00:00:01Z".to_owned(),
        )]
        .into(),
    );
    assert_eq!(
        daemon_sync(KruiseVersion::V1_8, &c, &runtime, now),
        DaemonAction::Wait(6)
    );
    let later: jiff::Timestamp = "2025-01-01T00:00:20Z".parse().unwrap();
    match daemon_sync(KruiseVersion::V1_8, &c, &runtime, later) {
        DaemonAction::Step(step) => {
            assert_eq!(step.states[0].message, "not found container on Node");
            assert_eq!(step.kill, None);
        }
        other => panic!("expected a step, got {other:?}"),
    }
    c.status.as_mut().unwrap().phase = phase::COMPLETED.to_owned();
    assert_eq!(
        daemon_sync(KruiseVersion::V1_8, &c, &runtime, later),
        DaemonAction::Idle
    );
}
