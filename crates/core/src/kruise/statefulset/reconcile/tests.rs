//! The Advanced StatefulSet reconcile on hand-built pods: scale order, reserved ordinals,
//! condemned pods, the partitioned rolling update (recreate and in place) and the status.

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::Time};
use serde_json::{Value, json};

use super::*;
use crate::kruise::cloneset::reconcile::revisions::template_of;

fn set(extra: Value) -> StatefulSet {
    let mut v = json!({
        "metadata": {"name": "web", "namespace": "ns", "uid": "u-web", "generation": 2},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}
        }
    });
    merge(&mut v, extra);
    serde_json::from_value(v).unwrap_or_default()
}

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

fn with_image(s: &StatefulSet, image: &str) -> StatefulSet {
    let mut s = s.clone();
    if let Some(spec) = s.spec.template.spec.as_mut() {
        spec.containers[0].image = Some(image.to_owned());
    }
    s
}

/// A pod of `set` at `ordinal` on revision `rev`, Running (and Ready when `ready`) since t=0.
fn pod(set: &StatefulSet, rev: &ControllerRevision, ordinal: i32, ready: bool) -> Pod {
    let template = template_of(rev).unwrap_or_default();
    let mut p = pods::new_pod(
        set,
        &template,
        name_of(rev),
        ordinal,
        "Normal",
        &FeatureGates::new(),
        0,
    );
    p.metadata.uid = Some(format!("uid-{ordinal}"));
    p.metadata.resource_version = Some("1".to_owned());
    let image = template
        .spec
        .and_then(|s| s.containers.first().and_then(|c| c.image.clone()))
        .unwrap_or_default();
    p.status = serde_json::from_value(json!({
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"},
                        "lastTransitionTime": "1970-01-01T00:00:00Z"},
                       {"type": "InPlaceUpdateReady", "status": "True",
                        "lastTransitionTime": "1970-01-01T00:00:00Z"}],
        "containerStatuses": [{"name": "c", "image": image, "imageID": format!("id-{image}"),
                               "ready": ready, "restartCount": 0}]
    }))
    .ok();
    p
}

struct World {
    set: StatefulSet,
    pods: Vec<Pod>,
    revisions: Vec<ControllerRevision>,
    current: ControllerRevision,
    update: ControllerRevision,
}

impl World {
    fn run(&self) -> Outcome {
        let gates = FeatureGates::new();
        reconcile(&Input {
            set: &self.set,
            pods: &self.pods,
            claims: &[],
            revisions: &self.revisions,
            current: &self.current,
            update: &self.update,
            collision_count: 0,
            label_selector: "app=web".to_owned(),
            gates: &gates,
            version: KruiseVersion::V1_8,
            now: 100,
        })
    }
}

/// A world whose set is on `v1`, with pods at `ordinals` on `v1` (ready when listed in `ready`).
fn world(extra: Value, ordinals: &[i32], ready: &[i32]) -> World {
    let s = set(extra);
    let v1 = revisions::new_revision(&s, 1, 0);
    let pods = ordinals
        .iter()
        .map(|&o| pod(&s, &v1, o, ready.contains(&o)))
        .collect();
    World {
        set: s,
        pods,
        revisions: vec![v1.clone()],
        current: v1.clone(),
        update: v1,
    }
}

/// The same world after an image change: `v2` is the update revision.
fn rolled(mut w: World, image: &str) -> World {
    w.set = with_image(&w.set, image);
    let v2 = revisions::new_revision(&w.set, 2, 0);
    w.revisions.push(v2.clone());
    w.update = v2;
    w
}

fn names(out: &Outcome, why: &Why) -> Vec<String> {
    out.pods
        .iter()
        .filter(|w| &w.why == why)
        .map(|w| w.name.clone())
        .collect()
}

#[test]
fn ordered_ready_creates_one_pod_at_a_time_in_order() {
    let w = world(json!({}), &[], &[]);
    assert_eq!(names(&w.run(), &Why::Create), ["web-0"]);
    // web-0 Running but not Ready: nothing more.
    let w = world(json!({}), &[0], &[]);
    assert!(names(&w.run(), &Why::Create).is_empty());
    // web-0 Ready: web-1 comes next.
    let w = world(json!({}), &[0], &[0]);
    let out = w.run();
    assert_eq!(names(&out, &Why::Create), ["web-1"]);
    let Op::Create { pod, .. } = &out.pods[0].op else {
        panic!("a create");
    };
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get("controller-revision-hash"),
        w.update.metadata.name.as_ref()
    );
    assert_eq!(
        out.pods[0].success_events("web")[0].message,
        "create Pod web-1 in StatefulSet web successful"
    );
}

#[test]
fn parallel_creates_every_missing_pod_and_skips_reserved_ordinals() {
    let w = world(
        json!({"spec": {"podManagementPolicy": "Parallel", "reserveOrdinals": [1]}}),
        &[],
        &[],
    );
    assert_eq!(
        names(&w.run(), &Why::Create),
        ["web-0", "web-2", "web-3", "web-4"]
    );
    // scaleStrategy.maxUnavailable 2: two creations, then the budget is spent.
    let w = world(
        json!({"spec": {"podManagementPolicy": "Parallel", "scaleStrategy": {"maxUnavailable": 2}}}),
        &[],
        &[],
    );
    assert_eq!(names(&w.run(), &Why::Create), ["web-0", "web-1"]);
}

#[test]
fn condemned_pods_go_highest_first_one_at_a_time() {
    let w = world(
        json!({"spec": {"replicas": 2}}),
        &[0, 1, 2, 3],
        &[0, 1, 2, 3],
    );
    assert_eq!(names(&w.run(), &Why::Delete), ["web-3"]);
    let w = world(
        json!({"spec": {"replicas": 2, "podManagementPolicy": "Parallel"}}),
        &[0, 1, 2, 3],
        &[0, 1, 2, 3],
    );
    assert_eq!(names(&w.run(), &Why::Delete), ["web-3", "web-2"]);
    // A reserved ordinal is condemned too.
    let w = world(
        json!({"spec": {"replicas": 3, "reserveOrdinals": [1]}}),
        &[0, 1, 2, 3],
        &[0, 1, 2, 3],
    );
    assert_eq!(names(&w.run(), &Why::Delete), ["web-1"]);
}

#[test]
fn partition_recreates_from_the_highest_ordinal_under_max_unavailable() {
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}});
    let w = rolled(world(extra, &[0, 1, 2, 3], &[0, 1, 2, 3]), "nginx:2");
    let out = w.run();
    assert_eq!(names(&out, &Why::Delete), ["web-3"]);
    assert_eq!(out.status.updated_replicas, 0);
    assert_eq!(out.status.current_replicas, 3, "web-3 is on its way out");
    // web-3 gone: it is recreated at the update revision.
    let mut w = w;
    w.pods
        .retain(|p| p.metadata.name.as_deref() != Some("web-3"));
    let out = w.run();
    let Some(Op::Create { pod, .. }) = out.pods.first().map(|p| &p.op) else {
        panic!("web-3 is created: {:?}", out.pods);
    };
    assert_eq!(pod.metadata.name.as_deref(), Some("web-3"));
    let image = pod.spec.as_ref().map(|s| s.containers[0].image.clone());
    assert_eq!(image, Some(Some("nginx:2".to_owned())));
    // And a missing web-1 below the partition comes back on the current revision.
    w.pods
        .retain(|p| p.metadata.name.as_deref() != Some("web-1"));
    let out = w.run();
    let Some(Op::Create { pod, .. }) = out.pods.first().map(|p| &p.op) else {
        panic!("web-1 is created");
    };
    assert_eq!(
        pod.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("controller-revision-hash")),
        w.current.metadata.name.as_ref()
    );
}

#[test]
fn in_place_update_keeps_the_pod_and_marks_it_updating() {
    let extra = json!({"spec": {
        "podManagementPolicy": "Parallel",
        "template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
        "updateStrategy": {"rollingUpdate": {"partition": 2, "maxUnavailable": 2,
                                             "podUpdatePolicy": "InPlaceIfPossible"}}}});
    let w = rolled(world(extra, &[0, 1, 2, 3], &[0, 1, 2, 3]), "nginx:2");
    let out = w.run();
    let updated = names(
        &out,
        &Why::InPlaceUpdate {
            revision: name_of(&w.update).to_owned(),
        },
    );
    assert_eq!(updated, ["web-3", "web-2"]);
    assert!(names(&out, &Why::Delete).is_empty());
    let Op::Update { status, pod } = &out.pods[0].op else {
        panic!("an update");
    };
    let pod = pod.as_deref().expect("the pod is written");
    assert_eq!(
        pod.spec.as_ref().map(|s| s.containers[0].image.clone()),
        Some(Some("nginx:2".into()))
    );
    assert!(
        pod.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key("apps.kruise.io/inplace-update-state"))
    );
    let status = status
        .as_deref()
        .expect("InPlaceUpdateReady goes False first");
    let cond = status
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "InPlaceUpdateReady"))
        .map(|c| c.status.clone());
    assert_eq!(cond.as_deref(), Some("False"));
}

#[test]
fn paused_and_on_delete_update_nothing() {
    let extra =
        json!({"spec": {"replicas": 2, "updateStrategy": {"rollingUpdate": {"paused": true}}}});
    let w = rolled(world(extra, &[0, 1], &[0, 1]), "nginx:2");
    let out = w.run();
    assert!(out.pods.is_empty(), "{:#?}", out.pods);
    let extra = json!({"spec": {"replicas": 2, "updateStrategy": {"type": "OnDelete"}}});
    let w = rolled(world(extra, &[0, 1], &[0, 1]), "nginx:2");
    assert!(w.run().pods.is_empty());
}

#[test]
fn status_counts_and_completion() {
    let w = world(json!({"spec": {"replicas": 2}}), &[0, 1], &[0]);
    let st = w.run().status;
    assert_eq!(
        (st.replicas, st.ready_replicas, st.available_replicas),
        (2, 1, 1)
    );
    assert_eq!((st.current_replicas, st.updated_replicas), (2, 2));
    assert_eq!(st.observed_generation, 2);
    assert_eq!(st.label_selector.as_deref(), Some("app=web"));
    assert_eq!(st.current_revision, name_of(&w.current), "not all ready");
    // minReadySeconds: ready at t=0, now t=100 < 300: not available; requeued.
    let extra = json!({"spec": {"replicas": 1, "updateStrategy": {"rollingUpdate": {"minReadySeconds": 300}}}});
    let w = world(extra, &[0], &[0]);
    let out = w.run();
    assert_eq!(
        (out.status.ready_replicas, out.status.available_replicas),
        (1, 0)
    );
    assert_eq!(out.requeue_after, Some(200));
}

#[test]
fn a_failed_create_sets_the_condition() {
    let w = world(json!({}), &[], &[]);
    let out = w.run();
    let cond = out.pods[0].failure_condition("quota");
    assert_eq!(
        cond,
        Some((
            status::FAILED_CREATE_POD,
            "StatefulPodControl failed to create Pod error: quota".to_owned()
        ))
    );
    let _ = Time(Timestamp::UNIX_EPOCH);
}

#[test]
fn a_settled_set_gets_no_writes() {
    let mut w = world(json!({}), &[0, 1, 2, 3], &[0, 1, 2, 3]);
    let first = w.run();
    assert!(first.pods.is_empty(), "{:?}", first.pods);
    assert!(status::should_write(w.set.status.as_ref(), &first.status));
    w.set.status = Some(first.status.clone());
    let again = w.run();
    assert!(again.pods.is_empty());
    assert!(!status::should_write(w.set.status.as_ref(), &again.status));
}

#[test]
fn ordinals_start_behind_its_gate() {
    let w = world(
        json!({"spec": {"replicas": 2, "podManagementPolicy": "Parallel", "ordinals": {"start": 5}}}),
        &[],
        &[],
    );
    // Gate off: from 0.
    assert_eq!(names(&w.run(), &Why::Create), ["web-0", "web-1"]);
    let gates = FeatureGates::new().with("StatefulSetStartOrdinal", true);
    let out = reconcile(&Input {
        set: &w.set,
        pods: &w.pods,
        claims: &[],
        revisions: &w.revisions,
        current: &w.current,
        update: &w.update,
        collision_count: 0,
        label_selector: String::new(),
        gates: &gates,
        version: KruiseVersion::V1_8,
        now: 100,
    });
    assert_eq!(names(&out, &Why::Create), ["web-5", "web-6"]);
}

#[test]
fn specified_delete_goes_regardless_of_the_partition() {
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 4}}}});
    let mut w = world(extra, &[0, 1, 2, 3], &[0, 1, 2, 3]);
    if let Some(l) = w.pods[0].metadata.labels.as_mut() {
        l.insert(
            "apps.kruise.io/specified-delete".to_owned(),
            "true".to_owned(),
        );
    }
    assert_eq!(names(&w.run(), &Why::Delete), ["web-0"]);
}
