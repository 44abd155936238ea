//! Unit tests of the Rollout port: research §5.2 V12–V16, V19, V20 and the details around them.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::*;
use crate::api::rollout::{
    CanaryStatus, CanaryStrategy, RolloutPause, RolloutSpec, RolloutStrategy, WorkloadRef,
    finalising_step, phase, step_state,
};

pub(super) fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

pub(super) fn secs(s: i64) -> Timestamp {
    t0() + jiff::SignedDuration::from_secs(s)
}

pub(super) fn step(replicas: IntOrString, pause: Option<i32>, manual: bool) -> CanaryStep {
    CanaryStep {
        replicas: Some(replicas),
        pause: if manual {
            None
        } else {
            Some(RolloutPause { duration: pause })
        },
        ..CanaryStep::default()
    }
}

pub(super) fn int(i: i32) -> IntOrString {
    IntOrString::Int(i)
}

pub(super) fn pct(s: &str) -> IntOrString {
    IntOrString::String(s.into())
}

pub(super) fn rollout(steps: Vec<CanaryStep>) -> Rollout {
    Rollout {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some("rollout-demo".into()),
            namespace: Some("default".into()),
            uid: Some("uid-ro".into()),
            generation: Some(1),
            ..Default::default()
        },
        spec: RolloutSpec {
            workload_ref: WorkloadRef {
                api_version: "apps.kruise.io/v1alpha1".into(),
                kind: "CloneSet".into(),
                name: "echo".into(),
            },
            strategy: RolloutStrategy {
                canary: Some(CanaryStrategy {
                    steps,
                    ..CanaryStrategy::default()
                }),
                ..RolloutStrategy::default()
            },
            disabled: false,
        },
        status: None,
    }
}

pub(super) fn cloneset(replicas: i32, stable: &str, canary: &str) -> WorkloadInfo {
    WorkloadInfo {
        kind: Some(TargetKind::CloneSet),
        name: "echo".into(),
        namespace: "default".into(),
        uid: "uid-cs".into(),
        generation: 1,
        observed_generation: 1,
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        replicas,
        status_replicas: replicas,
        updated_replicas: if stable == canary { replicas } else { 0 },
        updated_ready_replicas: if stable == canary { replicas } else { 0 },
        current_revision: format!("echo-{stable}"),
        update_revision: format!("echo-{canary}"),
        stable_revision: stable.into(),
        canary_revision: canary.into(),
        ..WorkloadInfo::default()
    }
}

fn with_canary(mut r: Rollout, cs: CanaryStatus) -> Rollout {
    let mut status = r.status.take().unwrap_or_default();
    status.canary_status = Some(cs);
    r.status = Some(status);
    r
}

// --- V12 doStepJump ----------------------------------------------------------------------

fn jump_status(cur: i32, next: i32, canary_replicas: i32) -> RolloutStatus {
    RolloutStatus {
        canary_status: Some(CanaryStatus {
            current_step_index: cur,
            next_step_index: next,
            canary_replicas,
            current_step_state: step_state::STEP_PAUSED.into(),
            ..CanaryStatus::default()
        }),
        ..RolloutStatus::default()
    }
}

#[test]
fn v12_a_jump_goes_to_the_asked_step_and_never_to_the_default_or_out_of_range() {
    let r = rollout(vec![
        step(pct("10%"), None, true),
        step(pct("30%"), None, true),
        step(pct("100%"), None, true),
    ]);
    let steps = r.steps().to_vec();
    let mut s = jump_status(1, 3, 1);
    assert!(do_step_jump(&r, &mut s, &steps, 10, t0()));
    let cs = s.canary_status.as_ref().unwrap();
    assert_eq!((cs.current_step_index, cs.next_step_index), (3, -1));
    assert_eq!(cs.current_step_state, step_state::BEFORE_STEP_UPGRADE);
    assert_eq!(cs.last_update_time, Some(Time(t0())));
    // The jump table's replicas equal canaryReplicas: straight to traffic routing.
    let table = vec![step(pct("40%"), None, true); 3];
    let mut s = jump_status(1, 3, 4);
    assert!(do_step_jump(&r, &mut s, &table, 10, t0()));
    let cs = s.canary_status.as_ref().unwrap();
    assert_eq!(cs.current_step_state, step_state::STEP_TRAFFIC_ROUTING);
    for next in [2, -1, 0, 5, -2] {
        let mut s = jump_status(1, next, 1);
        let before = s.clone();
        assert!(!do_step_jump(&r, &mut s, &steps, 10, t0()), "next {next}");
        assert_eq!(s, before, "next {next} leaves the status as it was");
    }
    let mut s = jump_status(5, 2, 1);
    assert!(do_step_jump(&r, &mut s, &steps, 10, t0()));
    let cs = s.canary_status.as_ref().unwrap();
    assert_eq!((cs.current_step_index, cs.next_step_index), (2, 3));
    let mut empty = RolloutStatus::default();
    assert!(!do_step_jump(&r, &mut empty, &steps, 10, t0()));
}

// --- V13 recalculateCanaryStep -------------------------------------------------------------

fn br_with(batches: &[&str], partition: i32) -> BatchRelease {
    let r = rollout(batches.iter().map(|b| step(pct(b), None, true)).collect());
    build_batch_release(&r, "1", partition, false)
}

#[test]
fn v13_a_plan_change_finds_the_first_step_that_reaches_the_current_batch() {
    let steps = |v: &[&str]| {
        v.iter()
            .map(|b| step(pct(b), None, true))
            .collect::<Vec<_>>()
    };
    let cases: [(&[&str], i32, &[&str], i32); 5] = [
        (&["40%", "60%", "100%"], 0, &["20%", "50%", "100%"], 2),
        (&["40%", "60%", "100%"], 0, &["20%", "40%", "100%"], 2),
        (&["20%", "40%", "100%"], 1, &["40%", "60%", "100%"], 1),
        (&["20%", "40%", "100%"], 0, &["10%", "30%", "100%"], 2),
        (&["10%", "20%", "30%"], 0, &["10%", "10%"], 1),
    ];
    for (old, at, new, want) in cases {
        let br = br_with(old, at);
        assert_eq!(
            recalculate_canary_step(&steps(new), Some(&br), 10, None),
            want,
            "{old:?}@{at} -> {new:?}"
        );
    }
    assert_eq!(
        recalculate_canary_step(&steps(&["50%"]), None, 10, Some(3)),
        1
    );
}

// --- V14 doCanaryPaused --------------------------------------------------------------------

#[test]
fn v14_pauses_wait_for_approval_or_their_duration_and_a_final_100_percent_string_does_not() {
    let four = vec![
        step(int(1), None, true),
        step(int(2), None, true),
        step(int(3), None, false),
        step(pct("100%"), None, true),
    ];
    let p = do_canary_paused(&four, 3, Some(t0()), secs(100));
    assert!(!p.done);
    assert_eq!(
        p.message.as_deref(),
        Some("Rollout is in step(3/4), and you need manually confirm to enter the next step")
    );
    assert_eq!(p.recheck, None);
    assert!(do_canary_paused(&four, 4, Some(t0()), t0()).done);
    let int_last = vec![step(int(1), None, true), step(int(10), None, true)];
    assert!(!do_canary_paused(&int_last, 2, Some(t0()), t0()).done);
    let timed = vec![step(int(1), Some(10), false), step(pct("100%"), None, true)];
    let p = do_canary_paused(&timed, 1, Some(t0()), secs(11));
    assert!(p.done);
    assert_eq!(
        p.message.as_deref(),
        Some("Rollout is in step(1/2), and wait duration(10 seconds) to enter the next step")
    );
    let p = do_canary_paused(&timed, 1, Some(t0()), secs(5));
    assert!(!p.done);
    assert_eq!(p.recheck, Some(secs(10)));
}

// --- V15 calculateRolloutStatus ------------------------------------------------------------

#[test]
fn v15_the_phase_machine() {
    let r = rollout(vec![step(int(1), None, true)]);
    let (_, s) = calculate_rollout_status(&r, "h", None, t0());
    let s = s.unwrap();
    assert_eq!(s.phase.as_deref(), Some(phase::INITIAL));
    assert_eq!(s.message.as_deref(), Some("Workload Not Found"));
    let mut disabled = r.clone();
    disabled.spec.disabled = true;
    let (_, s) = calculate_rollout_status(&disabled, "h", None, t0());
    assert_eq!(s.unwrap().phase.as_deref(), Some(phase::DISABLED));
    let mut progressing = disabled.clone();
    progressing.status = Some(RolloutStatus {
        phase: Some(phase::PROGRESSING.into()),
        ..RolloutStatus::default()
    });
    let w = cloneset(10, "v1", "v1");
    let (_, s) = calculate_rollout_status(&progressing, "h", Some(&w), t0());
    let s = s.unwrap();
    assert_eq!(s.phase.as_deref(), Some(phase::DISABLING));
    assert_eq!(
        s.message.as_deref(),
        Some("Disabling rollout, release resources")
    );
    let mut deleting = r.clone();
    deleting.metadata.deletion_timestamp = Some(Time(t0()));
    let (_, s) = calculate_rollout_status(&deleting, "h", Some(&w), t0());
    let s = s.unwrap();
    assert_eq!(s.phase.as_deref(), Some(phase::TERMINATING));
    let c = s
        .conditions
        .iter()
        .find(|c| c.type_ == "Terminating")
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("True", "InTerminating")
    );
    assert_eq!(c.message, "Rollout is in terminating");
    let mut healthy = r.clone();
    healthy.status = Some(RolloutStatus {
        phase: Some(phase::HEALTHY.into()),
        conditions: vec![status::new_condition("Succeeded", "True", "", "", t0())],
        ..RolloutStatus::default()
    });
    let mut released = cloneset(10, "v1", "v2");
    released.annotations.insert(
        keys::ROLLOUT_IN_PROGRESSING.into(),
        "{\"rolloutName\":\"rollout-demo\"}".into(),
    );
    let (_, s) = calculate_rollout_status(&healthy, "h", Some(&released), secs(7));
    let s = s.unwrap();
    assert_eq!(s.phase.as_deref(), Some(phase::PROGRESSING));
    assert_eq!(s.conditions.len(), 1, "Succeeded is removed");
    let c = &s.conditions[0];
    assert_eq!(
        (c.type_.as_str(), c.reason.as_str()),
        ("Progressing", "Initializing")
    );
    assert_eq!(c.last_update_time, Some(Time(secs(7))));
    let mut stale = released.clone();
    stale.generation = 2;
    assert_eq!(
        calculate_rollout_status(&healthy, "h", Some(&stale), t0()),
        (true, None)
    );
}

#[test]
fn first_reconcile_goes_healthy_and_the_next_synthesizes_a_completed_status() {
    let r = rollout(vec![
        step(int(1), None, true),
        step(pct("50%"), Some(60), false),
        step(pct("100%"), None, true),
    ]);
    let w = cloneset(10, "v1", "v1");
    let out = reconcile(&r, Some(&w), None, t0());
    assert_eq!(out.finalizer, Some(FinalizerOp::Add));
    assert_eq!(
        out.workload_patches,
        vec![
            serde_json::json!({"metadata": {"labels": {"rollouts.kruise.io/workload-type": "cloneset"}}})
        ]
    );
    let hash = calculate_rollout_hash(&r);
    assert_eq!(
        out.rollout_patches,
        vec![serde_json::json!({"metadata": {"annotations": {"rollouts.kruise.io/hash": hash}}})]
    );
    let s = out.status.clone().unwrap();
    assert_eq!(s.phase.as_deref(), Some(phase::HEALTHY));
    assert_eq!(s.message.as_deref(), Some("rollout is healthy"));
    assert!(s.canary_status.is_none());
    let mut r2 = r.clone();
    r2.status = Some(s);
    let out = reconcile(&r2, Some(&w), None, t0());
    let s = out.status.unwrap();
    assert_eq!(
        s.message.as_deref(),
        Some("workload deployment is completed")
    );
    assert_eq!(
        (s.current_step_index, s.current_step_state.as_str()),
        (3, "Completed")
    );
    let cs = s.canary_status.unwrap();
    assert_eq!((cs.current_step_index, cs.next_step_index), (3, -1));
    assert_eq!(cs.observed_rollout_id.as_deref(), Some("v1"));
    assert_eq!(cs.canary_revision, "v1");
    assert_eq!(cs.stable_revision.as_deref(), Some("v1"));
    assert_eq!(cs.rollout_hash.as_deref(), Some(hash.as_str()));
}

#[test]
fn unsupported_rollouts_are_left_alone() {
    let mut r = rollout(vec![step(int(1), None, true)]);
    r.spec.workload_ref = WorkloadRef {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "d".into(),
    };
    let out = reconcile(&r, None, None, t0());
    assert!(out.unsupported);
    assert_eq!(out.status, None);
    let mut bg = rollout(vec![]);
    bg.spec.strategy.canary = None;
    bg.spec.strategy.blue_green = Some(serde_json::json!({"steps": []}));
    assert!(reconcile(&bg, None, None, t0()).unsupported);
}

// --- V16 calculateRolloutHash --------------------------------------------------------------

#[test]
fn v16_pause_failure_threshold_and_paused_do_not_change_the_hash_steps_do() {
    let r = rollout(vec![
        step(pct("20%"), Some(10), false),
        step(pct("100%"), None, true),
    ]);
    let h = calculate_rollout_hash(&r);
    assert_eq!(h.len(), 64);
    assert!(h.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    let mut paused = r.clone();
    paused.spec.strategy.paused = true;
    assert_eq!(calculate_rollout_hash(&paused), h);
    let mut threshold = r.clone();
    if let Some(c) = threshold.spec.strategy.canary.as_mut() {
        c.failure_threshold = Some(pct("20%"));
        c.steps[0].pause = None;
        c.steps[1].pause = Some(RolloutPause { duration: Some(5) });
    }
    assert_eq!(calculate_rollout_hash(&threshold), h);
    let mut steps = r.clone();
    if let Some(c) = steps.spec.strategy.canary.as_mut() {
        c.steps[0].replicas = Some(pct("30%"));
    }
    assert_ne!(calculate_rollout_hash(&steps), h);
}

// --- V19 nextCanaryTask --------------------------------------------------------------------

#[test]
fn v19_finalising_task_order() {
    use FinaliseReason::*;
    assert_eq!(
        next_canary_task(Success, ""),
        finalising_step::RESTORE_STABLE_SERVICE
    );
    assert_eq!(
        next_canary_task(Success, finalising_step::RESUME_WORKLOAD),
        finalising_step::RELEASE_WORKLOAD_CONTROL
    );
    assert_eq!(
        next_canary_task(Success, finalising_step::RELEASE_WORKLOAD_CONTROL),
        finalising_step::END
    );
    assert_eq!(
        next_canary_task(Rollback, ""),
        finalising_step::ROUTE_TRAFFIC_TO_STABLE
    );
    assert_eq!(
        next_canary_task(Rollback, finalising_step::REMOVE_CANARY_SERVICE),
        finalising_step::END
    );
    assert_eq!(next_canary_task(Disabled, "bogus"), finalising_step::END);
}

#[test]
fn finalising_runs_the_first_task_twice_and_removes_the_in_progressing_annotation_first() {
    let mut r = rollout(vec![step(pct("100%"), None, true)]);
    r.metadata.deletion_timestamp = Some(Time(t0()));
    r.metadata.finalizers = Some(vec![keys::ROLLOUT_FINALIZER.into()]);
    r.status = Some(RolloutStatus {
        phase: Some(phase::TERMINATING.into()),
        conditions: vec![status::new_condition(
            "Terminating",
            "True",
            "InTerminating",
            "",
            t0(),
        )],
        ..RolloutStatus::default()
    });
    r = with_canary(
        r,
        CanaryStatus {
            current_step_index: 1,
            current_step_state: step_state::STEP_UPGRADE.into(),
            canary_revision: "v2".into(),
            ..CanaryStatus::default()
        },
    );
    let mut w = cloneset(10, "v1", "v2");
    w.annotations
        .insert(keys::ROLLOUT_IN_PROGRESSING.into(), "{}".into());
    w.labels
        .insert(keys::ROLLOUT_WORKLOAD_TYPE.into(), "cloneset".into());
    let br = build_batch_release(&r, "v2", 0, false);
    let mut seen = Vec::new();
    let mut cur = r;
    let mut patched = false;
    for _ in 0..8 {
        let out = reconcile(&cur, Some(&w), Some(&br), t0());
        assert_eq!(
            out.workload_patches.first(),
            Some(
                &serde_json::json!({"metadata": {"annotations": {keys::ROLLOUT_IN_PROGRESSING: null}}})
            )
        );
        if !out.batch_release.is_empty() {
            assert_eq!(
                out.batch_release,
                vec![BrAction::Patch(serde_json::json!({
                    "spec": {"releasePlan": {"batchPartition": null, "finalizingPolicy": "Immediate"}}
                }))]
            );
            patched = true;
            break;
        }
        let s = out.status.unwrap();
        seen.push(s.canary_status.clone().unwrap().finalising_step);
        cur.status = Some(s);
    }
    assert!(patched);
    // The first reconcile stores the first task, runs it, and stores it again (nextStep was
    // computed from ""): RestoreStableService runs in the first two reconciles.
    assert_eq!(
        seen,
        [
            "RestoreStableService",
            "FinalisingStepRouteTrafficToStable",
            "RemoveCanaryService",
            "ResumeWorkload",
        ]
    );
}

// --- V20 undo --fast -----------------------------------------------------------------------

#[test]
fn v20_fast_undo_picks_the_previous_step_without_traffic_with_the_most_replicas() {
    let with_traffic = |r: &str, t: Option<&str>| CanaryStep {
        replicas: Some(pct(r)),
        traffic: t.map(Into::into),
        ..CanaryStep::default()
    };
    let mut r = rollout(vec![
        with_traffic("10%", None),
        with_traffic("20%", None),
        with_traffic("30%", None),
    ]);
    r.status = Some(RolloutStatus {
        current_step_index: 3,
        ..RolloutStatus::default()
    });
    assert_eq!(undo::fast_undo_target(&r, 2), Ok(2));
    let mut r4 = rollout(vec![
        with_traffic("10%", None),
        with_traffic("20%", None),
        with_traffic("30%", Some("50%")),
        with_traffic("40%", Some("50%")),
    ]);
    r4.status = Some(RolloutStatus {
        current_step_index: 4,
        ..RolloutStatus::default()
    });
    assert_eq!(undo::fast_undo_target(&r4, -1), Ok(2));
    let mut all = rollout(vec![
        with_traffic("10%", Some("5%")),
        with_traffic("20%", Some("5%")),
    ]);
    all.status = Some(RolloutStatus {
        current_step_index: 2,
        ..RolloutStatus::default()
    });
    assert_eq!(
        undo::fast_undo_target(&all, -1),
        Err("no previous step with no traffic found".into())
    );
    r.status = Some(RolloutStatus {
        current_step_index: 1,
        ..RolloutStatus::default()
    });
    assert!(
        undo::fast_undo_target(&r, -1)
            .unwrap_err()
            .starts_with("already at the first step")
    );
}

// --- Finalizer -----------------------------------------------------------------------------

#[test]
fn the_finalizer_goes_once_terminating_completed() {
    let mut r = rollout(vec![step(int(1), None, true)]);
    r.metadata.finalizers = Some(vec![keys::ROLLOUT_FINALIZER.into()]);
    assert_eq!(reconcile(&r, None, None, t0()).finalizer, None);
    r.metadata.deletion_timestamp = Some(Time(t0()));
    r.status = Some(RolloutStatus {
        phase: Some(phase::TERMINATING.into()),
        conditions: vec![status::new_condition(
            "Terminating",
            "False",
            "Completed",
            "",
            t0(),
        )],
        ..RolloutStatus::default()
    });
    assert_eq!(
        reconcile(&r, None, None, t0()).finalizer,
        Some(FinalizerOp::Remove)
    );
}

#[test]
fn a_terminating_rollout_without_a_run_completes_at_once() {
    let mut r = rollout(vec![step(int(1), None, true)]);
    r.metadata.deletion_timestamp = Some(Time(t0()));
    r.status = Some(RolloutStatus {
        phase: Some(phase::TERMINATING.into()),
        conditions: vec![status::new_condition(
            "Terminating",
            "True",
            "InTerminating",
            "m",
            t0(),
        )],
        ..RolloutStatus::default()
    });
    let s = reconcile(&r, None, None, t0()).status.unwrap();
    let c = s
        .conditions
        .iter()
        .find(|c| c.type_ == "Terminating")
        .unwrap();
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "Completed")
    );
}
