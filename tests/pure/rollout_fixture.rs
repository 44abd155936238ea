//! Kruise Rollout objects built by hand for the console tests (the controllers are not part of
//! these tests): a CloneSet `demo/shop` of 5 pods under the Rollout `demo/shop-rollout` (steps
//! `1`, `50%` with a 60 s pause, `100%`), its BatchRelease, its pods labelled with their batch,
//! and a crashing new pod when asked.

use crate::harness::{self, Harness};
use kruise_tui::{
    api::{
        CloneSet, SlimPod,
        rollout::{BatchRelease, Rollout},
    },
    app::{
        Kind, Msg,
        msg::{EffectResult, EventRow, ObjectEvent, ObjectRef},
    },
};
use serde_json::json;

/// Seconds before the harness clock (`harness::NOW`).
pub fn ago(secs: i64) -> String {
    let t = harness::now().as_second() - secs;
    jiff::Timestamp::from_second(t).expect("time").to_string()
}

pub fn shop() -> ObjectRef {
    ObjectRef {
        kind: Kind::CloneSet,
        namespace: Some("demo".into()),
        name: "shop".into(),
    }
}

/// Where the release stands.
#[derive(Clone, Copy)]
pub struct At {
    /// 1-based step.
    pub step: i32,
    pub state: &'static str,
    /// Seconds since `lastUpdateTime`.
    pub since: i64,
    /// `spec.strategy.paused`.
    pub paused: bool,
    /// The step-2 pod `shop-c` crash-loops (not ready for `since` seconds).
    pub crashing: bool,
}

impl At {
    pub fn step(step: i32, state: &'static str, since: i64) -> At {
        At {
            step,
            state,
            since,
            paused: false,
            crashing: false,
        }
    }
}

pub fn rollout(at: At) -> Rollout {
    let step = at.step;
    let (updated, ready) = match (step, at.crashing) {
        (1, _) => (1, 1),
        (2, true) => (3, 2),
        (2, false) => (3, 3),
        _ => (5, 5),
    };
    let message = match (step, at.state) {
        (1, "StepPaused") => {
            "Rollout is in step(1/3), and you need manually confirm to enter the next step"
        }
        (2, "StepPaused") => {
            "Rollout is in step(2/3), and wait duration(60 seconds) to enter the next step"
        }
        _ => "Rollout is in step(2/3), and upgrade workload to new version",
    };
    serde_json::from_value(json!({
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "shop-rollout", "namespace": "demo", "uid": "uid-ro-shop", "generation": 1},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "shop"},
            "strategy": {
                "paused": at.paused,
                "canary": {"steps": [
                    {"replicas": 1},
                    {"replicas": "50%", "pause": {"duration": 60}},
                    {"replicas": "100%"}
                ]}
            }
        },
        "status": {
            "observedGeneration": 1,
            "phase": "Progressing",
            "message": message,
            "conditions": [{
                "type": "Progressing", "status": "True", "reason": "InRolling",
                "message": "Rollout is in Progressing",
                "lastUpdateTime": ago(900), "lastTransitionTime": ago(900)
            }],
            "currentStepIndex": step,
            "currentStepState": at.state,
            "canaryStatus": {
                "observedWorkloadGeneration": 2,
                "observedRolloutID": "rid-2",
                "rolloutHash": "h1",
                "stableRevision": "6c8b5d4f2",
                "podTemplateHash": "7d9fbc8c4",
                "canaryRevision": "7d9fbc8c4",
                "currentStepIndex": step,
                "nextStepIndex": if step == 3 { -1 } else { step + 1 },
                "currentStepState": at.state,
                "finalisingStep": "",
                "message": format!("BatchRelease is at state Ready, rollout-id rid-2, step {step}"),
                "lastUpdateTime": ago(at.since),
                "canaryReplicas": updated,
                "canaryReadyReplicas": ready
            }
        }
    }))
    .expect("rollout")
}

pub fn batch_release(at: At) -> BatchRelease {
    let (updated, ready) = match (at.step, at.crashing) {
        (1, _) => (1, 1),
        (2, true) => (3, 2),
        (2, false) => (3, 3),
        _ => (5, 5),
    };
    let batch_state = if at.state == "StepUpgrade" {
        "Verifying"
    } else {
        "Ready"
    };
    serde_json::from_value(json!({
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "BatchRelease",
        "metadata": {"name": "shop-rollout", "namespace": "demo"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "shop"},
            "releasePlan": {
                "batches": [{"canaryReplicas": 1}, {"canaryReplicas": "50%"}, {"canaryReplicas": "100%"}],
                "batchPartition": at.step - 1,
                "rolloutID": "rid-2",
                "rollingStyle": "Partition",
                "enableExtraWorkloadForCanary": false
            }
        },
        "status": {
            "phase": "Progressing",
            "observedWorkloadReplicas": 5,
            "canaryStatus": {
                "batchState": batch_state,
                "currentBatch": at.step - 1,
                "updatedReplicas": updated,
                "updatedReadyReplicas": ready
            }
        }
    }))
    .expect("batch release")
}

fn cloneset(at: At) -> CloneSet {
    let (partition, updated) = match at.step {
        1 => (json!(4), 1),
        2 => (json!("40%"), 3),
        _ => (json!("0%"), 5),
    };
    let ready = if at.crashing { 4 } else { 5 };
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "name": "shop", "namespace": "demo", "uid": "uid-cs-shop", "generation": 2,
            "creationTimestamp": ago(86400),
            "labels": {"app": "shop", "rollouts.kruise.io/workload-type": "cloneset"},
            "annotations": {
                "rollouts.kruise.io/in-progressing": "{\"rolloutName\":\"shop-rollout\"}",
                "batchrelease.rollouts.kruise.io/control-info": "{\"apiVersion\":\"rollouts.kruise.io/v1beta1\",\"kind\":\"BatchRelease\",\"name\":\"shop-rollout\",\"uid\":\"uid-br-shop\",\"controller\":true}"
            }
        },
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": {"app": "shop"}},
            "template": {"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": [{"name": "shop", "image": "shop:2"}]}},
            "updateStrategy": {"partition": partition}
        },
        "status": {
            "observedGeneration": 2, "replicas": 5, "readyReplicas": ready, "availableReplicas": ready,
            "updatedReplicas": updated, "updatedReadyReplicas": updated - (5 - ready),
            "expectedUpdatedReplicas": updated,
            "currentRevision": "shop-6c8b5d4f2", "updateRevision": "shop-7d9fbc8c4"
        }
    }))
    .expect("cloneset")
}

fn pod(name: &str, batch: Option<i32>, crashing_for: Option<i64>) -> SlimPod {
    let mut labels = json!({"app": "shop", "controller-revision-hash": "shop-6c8b5d4f2"});
    if let Some(b) = batch {
        labels["controller-revision-hash"] = json!("shop-7d9fbc8c4");
        labels["rollouts.kruise.io/rollout-id"] = json!("rid-2");
        labels["rollouts.kruise.io/rollout-batch-id"] = json!(b.to_string());
    }
    let (ready, restarts, state, since) = match crashing_for {
        Some(secs) => (
            false,
            6,
            json!({"waiting": {"reason": "CrashLoopBackOff"}}),
            ago(secs),
        ),
        None => (
            true,
            0,
            json!({"running": {"startedAt": ago(300)}}),
            ago(300),
        ),
    };
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "namespace": "demo", "uid": format!("uid-{name}"),
            "creationTimestamp": ago(3600),
            "labels": labels,
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "shop", "uid": "uid-cs-shop", "controller": true}]
        },
        "spec": {"nodeName": "node-1", "containers": [{"name": "shop", "image": "shop"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }, "lastTransitionTime": since}],
            "containerStatuses": [{"name": "shop", "ready": ready, "restartCount": restarts, "image": "shop", "state": state}]
        }
    }))
    .expect("pod")
}

/// The shop pods at `at`: batch 1 `shop-a`, batch 2 `shop-b` `shop-c` (from step 2), the rest
/// on the stable revision.
pub fn pods(at: At) -> Vec<SlimPod> {
    let two = if at.step >= 2 { Some(2) } else { None };
    let crash = at.crashing.then_some(at.since);
    vec![
        pod("shop-a", Some(1), None),
        pod("shop-b", two, None),
        pod("shop-c", two, if at.step >= 2 { crash } else { None }),
        pod("shop-d", None, None),
        pod("shop-e", None, None),
    ]
}

/// Puts (or replaces) the shop objects at `at` in the harness's stores and tells the console.
pub fn put(h: &mut Harness, at: At) {
    harness::apply(&mut h.writers.clonesets, vec![cloneset(at)]);
    harness::apply(&mut h.writers.pods, pods(at));
    harness::apply(&mut h.writers.oncall.rollouts, vec![rollout(at)]);
    harness::apply(
        &mut h.writers.oncall.batch_releases,
        vec![batch_release(at)],
    );
    h.feed(Msg::StoreChanged(Kind::CloneSet));
    h.feed(Msg::StoreChanged(Kind::Pod));
    h.feed(Msg::StoreReady(Kind::Rollout));
    h.feed(Msg::StoreReady(Kind::BatchRelease));
}

/// The fixture console plus the shop release at `at`.
pub fn harness(at: At, size: (u16, u16)) -> Harness {
    let mut h = Harness::loaded(Some("demo"), size);
    put(&mut h, at);
    h
}

/// Opens the rollout view of `demo/shop` from the workloads list.
pub fn open_shop(h: &mut Harness) {
    let rows: Vec<String> = h.app.workloads().iter().map(|w| w.name.clone()).collect();
    let at = rows.iter().position(|n| n == "shop").expect("shop listed");
    for _ in 0..at {
        h.press(&["j"]);
    }
    h.press(&["enter"]);
}

/// The events of the shop rollout view: a BackOff warning on the crashing pod.
pub fn events() -> Vec<ObjectEvent> {
    let at = |s: i64| Some(harness::now() - jiff::SignedDuration::from_secs(s));
    vec![
        ObjectEvent {
            object: "Pod/shop-c".into(),
            event: EventRow {
                type_: "Warning".into(),
                reason: "BackOff".into(),
                message: "Back-off restarting failed container shop".into(),
                count: 9,
                last_seen: at(20),
                source: "kubelet".into(),
            },
        },
        ObjectEvent {
            object: "Pod/shop-b".into(),
            event: EventRow {
                type_: "Normal".into(),
                reason: "Started".into(),
                message: "Started container shop".into(),
                count: 1,
                last_seen: at(290),
                source: "kubelet".into(),
            },
        },
    ]
}

/// Answers the rollout view's events request.
pub fn answer_events(h: &mut Harness) {
    h.feed(Msg::EffectDone(EffectResult::RolloutEvents {
        workload: shop(),
        result: Ok(events()),
    }));
}
