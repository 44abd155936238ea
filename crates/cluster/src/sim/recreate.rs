//! The simulated kruise-daemon's ContainerRecreateRequest side, pure: for one pod on a simulated
//! node, which CRR to work on and what to write, composed from `kruise::crr::daemon` with the
//! pod's status standing in for the container runtime.
//!
//! - CRRs of the pod without a phase are set `Pending`, the picked one `Recreating` (upstream's
//!   pick order: Recreating, Pending, then no phase; older first);
//! - the listed containers are killed one at a time (all at once unless `orderedRecreate`, in
//!   which case the next waits until the previous one has succeeded): a kill restarts the
//!   container in the pod status, `restartCount` + 1 and a new `containerID`, and reports a
//!   `Killing` event from `kruise-daemon-crr`;
//! - a container succeeds once it runs again, the manager has synced it ready into the
//!   `crr.apps.kruise.io/sync-container-statuses` annotation, and it has been up longer than
//!   `minStartedSeconds`; when every container has succeeded (or one failed under
//!   `failurePolicy: Fail`) the CRR is `Completed`.
//!
//! Steering a failure (as a real runtime can fail to stop a container): the pod annotation
//! `sim.kruise-tui.io/kill-<container>: "fail"` makes the kill of that container fail, so its
//! state is `Failed` with message `kill container error: ...`; under `failurePolicy: Fail` the
//! CRR completes at once, under `Ignore` the other containers go on.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::{
    api::core::v1::{
        ContainerState, ContainerStateRunning, ContainerStateTerminated, Pod, PodStatus,
    },
    apimachinery::pkg::apis::meta::v1::Time,
};

use super::{events::PodEvent, ids};
use crate::kruise::crr::{
    ContainerRecreateRequest, POD_UID_KEY,
    daemon::{DaemonAction, RuntimeContainer, daemon_sync, kill_failed, pick},
    types::{ContainerRecreateRequestContainerRecreateState, phase},
};

/// Pod annotation prefix: `sim.kruise-tui.io/kill-<container>: "fail"` makes killing that
/// container fail.
pub const KILL_ANNOTATION_PREFIX: &str = "sim.kruise-tui.io/kill-";

/// The event source component of the daemon's CRR events.
pub const COMPONENT: &str = "kruise-daemon-crr";

/// A container kill: the pod status after it and the event reporting it.
#[derive(Debug, Clone, PartialEq)]
pub struct Kill {
    pub container: String,
    pub status: PodStatus,
    pub event: PodEvent,
}

/// What the daemon writes for one pod now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// CRRs whose status changes before any kill (phase Pending or Recreating).
    pub phases: Vec<ContainerRecreateRequest>,
    /// The container to kill, if any.
    pub kill: Option<Kill>,
    /// The picked CRR's new container states, written after the kill as upstream writes them:
    /// a merge patch of the status (no resourceVersion, so the manager's concurrent annotation
    /// patches cannot make it fail after the kill happened).
    pub states: Option<(String, Vec<ContainerRecreateRequestContainerRecreateState>)>,
    /// The picked CRR completed (phase, completion time, states), written with its
    /// resourceVersion after the kill.
    pub complete: Option<ContainerRecreateRequest>,
    /// When to look at the pod's CRRs again (besides watch events).
    pub wake_at: Option<Timestamp>,
}

fn whole_seconds(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

/// The pod's containers as a runtime would list them: those with a container ID.
pub fn runtime(pod: &Pod) -> BTreeMap<String, RuntimeContainer> {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .filter_map(|c| {
            let id = c.container_id.clone().filter(|id| !id.is_empty())?;
            let state = c.state.as_ref();
            let running = state.and_then(|s| s.running.as_ref());
            let started_at = running
                .and_then(|r| r.started_at.as_ref())
                .or_else(|| {
                    state
                        .and_then(|s| s.terminated.as_ref())
                        .and_then(|t| t.started_at.as_ref())
                })
                .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
            Some((
                c.name.clone(),
                RuntimeContainer {
                    id,
                    running: running.is_some(),
                    restart_count: c.restart_count,
                    started_at,
                },
            ))
        })
        .collect()
}

/// The error a kill of `container` meets, when the pod's annotation steers one.
pub fn kill_error(pod: &Pod, container: &str) -> Option<String> {
    let key = format!("{KILL_ANNOTATION_PREFIX}{container}");
    let value = pod.metadata.annotations.as_ref()?.get(&key)?;
    (value == "fail").then(|| format!("simulated runtime failure (pod annotation {key}: \"fail\")"))
}

/// The pod status after `container` was stopped and started again at `now`: its last state is
/// the run that ended, `restartCount` + 1, a new `containerID`, not ready yet (the simulated
/// kubelet makes it ready as for any start). `None` when the pod has no such container status.
pub fn restart(pod: &Pod, container: &str, now: Timestamp) -> Option<PodStatus> {
    let now = Time(whole_seconds(now));
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let mut status = pod.status.clone()?;
    let c = status
        .container_statuses
        .iter_mut()
        .flatten()
        .find(|c| c.name == container)?;
    let previous_start = c
        .state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.clone());
    c.last_state = Some(ContainerState {
        terminated: Some(ContainerStateTerminated {
            container_id: c.container_id.clone(),
            exit_code: 0,
            reason: Some("Completed".to_owned()),
            started_at: previous_start,
            finished_at: Some(now.clone()),
            ..ContainerStateTerminated::default()
        }),
        ..ContainerState::default()
    });
    c.restart_count += 1;
    c.container_id = Some(ids::container_id(uid, container, c.restart_count));
    c.state = Some(ContainerState {
        running: Some(ContainerStateRunning {
            started_at: Some(now),
        }),
        ..ContainerState::default()
    });
    c.ready = false;
    c.started = Some(true);
    Some(status)
}

fn with_status(
    crr: &ContainerRecreateRequest,
    edit: impl FnOnce(&mut crate::kruise::crr::types::ContainerRecreateRequestStatus),
) -> ContainerRecreateRequest {
    let mut next = crr.clone();
    edit(next.status.get_or_insert_with(Default::default));
    next
}

/// Plans the daemon's work on `crrs` (the active CRRs of `pod`) at `now`.
///
/// Port of pkg/daemon/containerrecreate/crr_daemon_controller.go::sync and manage (v1.8.4),
/// the runtime being the pod's status.
pub fn plan(
    version: crate::kruise::KruiseVersion,
    crrs: &[ContainerRecreateRequest],
    pod: Option<&Pod>,
    now: Timestamp,
) -> Plan {
    let mut out = Plan::default();
    let mut live: Vec<ContainerRecreateRequest> = crrs
        .iter()
        .filter(|c| {
            c.metadata.deletion_timestamp.is_none()
                && c.status
                    .as_ref()
                    .is_none_or(|s| s.completion_time.is_none())
        })
        .cloned()
        .collect();
    let (picked, pending) = pick(&mut live);
    for i in pending {
        out.phases.push(with_status(&live[i], |s| {
            s.phase = phase::PENDING.to_owned();
        }));
    }
    let Some(crr) = picked.map(|i| &live[i]) else {
        return out;
    };
    // The runtime runs the pod the CRR was made for: a same-named successor has none of its
    // containers.
    let pod =
        pod.filter(|p| p.metadata.uid.as_deref().unwrap_or_default() == crr.label(POD_UID_KEY));
    let runtime = pod.map(runtime).unwrap_or_default();
    match daemon_sync(version, crr, &runtime, now) {
        DaemonAction::Idle => {}
        DaemonAction::StartRecreating => out.phases.push(with_status(crr, |s| {
            s.phase = phase::RECREATING.to_owned();
        })),
        DaemonAction::Wait(seconds) => {
            out.wake_at = Some(now + SignedDuration::from_secs(seconds.max(1)));
        }
        DaemonAction::Step(mut step) => {
            let strategy = crr.spec.strategy.clone().unwrap_or_default();
            if let (Some(container), Some(pod)) = (step.kill.clone(), pod) {
                let crr_name = crr.metadata.name.clone().unwrap_or_default();
                match kill_error(pod, &container) {
                    Some(error) => kill_failed(&mut step, &container, &error, &strategy),
                    None => match restart(pod, &container, now) {
                        Some(status) => {
                            out.kill = Some(Kill {
                                event: PodEvent {
                                    type_: "Normal",
                                    reason: "Killing",
                                    message: format!(
                                        "Stopping container {container} by ContainerRecreateRequest {crr_name}"
                                    ),
                                    component: COMPONENT,
                                },
                                container,
                                status,
                            })
                        }
                        None => kill_failed(
                            &mut step,
                            &container,
                            &format!("container {container} not found in the pod status"),
                            &strategy,
                        ),
                    },
                }
            }
            let current = crr
                .status
                .as_ref()
                .map(|s| s.container_recreate_states.as_slice())
                .unwrap_or_default();
            match &step.complete {
                Some(message) => {
                    out.complete = Some(with_status(crr, |s| {
                        s.container_recreate_states = step.states.clone();
                        s.phase = phase::COMPLETED.to_owned();
                        s.completion_time = Some(Time(whole_seconds(now)));
                        s.message = message.clone();
                    }));
                }
                None => {
                    out.wake_at =
                        min_started_wake(crr, &step.states, &runtime).filter(|t| *t > now);
                    if step.states != current {
                        out.states = Some((
                            crr.metadata.name.clone().unwrap_or_default(),
                            step.states.clone(),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// When a recreated container that is running has been up past `minStartedSeconds`.
fn min_started_wake(
    crr: &ContainerRecreateRequest,
    states: &[ContainerRecreateRequestContainerRecreateState],
    runtime: &BTreeMap<String, RuntimeContainer>,
) -> Option<Timestamp> {
    let min = i64::from(
        crr.spec
            .strategy
            .as_ref()
            .map_or(0, |s| s.min_started_seconds),
    );
    states
        .iter()
        .filter(|s| s.phase == phase::RECREATING)
        .filter_map(|s| runtime.get(&s.name).filter(|r| r.running))
        .map(|r| r.started_at + SignedDuration::from_secs(min + 1))
        .min()
}

#[cfg(test)]
mod tests;
