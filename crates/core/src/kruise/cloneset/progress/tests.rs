//! `cloneset_status_test.go` (v1.9.0) and the derived cases of kruise-1.9.md §1.1, one clock.

use super::*;
use crate::api::cloneset::CloneSetSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

fn cs(replicas: i32, pds: Option<i32>) -> CloneSet {
    CloneSet {
        spec: CloneSetSpec {
            replicas: Some(replicas),
            progress_deadline_seconds: pds,
            ..CloneSetSpec::default()
        },
        ..CloneSet::default()
    }
}

fn status(
    replicas: i32,
    updated: i32,
    updated_available: i32,
    expected: i32,
    current: &str,
    update: &str,
) -> CloneSetStatus {
    CloneSetStatus {
        replicas,
        updated_replicas: updated,
        updated_available_replicas: updated_available,
        expected_updated_replicas: Some(expected),
        current_revision: current.to_owned(),
        update_revision: update.to_owned(),
        ..CloneSetStatus::default()
    }
}

fn cond(status: &str, why: &str, at: i64) -> CloneSetCondition {
    new_condition(PROGRESSING, status, why, "m", at)
}

#[test]
fn requeue_from_condition() {
    // TestGetRequeueSecondsFromCondition: not exceeded, exactly at, exceeded.
    let now = 1_000;
    let c = cond("True", reason::UPDATED, now - 5);
    assert_eq!(requeue_seconds(Some(&c), 10, now), Some(6));
    let c = cond("True", reason::UPDATED, now - 4);
    assert_eq!(requeue_seconds(Some(&c), 4, now), Some(0));
    let c = cond("True", reason::UPDATED, now - 5);
    assert_eq!(requeue_seconds(Some(&c), 4, now), Some(-1));
    assert_eq!(requeue_seconds(None, 4, now), None);
}

#[test]
fn has_deadline() {
    assert!(!has_progress_deadline(&cs(1, None)));
    assert!(!has_progress_deadline(&cs(1, Some(i32::MAX))));
    assert!(has_progress_deadline(&cs(1, Some(10))));
}

#[test]
fn partition_available() {
    let c = cs(5, Some(10));
    assert!(is_partition_available(&c, &status(5, 3, 3, 3, "1", "2")));
    assert!(!is_partition_available(&c, &status(5, 3, 3, 5, "1", "2")));
}

#[test]
fn new_revision_starts_the_clock() {
    let c = cs(1, Some(10));
    let mut new = status(1, 0, 0, 1, "1", "2");
    new.conditions = vec![cond("True", reason::AVAILABLE, 0)];
    let requeue = calculate(&c, &mut new, 5);
    assert_eq!(requeue, Some(11));
    let got = condition(&new, PROGRESSING).cloned().unwrap_or_default();
    assert_eq!(
        (got.status.as_str(), got.reason.as_deref()),
        ("True", Some(reason::UPDATED))
    );
    assert_eq!(seconds(got.last_update_time.as_ref()), Some(5));
    // Same status, new reason: the transition time carries over.
    assert_eq!(seconds(got.last_transition_time.as_ref()), Some(0));
    assert_eq!(got.message.as_deref(), Some("CloneSet is progressing"));
}

#[test]
fn old_updated_condition_times_out_and_stays() {
    let c = cs(10, Some(10));
    let mut new = status(10, 10, 8, 10, "1", "1");
    new.conditions = vec![cond("True", reason::UPDATED, 100)];
    assert_eq!(calculate(&c, &mut new, 111), None);
    let got = condition(&new, PROGRESSING).cloned().unwrap_or_default();
    assert_eq!(got.status, "False");
    assert_eq!(got.reason.as_deref(), Some(reason::DEADLINE_EXCEEDED));
    assert_eq!(
        got.message.as_deref(),
        Some("CloneSet revision 1 has timed out progressing")
    );
    // A new revision does not clear it, and the message keeps the old revision.
    new.update_revision = "2".to_owned();
    assert_eq!(calculate(&c, &mut new, 200), None);
    assert_eq!(condition(&new, PROGRESSING), Some(&got));
    // Exactly at the deadline is not past it (and 0 is no requeue).
    let mut at = status(10, 10, 8, 10, "1", "1");
    at.conditions = vec![cond("True", reason::UPDATED, 100)];
    assert_eq!(calculate(&c, &mut at, 110), Some(0));
}

#[test]
fn paused_clears_exceeded_and_no_deadline_removes() {
    let mut c = cs(10, Some(10));
    c.spec.update_strategy.paused = true;
    c.spec.update_strategy.partition = Some(IntOrString::String("50%".into()));
    let mut new = status(10, 5, 1, 5, "1", "2");
    new.conditions = vec![cond("False", reason::DEADLINE_EXCEEDED, 0)];
    calculate(&c, &mut new, 50);
    let got = condition(&new, PROGRESSING).cloned().unwrap_or_default();
    assert_eq!(
        (got.status.as_str(), got.reason.as_deref()),
        ("True", Some(reason::PAUSED))
    );
    c.spec.progress_deadline_seconds = None;
    calculate(&c, &mut new, 60);
    assert!(new.conditions.is_empty());
}

#[test]
fn set_condition_keeps_equal_and_appends_at_end() {
    let mut s = CloneSetStatus::default();
    set_condition(&mut s, failure_condition(FAILED_SCALE, "A", 1));
    set_condition(&mut s, cond("True", reason::UPDATED, 1));
    set_condition(&mut s, failure_condition(FAILED_SCALE, "B", 2));
    assert_eq!(s.conditions[0].message.as_deref(), Some("A"));
    set_condition(&mut s, failure_condition(FAILED_UPDATE, "C", 3));
    set_condition(&mut s, cond("False", reason::DEADLINE_EXCEEDED, 4));
    let types: Vec<&str> = s.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, [FAILED_SCALE, FAILED_UPDATE, PROGRESSING]);
    let p = condition(&s, PROGRESSING).cloned().unwrap_or_default();
    assert_eq!(seconds(p.last_transition_time.as_ref()), Some(4));
}

#[test]
fn changed_looks_at_status_and_reason_only() {
    let mut a = CloneSetStatus::default();
    let mut b = CloneSetStatus::default();
    assert!(!progressing_changed(Some(&a), &b));
    b.conditions = vec![cond("True", reason::UPDATED, 1)];
    assert!(progressing_changed(Some(&a), &b));
    assert!(progressing_changed(None, &b));
    a.conditions = vec![new_condition(PROGRESSING, "True", reason::UPDATED, "x", 9)];
    assert!(!progressing_changed(Some(&a), &b));
    a.conditions = vec![cond("True", reason::AVAILABLE, 1)];
    assert!(progressing_changed(Some(&a), &b));
}
