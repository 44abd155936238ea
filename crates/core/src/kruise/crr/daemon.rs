//! The kruise-daemon side of a CRR: which CRR of a pod to work on, each container's
//! recreate state, and one sync step (which container to kill next, when to complete).

use crate::kruise::KruiseVersion;
use std::cmp::Ordering;

use super::types::{
    ContainerRecreateRequest, ContainerRecreateRequestContainer,
    ContainerRecreateRequestContainerRecreateState, ContainerRecreateRequestStrategy,
    CrrSyncContainerStatus, FAILURE_POLICY_IGNORE, phase,
};

/// A container as the node's runtime reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeContainer {
    pub id: String,
    pub running: bool,
    pub restart_count: i32,
    pub started_at: jiff::Timestamp,
}

fn phase_weight(p: &str) -> u8 {
    match p {
        phase::COMPLETED => 1,
        phase::RECREATING => 2,
        phase::PENDING => 3,
        _ => 4,
    }
}

/// Daemon order of one pod's CRRs: Completed, Recreating, Pending, then no phase; older
/// first within a phase.
///
/// Port of pkg/daemon/containerrecreate/crr_daemon_util.go::crrListByPhaseAndCreated (v1.8.4).
pub fn crr_order(a: &ContainerRecreateRequest, b: &ContainerRecreateRequest) -> Ordering {
    phase_weight(a.phase())
        .cmp(&phase_weight(b.phase()))
        .then_with(|| {
            let t =
                |c: &ContainerRecreateRequest| c.metadata.creation_timestamp.as_ref().map(|t| t.0);
            t(a).cmp(&t(b))
        })
}

/// Sorts a pod's CRRs and returns `(picked, names to set Pending)`: the first non-completed
/// CRR is worked on; the other CRRs without a phase are moved to Pending.
///
/// Port of pkg/daemon/containerrecreate/crr_daemon_controller.go::pickRecreateRequest (v1.8.4).
pub fn pick(crrs: &mut [ContainerRecreateRequest]) -> (Option<usize>, Vec<usize>) {
    crrs.sort_by(crr_order);
    let picked = crrs.iter().position(|c| c.phase() != phase::COMPLETED);
    let pending = (0..crrs.len())
        .filter(|&i| Some(i) != picked && crrs[i].phase().is_empty())
        .collect();
    (picked, pending)
}

/// Everything the state of one container depends on.
#[derive(Debug, Clone, Copy)]
pub struct ContainerInputs<'a> {
    pub container: &'a ContainerRecreateRequestContainer,
    pub previous: Option<&'a ContainerRecreateRequestContainerRecreateState>,
    pub runtime: Option<&'a RuntimeContainer>,
    pub sync: Option<&'a CrrSyncContainerStatus>,
    pub strategy: &'a ContainerRecreateRequestStrategy,
    pub crr_created: jiff::Timestamp,
    pub now: jiff::Timestamp,
    /// v1.8.4 also took a container started after the CRR's creation as restarted (R1).
    pub version: KruiseVersion,
}

/// One container's recreate state.
///
/// Port of pkg/daemon/containerrecreate/crr_daemon_util.go::getCurrentCRRContainersRecreateStates
/// (v1.8.4 and v1.9.0: since `f135982db` a container that merely started after the CRR was
/// created, same ID and restart count, is not taken as restarted, so it is still killed).
pub fn container_state(i: ContainerInputs<'_>) -> ContainerRecreateRequestContainerRecreateState {
    if let Some(prev) = i.previous
        && (prev.phase == phase::SUCCEEDED || prev.phase == phase::FAILED)
    {
        return prev.clone();
    }
    let is_killed = i.previous.is_some_and(|p| p.is_killed);
    let state = |p: &str, message: &str| ContainerRecreateRequestContainerRecreateState {
        name: i.container.name.clone(),
        phase: p.to_owned(),
        message: message.to_owned(),
        is_killed,
    };
    let Some(rt) = i.runtime else {
        return state(phase::PENDING, "not found container on Node");
    };
    if !rt.running {
        return state(phase::RECREATING, "");
    }
    if i.strategy.force_recreate && !is_killed {
        return state(phase::PENDING, "");
    }
    let restarted = match (i.version, i.container.status_context.as_ref()) {
        // v1.9.0 guards a nil statusContext: such a container is not taken as restarted
        (KruiseVersion::V1_9, None) => false,
        (KruiseVersion::V1_9, Some(ctx)) => {
            rt.id != ctx.container_id || rt.restart_count > ctx.restart_count
        }
        // v1.8.4 dereferences it (a panic upstream); read as an empty context here
        (KruiseVersion::V1_8, ctx) => {
            let ctx = ctx.cloned().unwrap_or_default();
            rt.id != ctx.container_id
                || rt.restart_count > ctx.restart_count
                || rt.started_at > i.crr_created
        }
    };
    if !restarted {
        return state(phase::PENDING, "");
    }
    let up_for = i.now.as_second() - rt.started_at.as_second();
    let synced_ready = i.sync.is_some_and(|s| {
        s.container_id == rt.id && s.ready && up_for > i64::from(i.strategy.min_started_seconds)
    });
    state(
        if synced_ready {
            phase::SUCCEEDED
        } else {
            phase::RECREATING
        },
        "",
    )
}

/// The result of one daemon sync of a Recreating CRR.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncStep {
    /// The new per-container states (the killed container already marked Recreating).
    pub states: Vec<ContainerRecreateRequestContainerRecreateState>,
    /// The container to kill now (with its preStop and the grace period).
    pub kill: Option<String>,
    /// Complete the CRR now (`phase=Completed`, `completionTime=now`, this message).
    pub complete: Option<String>,
}

/// Decides one sync: completion when every container is done (or one failed under policy
/// Fail), else the next Pending container to kill (waiting for earlier ones under
/// orderedRecreate). A Pending container the runtime does not have (`on_node` false) is
/// not killed; it waits.
///
/// Port of pkg/daemon/containerrecreate/crr_daemon_controller.go::sync (v1.8.4).
pub fn sync_step(
    mut states: Vec<ContainerRecreateRequestContainerRecreateState>,
    strategy: &ContainerRecreateRequestStrategy,
    on_node: &dyn Fn(&str) -> bool,
) -> SyncStep {
    let ignore_failures = strategy.failure_policy == FAILURE_POLICY_IGNORE;
    let mut kill = None;
    let mut done = 0;
    let mut blocked = false;
    for s in &mut states {
        match s.phase.as_str() {
            phase::SUCCEEDED => done += 1,
            phase::FAILED if ignore_failures => done += 1,
            phase::FAILED => {
                return SyncStep {
                    states,
                    kill: None,
                    complete: Some(String::new()),
                };
            }
            phase::RECREATING => {
                // Upstream marks every Recreating container killed (manage's loop).
                s.is_killed = true;
                blocked |= strategy.ordered_recreate;
            }
            _ if !on_node(&s.name) => blocked |= strategy.ordered_recreate,
            _ if kill.is_none() && !blocked => {
                s.phase = phase::RECREATING.to_owned();
                s.is_killed = true;
                s.message.clear();
                kill = Some(s.name.clone());
                blocked |= strategy.ordered_recreate;
            }
            _ => {}
        }
    }
    let complete = (done == states.len()).then(String::new);
    SyncStep {
        states,
        kill,
        complete,
    }
}

/// Records a failed kill: the container is Failed with the error; under policy Fail the CRR
/// completes.
pub fn kill_failed(
    step: &mut SyncStep,
    container: &str,
    error: &str,
    strategy: &ContainerRecreateRequestStrategy,
) {
    if let Some(s) = step.states.iter_mut().find(|s| s.name == container) {
        s.phase = phase::FAILED.to_owned();
        s.message = format!("kill container error: {error}");
    }
    step.kill = None;
    if strategy.failure_policy != FAILURE_POLICY_IGNORE {
        step.complete = Some(String::new());
    }
}

/// What the daemon does with the CRR it picked for a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DaemonAction {
    /// Nothing to do: the CRR is completed.
    Idle,
    /// Move the CRR to `Recreating` first.
    StartRecreating,
    /// Wait (unreadyGracePeriodSeconds): requeue after this many seconds.
    Wait(i64),
    /// Write these states, kill a container and/or complete (see [`SyncStep`]).
    Step(SyncStep),
}

/// The container statuses the manager synced into the CRR annotation.
pub fn synced_statuses(crr: &ContainerRecreateRequest) -> Vec<CrrSyncContainerStatus> {
    crr.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(super::SYNC_CONTAINER_STATUSES_KEY))
        .and_then(|raw| serde_json::from_str(raw).ok())
        .unwrap_or_default()
}

/// One daemon pass over the picked CRR, given the runtime's view of the pod's containers.
///
/// Port of pkg/daemon/containerrecreate/crr_daemon_controller.go::sync (v1.8.4).
pub fn daemon_sync(
    version: KruiseVersion,
    crr: &ContainerRecreateRequest,
    runtime: &std::collections::BTreeMap<String, RuntimeContainer>,
    now: jiff::Timestamp,
) -> DaemonAction {
    if crr.phase() == phase::COMPLETED {
        return DaemonAction::Idle;
    }
    if crr.phase().is_empty() || crr.phase() == phase::PENDING {
        return DaemonAction::StartRecreating;
    }
    let strategy = crr.spec.strategy.clone().unwrap_or_default();
    if let Some(grace) = strategy.unready_grace_period_seconds {
        let acquired = crr
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(super::UNREADY_ACQUIRED_KEY))
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        let Some(acquired) = acquired else {
            return DaemonAction::Wait(1);
        };
        let left = grace - (now.as_second() - acquired.as_second());
        if left > 0 {
            return DaemonAction::Wait(left);
        }
    }
    let created = crr
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |t| t.0);
    let synced = synced_statuses(crr);
    let previous = crr
        .status
        .as_ref()
        .map(|s| s.container_recreate_states.as_slice())
        .unwrap_or_default();
    let states = crr
        .spec
        .containers
        .iter()
        .map(|c| {
            container_state(ContainerInputs {
                container: c,
                previous: previous.iter().find(|s| s.name == c.name),
                runtime: runtime.get(&c.name),
                sync: synced.iter().find(|s| s.name == c.name),
                strategy: &strategy,
                crr_created: created,
                now,
                version,
            })
        })
        .collect();
    DaemonAction::Step(sync_step(states, &strategy, &|name| {
        runtime.contains_key(name)
    }))
}
