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
        // Crash loops, split by revision.
        let looping = |p: &PodRow| {
            crash_looping(p)
                || (!p.all_ready
                    && input
                        .pods
                        .restart_rose(&p.namespace, &p.name)
                        .is_some_and(|t| now.as_second() - t.as_second() < RESTART_WINDOW_SECONDS))
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
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

    use super::*;
    use crate::api::{SlimPod, pod::SlimContainerStatus};

    pub(super) fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    pub(super) fn workload(updated: i32, expected: i32) -> WorkloadRow {
        WorkloadRow {
            kind: Kind::CloneSet,
            namespace: "demo".into(),
            name: "checkout".into(),
            uid: "uid-checkout".into(),
            selector: LabelSelector::default(),
            desired: 6,
            ready: 6,
            updated,
            expected: Some(expected),
            partition: None,
            paused: false,
            current_revision: "checkout-old".into(),
            update_revision: "checkout-new".into(),
            protection: None,
            created: Some(at(0)),
            search: String::new(),
        }
    }

    pub(super) fn pod(
        name: &str,
        revision: &str,
        ready: bool,
        restarts: i32,
        crash: bool,
    ) -> Arc<PodRow> {
        let state = crash.then(|| crate::api::pod::SlimContainerState {
            waiting: Some(Box::new(crate::api::pod::SlimStateDetail {
                reason: Some("CrashLoopBackOff".into()),
                ..Default::default()
            })),
            ..Default::default()
        });
        Arc::new(PodRow {
            pod: Arc::new(SlimPod {
                status: crate::api::pod::SlimPodStatus {
                    container_statuses: vec![SlimContainerStatus {
                        name: "main".into(),
                        ready,
                        restart_count: restarts,
                        state,
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                },
                ..Default::default()
            }),
            namespace: "demo".into(),
            name: name.into(),
            ready: String::new(),
            all_ready: ready,
            status: if crash { "CrashLoopBackOff" } else { "Running" }.into(),
            restarts,
            node: "node-1".into(),
            revision: revision.into(),
            owner_uid: Some("uid-checkout".into()),
            created: Some(at(0)),
            search: String::new(),
        })
    }

    fn run(
        now: Timestamp,
        workloads: &[WorkloadRow],
        pods: &[Arc<PodRow>],
        memory: &mut Memory,
    ) -> Vec<Problem> {
        run_with(now, workloads, pods, memory, &HashMap::new())
    }

    pub(super) fn run_with(
        now: Timestamp,
        workloads: &[WorkloadRow],
        pods: &[Arc<PodRow>],
        memory: &mut Memory,
        progress: &HashMap<String, Conditions>,
    ) -> Vec<Problem> {
        run_index(now, workloads, &PodIndex::build(pods), memory, progress)
    }

    fn run_index(
        now: Timestamp,
        workloads: &[WorkloadRow],
        pods: &PodIndex,
        memory: &mut Memory,
        progress: &HashMap<String, Conditions>,
    ) -> Vec<Problem> {
        let owners = HashMap::from([("uid-checkout".to_owned(), 0)]);
        let input = Input {
            now,
            stall_seconds: 600,
            workloads,
            owners: &owners,
            pods,
            budgets: &[],
            restarts: &[],
            denials: &[],
            progress,
            rollouts: &[],
        };
        triage(&input, memory)
    }

    #[test]
    fn a_crashing_update_revision_is_a_stuck_rollout_first_then_its_crash_loop() {
        let pods = [
            pod("checkout-a", "checkout-new", false, 4, true),
            pod("checkout-b", "checkout-old", true, 0, false),
        ];
        let mut memory = Memory::default();
        let out = run(at(3600), &[workload(1, 6)], &pods, &mut memory);
        let kinds: Vec<ProblemKind> = out.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [ProblemKind::StuckRollout, ProblemKind::CrashLoop]);
        assert!(
            out[0]
                .why
                .contains("1 pod of the new revision new not ready"),
            "{}",
            out[0].why
        );
        assert_eq!(
            out[0].owner.as_ref().map(|o| o.name.as_str()),
            Some("checkout")
        );
        assert!(out[1].why.contains("on the new revision"), "{}", out[1].why);
        assert_eq!(
            out[1].object.as_ref().map(|o| o.name.as_str()),
            Some("checkout-a")
        );
    }

    #[test]
    fn no_progress_for_the_stall_time_is_stuck_and_progress_clears_it() {
        let pods = [pod("checkout-a", "checkout-new", true, 0, false)];
        let mut memory = Memory::default();
        assert!(run(at(0), &[workload(1, 6)], &pods, &mut memory).is_empty());
        assert!(run(at(599), &[workload(1, 6)], &pods, &mut memory).is_empty());
        let out = run(at(600), &[workload(1, 6)], &pods, &mut memory);
        assert_eq!(out.len(), 1);
        assert!(out[0].why.contains("no progress for 10m"), "{}", out[0].why);
        // One more pod updated: progress, the clock starts again.
        assert!(run(at(700), &[workload(2, 6)], &pods, &mut memory).is_empty());
        // A paused rollout is held on purpose.
        let mut paused = workload(2, 6);
        paused.paused = true;
        assert!(run(at(5000), &[paused], &pods, &mut memory).is_empty());
    }

    #[test]
    fn restarts_climbing_on_an_unready_old_pod_are_a_crash_loop_that_ages_out() {
        let mut memory = Memory::default();
        let mut done = workload(6, 6);
        done.current_revision = done.update_revision.clone();
        let none = HashMap::new();
        let first = pod("checkout-b", "checkout-old", false, 1, false);
        let mut index = PodIndex::build(std::slice::from_ref(&first));
        let workloads = std::slice::from_ref(&done);
        assert!(run_index(at(0), workloads, &index, &mut memory, &none).is_empty());
        // The pod's next event carries a higher count: the index stamps when it rose.
        let climbed = pod("checkout-b", "checkout-old", false, 2, false);
        index.replace(Some(&first), Some(&climbed), at(10));
        let out = run_index(at(10), workloads, &index, &mut memory, &none);
        assert_eq!(out.len(), 1);
        assert!(out[0].why.contains("old revision"), "{}", out[0].why);
        let later = run_index(
            at(10 + RESTART_WINDOW_SECONDS),
            workloads,
            &index,
            &mut memory,
            &none,
        );
        assert!(later.is_empty(), "{later:?}");
        // The same count again (a resync) is no rise.
        let mut fresh = PodIndex::build(std::slice::from_ref(&climbed));
        fresh.replace(Some(&climbed), Some(&climbed), at(20));
        assert_eq!(fresh.restart_rose("demo", "checkout-b"), None);
    }
}

#[cfg(test)]
mod progress_tests;
