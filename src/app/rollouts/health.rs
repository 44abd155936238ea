//! The pods of a Rollout's release, grouped by batch (label `rollouts.kruise.io/rollout-batch-id`),
//! the health of the current batch's new pods (so approval is an informed choice: rollouts#16),
//! and the triage row of a Rollout stuck on a step whose new pods crash or never become ready
//! (rollouts#174).

use crate::app::podindex::crash_looping;
use std::{collections::BTreeMap, sync::Arc};

use jiff::Timestamp;

use super::RolloutRow;
use crate::{
    api::{
        keys::{ROLLOUT_BATCH_ID, ROLLOUT_ID},
        rollout::step_state,
    },
    app::{
        msg::{ObjectEvent, ObjectRef},
        oncall::{Problem, ProblemKind},
        route::Owner,
        rows::{PodRow, same_revision},
    },
};

/// The pods of one batch (`Some(i)`, 1-based as the label is), or not in a batch (`None`):
/// then `updated` tells the pods on the update revision without a batch label (a release not
/// labelled yet, or updated outside the Rollout) from those not updated.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchGroup {
    pub batch: Option<i32>,
    pub updated: bool,
    pub pods: Vec<String>,
}

fn label<'a>(pod: &'a PodRow, key: &str) -> Option<&'a str> {
    pod.pod.metadata.labels.get(key)
}

/// The batch a pod was released in by this run (its batch-id label, when its rollout-id label
/// is the BatchRelease's: older runs' labels stay on pods).
pub fn batch_of(pod: &PodRow, row: &RolloutRow) -> Option<i32> {
    let run = row
        .release
        .as_ref()
        .and_then(|b| b.spec.release_plan.rollout_id.as_deref());
    if let (Some(run), Some(id)) = (run, label(pod, ROLLOUT_ID))
        && run != id
    {
        return None;
    }
    label(pod, ROLLOUT_BATCH_ID)?.parse().ok()
}

/// The pods grouped by batch, batches in order, then the updated pods in no batch, then the
/// pods not updated.
pub fn groups(pods: &[Arc<PodRow>], row: &RolloutRow, update_revision: &str) -> Vec<BatchGroup> {
    // Key: (no batch, not updated, batch) sorts batches first, then unlabelled, then old.
    let mut by: BTreeMap<(bool, bool, i32), Vec<String>> = BTreeMap::new();
    for p in pods {
        let key = match batch_of(p, row) {
            Some(b) => (false, false, b),
            None => {
                let updated =
                    !update_revision.is_empty() && same_revision(&p.revision, update_revision);
                (true, !updated, 0)
            }
        };
        by.entry(key).or_default().push(p.name.clone());
    }
    by.into_iter()
        .map(|((none, old, b), pods)| BatchGroup {
            batch: (!none).then_some(b),
            updated: !old,
            pods,
        })
        .collect()
}

/// The current step's new pods: those labelled with its batch; while none is labelled yet,
/// the pods on the update revision.
pub fn current_batch<'a>(
    pods: &[&'a Arc<PodRow>],
    row: &RolloutRow,
    update_revision: &str,
) -> Vec<&'a Arc<PodRow>> {
    let labelled: Vec<&Arc<PodRow>> = pods
        .iter()
        .copied()
        .filter(|p| row.step > 0 && batch_of(p, row) == Some(row.step))
        .collect();
    if !labelled.is_empty() {
        return labelled;
    }
    pods.iter()
        .copied()
        .filter(|p| !update_revision.is_empty() && same_revision(&p.revision, update_revision))
        .collect()
}

/// One new pod in the batch health panel.
#[derive(Debug, Clone, PartialEq)]
pub struct PodHealth {
    pub name: String,
    /// `1/1`.
    pub ready: String,
    pub all_ready: bool,
    pub restarts: i32,
    /// Phase, or the reason that matters more (CrashLoopBackOff…).
    pub status: String,
    /// When the Ready condition last changed (how long ready, or how long not).
    pub since: Option<Timestamp>,
    /// The pod's latest Warning event: reason, message, when.
    pub warning: Option<(String, String, Option<Timestamp>)>,
}

/// When the pod's Ready condition last changed (else its creation).
pub fn ready_since(pod: &PodRow) -> Option<Timestamp> {
    pod.pod
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .and_then(|c| c.last_transition_time.as_ref().map(|t| t.0))
        .or(pod.created)
}

/// The health rows of `pods`, each with its latest Warning among `events` (newest last).
pub fn health(pods: &[&Arc<PodRow>], events: &[ObjectEvent]) -> Vec<PodHealth> {
    pods.iter()
        .map(|p| {
            let object = format!("Pod/{}", p.name);
            let warning = events
                .iter()
                .rev()
                .find(|e| e.object == object && e.event.type_ == "Warning")
                .map(|e| {
                    (
                        e.event.reason.clone(),
                        e.event.message.clone(),
                        e.event.last_seen,
                    )
                });
            PodHealth {
                name: p.name.clone(),
                ready: p.ready.clone(),
                all_ready: p.all_ready,
                restarts: p.restarts,
                status: p.status.clone(),
                since: ready_since(p),
                warning,
            }
        })
        .collect()
}

fn duration(secs: i64) -> String {
    if secs < 120 {
        format!("{secs}s")
    } else {
        format!("{}m", secs / 60)
    }
}

/// A Rollout stuck on a step: Progressing, at StepUpgrade or StepPaused, and new pods of the
/// current batch not ready for `stall` seconds or more (crash-looping or never ready), or the
/// step's batch short of ready pods for that long. Remedies: rollback and pause, through the
/// Rollout.
pub fn stuck(
    row: &RolloutRow,
    owner: &Owner,
    pods: &[&Arc<PodRow>],
    update_revision: &str,
    now: Timestamp,
    stall: i64,
) -> Option<Problem> {
    if !row.live()
        || ![step_state::STEP_UPGRADE, step_state::STEP_PAUSED].contains(&row.state.as_str())
    {
        return None;
    }
    let batch = current_batch(pods, row, update_revision);
    let down = |p: &PodRow| ready_since(p).map_or(0, |t| now.as_second() - t.as_second());
    let bad: Vec<&&Arc<PodRow>> = batch
        .iter()
        .filter(|p| !p.all_ready && down(p) >= stall)
        .collect();
    let planned = row.batch.map_or(batch.len() as i32, |b| b.planned);
    let short = row.state == step_state::STEP_UPGRADE
        && row.batch.is_some_and(|b| b.ready < b.planned)
        && row.in_step(now).is_some_and(|s| s >= stall);
    if bad.is_empty() && !short {
        return None;
    }
    let longest = bad.iter().map(|p| down(p)).max();
    let mut why = format!(
        "stuck at step {} ({}): ",
        row.step_text(),
        if row.state.is_empty() {
            "-"
        } else {
            &row.state
        }
    );
    match longest {
        Some(secs) => why.push_str(&format!(
            "{} of {planned} new pods not ready for {}",
            bad.len(),
            duration(secs)
        )),
        None => {
            let b = row.batch.unwrap_or(super::BatchCount {
                updated: 0,
                ready: 0,
                planned,
            });
            why.push_str(&format!(
                "{} of {} new pods ready after {}",
                b.ready,
                b.planned,
                duration(row.in_step(now).unwrap_or(0))
            ));
        }
    }
    let crashing: Vec<&str> = bad
        .iter()
        .filter(|p| crash_looping(p))
        .map(|p| p.name.as_str())
        .collect();
    if let Some(first) = crashing.first() {
        why.push_str(&format!(", {first} CrashLoopBackOff"));
        if crashing.len() > 1 {
            why.push_str(&format!(" (+{} more)", crashing.len() - 1));
        }
    }
    Some(Problem {
        kind: ProblemKind::StuckRollout,
        object: Some(ObjectRef {
            kind: owner.kind,
            namespace: Some(owner.namespace.clone()),
            name: owner.name.clone(),
        }),
        owner: Some(owner.clone()),
        subject: format!("Rollout {}/{}", row.namespace, row.name),
        why,
        remedy: "u rollback · P pause (the Rollout)".to_owned(),
        weight: bad.len().max(1),
        reported: false,
    })
}

/// Triage's Rollout rows: each Rollout on a workload the console shows, checked with
/// [`stuck`] against that workload's pods.
pub fn problems(
    rows: &[RolloutRow],
    workloads: &[crate::app::rows::WorkloadRow],
    pods: &crate::app::podindex::PodIndex,
    now: Timestamp,
    stall: i64,
) -> Vec<Problem> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.live()) {
        let Some(kind) = r.workload_kind else {
            continue;
        };
        let Some(w) = workloads
            .iter()
            .find(|w| w.kind == kind && w.namespace == r.namespace && w.name == r.workload_name)
        else {
            continue;
        };
        let list: Vec<&Arc<PodRow>> = pods.owned(&w.uid).iter().collect();
        if let Some(p) = stuck(r, &w.owner(), &list, &w.update_revision, now, stall) {
            out.push(p);
        }
    }
    out
}
