//! The verbs on a Kruise Rollout (`rollout approve|pause|resume|undo rollout/NAME`), through
//! the same action layer as the console's `]`, `P` and `u` (prepare on the object as read, the
//! pinned or checked write, the journal), and the guard of the workload verbs
//! (`rollout partition|pause|resume|undo cloneset/web`) while a Rollout releases the workload.

use std::fmt::Write as _;

use anyhow::{Result, bail};

use crate::{
    actions::{Action, Prepared, guard::RolloutGuard},
    cli::{KubeArgs, args::WorkloadArg},
    cmd::Session,
    kube::act::ActError,
};

/// `rollout.rollouts.kruise.io/web-rollout`.
fn shown(target: &WorkloadArg) -> String {
    target.resource_name()
}

/// Runs `action` on the Rollout `target` (`Approve { step: 0 }`: the current step).
pub(crate) async fn run(kube: &KubeArgs, target: &WorkloadArg, action: Action) -> Result<()> {
    let session = Session::open(kube).await?;
    let rollout = session.target(target);
    let actor = session.actor(kube.readonly)?;
    // `--step` defaults to the step the Rollout is at: read it first.
    let action = match action {
        Action::Approve { step: 0 } => {
            let state = actor.read(&rollout, false).await.map_err(one_line)?;
            let view = crate::actions::rollout::StepView::read(&state.object);
            Action::Approve { step: view.index }
        }
        other => other,
    };
    let (prepared, state) = actor.prepare(&rollout, &action).await.map_err(one_line)?;
    let report = report(target, &prepared);
    let done = actor.perform(prepared, state).await.map_err(one_line)?;
    print!("{report}");
    if done.retries > 0 {
        match done.prepared.action {
            Action::Approve { .. } => println!(
                "note: sent {} times: the Rollout controller wrote its status over the approval",
                done.retries + 1
            ),
            _ => println!(
                "note: sent after {} retr{} (the object changed meanwhile)",
                done.retries,
                if done.retries == 1 { "y" } else { "ies" }
            ),
        }
    }
    Ok(())
}

fn one_line(err: ActError) -> anyhow::Error {
    anyhow::Error::msg(err.to_string())
}

/// What was done, in kubectl-kruise's voice (`rollout.rollouts.kruise.io/web-rollout
/// approved`), the changes and the action layer's notes.
fn report(target: &WorkloadArg, prepared: &Prepared) -> String {
    let name = shown(target);
    let mut out = String::new();
    let head = match &prepared.action {
        Action::Approve { .. } => format!("{name} approved"),
        Action::Pause => format!("{name} paused"),
        Action::Resume => format!("{name} resumed"),
        // A Rollout's undo is the workload's template write (and the Rollout's resume).
        _ => format!(
            "{name} rolled back: {} {}",
            prepared.target.describe(),
            prepared.action.describe()
        ),
    };
    let _ = writeln!(out, "{head}");
    for line in &prepared.changes {
        let _ = writeln!(out, "  {line}");
    }
    for then in &prepared.then {
        let _ = writeln!(
            out,
            "  then {}: {}",
            then.target.describe(),
            then.changes.join("; ")
        );
    }
    for note in &prepared.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The Kruise Rollout guard of a workload verb: refused (exit 1) while a Rollout releases the
/// workload, unless `force`; a note to print otherwise (or nothing).
pub(crate) async fn guard(
    session: &Session,
    workload: &WorkloadArg,
    action: &Action,
    object: &serde_json::Value,
    force: bool,
) -> Result<Option<String>> {
    let target = session.target(workload);
    let rollouts = crate::kube::guard::rollouts(session.client(), &session.namespace).await;
    match crate::actions::guard::rollout_guard(&target, action, object, &rollouts) {
        RolloutGuard::Free => Ok(None),
        RolloutGuard::Note(line) => Ok(Some(line)),
        RolloutGuard::Refused(line) if force => Ok(Some(format!(
            "--force: {}",
            line.trim_start_matches("refused: ")
        ))),
        RolloutGuard::Refused(line) => bail!("{line} (or --force)"),
    }
}
