//! Kruise Rollout control of a workload: a Rollout that releases it owns its partition and
//! pause while a release is in progress (the BatchRelease's control-info annotation, the
//! webhook's in-progressing annotation, or the Rollout's phase Progressing). A direct edit of
//! those is refused, naming the Rollout and the command to use instead; a template change is
//! allowed (it is how a release starts) and said to be intercepted (research §7.1, §7.5).

use serde_json::Value;

use crate::{
    actions::{Action, Target, rollout::StepView},
    api::{
        keys,
        rollout::{Rollout, phase},
    },
    kruise::rollout::controlling,
};

/// What a Rollout means for an action on a workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutGuard {
    /// No Rollout releases the workload (or none is in the way of this action).
    Free,
    /// A line to show before confirming (a template change the Rollout intercepts).
    Note(String),
    /// The action edits what the Rollout owns: refused (one line; a subcommand's `--force`
    /// overrides).
    Refused(String),
}

/// The Rollout of `rollouts` (the workload's namespace) that releases `target`, if any.
pub fn controlling_rollout<'r>(target: &Target, rollouts: &'r [Rollout]) -> Option<&'r Rollout> {
    controlling(rollouts, target.group(), target.kind.kind, &target.name)
}

/// Whether the Rollout holds the workload's partition and pause now.
pub fn in_release(rollout: &Rollout, workload: &Value) -> bool {
    let annotations = &workload["metadata"]["annotations"];
    annotations[keys::BATCH_RELEASE_CONTROL_INFO].is_string()
        || annotations[keys::ROLLOUT_IN_PROGRESSING].is_string()
        || rollout.phase() == phase::PROGRESSING
}

/// `Rollout demo/web-rollout`.
fn named(rollout: &Rollout) -> String {
    format!(
        "Rollout {}/{}",
        rollout.metadata.namespace.as_deref().unwrap_or_default(),
        rollout.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Where the Rollout stands, in a few words: `step 2/3, StepPaused`, or its phase.
pub fn standing(rollout: &Rollout) -> String {
    let object = serde_json::to_value(rollout).unwrap_or(Value::Null);
    let view = StepView::read(&object);
    if view.phase == phase::PROGRESSING && view.index > 0 {
        format!("step {}/{}, {}", view.index, view.steps, view.state)
    } else if view.phase.is_empty() {
        "not reconciled yet".to_owned()
    } else {
        view.phase
    }
}

/// The guard for `action` on the workload `target` (as read: `workload`), given the Rollouts
/// of its namespace.
pub fn rollout_guard(
    target: &Target,
    action: &Action,
    workload: &Value,
    rollouts: &[Rollout],
) -> RolloutGuard {
    if target.kind.workload.is_none() {
        return RolloutGuard::Free;
    }
    let Some(rollout) = controlling_rollout(target, rollouts) else {
        return RolloutGuard::Free;
    };
    let name = rollout.metadata.name.as_deref().unwrap_or_default();
    let releasing = in_release(rollout, workload);
    let verb = match action {
        Action::Partition { .. } => "approve",
        Action::Pause => "pause",
        Action::Resume => "resume",
        Action::Undo { .. } => "undo",
        Action::SetImage { .. } | Action::SetTemplate { .. } => {
            return RolloutGuard::Note(if releasing {
                format!(
                    "{} is mid-release ({}): this change is a new release for it, which \
                     restarts at step 1 with the new template",
                    named(rollout),
                    standing(rollout)
                )
            } else {
                format!(
                    "{} intercepts this change: no pod moves until the Rollout's step 1",
                    named(rollout)
                )
            });
        }
        _ => return RolloutGuard::Free,
    };
    if !releasing {
        return match action {
            Action::Undo { .. } => RolloutGuard::Note(format!(
                "{} intercepts this change: no pod moves until the Rollout's step 1",
                named(rollout)
            )),
            _ => RolloutGuard::Free,
        };
    }
    RolloutGuard::Refused(format!(
        "refused: {} is released by {} ({}); approve, pause or undo the Rollout instead \
         (kruise-tui rollout {verb} rollout/{name})",
        target.describe(),
        named(rollout),
        standing(rollout)
    ))
}
