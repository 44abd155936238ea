//! The mutating keys: `]` `[` `p` `P` `u` `i` `s` (and `Space` marks). Each one works on the
//! workload of the rollout view, or on the workload selected in a workloads list, and ends in
//! the confirm dialog (through a form or the revision picker where input is needed). In
//! read-only mode they say "read-only" and send nothing.

use super::{
    App, Effect, Level,
    dialog::{Form, Overlay, RevisionPicker},
    rollout::summary::{Summary, summary},
    route::{Fetch, Owner, Route},
};
use crate::{
    actions::{Action, Target},
    config,
};

/// The workload a mutating key is about.
pub(super) struct Subject {
    pub(super) target: Target,
    pub(super) summary: Summary,
    /// Pods marked in the rollout view (sorted).
    marked: Vec<String>,
}

pub(super) fn subject(app: &App) -> Result<Subject, String> {
    let (owner, summary, marked): (Owner, Option<Summary>, Vec<String>) = match app.top() {
        Route::Rollout(view) => (
            view.owner.clone(),
            view.summary.clone(),
            view.marked.iter().cloned().collect(),
        ),
        Route::List(list) if !list.scope.is_pods() => {
            let row = list
                .visible
                .get(list.selected)
                .and_then(|&i| app.workloads.get(i as usize))
                .ok_or("no workload selected")?;
            let owner = row.owner();
            let summary = summary(&app.stores, &owner);
            (owner, summary, Vec::new())
        }
        Route::Oncall(_) => {
            let owner = super::oncall::selected_owner(app)
                .ok_or("select a rollout or crash loop in triage (this row has no workload)")?;
            let summary = summary(&app.stores, &owner);
            (owner, summary, Vec::new())
        }
        _ => {
            return Err(
                "select a workload first (rollout actions work in the workloads list and the \
                 rollout view)"
                    .to_owned(),
            );
        }
    };
    let summary = summary.ok_or_else(|| {
        format!(
            "{} {}/{} is not in the cluster any more",
            owner.kind.debug_name(),
            owner.namespace,
            owner.name
        )
    })?;
    let target = Target::watched(owner.kind, &owner.namespace, &owner.name);
    Ok(Subject {
        target,
        summary,
        marked,
    })
}

/// What a key asks for, in words (for "read-only: … not sent").
fn what(action: config::Action) -> &'static str {
    match action {
        config::Action::NextBatch => "next batch",
        config::Action::PrevBatch => "previous batch",
        config::Action::Partition => "set partition",
        config::Action::Pause => "pause/resume",
        config::Action::Undo => "undo",
        config::Action::Image => "set image",
        config::Action::Scale => "scale",
        _ => "action",
    }
}

/// A mutating key in normal mode.
pub fn key(app: &mut App, action: config::Action) -> Vec<Effect> {
    if action == config::Action::Mark {
        mark(app);
        return Vec::new();
    }
    if matches!(app.top(), Route::Journal(_)) {
        if action == config::Action::Undo {
            return super::journal::revert(app);
        }
        app.set_status(Level::Info, "in the journal, u reverts the selected entry");
        return Vec::new();
    }
    if app.readonly {
        app.set_status(
            Level::Error,
            format!("read-only: {} not sent", what(action)),
        );
        return Vec::new();
    }
    // On a Rollout-controlled workload (or a `:rollouts` row), `]` `P` `u` are the Rollout's.
    if let Some(effects) = super::rollouts::keys::key(app, action) {
        return effects;
    }
    let s = match subject(app) {
        Ok(s) => s,
        Err(why) => {
            app.set_status(Level::Info, why);
            return Vec::new();
        }
    };
    let name = s.target.describe();
    match action {
        config::Action::NextBatch => match s.summary.next_step(&app.rollout) {
            Some(step) => app.prepare(
                s.target,
                Action::Partition {
                    value: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(
                        step.partition,
                    ),
                },
            ),
            None => {
                app.set_status(
                    Level::Info,
                    format!("{name} is at its last batch: the partition lets every pod update"),
                );
                Vec::new()
            }
        },
        config::Action::PrevBatch => match s.summary.previous_partition(&app.rollout) {
            Some((partition, _)) => app.prepare(
                s.target,
                Action::Partition {
                    value: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(
                        partition,
                    ),
                },
            ),
            None => {
                app.set_status(
                    Level::Info,
                    format!("{name}: the partition already holds every pod back"),
                );
                Vec::new()
            }
        },
        config::Action::Partition => {
            app.overlay = Some(Overlay::Form(Box::new(Form::partition(
                s.target,
                s.summary.partition.as_deref(),
                s.summary.partition_pods,
                s.summary.replicas,
                s.summary.partition_percent,
            ))));
            Vec::new()
        }
        config::Action::Pause => {
            let action = if s.summary.paused {
                Action::Resume
            } else {
                Action::Pause
            };
            app.prepare(s.target, action)
        }
        config::Action::Undo => {
            let id = app.next_id();
            app.overlay = Some(Overlay::Revisions(Box::new(RevisionPicker {
                id,
                target: s.target.clone(),
                revisions: Fetch::Loading,
                selected: 0,
                scroll: 0,
            })));
            vec![Effect::FetchRevisions {
                id,
                target: s.target,
            }]
        }
        config::Action::Image => {
            if s.summary.containers.is_empty() {
                app.set_status(
                    Level::Info,
                    format!("{name} has no containers in its template"),
                );
                return Vec::new();
            }
            app.overlay = Some(Overlay::Form(Box::new(Form::image(
                s.target,
                s.summary.containers,
            ))));
            Vec::new()
        }
        config::Action::Scale => {
            if !s.summary.scalable {
                app.set_status(
                    Level::Info,
                    format!("{name} runs one pod per node: it has no replica count to scale"),
                );
                return Vec::new();
            }
            app.overlay = Some(Overlay::Form(Box::new(Form::scale(
                s.target,
                s.summary.replicas,
                s.marked,
            ))));
            Vec::new()
        }
        _ => Vec::new(),
    }
}

fn mark(app: &mut App) {
    let Some(Route::Rollout(view)) = app.stack.last_mut() else {
        app.set_status(
            Level::Info,
            "marks are for the pods of a rollout view (enter on a workload)",
        );
        return;
    };
    if let Some((name, marked)) = view.toggle_mark() {
        let count = view.marked.len();
        view.move_cursor(1);
        let verb = if marked { "marked" } else { "unmarked" };
        app.set_status(
            Level::Info,
            format!("{verb} {name} ({count} marked: scaling down deletes them)"),
        );
    }
}
