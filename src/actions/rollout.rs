//! The actions on a Kruise Rollout (`rollouts.kruise.io`): approve the step waiting for approval,
//! pause or resume the Rollout, and roll back the way the Rollout does it (the workload's
//! template back to the stable revision, then the Rollout resumed). The writes are the ones
//! kubectl-kruise makes (research `kruise-rollout.md` §6, §7.3), with the console's
//! preconditions: an approval is refused unless the step the user saw is waiting for it, and
//! pinned with the Rollout's resourceVersion.

use serde_json::{Value, json};

use super::{
    Action, ActionError, ApiRequest, ObjectState, Prepared, Target,
    prepare::{api_path, present, undo_target},
};
use crate::api::{
    keys,
    kinds::{self, KindInfo},
    rollout::{condition, phase, step_state},
};

/// How a merge patch is sent (kubectl-kruise's `types.MergePatchType`).
pub const MERGE_PATCH: &str = "application/merge-patch+json";

/// What a Rollout's status says about the step the user saw, read from the object as served
/// (v1beta1 or v1alpha1: the status fields read here have one shape).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepView {
    pub phase: String,
    /// The Progressing condition's reason (`InRolling`, `Paused`, …), `""` without one.
    pub reason: String,
    /// `canaryStatus` or `blueGreenStatus`: the sub-status an approval writes.
    pub sub_status: Option<&'static str>,
    /// 1-based.
    pub index: i32,
    pub state: String,
    /// The number of steps.
    pub steps: usize,
}

impl StepView {
    pub fn read(object: &Value) -> StepView {
        let status = &object["status"];
        let sub_status = ["canaryStatus", "blueGreenStatus"]
            .into_iter()
            .find(|k| status[*k].is_object());
        let sub = sub_status.map_or(&Value::Null, |k| &status[k]);
        let reason = status["conditions"]
            .as_array()
            .and_then(|cs| {
                cs.iter()
                    .find(|c| c["type"] == condition::PROGRESSING)
                    .and_then(|c| c["reason"].as_str())
            })
            .unwrap_or_default();
        StepView {
            phase: status["phase"].as_str().unwrap_or_default().to_owned(),
            reason: reason.to_owned(),
            sub_status,
            index: sub["currentStepIndex"]
                .as_i64()
                .and_then(|i| i32::try_from(i).ok())
                .unwrap_or(0),
            state: sub["currentStepState"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            steps: steps_of(object).len(),
        }
    }

    /// `step 2/3 (StepPaused)`.
    pub fn describe(&self) -> String {
        format!("step {}/{} ({})", self.index, self.steps, self.state)
    }

    /// Whether the Rollout is at `step`, paused and waiting for approval there.
    pub fn waits_at(&self, step: i32) -> bool {
        self.phase == phase::PROGRESSING
            && self.index == step
            && self.state == step_state::STEP_PAUSED
    }
}

/// The steps of a served Rollout (v1beta1 `spec.strategy.canary.steps`; v1alpha1 the same).
pub fn steps_of(object: &Value) -> &[Value] {
    object
        .pointer("/spec/strategy/canary/steps")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `spec.strategy.paused`.
pub fn paused(object: &Value) -> bool {
    object
        .pointer("/spec/strategy/paused")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The workload a served Rollout releases (v1beta1 `spec.workloadRef`, v1alpha1
/// `spec.objectRef.workloadRef`), as a target in the Rollout's namespace; refused for a kind the
/// console cannot roll back (a Deployment, a native StatefulSet).
pub fn workload_of(rollout: &Target, object: &Value) -> Result<Target, ActionError> {
    let r = present(object, "/spec/workloadRef")
        .or_else(|| present(object, "/spec/objectRef/workloadRef"))
        .ok_or_else(|| ActionError::Invalid(format!("{} names no workload", rollout.describe())))?;
    let api_version = r["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    let kind = r["kind"].as_str().unwrap_or_default();
    let name = r["name"].as_str().unwrap_or_default();
    let info: &'static KindInfo = kinds::find(group, kind)
        .filter(|k| k.workload.is_some())
        .ok_or_else(|| ActionError::NotApplicable {
            kind: format!(
                "{kind} {name} ({api_version}), released by {}",
                rollout.describe()
            ),
            what: "undo here (CloneSets, Advanced StatefulSets and Advanced DaemonSets)".to_owned(),
        })?;
    Ok(Target::new(info, rollout.namespace.as_deref(), name))
}

/// Prepares an approve, a pause or a resume on a Rollout.
pub(super) fn prepare(
    target: &Target,
    action: &Action,
    state: &ObjectState,
) -> Result<Prepared, ActionError> {
    match action {
        Action::Approve { step } => approve(target, action, *step, state),
        Action::Pause | Action::Resume => pause(target, action, state),
        Action::Undo { .. } => Err(ActionError::Invalid(format!(
            "an undo through {} reverts its workload: it is prepared with the workload read \
             (actions::rollout::prepare_undo)",
            target.describe()
        ))),
        _ => Err(ActionError::NotApplicable {
            kind: target.describe(),
            what: format!(
                "{} (a Rollout is approved, paused, resumed or rolled back)",
                action.describe()
            ),
        }),
    }
}

fn refuse(target: &Target, why: String) -> ActionError {
    ActionError::Invalid(format!("cannot approve {}: {why}", target.describe()))
}

fn approve(
    target: &Target,
    action: &Action,
    step: i32,
    state: &ObjectState,
) -> Result<Prepared, ActionError> {
    let object = &state.object;
    let view = StepView::read(object);
    let Some(sub) = view.sub_status else {
        return Err(refuse(
            target,
            "no need to approve: not in canary or blue-green progress".to_owned(),
        ));
    };
    if view.phase != phase::PROGRESSING {
        return Err(refuse(
            target,
            format!(
                "it is {}, not Progressing: no step waits for approval",
                if view.phase.is_empty() {
                    "not reconciled yet"
                } else {
                    view.phase.as_str()
                }
            ),
        ));
    }
    if view.reason != condition::REASON_IN_ROLLING {
        let why = if view.reason == condition::REASON_PAUSED {
            "the Rollout is paused (spec.strategy.paused): resume it first, an approval is not \
             processed while it is paused"
                .to_owned()
        } else {
            format!(
                "it is {} (Progressing reason), not InRolling: no step waits for approval",
                if view.reason.is_empty() {
                    "without a reason"
                } else {
                    view.reason.as_str()
                }
            )
        };
        return Err(refuse(target, why));
    }
    if view.index != step {
        return Err(refuse(
            target,
            format!(
                "it is at {} now, not at step {step} you saw: look again",
                view.describe()
            ),
        ));
    }
    if view.state != step_state::STEP_PAUSED {
        return Err(refuse(
            target,
            format!(
                "step {step}/{} is {}, not StepPaused: only a step waiting for approval can be \
                 approved (approving now would skip the wait for its pods)",
                view.steps, view.state
            ),
        ));
    }
    let rv = object
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    let body = json!({
        "metadata": {"resourceVersion": rv},
        "status": {sub: {"currentStepState": step_state::STEP_READY}},
    });
    let steps = steps_of(object);
    let mut notes = Vec::new();
    let this = steps.get(usize::try_from(step - 1).unwrap_or(usize::MAX));
    if let Some(d) = this
        .and_then(|s| s.pointer("/pause/duration"))
        .and_then(Value::as_i64)
    {
        notes.push(format!(
            "step {step} would go on by itself {d}s after it paused: approving skips the rest of \
             that wait"
        ));
    }
    let next = usize::try_from(step).ok().and_then(|i| steps.get(i));
    notes.push(match next {
        Some(s) => format!(
            "the Rollout then starts step {}/{}: {} on the new revision",
            step + 1,
            view.steps,
            replicas_text(&s["replicas"])
        ),
        None => "this is the last step: the Rollout then completes and releases the workload \
                 (partition and pause back to the workload's own)"
            .to_owned(),
    });
    notes.push(
        "the Rollout controller can overwrite an approval with a status it computed before: the \
         step is read again after the write and the approval re-sent until it moves on"
            .to_owned(),
    );
    notes
        .push("an approval has no inverse: the journal records it but cannot revert it".to_owned());
    Ok(Prepared {
        target: target.clone(),
        action: action.clone(),
        request: ApiRequest {
            verb: "PATCH".to_owned(),
            path: format!("{}/status", api_path(target, state)),
            content_type: MERGE_PATCH.to_owned(),
            body,
        },
        inverse: None,
        changes: vec![format!(
            "step {step}/{} ({}): {} → {}",
            view.steps,
            this.map_or_else(|| "?".to_owned(), |s| replicas_text(&s["replicas"])),
            step_state::STEP_PAUSED,
            step_state::STEP_READY
        )],
        notes,
        then: Vec::new(),
    })
}

/// A step's replicas as written (`1`, `50%`).
pub fn replicas_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => format!("{n} pod{}", if n.as_i64() == Some(1) { "" } else { "s" }),
        _ => "?".to_owned(),
    }
}

fn pause(target: &Target, action: &Action, state: &ObjectState) -> Result<Prepared, ActionError> {
    let object = &state.object;
    let pause = matches!(action, Action::Pause);
    let now = paused(object);
    if now == pause {
        return Err(ActionError::NoChange(format!(
            "{} is {}",
            target.describe(),
            if pause {
                "already paused"
            } else {
                "not paused"
            }
        )));
    }
    let view = StepView::read(object);
    let mut notes = Vec::new();
    if pause {
        notes.push(
            "the step machine stops: approvals, rollbacks and re-plans wait until it is resumed; \
             the batch in flight still finishes (its BatchRelease is not paused)"
                .to_owned(),
        );
        notes.push("a timed pause keeps counting while the Rollout is paused".to_owned());
        if view.phase != phase::PROGRESSING {
            notes.push(format!(
                "it is {} now: the pause takes effect at the next release",
                if view.phase.is_empty() {
                    "idle"
                } else {
                    view.phase.as_str()
                }
            ));
        }
    } else if view.phase == phase::PROGRESSING {
        notes.push(format!("the Rollout goes on from {}", view.describe()));
    }
    Ok(Prepared {
        target: target.clone(),
        action: action.clone(),
        request: ApiRequest {
            verb: "PATCH".to_owned(),
            path: api_path(target, state),
            content_type: MERGE_PATCH.to_owned(),
            body: json!({"spec": {"strategy": {"paused": pause}}}),
        },
        inverse: Some(if pause { Action::Resume } else { Action::Pause }),
        changes: vec![format!("strategy.paused {now} → {pause}")],
        notes,
        then: Vec::new(),
    })
}

/// The answer to "did the approval of `step` hold?", read from the Rollout after the write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Still paused at that step: the controller's status write replaced it; send it again.
    Wiped,
    /// The step moved on (StepReady, a later step, or the release ended): what it is now.
    MovedOn(String),
}

/// Whether the approval of `step` still has to be sent, from the Rollout as read (JSON).
pub fn approval(step: i32, object: &Value) -> Approval {
    let view = StepView::read(object);
    if view.waits_at(step) {
        Approval::Wiped
    } else if view.phase == phase::PROGRESSING {
        Approval::MovedOn(view.describe())
    } else {
        Approval::MovedOn(format!(
            "{} ({})",
            if view.phase.is_empty() {
                "not reconciled"
            } else {
                view.phase.as_str()
            },
            view.describe()
        ))
    }
}

/// `IsRollbackInBatchPolicy`: no traffic routing, a CloneSet or StatefulSet kind (or a workload
/// labelled `workload-type: statefulset`), and the Rollout's `rollback-in-batch: "true"`.
pub fn rollback_in_batch(rollout: &Value, workload: &Target, workload_object: &Value) -> bool {
    let traffic = rollout
        .pointer("/spec/strategy/canary/trafficRoutings")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let kind_ok = matches!(workload.kind.kind, "CloneSet" | "StatefulSet")
        || workload_object["metadata"]["labels"][keys::ROLLOUT_WORKLOAD_TYPE]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case("statefulset"));
    let annotated = rollout["metadata"]["annotations"][keys::ROLLBACK_IN_BATCH] == "true";
    !traffic && kind_ok && annotated
}

/// The revision a Rollout's undo restores: `to` by number, else the stable revision (the
/// workload's `currentRevision`, or the one `canaryStatus.stableRevision` names by suffix), else
/// the previous one.
fn stable_revision<'r>(
    workload: &Target,
    rollout: &Value,
    state: &'r ObjectState,
    current: &Value,
    to: Option<i64>,
) -> Result<&'r super::RevisionInfo, ActionError> {
    if to.is_some() {
        return undo_target(workload, &state.revisions, current, to);
    }
    let names: Vec<String> = [
        state.object.pointer("/status/currentRevision"),
        rollout.pointer("/status/canaryStatus/stableRevision"),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
    .filter(|s| !s.is_empty())
    .map(str::to_owned)
    .collect();
    let stable = state.revisions.iter().find(|r| {
        names
            .iter()
            .any(|n| r.name == *n || r.name.ends_with(&format!("-{n}")))
    });
    match stable {
        Some(r) if r.template == *current => Err(ActionError::NoChange(format!(
            "{}'s template is the stable revision's ({}): nothing to roll back",
            workload.describe(),
            r.name
        ))),
        Some(r) => Ok(r),
        None => undo_target(workload, &state.revisions, current, None),
    }
}

/// Prepares a Rollout's undo: the workload's template back to the stable revision (a pinned
/// patch on the workload, as an undo of the workload itself is, with a new rollout-id where the
/// workload has one), **then**, when the Rollout is paused, its resume (a paused Rollout does not
/// process a rollback). The prepared action is the workload's; the resume is in `then`.
pub fn prepare_undo(
    rollout: &Target,
    rollout_state: &ObjectState,
    workload: &Target,
    workload_state: &ObjectState,
    to_revision: Option<i64>,
) -> Result<Prepared, ActionError> {
    let paths = super::Paths::of(workload.kind, &workload_state.version).ok_or_else(|| {
        ActionError::NotApplicable {
            kind: workload.describe(),
            what: "pod template to roll back".to_owned(),
        }
    })?;
    let object = &rollout_state.object;
    let current = present(&workload_state.object, paths.template)
        .cloned()
        .unwrap_or(Value::Null);
    let rev = stable_revision(workload, object, workload_state, &current, to_revision)?;
    let is_stable = to_revision.is_none()
        && workload_state
            .object
            .pointer("/status/currentRevision")
            .and_then(Value::as_str)
            .is_some_and(|c| c == rev.name);
    let action = Action::SetTemplate {
        template: rev.template.clone(),
        revision: Some(format!(
            "{} (revision {}{})",
            rev.name,
            rev.number,
            if is_stable { ", the stable one" } else { "" }
        )),
    };
    let mut prepared = super::prepare(workload, &action, workload_state)?;
    let view = StepView::read(object);
    let how = if view.phase != phase::PROGRESSING {
        format!(
            "{} is {}: no release is in progress, so it takes the reverted template as a new \
             release, from step 1",
            rollout.describe(),
            if view.phase.is_empty() {
                "idle"
            } else {
                view.phase.as_str()
            }
        )
    } else if workload.kind.kind == kinds::ADVANCED_DAEMONSET.kind {
        "the Rollout does not detect a rollback of an Advanced DaemonSet: the revert runs as a \
         new release, from step 1"
            .to_owned()
    } else if rollback_in_batch(object, workload, &workload_state.object) {
        "rollback in batches: the Rollout restarts at step 1 with the stable revision".to_owned()
    } else {
        format!(
            "fast rollback: the Rollout cancels, its BatchRelease releases the partition and the \
             {} rolls every new pod back at its own pace (maxUnavailable)",
            workload.kind.title
        )
    };
    prepared.notes.insert(0, how);
    prepared.notes.insert(
        1,
        format!(
            "the write is to {}, which {} releases",
            workload.describe(),
            rollout.describe()
        ),
    );
    // The workload's own partition note does not apply: the Rollout sets the partition.
    prepared.notes.retain(|n| !n.starts_with("the partition ("));
    if paused(object) {
        let resume = prepare(rollout, &Action::Resume, rollout_state)?;
        prepared.notes.push(format!(
            "then {} is resumed (strategy.paused → false): a paused Rollout does not process a \
             rollback",
            rollout.describe()
        ));
        prepared.then.push(resume);
    }
    Ok(prepared)
}

/// The rollout-id a template change writes on a workload that has one (the Rollout's webhook
/// intercepts a template change only when the annotation changes too, §7.3): derived from the
/// new template, so the same change gives the same id.
pub(super) fn next_rollout_id(old: &str, template: &Value) -> String {
    let raw = serde_json::to_vec(template).unwrap_or_default();
    let hash = crate::kruise::revision::hash_controller_revision(&raw, None);
    if hash == old {
        format!("{hash}-2")
    } else {
        hash
    }
}
