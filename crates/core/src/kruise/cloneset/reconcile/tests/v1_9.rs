//! The reconcile at v1.9.0 against v1.8.4: conditions carried over, sticky failures, the
//! Progressing condition and its requeue (kruise-1.9.md §1.1, §1.2).

use super::*;
use crate::{
    api::cloneset::{CloneSetCondition, CloneSetStatus},
    kruise::cloneset::progress::{self, PROGRESSING, reason},
};

fn at(secs: i64) -> Option<Time> {
    jiff::Timestamp::from_second(secs).ok().map(Time)
}

/// A CloneSet whose new template cannot be applied in place while the strategy is InPlaceOnly:
/// every Update pass fails.
fn failing_update() -> (CloneSet, Vec<Pod>, Vec<ControllerRevision>) {
    let v1 = cs(1, "nginx:1");
    let r1 = revisions::new_revision(&v1, 1, 0);
    let r1_name = name_of(&r1).to_owned();
    let mut v2 = cs(1, "nginx:2");
    v2.spec.update_strategy.type_ = Some("InPlaceOnly".into());
    if let Some(spec) = v2.spec.template.spec.as_mut() {
        spec.containers[0].command = Some(vec!["sleep".into()]);
    }
    v2.status = Some(CloneSetStatus {
        current_revision: r1_name.clone(),
        update_revision: r1_name.clone(),
        replicas: 1,
        ..Default::default()
    });
    (v2, vec![ready_pod("web-a", &r1_name, "nginx:1")], vec![r1])
}

fn failed_update(status: &CloneSetStatus) -> Option<&CloneSetCondition> {
    progress::condition(status, progress::FAILED_UPDATE)
}

#[test]
fn a_failure_is_kept_with_its_first_message_only_at_v1_9() {
    let (mut set, pods, revs) = failing_update();
    let first = CloneSetCondition {
        type_: progress::FAILED_UPDATE.into(),
        status: "True".into(),
        last_transition_time: at(1),
        message: Some("A".into()),
        ..Default::default()
    };
    if let Some(s) = set.status.as_mut() {
        s.conditions = vec![first.clone()];
    }
    let (head, _, _) = run_at(&set, &pods, &revs, KruiseVersion::V1_9, 1_000);
    assert!(!head.errors.is_empty(), "the update fails");
    assert_eq!(failed_update(&head.status), Some(&first));
    let (old, _, _) = run_at(&set, &pods, &revs, KruiseVersion::V1_8, 1_000);
    let now = failed_update(&old.status).cloned().unwrap_or_default();
    assert_eq!(now.message.as_deref(), Some(old.errors.join("; ").as_str()));
    assert_eq!(now.last_transition_time, at(1_000));
}

#[test]
fn a_failure_alone_does_not_write_the_status_at_v1_9() {
    let (mut set, pods, revs) = failing_update();
    // First pass at v1.9 from a status the reconcile itself computed: nothing else differs.
    let (first, _, _) = run_at(&set, &pods, &revs, KruiseVersion::V1_9, 1_000);
    let mut stored = first.status.clone();
    stored.conditions.clear();
    set.status = Some(stored);
    let (again, _, _) = run_at(&set, &pods, &revs, KruiseVersion::V1_9, 1_001);
    assert!(failed_update(&again.status).is_some());
    assert!(!again.status_changed, "{:?}", again.status);
    let (old, _, _) = run_at(&set, &pods, &revs, KruiseVersion::V1_8, 1_001);
    assert!(old.status_changed, "v1.8 writes any condition change");
}

#[test]
fn a_new_rollout_gets_progressing_and_a_requeue_only_at_v1_9() {
    let mut set = cs(3, "nginx:1");
    set.spec.progress_deadline_seconds = Some(30);
    let (head, _, _) = run_at(&set, &[], &[], KruiseVersion::V1_9, 1_000);
    let cond = progress::condition(&head.status, PROGRESSING)
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (cond.status.as_str(), cond.reason.as_deref()),
        ("True", Some(reason::UPDATED))
    );
    assert_eq!(cond.last_update_time, at(1_000));
    assert_eq!(head.requeue_after, Some(31));
    assert!(head.status_changed);
    let (old, _, _) = run_at(&set, &[], &[], KruiseVersion::V1_8, 1_000);
    assert!(old.status.conditions.is_empty());
    assert_eq!(old.requeue_after, None);
}

#[test]
fn an_exceeded_deadline_survives_a_new_revision() {
    let v1 = cs(1, "nginx:1");
    let r1 = revisions::new_revision(&v1, 1, 0);
    let r1_name = name_of(&r1).to_owned();
    let mut v2 = cs(1, "nginx:2");
    v2.spec.progress_deadline_seconds = Some(10);
    let exceeded = progress::new_condition(
        PROGRESSING,
        "False",
        reason::DEADLINE_EXCEEDED,
        &format!("CloneSet revision {r1_name} has timed out progressing"),
        500,
    );
    v2.status = Some(CloneSetStatus {
        current_revision: r1_name.clone(),
        update_revision: r1_name.clone(),
        conditions: vec![exceeded.clone()],
        ..Default::default()
    });
    // The only pod is not ready: nothing becomes available.
    let mut pod = ready_pod("web-a", &r1_name, "nginx:1");
    if let Some(s) = pod.status.as_mut() {
        s.phase = Some("Pending".into());
    }
    let (out, _, update) = run_at(&v2, &[pod], &[r1], KruiseVersion::V1_9, 1_000);
    assert_ne!(update, r1_name);
    assert_eq!(
        progress::condition(&out.status, PROGRESSING),
        Some(&exceeded)
    );
}
