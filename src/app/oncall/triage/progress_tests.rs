//! Triage with Kruise v1.9's Progressing condition: the controller's verdict outranks the
//! console's guesses, and a present condition replaces the stall timer.

use std::collections::HashMap;

use super::{
    ProblemKind,
    tests::{at, pod, run_with, workload},
};
use crate::app::rollout::progress::{Conditions, Progressing};

fn key() -> String {
    workload(1, 6).key()
}

fn progressing(status: &str, reason: &str, message: &str) -> HashMap<String, Conditions> {
    HashMap::from([(
        key(),
        Conditions {
            progressing: Some(Progressing {
                status: status.into(),
                reason: reason.into(),
                message: message.into(),
                last_update: Some(at(0)),
            }),
            deadline_seconds: Some(30),
            failures: Vec::new(),
        },
    )])
}

#[test]
fn an_exceeded_deadline_is_a_stuck_rollout_at_the_top_with_upstreams_message() {
    // Another workload's guessed stuck rollout (more pods) must still rank below it.
    let mut other = workload(1, 6);
    other.name = "cart".into();
    other.uid = "uid-cart".into();
    let pods = [pod("checkout-a", "checkout-new", true, 0, false)];
    let conditions = progressing(
        "False",
        "ProgressDeadlineExceeded",
        "CloneSet revision checkout-new has timed out progressing",
    );
    let mut memory = super::Memory::default();
    run_with(
        at(0),
        &[workload(1, 6), other.clone()],
        &pods,
        &mut memory,
        &conditions,
    );
    let out = run_with(
        at(600),
        &[other, workload(1, 6)],
        &pods,
        &mut memory,
        &conditions,
    );
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0].kind, ProblemKind::StuckRollout);
    assert!(out[0].reported);
    assert_eq!(out[0].subject, "CloneSet demo/checkout");
    assert_eq!(
        out[0].why,
        "CloneSet revision checkout-new has timed out progressing (1/6 updated)"
    );
    assert!(out[1].why.contains("no progress for 10m"), "{}", out[1].why);
    // The verdict holds even once nothing looks like it is rolling (sticky upstream).
    let mut done = workload(6, 6);
    done.current_revision = done.update_revision.clone();
    let out = run_with(at(700), &[done], &pods, &mut memory, &conditions);
    assert_eq!(out.len(), 1);
}

#[test]
fn a_progressing_condition_replaces_the_stall_timer() {
    let pods = [pod("checkout-a", "checkout-new", true, 0, false)];
    let conditions = progressing("True", "CloneSetUpdated", "CloneSet is progressing");
    let mut memory = super::Memory::default();
    run_with(at(0), &[workload(1, 6)], &pods, &mut memory, &conditions);
    let out = run_with(at(5000), &[workload(1, 6)], &pods, &mut memory, &conditions);
    assert!(out.is_empty(), "{out:?}");
    // Without it, the same history is a stall.
    let out = run_with(
        at(5000),
        &[workload(1, 6)],
        &pods,
        &mut memory,
        &HashMap::new(),
    );
    assert_eq!(out.len(), 1);
}
