//! The pure CloneSet reconcile on hand-made inputs: revisions, creation, scale-down, in-place
//! update writes, status.

use k8s_openapi::{
    api::core::v1::{Container, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec},
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time},
};

use super::*;
use crate::{api::cloneset::CloneSetSpec, kruise::revision::CONTROLLER_REVISION_HASH_LABEL};

fn cs(replicas: i32, image: &str) -> CloneSet {
    CloneSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("ns".into()),
            uid: Some("cs-uid".into()),
            generation: Some(1),
            ..ObjectMeta::default()
        },
        spec: CloneSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some([("app".to_owned(), "web".to_owned())].into()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some([("app".to_owned(), "web".to_owned())].into()),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "main".into(),
                        image: Some(image.into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..CloneSetSpec::default()
        },
        status: None,
    }
}

fn ready_pod(name: &str, rev: &str, image: &str) -> Pod {
    let t = jiff::Timestamp::from_second(100).ok().map(Time);
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            resource_version: Some("7".into()),
            labels: Some(
                [
                    ("app".to_owned(), "web".to_owned()),
                    (CONTROLLER_REVISION_HASH_LABEL.to_owned(), rev.to_owned()),
                    (
                        "pod-template-hash".to_owned(),
                        revision::short_hash(rev).to_owned(),
                    ),
                ]
                .into(),
            ),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            node_name: Some("n1".into()),
            containers: vec![Container {
                name: "main".into(),
                image: Some(image.into()),
                ..Container::default()
            }],
            readiness_gates: Some(vec![k8s_openapi::api::core::v1::PodReadinessGate {
                condition_type: "InPlaceUpdateReady".into(),
            }]),
            ..PodSpec::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![
                PodCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    last_transition_time: t.clone(),
                    ..PodCondition::default()
                },
                PodCondition {
                    type_: "InPlaceUpdateReady".into(),
                    status: "True".into(),
                    last_transition_time: t,
                    ..PodCondition::default()
                },
            ]),
            ..PodStatus::default()
        }),
    }
}

use crate::kruise::revision;

fn run(cs: &CloneSet, pods: &[Pod], revs: &[ControllerRevision]) -> (Outcome, String, String) {
    run_at(cs, pods, revs, KruiseVersion::V1_8, 1_000)
}

fn run_at(
    cs: &CloneSet,
    pods: &[Pod],
    revs: &[ControllerRevision],
    version: KruiseVersion,
    now: i64,
) -> (Outcome, String, String) {
    let active = revisions::active_revisions(cs, revs);
    let mut all = revs.to_vec();
    if active.create {
        all.push(active.update.clone());
    }
    let names: Vec<String> = pods
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let gates = FeatureGates::new();
    let input = Input {
        cs,
        pods,
        all_pod_names: &names,
        pvcs: &[],
        revisions: &all,
        current: &active.current,
        update: &active.update,
        collision_count: 0,
        label_selector: "app=web".into(),
        nodes: &[],
        gates: &gates,
        version,
        now,
    };
    let mut n = 0u64;
    let mut rng = move || {
        n += 7;
        n
    };
    let out = reconcile(&input, &mut rng);
    (
        out,
        name_of(&active.current).to_owned(),
        name_of(&active.update).to_owned(),
    )
}

#[test]
fn a_new_cloneset_creates_its_pods_from_the_update_revision() {
    let cs = cs(3, "nginx:1");
    let (out, current, update) = run(&cs, &[], &[]);
    assert_eq!(current, update, "history starts at the update revision");
    assert!(update.starts_with("web-"));
    let created: Vec<&Pod> = out
        .pods
        .iter()
        .filter_map(|w| match &w.op {
            PodOp::Create(p) => Some(&**p),
            _ => None,
        })
        .collect();
    assert_eq!(created.len(), 3);
    for pod in created {
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels[CONTROLLER_REVISION_HASH_LABEL], update);
        assert_eq!(labels["lifecycle.apps.kruise.io/state"], "PreparingNormal");
        assert!(
            pod.metadata
                .name
                .as_deref()
                .unwrap_or("")
                .starts_with("web-")
        );
        let gates = pod
            .spec
            .as_ref()
            .and_then(|s| s.readiness_gates.clone())
            .unwrap_or_default();
        assert!(
            gates
                .iter()
                .any(|g| g.condition_type == "InPlaceUpdateReady")
        );
        assert_eq!(
            pod.metadata
                .owner_references
                .as_ref()
                .map(|o| o[0].uid.as_str()),
            Some("cs-uid")
        );
    }
    assert!(out.status_changed);
    assert_eq!(out.status.expected_updated_replicas, Some(3));
}

#[test]
fn rolling_back_the_template_reuses_and_renumbers_the_old_revision() {
    let v1 = cs(1, "nginx:1");
    let r1 = revisions::new_revision(&v1, 1, 0);
    let v2 = cs(1, "nginx:2");
    let r2 = revisions::new_revision(&v2, 2, 0);
    assert_ne!(r1.metadata.name, r2.metadata.name);
    let back = revisions::active_revisions(&v1, &[r1.clone(), r2.clone()]);
    assert!(!back.create && back.renumber);
    assert_eq!(back.update.metadata.name, r1.metadata.name);
    assert_eq!(back.update.revision, 3);
    let same = revisions::active_revisions(&v2, &[r1, r2.clone()]);
    assert!(!same.create && !same.renumber);
    assert_eq!(same.update, r2);
}

#[test]
fn an_image_change_updates_pods_in_place_with_upstreams_event() {
    let v1 = cs(2, "nginx:1");
    let r1 = revisions::new_revision(&v1, 1, 0);
    let r1_name = name_of(&r1).to_owned();
    let mut v2 = cs(2, "nginx:2");
    v2.spec.update_strategy.type_ = Some("InPlaceIfPossible".into());
    v2.status = Some(crate::api::cloneset::CloneSetStatus {
        current_revision: r1_name.clone(),
        ..Default::default()
    });
    let pods = [
        ready_pod("web-a", &r1_name, "nginx:1"),
        ready_pod("web-b", &r1_name, "nginx:1"),
    ];
    let (out, current, update) = run(&v2, &pods, &[r1]);
    assert_eq!(current, r1_name);
    // Default maxUnavailable 20% of 2 rounds up to 1: one pod moves.
    let moved: Vec<&PodWrite> = out
        .pods
        .iter()
        .filter(|w| matches!(w.why, Why::InPlaceUpdate { .. }))
        .collect();
    assert_eq!(moved.len(), 1, "{:?}", out.pods);
    let PodOp::Update { status, pod } = &moved[0].op else {
        panic!("an update");
    };
    let pod = pod.as_ref().expect("pod write");
    assert_eq!(
        pod.spec.as_ref().map(|s| s.containers[0].image.clone()),
        Some(Some("nginx:2".into()))
    );
    assert_eq!(
        pod.metadata
            .labels
            .as_ref()
            .map(|l| l[CONTROLLER_REVISION_HASH_LABEL].clone()),
        Some(update.clone())
    );
    let status = status.as_ref().expect("status write");
    let conditions = status
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    for t in ["InPlaceUpdateReady", "Ready"] {
        assert!(
            conditions
                .iter()
                .any(|c| c.type_ == t && c.status == "False"),
            "{t} goes False: {conditions:?}"
        );
    }
    assert_eq!(
        moved[0].success_event().map(|e| e.reason),
        Some("SuccessfulUpdatePodInPlace".to_owned())
    );
}

#[test]
fn scale_down_deletes_and_pods_to_delete_is_truncated() {
    let v1 = cs(1, "nginx:1");
    let r1 = revisions::new_revision(&v1, 1, 0);
    let r1_name = name_of(&r1).to_owned();
    let mut set = v1.clone();
    set.spec.scale_strategy = Some(crate::api::cloneset::CloneSetScaleStrategy {
        pods_to_delete: vec!["web-gone".into(), "web-b".into()],
        ..Default::default()
    });
    let pods = [
        ready_pod("web-a", &r1_name, "nginx:1"),
        ready_pod("web-b", &r1_name, "nginx:1"),
    ];
    let (out, _, _) = run(&set, &pods, &[r1]);
    let deleted: Vec<&str> = out
        .pods
        .iter()
        .filter(|w| matches!(w.op, PodOp::Delete { .. }))
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(deleted, ["web-b"], "the named pod goes");
    assert_eq!(out.pods_to_delete, Some(vec!["web-b".to_owned()]));
}

mod v1_9;
