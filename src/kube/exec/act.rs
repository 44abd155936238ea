//! The executor's mutating effects, through the action layer's [`Actor`]: prepare (RBAC
//! pre-check, read, prepare, predict), perform (pinned patch, conflict re-check, journal), the
//! revisions for the undo picker and the journal for `:journal`. Every answer is one message;
//! every failure is one line (the `ActError` Display).

use std::sync::Arc;

use kube::Client;

use super::rollout::{Gates, predict};
use crate::{
    actions::{Action, Paths, Target, guard::RolloutGuard},
    app::msg::{EffectResult, Preview, Revisions},
    journal::Journal,
    kube::act::{ActError, Actor, Done},
};

/// `Effect::Prepare`: nothing is sent. A user the server would refuse hears "forbidden: …"
/// here, before any dialog.
pub async fn prepare(
    actor: Arc<Actor>,
    client: Client,
    gates: Arc<Gates>,
    id: u64,
    target: Target,
    action: Action,
) -> EffectResult {
    let result = async {
        if actor.readonly() {
            return Err(ActError::ReadOnly(action.describe()).to_string());
        }
        // The verb the request will need, checked before any dialog.
        let check = match &action {
            Action::Restart { .. } => {
                let crr = crate::api::kinds::parse_kind("crr").map_err(|e| e.to_string())?;
                Target::new(crr, target.namespace.as_deref(), &target.name)
            }
            _ => target.clone(),
        };
        let verb = match &action {
            Action::Restart { .. } => "create",
            Action::Delete => "delete",
            _ => "patch",
        };
        let on_rollout = *target.kind == crate::api::kinds::ROLLOUT;
        // A Rollout's approval writes its status, its undo the workload: the server answers
        // those (the write itself is checked as it is sent).
        if !on_rollout || matches!(action, Action::Pause | Action::Resume) {
            actor
                .allowed(verb, &check)
                .await
                .map_err(|e| e.to_string())?;
        }
        let (mut prepared, state) = actor
            .prepare(&target, &action)
            .await
            .map_err(|e| e.to_string())?;
        // A Kruise Rollout that releases the workload owns its partition and pause.
        let mut intercepted = false;
        match crate::kube::guard::rollout_guard(&client, &target, &state, &action).await {
            RolloutGuard::Refused(line) => return Err(line),
            RolloutGuard::Note(line) => {
                intercepted = true;
                prepared.notes.insert(0, line);
            }
            RolloutGuard::Free => {}
        }
        let prediction = match &action {
            // The Rollout decides which pods move, step by step: the workload's own plan does
            // not say.
            _ if on_rollout || intercepted => None,
            Action::Restart { .. }
            | Action::Protect { .. }
            | Action::Delete
            | Action::Approve { .. } => {
                let notes = crate::kube::guard::notes(&client, &target, &state, &action).await;
                // The guards first: they are what the user decides on.
                prepared.notes.splice(0..0, notes);
                None
            }
            _ => predict(&client, &gates, &prepared, &state).await,
        };
        Ok(Box::new(Preview {
            prepared,
            state,
            prediction,
        }))
    }
    .await;
    EffectResult::Prepared { id, result }
}

/// `Effect::Perform`: what changed, or why it did not (one line).
pub async fn perform(
    actor: Arc<Actor>,
    id: u64,
    prepared: crate::actions::Prepared,
    state: crate::actions::ObjectState,
) -> EffectResult {
    let target = prepared.target.clone();
    let result = actor
        .perform(prepared, state)
        .await
        .map(|done| done_text(&done))
        .map_err(|e| e.to_string());
    EffectResult::Performed { id, target, result }
}

/// What a sent action changed, for the status line.
pub fn done_text(done: &Done) -> String {
    let what = if done.prepared.changes.is_empty() {
        done.prepared.action.describe()
    } else {
        // The first line says what; a template diff can be long.
        let mut changes: Vec<&str> = done
            .prepared
            .changes
            .iter()
            .map(String::as_str)
            .take(3)
            .collect();
        if done.prepared.changes.len() > 3 {
            changes.push("…");
        }
        changes.join("; ")
    };
    let mut text = format!("sent: {what}");
    if done.retries > 0 && matches!(done.prepared.action, Action::Approve { .. }) {
        text.push_str(&format!(
            " (sent {} times: the Rollout controller wrote its status over the approval)",
            done.retries + 1
        ));
    } else if done.retries > 0 {
        text.push_str(&format!(
            " (re-read and re-sent {} time(s): the object changed elsewhere, not in what this \
             action changes)",
            done.retries
        ));
    }
    text
}

/// `Effect::FetchRevisions`: the current template and the workload's revisions, newest first.
pub async fn revisions(actor: Arc<Actor>, id: u64, target: Target) -> EffectResult {
    let result = async {
        let state = actor.read(&target, true).await.map_err(|e| e.to_string())?;
        let paths = Paths::of(target.kind, &state.version)
            .ok_or_else(|| format!("{} has no revisions to undo to", target.describe()))?;
        let current = state
            .object
            .pointer(paths.template)
            .cloned()
            .unwrap_or(serde_json::Value::Null);
        let mut revisions = state.revisions;
        revisions.sort_by_key(|r| std::cmp::Reverse(r.number));
        Ok(Box::new(Revisions {
            target,
            current,
            revisions,
        }))
    }
    .await;
    EffectResult::Revisions { id, result }
}

/// `Effect::ReadJournal`.
pub async fn read_journal(journal: Option<Journal>) -> EffectResult {
    let Some(journal) = journal else {
        return EffectResult::Journal(Err(
            "no journal: the state directory cannot be found (set KRUISE_TUI_STATE_DIR)".to_owned(),
        ));
    };
    let result = tokio::task::spawn_blocking(move || journal.read())
        .await
        .map_err(|e| format!("cannot read the journal: {e}"))
        .and_then(|r| r.map_err(|e| format!("{e:#}")));
    EffectResult::Journal(result)
}
