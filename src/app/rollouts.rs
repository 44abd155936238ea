//! Kruise Rollout (`rollouts.kruise.io`) in the console: the rows of `:rollouts`, which Rollout
//! controls a workload (research kruise-rollout.md §7.1), the step plan with the partition each
//! step sets ([`steps`]), the pods of the current batch and their health ([`health`]), and what
//! `]` `P` `u` mean on a Rollout-controlled workload ([`keys`]).
//!
//! Pure: rows are rebuilt from the stores when they change; times are computed from the app's
//! clock (`Msg::Tick`) where they are shown.

pub mod health;
pub mod keys;
pub mod steps;

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{msg::Kind, route::Owner, rows::WorkloadRow, stores::Stores};
use crate::{
    api::{
        keys::{BATCH_RELEASE_CONTROL_INFO, ROLLOUT_IN_PROGRESSING},
        rollout::{BatchRelease, CanaryStep, Rollout, condition, phase, step_state},
    },
    kruise::rollout::{calculate_batch_replicas, controlling},
};

/// How a step ends once its batch is ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    /// No duration (or no `pause`): waits for approval.
    Manual,
    /// Goes on this many seconds after the step's `lastUpdateTime`.
    Seconds(i32),
    /// The last step written `"100%"`: completes without a pause.
    Auto,
}

impl Pause {
    /// `doCanaryPaused`: a final `replicas: "100%"` (the string) completes at once; otherwise
    /// a missing duration waits for approval.
    pub fn of(step: &CanaryStep, last: bool) -> Pause {
        let full = matches!(&step.replicas, Some(IntOrString::String(s)) if s == "100%");
        if last && full {
            return Pause::Auto;
        }
        match step.pause.as_ref().and_then(|p| p.duration) {
            Some(d) => Pause::Seconds(d),
            None => Pause::Manual,
        }
    }

    pub fn label(self) -> String {
        match self {
            Pause::Manual => "manual".to_owned(),
            Pause::Seconds(d) => format!("{d}s"),
            Pause::Auto => "auto".to_owned(),
        }
    }
}

/// What is left of the current step's pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Seconds until the timed pause ends (0 once it is due).
    Seconds(i64),
    /// A pause without a duration: waits for `]`.
    Approval,
}

/// The current batch: pods updated and ready against what the step plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchCount {
    pub updated: i32,
    pub ready: i32,
    pub planned: i32,
}

/// One Rollout as `:rollouts`, the rollout view and triage show it.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutRow {
    pub namespace: String,
    pub name: String,
    /// `spec.workloadRef` as `CloneSet/web`.
    pub workload: String,
    /// The console's kind for the workload, when it shows that kind (CloneSet, ASTS, ADS).
    pub workload_kind: Option<Kind>,
    pub workload_name: String,
    pub phase: String,
    /// The Progressing condition's reason (`Initializing`, `InRolling`, `Paused`, …).
    pub reason: Option<String>,
    /// `canaryStatus.currentStepIndex` (1-based; 0 before a run).
    pub step: i32,
    /// `canaryStatus.nextStepIndex`.
    pub next_step: i32,
    /// How many steps the spec has.
    pub steps: i32,
    /// `canaryStatus.currentStepState` (the sub-status, never the mirror).
    pub state: String,
    /// `spec.strategy.paused`.
    pub paused: bool,
    /// The workload's replicas (R), when known.
    pub replicas: Option<i32>,
    pub batch: Option<BatchCount>,
    /// `canaryStatus.lastUpdateTime`: the base of the pause timer.
    pub since: Option<Timestamp>,
    /// How the current step pauses.
    pub pause: Option<Pause>,
    pub message: String,
    pub rollout: Arc<Rollout>,
    /// The BatchRelease of the same name, if any.
    pub release: Option<Arc<BatchRelease>>,
    /// Lowercase text for the `/` filter.
    pub search: String,
}

impl RolloutRow {
    /// The step state is live only while the Rollout is Progressing (it may be stale after a
    /// cancel or a completion: rollouts#339).
    pub fn live(&self) -> bool {
        self.phase == phase::PROGRESSING
    }

    fn in_rolling(&self) -> bool {
        self.live() && self.reason.as_deref() == Some(condition::REASON_IN_ROLLING)
    }

    /// Waiting at a step the user can approve (`]`).
    pub fn approvable(&self) -> bool {
        self.in_rolling() && self.state == step_state::STEP_PAUSED
    }

    /// Seconds in the current step (since `lastUpdateTime`).
    pub fn in_step(&self, now: Timestamp) -> Option<i64> {
        self.since
            .map(|t| (now.as_second() - t.as_second()).max(0))
            .filter(|_| self.step > 0)
    }

    /// Time left in the current pause (research §3.6): `max(0, lastUpdateTime + duration −
    /// now)` while Progressing / InRolling / StepPaused with a duration; `Approval` without one.
    pub fn left(&self, now: Timestamp) -> Option<Left> {
        if !self.approvable() {
            return None;
        }
        match self.pause? {
            Pause::Seconds(d) => {
                let since = self.since?;
                let end = since.as_second() + i64::from(d);
                Some(Left::Seconds((end - now.as_second()).max(0)))
            }
            Pause::Manual => Some(Left::Approval),
            Pause::Auto => None,
        }
    }

    /// `Progressing · InRolling` (the reason only while Progressing).
    pub fn phase_text(&self) -> String {
        match (&self.reason, self.live()) {
            (Some(r), true) => format!("{} · {r}", self.phase),
            _ if self.phase.is_empty() => "-".to_owned(),
            _ => self.phase.clone(),
        }
    }

    /// `2/3`, or `-` before a run.
    pub fn step_text(&self) -> String {
        if self.step <= 0 {
            "-".to_owned()
        } else {
            format!("{}/{}", self.step, self.steps)
        }
    }

    /// The compact line the header shows for a controlled workload:
    /// `Rollout web-rollout · step 2/3 · StepPaused · waiting for approval` (or `· 42s left`).
    pub fn headline(&self, now: Timestamp) -> String {
        let mut out = format!("Rollout {} · ", self.name);
        if self.step > 0 {
            out.push_str(&format!("step {} · ", self.step_text()));
        }
        if self.live() && !self.state.is_empty() {
            out.push_str(&self.state);
        } else {
            out.push_str(&self.phase_text());
        }
        if self.paused {
            out.push_str(" · paused");
        }
        match self.left(now) {
            Some(Left::Approval) => out.push_str(" · waiting for approval"),
            Some(Left::Seconds(s)) => out.push_str(&format!(" · {s}s left")),
            None => {}
        }
        out
    }

    /// The workload as the console shows it, if it does.
    pub fn owner(&self, workloads: &[WorkloadRow]) -> Option<Owner> {
        let kind = self.workload_kind?;
        workloads
            .iter()
            .find(|w| {
                w.kind == kind && w.namespace == self.namespace && w.name == self.workload_name
            })
            .map(WorkloadRow::owner)
    }
}

impl super::oncall::Search for RolloutRow {
    fn search(&self) -> String {
        self.search.clone()
    }
}

/// The console kind of a `workloadRef` (Kruise's CloneSet, Advanced StatefulSet, DaemonSet).
pub fn console_kind(group: &str, kind: &str) -> Option<Kind> {
    [Kind::CloneSet, Kind::StatefulSet, Kind::DaemonSet]
        .into_iter()
        .find(|k| k.info().group == group && k.info().kind == kind)
}

fn condition_reason(r: &Rollout) -> Option<String> {
    r.condition(condition::PROGRESSING)
        .filter(|c| !c.reason.is_empty())
        .map(|c| c.reason.clone())
}

/// The Rollouts in scope, sorted by namespace and name, each with its BatchRelease and the
/// numbers the views show.
pub fn build(
    stores: &Stores,
    namespace: Option<&str>,
    workloads: &[WorkloadRow],
) -> Vec<RolloutRow> {
    let releases = stores.oncall.batch_releases.state();
    let mut rows: Vec<RolloutRow> = stores
        .oncall
        .rollouts
        .state()
        .into_iter()
        .filter(|r| namespace.is_none_or(|ns| r.metadata.namespace.as_deref() == Some(ns)))
        .map(|r| {
            let ns = r.metadata.namespace.clone().unwrap_or_default();
            let name = r.metadata.name.clone().unwrap_or_default();
            let release = releases
                .iter()
                .find(|b| {
                    b.metadata.namespace.as_deref() == Some(ns.as_str())
                        && b.metadata.name.as_deref() == Some(name.as_str())
                })
                .cloned();
            row(r, release, workloads)
        })
        .collect();
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    rows
}

/// One row from a Rollout, its BatchRelease and the workload rows (for R).
pub fn row(
    rollout: Arc<Rollout>,
    release: Option<Arc<BatchRelease>>,
    workloads: &[WorkloadRow],
) -> RolloutRow {
    let r = &rollout;
    let ns = r.metadata.namespace.clone().unwrap_or_default();
    let name = r.metadata.name.clone().unwrap_or_default();
    let wref = &r.spec.workload_ref;
    let workload_kind = console_kind(wref.group(), &wref.kind);
    let replicas = workload_kind
        .and_then(|k| {
            workloads
                .iter()
                .find(|w| w.kind == k && w.namespace == ns && w.name == wref.name)
        })
        .map(|w| w.desired)
        .or_else(|| {
            release
                .as_ref()
                .and_then(|b| b.status.as_ref()?.observed_workload_replicas)
                .filter(|n| *n >= 0)
        });
    let cs = r.canary_status();
    let step = cs.map_or(0, |c| c.current_step_index);
    let steps = r.steps();
    let current = usize::try_from(step - 1).ok().and_then(|i| steps.get(i));
    let pause = current.map(|s| Pause::of(s, step as usize == steps.len()));
    let br = release
        .as_ref()
        .and_then(|b| b.status.as_ref()?.canary_status.as_ref());
    let batch = current.zip(replicas).map(|(s, rep)| {
        let planned = s
            .replicas
            .as_ref()
            .map_or(0, |v| calculate_batch_replicas(v, rep));
        let (updated, ready) = match br {
            Some(b) if b.updated_replicas.is_some() => (
                b.updated_replicas.unwrap_or(0),
                b.updated_ready_replicas.unwrap_or(0),
            ),
            _ => cs.map_or((0, 0), |c| (c.canary_replicas, c.canary_ready_replicas)),
        };
        BatchCount {
            updated,
            ready,
            planned,
        }
    });
    let message = r
        .status
        .as_ref()
        .and_then(|s| s.message.clone())
        .unwrap_or_default();
    let workload = format!("{}/{}", wref.kind, wref.name);
    RolloutRow {
        search: format!("{ns}/{name} {workload} {}", r.phase()).to_lowercase(),
        namespace: ns,
        name,
        workload,
        workload_kind,
        workload_name: wref.name.clone(),
        phase: r.phase().to_owned(),
        reason: condition_reason(r),
        step,
        next_step: cs.map_or(0, |c| c.next_step_index),
        steps: steps.len() as i32,
        state: cs.map(|c| c.current_step_state.clone()).unwrap_or_default(),
        paused: r.spec.strategy.paused,
        replicas,
        batch,
        since: cs.and_then(|c| c.last_update_time.as_ref()).map(|t| t.0),
        pause,
        message,
        rollout,
        release,
    }
}

/// The Rollout that controls the workload `kind` `namespace/name` (research §7.1: the
/// webhook's `fetchMatchedRollout`, through the port's `controlling`).
pub fn controlling_row<'a>(
    rows: &'a [RolloutRow],
    kind: Kind,
    namespace: &str,
    name: &str,
) -> Option<&'a RolloutRow> {
    let info = kind.info();
    let in_ns = rows.iter().filter(|r| r.namespace == namespace);
    let found = controlling(in_ns.map(|r| &*r.rollout), info.group, info.kind, name)?;
    rows.iter().find(|r| std::ptr::eq(&*r.rollout, found))
}

/// What the workload itself says of the Rollout's hold on it (research §7.1, 2).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hold {
    /// `rollouts.kruise.io/in-progressing`: a release is in progress.
    pub in_progressing: bool,
    /// The BatchRelease named by `batchrelease.rollouts.kruise.io/control-info`: it owns the
    /// partition and paused fields now.
    pub release: Option<String>,
}

/// Reads the workload's annotations from the stores.
pub fn hold(stores: &Stores, owner: &Owner) -> Hold {
    use kube::runtime::reflector::ObjectRef as StoreRef;
    let (ns, name) = (owner.namespace.as_str(), owner.name.as_str());
    let annotations = match owner.kind {
        Kind::CloneSet => stores
            .clonesets
            .get(&StoreRef::new(name).within(ns))
            .and_then(|w| w.metadata.annotations.clone()),
        Kind::StatefulSet => stores
            .statefulsets
            .get(&StoreRef::new(name).within(ns))
            .and_then(|w| w.metadata.annotations.clone()),
        Kind::DaemonSet => stores
            .daemonsets
            .get(&StoreRef::new(name).within(ns))
            .and_then(|w| w.metadata.annotations.clone()),
        _ => None,
    }
    .unwrap_or_default();
    Hold {
        in_progressing: annotations.contains_key(ROLLOUT_IN_PROGRESSING),
        release: annotations.get(BATCH_RELEASE_CONTROL_INFO).map(|info| {
            serde_json::from_str::<serde_json::Value>(info)
                .ok()
                .and_then(|v| v.get("name")?.as_str().map(str::to_owned))
                .unwrap_or_else(|| "?".to_owned())
        }),
    }
}

impl super::App {
    /// The Rollout controlling `owner`, as `:rollouts` lists it.
    pub fn rollout_of(&self, owner: &Owner) -> Option<&RolloutRow> {
        controlling_row(
            &self.oncall.rollouts,
            owner.kind,
            &owner.namespace,
            &owner.name,
        )
    }

    /// The `:rollouts` rows.
    pub fn rollouts(&self) -> &[RolloutRow] {
        &self.oncall.rollouts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    fn rollout(reason: &str, state: &str, pause: serde_json::Value) -> Arc<Rollout> {
        let r: Rollout = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-rollout", "namespace": "demo"},
            "spec": {
                "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
                "strategy": {"canary": {"steps": [{"replicas": 1, "pause": pause}, {"replicas": "100%"}]}}
            },
            "status": {
                "phase": "Progressing",
                "conditions": [{"type": "Progressing", "status": "True", "reason": reason}],
                "canaryStatus": {
                    "currentStepIndex": 1, "nextStepIndex": 2, "currentStepState": state,
                    "lastUpdateTime": at(0).to_string()
                }
            }
        }))
        .unwrap();
        Arc::new(r)
    }

    #[test]
    fn time_left_runs_from_the_last_update_and_only_while_paused_in_rolling() {
        let timed = row(
            rollout(
                "InRolling",
                "StepPaused",
                serde_json::json!({"duration": 60}),
            ),
            None,
            &[],
        );
        assert_eq!(timed.left(at(18)), Some(Left::Seconds(42)));
        assert_eq!(timed.left(at(90)), Some(Left::Seconds(0)));
        assert_eq!(timed.in_step(at(18)), Some(18));
        assert_eq!(
            timed.headline(at(18)),
            "Rollout web-rollout · step 1/2 · StepPaused · 42s left"
        );
        let manual = row(
            rollout("InRolling", "StepPaused", serde_json::json!({})),
            None,
            &[],
        );
        assert_eq!(manual.left(at(18)), Some(Left::Approval));
        assert!(manual.approvable());
        // Paused by spec.strategy.paused (reason Paused), or not yet paused: no countdown.
        let held = row(
            rollout("Paused", "StepPaused", serde_json::json!({"duration": 60})),
            None,
            &[],
        );
        assert_eq!(held.left(at(18)), None);
        assert!(!held.approvable());
        let upgrading = row(
            rollout(
                "InRolling",
                "StepUpgrade",
                serde_json::json!({"duration": 60}),
            ),
            None,
            &[],
        );
        assert_eq!(upgrading.left(at(18)), None);
    }

    #[test]
    fn a_final_hundred_percent_string_step_pauses_for_nothing() {
        let r = rollout("InRolling", "StepPaused", serde_json::json!({}));
        let steps = r.steps();
        assert_eq!(Pause::of(&steps[0], false), Pause::Manual);
        assert_eq!(Pause::of(&steps[1], true), Pause::Auto);
        // The same step not last, or an int 100: manual.
        assert_eq!(Pause::of(&steps[1], false), Pause::Manual);
    }

    #[test]
    fn the_controlling_rollout_matches_group_kind_and_name_and_skips_disabled_ones() {
        let rows = vec![row(
            rollout("InRolling", "StepPaused", serde_json::json!({})),
            None,
            &[],
        )];
        assert!(controlling_row(&rows, Kind::CloneSet, "demo", "web").is_some());
        assert!(controlling_row(&rows, Kind::CloneSet, "other", "web").is_none());
        assert!(controlling_row(&rows, Kind::StatefulSet, "demo", "web").is_none());
        let mut disabled = (*rows[0].rollout).clone();
        if let Some(s) = disabled.status.as_mut() {
            s.phase = Some(phase::DISABLED.to_owned());
        }
        let rows = vec![row(Arc::new(disabled), None, &[])];
        assert!(controlling_row(&rows, Kind::CloneSet, "demo", "web").is_none());
    }
}
