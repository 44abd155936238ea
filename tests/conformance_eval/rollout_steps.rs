//! rollout-steps.json (doStepJump, recalculateCanaryStep, doCanaryPaused),
//! rollout-finalise.json (nextCanaryTask) and rollout-undo.json (kubectl-kruise
//! `rollout undo --fast`): the Rollout port's step arithmetic.

use kruise_tui::api::rollout::{
    BatchRelease, CanaryStatus, CanaryStep, ReleaseBatch, Rollout, RolloutStatus,
};
use kruise_tui::kruise::rollout::controller::{
    FinaliseReason, do_canary_paused, do_step_jump, next_canary_task, recalculate_canary_step, undo,
};
use serde_json::{Value, json};

use crate::eval::common::{expect_eq, expect_subset, expected, input, parse};

fn now() -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_767_225_600).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

fn int(v: &Value, what: &str) -> Result<i32, String> {
    v.get(what)
        .and_then(Value::as_i64)
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| format!("input has no integer {what}"))
}

/// A Rollout with `steps` (only its steps matter to these functions).
fn with_steps(steps: &[CanaryStep]) -> Rollout {
    let mut r = Rollout::default();
    r.spec.strategy.canary = Some(kruise_tui::api::rollout::CanaryStrategy {
        steps: steps.to_vec(),
        ..Default::default()
    });
    r
}

pub fn steps(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let exp = expected(case)?;
    match op.ok_or("case has no op")? {
        "doStepJump" => {
            let steps: Vec<CanaryStep> = parse("steps", &inp["steps"])?;
            let jump: Vec<CanaryStep> = match inp.get("jumpSteps") {
                Some(v) => parse("jumpSteps", v)?,
                None => steps.clone(),
            };
            let sub: Option<CanaryStatus> = parse("status", &inp["status"])?;
            let mut status = RolloutStatus {
                canary_status: sub,
                ..RolloutStatus::default()
            };
            let before = status.clone();
            let jumped = do_step_jump(
                &with_steps(&steps),
                &mut status,
                &jump,
                int(inp, "replicas")?,
                now(),
            );
            let actual = match &status.canary_status {
                Some(cs) => json!({
                    "jumped": jumped,
                    "unchanged": status == before,
                    "currentStepIndex": cs.current_step_index,
                    "nextStepIndex": cs.next_step_index,
                    "currentStepState": cs.current_step_state,
                }),
                None => json!({"jumped": jumped, "unchanged": status == before}),
            };
            expect_subset(exp, &actual)
        }
        "recalculateCanaryStep" => {
            let steps: Vec<CanaryStep> = parse("steps", &inp["steps"])?;
            let br = if inp["batchRelease"].is_null() {
                None
            } else {
                let batches: Vec<ReleaseBatch> = parse("batches", &inp["batchRelease"]["batches"])?;
                let mut br = BatchRelease::default();
                br.spec.release_plan.batches = batches;
                br.spec.release_plan.batch_partition =
                    Some(int(&inp["batchRelease"], "batchPartition")?);
                Some(br)
            };
            let current = inp
                .get("currentStepIndex")
                .and_then(Value::as_i64)
                .and_then(|i| i32::try_from(i).ok());
            let got = recalculate_canary_step(&steps, br.as_ref(), int(inp, "replicas")?, current);
            expect_eq(exp, &json!({"stepIndex": got}))
        }
        "doCanaryPaused" => {
            let steps: Vec<CanaryStep> = parse("steps", &inp["steps"])?;
            let ago = i64::from(int(inp, "lastUpdateSecondsAgo")?);
            let last = now() - jiff::SignedDuration::from_secs(ago);
            let p = do_canary_paused(&steps, int(inp, "currentStepIndex")?, Some(last), now());
            let recheck = p.recheck.map(|t| (t - now()).get_seconds());
            expect_subset(
                exp,
                &json!({"done": p.done, "message": p.message, "recheckInSeconds": recheck}),
            )
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

pub fn finalise(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    match op.ok_or("case has no op")? {
        "nextCanaryTask" => {
            let reason = inp["reason"].as_str().unwrap_or_default();
            let reason =
                FinaliseReason::parse(reason).ok_or_else(|| format!("unknown reason {reason}"))?;
            let next = next_canary_task(reason, inp["current"].as_str().unwrap_or_default());
            expect_eq(expected(case)?, &json!({"next": next}))
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

pub fn undo(op: Option<&str>, case: &Value) -> Result<(), String> {
    crate::eval::common::no_op(op, "rollout-undo.json")?;
    let inp = input(case)?;
    let steps: Vec<CanaryStep> = parse("steps", &inp["steps"])?;
    let mut r = with_steps(&steps);
    r.status = Some(RolloutStatus {
        current_step_index: int(inp, "currentStepIndex")?,
        ..RolloutStatus::default()
    });
    let actual = match undo::fast_undo_target(&r, int(inp, "target")?) {
        Ok(k) => json!({"nextStepIndex": k}),
        Err(e) => json!({"error": e}),
    };
    expect_eq(expected(case)?, &actual)
}
