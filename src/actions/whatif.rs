//! What-if (`w`): the pending action applied to an in-memory copy of the workload, its pods,
//! revisions and nodes, then the embedded Kruise reconciles (`crate::kruise`, the functions the
//! controllers of src/controllers call) and the simulated kubelet (`crate::cluster::sim`'s pure
//! decisions: scheduling, start, readiness, crash loops, in-place restarts) run in turns until
//! nothing moves any more. Pure: no IO, no clock (the start time is a parameter), nothing sent.
//!
//! The action is applied as the exact JSON patch [`super::prepare`] builds, so what is simulated
//! is what `y` would send.

mod cloneset;
mod daemonset;
mod statefulset;
mod world;

#[cfg(test)]
mod tests;

use std::fmt;

use jiff::Timestamp;
use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{Node, Pod},
};

use super::{ApiRequest, ObjectState, Prepared, Target};
use crate::{
    kruise::{FeatureGates, KruiseVersion, plan::WorkloadKind},
    sim::kubelet::Timing,
};
use world::{Pods, Round};

/// Controller turns at one instant before time moves on (writes lead to more writes: a
/// recreate marks, deletes, then creates).
const TURNS_PER_INSTANT: usize = 8;
/// Instants simulated at most.
const MAX_INSTANTS: usize = 400;
/// Simulated seconds without any pod created, deleted or updated after which the rollout has
/// stopped (longer than a `slow` image's start and the crash-loop back-off).
const QUIET_SECONDS: i64 = 60;
/// Simulated time at most.
const HORIZON_SECONDS: i64 = 3600;

/// What the simulation starts from: the objects as read.
#[derive(Debug, Clone)]
pub struct World {
    pub target: Target,
    /// The workload as read, at its served version.
    pub state: ObjectState,
    /// The pods matching the workload's selector.
    pub pods: Vec<Pod>,
    /// The ControllerRevisions the workload controls.
    pub revisions: Vec<ControllerRevision>,
    pub nodes: Vec<Node>,
}

/// How to simulate.
#[derive(Debug, Clone)]
pub struct Settings {
    pub gates: FeatureGates,
    pub version: KruiseVersion,
    /// The simulated clock starts here.
    pub now: Timestamp,
    pub timing: Timing,
}

impl Settings {
    pub fn new(now: Timestamp) -> Self {
        Self {
            gates: FeatureGates::new(),
            version: KruiseVersion::default(),
            now,
            timing: Timing::default(),
        }
    }
}

/// Pod counts at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Active pods (not terminating).
    pub pods: i32,
    /// The workload's desired pods (replicas; nodes it should run on for a DaemonSet).
    pub desired: i32,
    /// Active pods on the update revision.
    pub updated: i32,
    /// Active pods that are Ready.
    pub ready: i32,
    /// Updated and Ready.
    pub updated_ready: i32,
}

/// One step: the pod writes made at one simulated instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    /// Seconds after the action.
    pub at: i64,
    pub created: Vec<String>,
    pub deleted: Vec<String>,
    pub in_place: Vec<String>,
    /// Pods marked to be deleted and created again at the new revision.
    pub recreated: Vec<String>,
    /// Counts once the step has settled (just before the next step, or at the end).
    pub after: Counts,
}

impl Step {
    /// The pods the step updates to a new revision (in place or by recreating them).
    pub fn updated_pods(&self) -> Vec<String> {
        let mut pods: Vec<String> = self
            .in_place
            .iter()
            .chain(&self.recreated)
            .cloned()
            .collect();
        pods.sort();
        pods
    }

    fn is_empty(&self) -> bool {
        self.created.is_empty()
            && self.deleted.is_empty()
            && self.in_place.is_empty()
            && self.recreated.is_empty()
    }
}

/// Why the simulation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Every pod runs the update revision and is ready.
    Converged,
    /// The partition keeps these many pods on the old revision (all pods ready).
    Partition { held: i32 },
    /// The rollout is paused: no pod is updated.
    Paused,
    /// Pods on the update revision never become ready (crash loop): maxUnavailable keeps the
    /// rest on the old revision.
    NeverReady { pods: Vec<String>, kept: i32 },
    /// Pods no node can run.
    Unschedulable { pods: Vec<String> },
    /// Unready pods use up maxUnavailable: no further pod may be taken down.
    MaxUnavailable { unready: Vec<String> },
    /// Still moving when the simulation's bound was reached.
    Bounded { seconds: i64 },
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Converged => write!(f, "converged: every pod is updated and ready"),
            Stop::Partition { held } => write!(
                f,
                "blocked by the partition: it keeps {held} pod(s) on the old revision"
            ),
            Stop::Paused => write!(f, "blocked: the rollout is paused, no pod is updated"),
            Stop::NeverReady { pods, kept } => write!(
                f,
                "stuck: new pod(s) never become ready ({}); maxUnavailable keeps {kept} old \
                 pod(s) running",
                pods.join(", ")
            ),
            Stop::Unschedulable { pods } => {
                write!(f, "stuck: no node can run {}", pods.join(", "))
            }
            Stop::MaxUnavailable { unready } => write!(
                f,
                "blocked by maxUnavailable: unready pods ({}) use up the budget",
                unready.join(", ")
            ),
            Stop::Bounded { seconds } => write!(
                f,
                "still moving after {seconds}s simulated: the simulation stops here"
            ),
        }
    }
}

/// What the simulation predicts.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulation {
    pub target: Target,
    /// The action simulated, in words; `None`: nothing sent, the controllers as things stand.
    pub action: Option<String>,
    /// The request the action would send (and which was applied to the copy).
    pub request: Option<ApiRequest>,
    pub before: Counts,
    pub steps: Vec<Step>,
    pub stop: Stop,
    /// Simulated seconds until it stopped.
    pub seconds: i64,
}

/// Runs the simulation: `prepared` (when given) applied to the copy, then the controller and
/// the kubelet in turns until nothing moves.
pub fn simulate(
    world: World,
    prepared: Option<&Prepared>,
    settings: &Settings,
) -> Result<Simulation, String> {
    run(world, prepared, settings).map(|(sim, _)| sim)
}

/// [`simulate`], also returning the world as the simulation left it.
pub fn run(
    world: World,
    prepared: Option<&Prepared>,
    settings: &Settings,
) -> Result<(Simulation, World), String> {
    let kind = super::preview::workload_kind(&world.target)
        .ok_or_else(|| format!("{} has no rollout to simulate", world.target.describe()))?;
    let mut object = world.state.object.clone();
    if let Some(prepared) = prepared {
        world::apply_request(&mut object, &prepared.request)?;
    }
    let mut controller: Box<dyn world::Controller> = match kind {
        WorkloadKind::CloneSet => Box::new(cloneset::Sim::new(
            &world.state.version,
            object,
            world.revisions.clone(),
        )?),
        WorkloadKind::AdvancedStatefulSet => {
            Box::new(statefulset::Sim::new(object, world.revisions.clone())?)
        }
        WorkloadKind::AdvancedDaemonSet => {
            Box::new(daemonset::Sim::new(object, world.revisions.clone())?)
        }
    };
    let mut pods = Pods::new(
        world.pods.clone(),
        world.nodes.clone(),
        settings.timing.clone(),
    );
    let before = controller.counts(&pods);
    let start = settings.now.as_second();
    let mut t = start;
    let mut last_write = start;
    let mut steps: Vec<Step> = Vec::new();
    let mut bounded = true;
    let quiet = QUIET_SECONDS.max(controller.min_ready_seconds() + 30);
    for _ in 0..MAX_INSTANTS {
        let mut step = Step {
            at: t - start,
            ..Step::default()
        };
        let mut wake: Option<i64> = None;
        // The counts just before this instant's first pod write: how the previous step settled.
        let mut settled: Option<Counts> = None;
        for _ in 0..TURNS_PER_INSTANT {
            let counts = controller.counts(&pods);
            let Round {
                created,
                deleted,
                in_place,
                recreated,
                wrote,
                requeue_after,
            } = controller.reconcile(&mut pods, t, settings);
            if settled.is_none()
                && !(created.is_empty()
                    && deleted.is_empty()
                    && in_place.is_empty()
                    && recreated.is_empty())
            {
                settled = Some(counts);
            }
            step.created.extend(created);
            step.deleted.extend(deleted);
            step.in_place.extend(in_place);
            step.recreated.extend(recreated);
            if let Some(after) = requeue_after.filter(|s| *s > 0) {
                wake = Some(wake.map_or(t + after, |w: i64| w.min(t + after)));
            }
            let (changed, kubelet_wake) = pods.kubelet(t);
            if let Some(k) = kubelet_wake {
                wake = Some(wake.map_or(k, |w| w.min(k)));
            }
            if !wrote && !changed {
                break;
            }
        }
        if !step.is_empty() {
            if let (Some(prev), Some(counts)) = (steps.last_mut(), settled) {
                prev.after = counts;
            }
            last_write = t;
            steps.push(step);
        }
        // Nothing due: look again once the quiet time has passed (a stable world stays so).
        let next = wake.filter(|w| *w > t).unwrap_or(last_write + quiet + 1);
        if next - last_write > quiet {
            // Watched for the quiet time after the last write: that is how long was simulated.
            t = t.max(last_write + quiet);
            bounded = false;
            break;
        }
        if next - start > HORIZON_SECONDS {
            break;
        }
        t = next;
    }
    let end = controller.counts(&pods);
    if let Some(last) = steps.last_mut() {
        last.after = end;
    }
    let stop = if bounded {
        Stop::Bounded { seconds: t - start }
    } else {
        controller.why_stopped(&pods, &end)
    };
    let (object, revisions) = controller.snapshot();
    let (pods, nodes) = pods.into_parts();
    let after = World {
        target: world.target.clone(),
        state: ObjectState {
            object,
            ..world.state
        },
        pods,
        revisions,
        nodes,
    };
    let sim = Simulation {
        target: world.target,
        action: prepared.map(|p| p.action.describe()),
        request: prepared.map(|p| p.request.clone()),
        before,
        steps,
        stop,
        seconds: t - start,
    };
    Ok((sim, after))
}
