//! What `]` `P` `u` mean on a Rollout-controlled workload (the rollout view, the workloads list,
//! a triage row) and on a `:rollouts` row: the Rollout's verbs, aimed at the Rollout, through
//! the typed confirm step (`Effect::Prepare` on a `Target` of kind `ROLLOUT`). The other keys
//! that would edit the partition or pause the Rollout owns (`[`, `p`) still go to the executor,
//! whose guard refuses them naming the Rollout (the refusal lands on the status line).

use super::{RolloutRow, controlling_row};
use crate::{
    actions::{Action, Target},
    api::kinds::ROLLOUT,
    app::{
        App, Effect, Level,
        oncall::{self, Screen},
        route::{Owner, Route},
    },
    config,
};

/// The Rollout the keys act on here: the `:rollouts` row under the cursor, or the Rollout that
/// controls the workload the keys are about (rollout view, workloads list, triage).
pub fn subject(app: &App) -> Option<RolloutRow> {
    match app.top() {
        Route::Oncall(v) if v.screen == Screen::Rollouts => oncall::nth_rollout(app, v).cloned(),
        _ => {
            let owner = workload(app)?;
            controlling_row(
                &app.oncall.rollouts,
                owner.kind,
                &owner.namespace,
                &owner.name,
            )
            .cloned()
        }
    }
}

/// The workload the mutating keys are about in this view, if any.
pub fn workload(app: &App) -> Option<Owner> {
    match app.top() {
        Route::Rollout(view) => Some(view.owner.clone()),
        Route::List(list) if !list.scope.is_pods() => list
            .visible
            .get(list.selected)
            .and_then(|&i| app.workloads.get(i as usize))
            .map(|w| w.owner()),
        Route::Oncall(v) if v.screen == Screen::Triage => oncall::selected_owner(app),
        _ => None,
    }
}

/// The Rollout as an action target.
pub fn target(row: &RolloutRow) -> Target {
    Target {
        kind: &ROLLOUT,
        namespace: Some(row.namespace.clone()),
        name: row.name.clone(),
    }
}

/// `]` `P` `u` on a Rollout: `Some(effects)` when the key is the Rollout's, `None` when it
/// goes on to the workload's own handling (the executor's guard refuses what the Rollout owns).
pub fn key(app: &mut App, action: config::Action) -> Option<Vec<Effect>> {
    let row = subject(app)?;
    let name = format!("Rollout {}/{}", row.namespace, row.name);
    Some(match action {
        config::Action::NextBatch => {
            if !row.approvable() {
                let at = if row.step > 0 {
                    format!(
                        "step {} {}",
                        row.step_text(),
                        if row.state.is_empty() {
                            "-"
                        } else {
                            &row.state
                        }
                    )
                } else {
                    "no step".to_owned()
                };
                app.set_status(
                    Level::Info,
                    format!(
                        "{name} is {} at {at}: nothing to approve (] approves a step waiting \
                         in StepPaused)",
                        row.phase_text()
                    ),
                );
                return Some(Vec::new());
            }
            app.prepare(target(&row), approve(row.step))
        }
        config::Action::Pause => {
            let action = if row.paused {
                Action::Resume
            } else {
                Action::Pause
            };
            app.prepare(target(&row), action)
        }
        config::Action::Undo => app.prepare(target(&row), Action::Undo { to_revision: None }),
        // `[` `p` on a controlled workload: the executor's guard refuses them, naming the
        // Rollout. On a `:rollouts` row there is no workload partition to edit.
        config::Action::PrevBatch | config::Action::Partition if matches!(app.top(), Route::Oncall(v) if v.screen == Screen::Rollouts) =>
        {
            app.set_status(
                Level::Info,
                format!(
                    "{name} owns {}'s partition: ] approves, P pauses, u rolls back",
                    row.workload
                ),
            );
            Vec::new()
        }
        _ => return None,
    })
}

/// The approval of step `step` (the action layer's status write, checked and retried).
fn approve(step: i32) -> Action {
    Action::Approve { step }
}

/// What the keys mean on a Rollout (the footer hints and the help overlay use it).
pub const MEANINGS: [(config::Action, &str); 5] = [
    (
        config::Action::NextBatch,
        "approve the current step (Rollout)",
    ),
    (config::Action::Pause, "pause / resume the Rollout"),
    (config::Action::Undo, "roll back the Rollout's way"),
    (
        config::Action::PrevBatch,
        "refused: the Rollout owns the partition",
    ),
    (
        config::Action::Partition,
        "refused: the Rollout owns the partition",
    ),
];
