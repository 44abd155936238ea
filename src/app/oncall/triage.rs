//! Triage: what is unhealthy now, worst first, each with why and the one-key remedy. A pure
//! function of the row models (workloads, pods, budgets, restarts), the refused deletes of the
//! journal, the clock, and what triage remembers between rebuilds (when each rollout last moved,
//! when each pod last restarted).

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use jiff::Timestamp;

use super::{
    super::{
        msg::{Kind, ObjectRef},
        podindex::{PodIndex, crash_looping},
        rollout::progress::Conditions,
        route::Owner,
        rows::{PodRow, WorkloadRow, same_revision, short_hash},
    },
    rows::{CrrRow, PubRow},
};

/// The kinds triage reads: once each has loaded (or is not served), its rows are whole.
pub const READS: [Kind; 8] = [
    Kind::Pod,
    Kind::CloneSet,
    Kind::StatefulSet,
    Kind::DaemonSet,
    Kind::PodUnavailableBudget,
    Kind::ContainerRecreateRequest,
    Kind::Rollout,
    Kind::BatchRelease,
];

/// How long before a restart a ContainerRecreateRequest or an in-place update explains it.
pub const ASKED_RESTART_SECONDS: i64 = 120;

/// Whether the restart seen at `rose` was asked for: a ContainerRecreateRequest for the pod, or
/// an in-place update of it, started at most [`ASKED_RESTART_SECONDS`] before, and every
/// container's last run ended as a stop ends (exit 0, or 137/143 from SIGKILL/SIGTERM), not by
/// failing on its own — the new image crashing right after an in-place update is a crash loop.
fn restart_was_asked(p: &PodRow, rose: Timestamp, restarts: &[CrrRow]) -> bool {
    let stopped = p.pod.status.container_statuses.iter().all(|c| {
        c.last_state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .is_none_or(|t| {
                t.reason.as_deref() != Some("OOMKilled")
                    && matches!(t.exit_code, None | Some(0 | 137 | 143))
            })
    });
    if !stopped {
        return false;
    }
    let explains = |started: Timestamp| {
        let d = rose.as_second() - started.as_second();
        (0..=ASKED_RESTART_SECONDS).contains(&d)
    };
    let by_crr = restarts
        .iter()
        .any(|c| c.namespace == p.namespace && c.pod == p.name && c.created.is_some_and(explains));
    let in_place = || {
        crate::api::podstate::InPlaceUpdateState::from_annotations(Some(
            &p.pod.metadata.annotations,
        ))
        .ok()
        .flatten()
        .and_then(|s| s.update_timestamp)
        .is_some_and(|t| explains(t.0))
    };
    by_crr || in_place()
}

/// How long a restart counts as "climbing" for a pod that is not ready.
pub const RESTART_WINDOW_SECONDS: i64 = 600;
/// How long a pod of the update revision may be not ready before it holds the rollout.
pub const NOT_READY_GRACE_SECONDS: i64 = 30;
/// How long a refused delete stays listed.
pub const DENIAL_SECONDS: i64 = 3600;

/// What kind of problem, in the order triage ranks them (worst first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProblemKind {
    StuckRollout,
    CrashLoop,
    BudgetExhausted,
    RestartFailed,
    DeleteDenied,
}

impl ProblemKind {
    pub fn label(self) -> &'static str {
        match self {
            ProblemKind::StuckRollout => "stuck rollout",
            ProblemKind::CrashLoop => "crash loop",
            ProblemKind::BudgetExhausted => "no budget",
            ProblemKind::RestartFailed => "restart failed",
            ProblemKind::DeleteDenied => "delete denied",
        }
    }
}

/// One line of triage.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub kind: ProblemKind,
    /// What Enter opens: the workload (rollout view), a pod, a PUB, a CRR's pod; None for an
    /// object the console has no view of (a namespace, a CRD).
    pub object: Option<ObjectRef>,
    /// The workload the remedy keys act on (stuck rollouts, crash loops).
    pub owner: Option<Owner>,
    /// `CloneSet demo/checkout`.
    pub subject: String,
    pub why: String,
    /// The keys that fix it, in words (`u undo · [ raise partition · P pause`).
    pub remedy: String,
    /// Pods affected (ranks problems of one kind).
    pub weight: usize,
    /// The controller itself reports it (a CloneSet's `Progressing=False` with reason
    /// `ProgressDeadlineExceeded`): ranks before the console's own guesses of its kind.
    pub reported: bool,
}

/// What triage remembers between rebuilds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Memory {
    /// Workload key → (update revision, updated pods, since when unchanged).
    pub progress: HashMap<String, (String, i32, Timestamp)>,
}

/// A delete the server refused because of deletion protection (from the journal).
#[derive(Debug, Clone, PartialEq)]
pub struct Denial {
    /// The object, when it is of a kind the console shows (workloads, pods).
    pub object: Option<ObjectRef>,
    /// `Namespace demo`, `CloneSet demo/web`.
    pub subject: String,
    pub message: String,
    pub time: Timestamp,
}

pub struct Input<'a> {
    pub now: Timestamp,
    /// `[rollout] stall`: a rollout with no progress this long is stuck.
    pub stall_seconds: i64,
    pub workloads: &'a [WorkloadRow],
    pub owners: &'a HashMap<String, usize>,
    /// The pod rows' indexes: triage reads only the pods that need attention, the pod count
    /// of each workload, and when restarts rose.
    pub pods: &'a PodIndex,
    pub budgets: &'a [PubRow],
    pub restarts: &'a [CrrRow],
    pub denials: &'a [Denial],
    /// CloneSets' status conditions by workload key (Kruise v1.9's Progressing condition).
    pub progress: &'a HashMap<String, Conditions>,
    /// Kruise Rollouts: a workload one controls has the Rollout's stuck row, not its own.
    pub rollouts: &'a [crate::app::rollouts::RolloutRow],
}

fn minutes(secs: i64) -> String {
    if secs < 120 {
        format!("{secs}s")
    } else {
        format!("{}m", secs / 60)
    }
}

/// Seconds since the pod's Ready condition last changed (or since it was created).
fn down_for(pod: &PodRow, now: Timestamp) -> i64 {
    let since = pod
        .pod
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .and_then(|c| c.last_transition_time.as_ref().map(|t| t.0))
        .or(pod.created);
    since.map_or(i64::MAX, |t| now.as_second() - t.as_second())
}

/// Updates `memory` for this rebuild and returns the problems, worst first.
pub fn triage(input: &Input<'_>, memory: &mut Memory) -> Vec<Problem> {
    let now = input.now;
    // Remember progress and restarts (forgetting objects that are gone).
    let mut progress = HashMap::new();
    for w in input.workloads {
        let key = w.key();
        let since = match memory.progress.get(&key) {
            Some((rev, updated, since)) if *rev == w.update_revision && *updated == w.updated => {
                *since
            }
            _ => now,
        };
        progress.insert(key, (w.update_revision.clone(), w.updated, since));
    }
    memory.progress = progress;

    let mut out = Vec::new();
    // Pods needing attention per workload index (healthy pods raise no problem).
    let mut by_workload: BTreeMap<usize, Vec<&Arc<PodRow>>> = BTreeMap::new();
    for p in input.pods.attention() {
        if let Some(i) = p.owner_uid.as_ref().and_then(|u| input.owners.get(u)) {
            by_workload.entry(*i).or_default().push(p);
        }
    }
    for (i, w) in input.workloads.iter().enumerate() {
        let pods = by_workload.get(&i).map(Vec::as_slice).unwrap_or_default();
        let subject = format!("{} {}/{}", w.kind.title(), w.namespace, w.name);
        let object = ObjectRef {
            kind: w.kind,
            namespace: Some(w.namespace.clone()),
            name: w.name.clone(),
        };
        let on_update = |p: &PodRow| {
            !w.update_revision.is_empty() && same_revision(&p.revision, &w.update_revision)
        };
        // Stuck rollout: the controller's verdict where it gives one (v1.9's Progressing
        // condition), else the console's guess from the pods and the time without progress.
        let conditions = input.progress.get(&w.key());
        if let Some(p) = conditions
            .filter(|c| c.exceeded())
            .and_then(|c| c.progressing.as_ref())
        {
            let updated = match w.expected {
                Some(e) => format!("{}/{e} updated", w.updated),
                None => format!("{} updated", w.updated),
            };
            out.push(Problem {
                kind: ProblemKind::StuckRollout,
                object: Some(object.clone()),
                owner: Some(w.owner()),
                subject: subject.clone(),
                why: format!("{} ({updated})", p.message),
                remedy: "u undo · [ partition up · P pause".to_owned(),
                weight: input.pods.owned(&w.uid).len().max(1),
                reported: true,
            });
        } else if w.rolling()
            && !w.paused
            && crate::app::rollouts::controlling_row(input.rollouts, w.kind, &w.namespace, &w.name)
                .is_none()
        {
            // A pod just updated is briefly not ready: only a pod down for a while (or
            // crash-looping) holds the rollout.
            let not_ready: Vec<&Arc<PodRow>> = pods
                .iter()
                .copied()
                .filter(|p| on_update(p) && !p.all_ready)
                .filter(|p| crash_looping(p) || down_for(p, now) >= NOT_READY_GRACE_SECONDS)
                .collect();
            let stalled = memory
                .progress
                .get(&w.key())
                .map(|(_, _, since)| now.as_second() - since.as_second())
                .filter(|s| *s >= input.stall_seconds && w.expected.is_some_and(|e| w.updated < e))
                // A Progressing condition keeps the time: no guess of ours beside it.
                .filter(|_| conditions.is_none_or(|c| c.progressing.is_none()));
            let updated = match w.expected {
                Some(e) => format!("{}/{e} updated", w.updated),
                None => format!("{} updated", w.updated),
            };
            let why = if !not_ready.is_empty() {
                Some(format!(
                    "{updated}; {} pod{} of the new revision {} not ready",
                    not_ready.len(),
                    if not_ready.len() == 1 { "" } else { "s" },
                    short_hash(&w.update_revision)
                ))
            } else {
                stalled.map(|s| format!("{updated}; no progress for {}", minutes(s)))
            };
            if let Some(why) = why {
                out.push(Problem {
                    kind: ProblemKind::StuckRollout,
                    object: Some(object.clone()),
                    owner: Some(w.owner()),
                    subject: subject.clone(),
                    why,
                    remedy: "u undo · [ partition up · P pause".to_owned(),
                    weight: not_ready.len().max(1),
                    reported: false,
                });
            }
        }
        // Crash loops, split by revision. A restart someone asked for (a
        // ContainerRecreateRequest, an in-place update) is not a crash.
        let looping = |p: &PodRow| {
            crash_looping(p)
                || (!p.all_ready
                    && input
                        .pods
                        .restart_rose(&p.namespace, &p.name)
                        .is_some_and(|t| {
                            now.as_second() - t.as_second() < RESTART_WINDOW_SECONDS
                                && !restart_was_asked(p, t, input.restarts)
                        }))
        };
        for new in [true, false] {
            let bad: Vec<&Arc<PodRow>> = pods
                .iter()
                .copied()
                .filter(|p| on_update(p) == new && looping(p))
                .collect();
            let Some(first) = bad.first() else { continue };
            let rev = if new {
                format!("new revision {}", short_hash(&w.update_revision))
            } else {
                "old revision".to_owned()
            };
            let restarts: i32 = bad.iter().map(|p| p.restarts).sum();
            out.push(Problem {
                kind: ProblemKind::CrashLoop,
                object: Some(ObjectRef {
                    kind: Kind::Pod,
                    namespace: Some(first.namespace.clone()),
                    name: first.name.clone(),
                }),
                owner: Some(w.owner()),
                subject: subject.clone(),
                why: format!(
                    "{} pod{} crash-looping on the {rev} ({} restarts): {}",
                    bad.len(),
                    if bad.len() == 1 { "" } else { "s" },
                    restarts,
                    bad.iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                remedy: "r restart (enter: the pod)".to_owned(),
                weight: bad.len(),
                reported: false,
            });
        }
    }
    for b in input.budgets.iter().filter(|b| b.exhausted()) {
        let down: Vec<&str> = b
            .disrupted
            .iter()
            .chain(&b.unavailable)
            .chain(&b.not_ready)
            .map(|p| p.pod.as_str())
            .collect();
        let mut down = down;
        down.sort_unstable();
        down.dedup();
        out.push(Problem {
            kind: ProblemKind::BudgetExhausted,
            object: Some(ObjectRef {
                kind: Kind::PodUnavailableBudget,
                namespace: Some(b.namespace.clone()),
                name: b.name.clone(),
            }),
            owner: None,
            subject: format!("PodUnavailableBudget {}/{}", b.namespace, b.name),
            why: format!(
                "0 disruptions allowed ({}/{} available, {} needed); down: {}",
                b.current,
                b.total,
                b.desired,
                if down.is_empty() {
                    "-".to_owned()
                } else {
                    down.join(" ")
                }
            ),
            remedy: "enter: the budget".to_owned(),
            weight: down.len(),
            reported: false,
        });
    }
    for c in input.restarts {
        let Some(why) = c.failed_or_overdue(now) else {
            continue;
        };
        out.push(Problem {
            kind: ProblemKind::RestartFailed,
            object: Some(ObjectRef {
                kind: Kind::Pod,
                namespace: Some(c.namespace.clone()),
                name: c.pod.clone(),
            }),
            owner: None,
            subject: format!("ContainerRecreateRequest {}/{}", c.namespace, c.name),
            why: format!("restart of pod {} {why}", c.pod),
            remedy: "r retry (enter: the pod)".to_owned(),
            weight: 1,
            reported: false,
        });
    }
    for d in input
        .denials
        .iter()
        .filter(|d| now.as_second() - d.time.as_second() < DENIAL_SECONDS)
    {
        out.push(Problem {
            kind: ProblemKind::DeleteDenied,
            object: d.object.clone(),
            owner: None,
            subject: d.subject.clone(),
            why: format!(
                "delete denied: {}",
                d.message.lines().next().unwrap_or_default()
            ),
            remedy: ":protect".to_owned(),
            weight: 1,
            reported: false,
        });
    }
    out.extend(crate::app::rollouts::health::problems(
        input.rollouts,
        input.workloads,
        input.pods,
        now,
        input.stall_seconds,
    ));
    out.sort_by(worst_first);
    out
}

/// Triage's order: by kind (stuck rollouts first), what the controller itself reports before
/// the console's guesses, more pods affected first, then by object.
pub fn worst_first(a: &Problem, b: &Problem) -> std::cmp::Ordering {
    a.kind
        .cmp(&b.kind)
        .then(b.reported.cmp(&a.reported))
        .then(b.weight.cmp(&a.weight))
        .then_with(|| a.subject.cmp(&b.subject))
}

impl super::Search for Problem {
    /// The problem's label, its object and why (what the row shows).
    fn search(&self) -> String {
        format!("{} {} {}", self.kind.label(), self.subject, self.why)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod progress_tests;
