//! Multi-reconcile walks of the Rollout port with the BatchRelease's answers set by hand:
//! research §3.12 (CloneSet of 10, steps `1`, `50%` paused 60 s, `100%`) and V22 (the e2e
//! "CloneSet, Partition, patch nextStepIndex to jump").

use super::sim::Sim;
use super::tests::{cloneset, int, pct, rollout, secs, step};
use super::*;
use crate::api::rollout::{
    BatchReleaseStatus, CanaryStep, batch, finalising_step, phase, step_state,
};
use crate::kruise::rollout::hash_release_plan;

fn partitions(br: &BatchRelease) -> Option<i32> {
    br.spec.release_plan.batch_partition
}

#[test]
fn worked_example_cloneset_of_ten_one_then_half_paused_sixty_seconds_then_all() {
    let steps = vec![
        step(int(1), None, true),
        step(pct("50%"), Some(60), false),
        step(pct("100%"), None, true),
    ];
    let mut sim = Sim::new(rollout(steps), cloneset(10, "v1", "v1"));
    // 1: created → Healthy, then the synthesized completed status.
    sim.reconcile();
    assert_eq!(sim.rollout.phase(), phase::HEALTHY);
    assert_eq!(sim.workload.labels[keys::ROLLOUT_WORKLOAD_TYPE], "cloneset");
    assert!(
        sim.rollout
            .metadata
            .annotations
            .as_ref()
            .unwrap()
            .contains_key(keys::ROLLOUT_HASH)
    );
    sim.reconcile();
    assert_eq!(sim.at(), (3, "Completed".into()));
    assert_eq!(sim.message(), "workload deployment is completed");
    assert_eq!(sim.reconcile().status, None, "nothing more to write");
    // 2-3: the image changes (the webhook's interception) → Progressing/Initializing.
    sim.release("v2");
    sim.reconcile();
    assert_eq!(sim.rollout.phase(), phase::PROGRESSING);
    assert_eq!(sim.reason(), "Initializing");
    sim.now = secs(1);
    let out = sim.reconcile();
    assert_eq!(out.requeue_at, Some(secs(4)), "the 3 s grace");
    assert_eq!(sim.reason(), "Initializing");
    assert_eq!(sim.at(), (1, "BeforeStepUpgrade".into()));
    // 4: past the grace → InRolling, then step 1 upgrades and the BatchRelease is created.
    sim.now = secs(4);
    sim.reconcile();
    assert_eq!(sim.reason(), "InRolling");
    assert_eq!(sim.message(), "Rollout is in Progressing");
    sim.reconcile();
    assert_eq!(sim.at(), (1, "StepUpgrade".into()));
    sim.reconcile();
    let br = sim.br.clone().expect("created");
    assert_eq!(br.metadata.name.as_deref(), Some("rollout-demo"));
    let owner = &br.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("Rollout", Some(true))
    );
    let batches: Vec<_> = br
        .spec
        .release_plan
        .batches
        .iter()
        .map(|b| b.canary_replicas.clone())
        .collect();
    assert_eq!(batches, vec![int(1), pct("50%"), pct("100%")]);
    assert_eq!(partitions(&br), Some(0));
    assert_eq!(br.spec.release_plan.rollout_id.as_deref(), Some("v2"));
    assert_eq!(
        br.spec.release_plan.rolling_style.as_deref(),
        Some("Partition")
    );
    assert_eq!(
        sim.message(),
        "Rollout is in step(1/3), and upgrade workload to new version"
    );
    // The BatchRelease has not observed its plan: not done.
    sim.reconcile();
    assert_eq!(sim.at(), (1, "StepUpgrade".into()));
    // 5-6: batch 0 Ready with 1 pod → traffic routing (display only) → analysis → paused.
    sim.br_ready(0, 1);
    sim.now = secs(5);
    sim.reconcile();
    assert_eq!(sim.at(), (1, "StepTrafficRouting".into()));
    assert_eq!(
        sim.events.last().map(String::as_str),
        Some("upgrade step(1) canary pods with new versions done")
    );
    assert_eq!(sim.cs().canary_replicas, 1);
    assert_eq!(
        sim.cs().message.as_deref(),
        Some("BatchRelease is at state Ready, rollout-id v2, step 1")
    );
    let out = sim.reconcile();
    assert_eq!(out.requeue_at, Some(secs(8)));
    assert_eq!(sim.at(), (1, "StepMetricsAnalysis".into()));
    sim.reconcile();
    assert_eq!(sim.at(), (1, "StepPaused".into()));
    let out = sim.reconcile();
    assert_eq!(out.requeue_at, None, "waits for approval");
    assert_eq!(
        sim.message(),
        "Rollout is in step(1/3), and you need manually confirm to enter the next step"
    );
    // 7: approve → step 2, the BatchRelease moves to batch 1.
    sim.approve();
    sim.now = secs(10);
    sim.reconcile();
    assert_eq!(sim.at(), (2, "BeforeStepUpgrade".into()));
    assert_eq!(sim.cs().next_step_index, 3);
    sim.reconcile();
    sim.reconcile();
    assert_eq!(partitions(sim.br.as_ref().unwrap()), Some(1));
    sim.reconcile();
    assert_eq!(
        sim.at(),
        (2, "StepUpgrade".into()),
        "the new plan is not yet observed"
    );
    sim.br_ready(1, 5);
    sim.now = secs(20);
    sim.reconcile();
    sim.reconcile();
    sim.reconcile();
    assert_eq!(sim.at(), (2, "StepPaused".into()));
    // 8: the 60 s pause runs from the lastUpdateTime of traffic routing (t=20).
    let out = sim.reconcile();
    assert_eq!(out.requeue_at, Some(secs(80)));
    assert_eq!(
        sim.message(),
        "Rollout is in step(2/3), and wait duration(60 seconds) to enter the next step"
    );
    sim.now = secs(81);
    sim.reconcile();
    assert_eq!(sim.at(), (2, "StepReady".into()));
    // 9-10: step 3, 100%: the traffic-routing state is bypassed, no pause, Completed.
    sim.reconcile();
    sim.reconcile();
    sim.reconcile();
    assert_eq!(partitions(sim.br.as_ref().unwrap()), Some(2));
    sim.br_ready(2, 10);
    sim.reconcile();
    assert_eq!(sim.at(), (3, "StepMetricsAnalysis".into()));
    sim.reconcile();
    sim.reconcile();
    assert_eq!(sim.at(), (3, "StepReady".into()));
    sim.reconcile();
    assert_eq!(sim.at(), (3, "Completed".into()));
    sim.reconcile();
    assert_eq!(sim.reason(), "Finalising");
    assert_eq!(
        sim.message(),
        "Rollout has been completed and some closing work is being done"
    );
    // 11: finalising: the annotation goes first, then the tasks up to ResumeWorkload.
    for _ in 0..10 {
        sim.reconcile();
        if sim.cs().finalising_step == finalising_step::RESUME_WORKLOAD
            && sim
                .br
                .as_ref()
                .unwrap()
                .spec
                .release_plan
                .batch_partition
                .is_none()
        {
            break;
        }
    }
    assert!(
        !sim.workload
            .annotations
            .contains_key(keys::ROLLOUT_IN_PROGRESSING)
    );
    let plan = &sim.br.as_ref().unwrap().spec.release_plan;
    assert_eq!(
        (plan.batch_partition, plan.finalizing_policy.as_deref()),
        (None, Some("WaitResume"))
    );
    sim.reconcile();
    assert_eq!(
        sim.cs().finalising_step,
        finalising_step::RESUME_WORKLOAD,
        "waits for Completed"
    );
    sim.br.as_mut().unwrap().status.as_mut().unwrap().phase = Some(batch::COMPLETED.into());
    sim.reconcile();
    assert_eq!(
        sim.cs().finalising_step,
        finalising_step::RELEASE_WORKLOAD_CONTROL
    );
    // 12: the BatchRelease is deleted, END, Completed/Succeeded, Healthy.
    sim.reconcile();
    assert!(sim.br.is_none());
    sim.reconcile();
    assert_eq!(sim.cs().finalising_step, finalising_step::END);
    let s = sim.rollout.status.clone().unwrap();
    let progressing = s
        .conditions
        .iter()
        .find(|c| c.type_ == "Progressing")
        .unwrap();
    assert_eq!(
        (progressing.status.as_str(), progressing.reason.as_str()),
        ("False", "Completed")
    );
    assert_eq!(sim.message(), "Rollout progressing has been completed");
    let succeeded = s
        .conditions
        .iter()
        .find(|c| c.type_ == "Succeeded")
        .unwrap();
    assert_eq!(succeeded.status, "True");
    sim.reconcile();
    assert_eq!(sim.rollout.phase(), phase::HEALTHY);
    assert_eq!(sim.at(), (3, "Completed".into()), "the sub-status is kept");
}

#[test]
fn v22_jump_and_traffic_edit_on_a_cloneset_of_five() {
    let mut steps: Vec<CanaryStep> = ["20%", "40%", "60%", "80%", "100%"]
        .iter()
        .map(|r| step(pct(r), None, true))
        .collect();
    steps[0].traffic = Some("20%".into());
    let mut sim = Sim::new(rollout(steps), cloneset(5, "v1", "v1"));
    sim.reconcile();
    sim.reconcile();
    sim.release("v2");
    sim.reconcile();
    sim.now = secs(10);
    sim.reconcile();
    // Drive to StepPaused of each step, answering as the BatchRelease would.
    let drive = |sim: &mut Sim, step: i32, updated: i32| {
        for _ in 0..12 {
            sim.reconcile();
            let stale = sim.br.as_ref().is_some_and(|b| {
                partitions(b) == Some(step - 1)
                    && b.status
                        .as_ref()
                        .and_then(|s| s.observed_release_plan_hash.clone())
                        != Some(hash_release_plan(&b.spec.release_plan))
            });
            if stale && sim.cs().current_step_state == step_state::STEP_UPGRADE {
                sim.br_ready(step - 1, updated);
            }
            if sim.at() == (step, step_state::STEP_PAUSED.into()) && sim.last.status.is_none() {
                return;
            }
        }
        panic!("step {step} did not reach StepPaused: {:?}", sim.at());
    };
    for (i, updated) in [(1, 1), (2, 2), (3, 3)] {
        drive(&mut sim, i, updated);
        assert_eq!(sim.cs().canary_replicas, updated);
        assert_eq!(sim.cs().next_step_index, i + 1);
        if i < 3 {
            sim.approve();
        }
    }
    // A traffic edit of step 3 is a plan change: step 3 again, same updated count.
    if let Some(c) = sim.rollout.spec.strategy.canary.as_mut() {
        c.steps[2].traffic = Some("40%".into());
    }
    sim.reconcile();
    assert_eq!(sim.at(), (3, "StepTrafficRouting".into()));
    assert_eq!(
        sim.cs().rollout_hash.as_deref(),
        Some(calculate_rollout_hash(&sim.rollout).as_str())
    );
    drive(&mut sim, 3, 3);
    sim.approve();
    drive(&mut sim, 4, 4);
    // Jump back 4 → 3: BeforeStepUpgrade (3 ≠ 4 updated), the BatchRelease goes to batch 2,
    // the partition never rises so 4 stay updated.
    sim.rollout
        .status
        .as_mut()
        .unwrap()
        .canary_status
        .as_mut()
        .unwrap()
        .next_step_index = 3;
    sim.reconcile();
    assert_eq!(sim.at(), (3, "BeforeStepUpgrade".into()));
    assert_eq!(sim.cs().next_step_index, 4);
    sim.reconcile();
    sim.reconcile();
    assert_eq!(partitions(sim.br.as_ref().unwrap()), Some(2));
    sim.br_ready(2, 4);
    drive(&mut sim, 3, 4);
    assert_eq!(sim.cs().canary_replicas, 4);
}

#[test]
fn a_rollback_mid_way_cancels_and_a_continuous_release_restarts() {
    let steps = vec![step(int(1), None, true), step(pct("100%"), None, true)];
    let mut sim = Sim::new(rollout(steps.clone()), cloneset(10, "v1", "v1"));
    sim.reconcile();
    sim.reconcile();
    sim.release("v2");
    sim.reconcile();
    sim.now = secs(10);
    for _ in 0..3 {
        sim.reconcile();
    }
    sim.br_ready(0, 1);
    for _ in 0..4 {
        sim.reconcile();
    }
    assert_eq!(sim.at(), (1, "StepPaused".into()));
    let paused = sim.clone_state();
    // v3 over v2: continuous release → the BatchRelease is deleted, then Initializing again.
    sim.release("v3");
    sim.reconcile();
    assert!(sim.br.is_none());
    assert_eq!(
        sim.events.last().map(String::as_str),
        Some("workload continuous publishing canaryRevision, then restart publishing")
    );
    sim.reconcile();
    assert_eq!(sim.reason(), "Initializing");
    assert_eq!(sim.message(), "Workload is continuous release");
    assert!(sim.rollout.canary_status().is_none());
    // Revert to v1 instead: rollback directly → Cancelling → finalise (Immediate) → Healthy.
    let mut sim = paused;
    sim.workload.canary_revision = "v1".into();
    sim.workload.in_rollback = true;
    sim.reconcile();
    assert_eq!(sim.reason(), "Cancelling");
    assert_eq!(
        sim.message(),
        "The workload has been rolled back and the rollout process will be cancelled"
    );
    for _ in 0..6 {
        sim.reconcile();
        if sim
            .br
            .as_ref()
            .is_some_and(|b| b.spec.release_plan.batch_partition.is_none())
        {
            break;
        }
    }
    assert_eq!(
        sim.br
            .as_ref()
            .unwrap()
            .spec
            .release_plan
            .finalizing_policy
            .as_deref(),
        Some("Immediate")
    );
    sim.br.as_mut().unwrap().status.as_mut().unwrap().phase = Some(batch::COMPLETED.into());
    for _ in 0..8 {
        sim.reconcile();
    }
    assert_eq!(sim.rollout.phase(), phase::HEALTHY);
    assert_eq!(sim.message(), "Rollout progressing has been cancelled");
    let succeeded = sim.rollout.condition("Succeeded").unwrap();
    assert_eq!(succeeded.status, "False");
    assert_eq!(
        sim.at(),
        (1, "StepPaused".into()),
        "the sub-status is not cleared (rollouts#339)"
    );
}

#[test]
fn pause_blocks_the_step_machine_and_resume_keeps_the_paused_message() {
    let steps = vec![step(int(1), Some(0), false), step(pct("100%"), None, true)];
    let mut sim = Sim::new(rollout(steps), cloneset(10, "v1", "v1"));
    sim.reconcile();
    sim.reconcile();
    sim.release("v2");
    sim.reconcile();
    sim.now = secs(10);
    sim.reconcile();
    sim.rollout.spec.strategy.paused = true;
    sim.reconcile();
    assert_eq!(sim.reason(), "Paused");
    assert_eq!(
        sim.message(),
        "Rollout has been paused, you can resume it by kube-cli"
    );
    sim.reconcile();
    assert_eq!(
        sim.at(),
        (1, "BeforeStepUpgrade".into()),
        "no step moves while paused"
    );
    sim.rollout.spec.strategy.paused = false;
    sim.reconcile();
    assert_eq!(sim.reason(), "InRolling");
    assert_eq!(
        sim.message(),
        "Rollout has been paused, you can resume it by kube-cli"
    );
}

#[test]
fn disabling_mid_way_promotes_with_the_immediate_policy() {
    let steps = vec![step(int(1), None, true), step(pct("100%"), None, true)];
    let mut sim = Sim::new(rollout(steps), cloneset(10, "v1", "v1"));
    sim.reconcile();
    sim.reconcile();
    sim.release("v2");
    sim.reconcile();
    sim.now = secs(10);
    for _ in 0..3 {
        sim.reconcile();
    }
    assert!(sim.br.is_some());
    sim.rollout.spec.disabled = true;
    sim.reconcile();
    assert_eq!(sim.rollout.phase(), phase::DISABLING);
    // The same pass still ran the old phase's (Progressing) step machine, as upstream's
    // dispatch on the read phase does: its message overwrote "Disabling rollout, ...".
    assert_eq!(
        sim.message(),
        "Rollout is in step(1/2), and upgrade workload to new version"
    );
    for _ in 0..6 {
        sim.reconcile();
    }
    let plan = &sim.br.as_ref().unwrap().spec.release_plan;
    assert_eq!(
        (plan.batch_partition, plan.finalizing_policy.as_deref()),
        (None, Some("Immediate"))
    );
    sim.br.as_mut().unwrap().status = Some(BatchReleaseStatus {
        phase: Some(batch::COMPLETED.into()),
        ..BatchReleaseStatus::default()
    });
    for _ in 0..4 {
        sim.reconcile();
    }
    assert!(sim.br.is_none());
    assert_eq!(sim.rollout.phase(), phase::DISABLED);
    assert_eq!(sim.message(), "Rollout is disabled");
}
