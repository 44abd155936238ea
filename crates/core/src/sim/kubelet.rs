//! The simulated kubelet's decision logic, pure: (pod, host IP, now) → the status to write, or a
//! delete, plus when to look at the pod again.
//!
//! Lifecycle: a bound pod goes Pending (containers `ContainerCreating`) → Running (containers
//! started) → Ready once every container is ready and every readiness gate condition is True.
//! Image conventions (PRODUCT §5): an image containing `crash` runs briefly, exits with an error
//! and waits in `CrashLoopBackOff` with a growing back-off, restartCount climbing, never ready;
//! one containing `slow` takes `slow_ready` to become ready; any other image is ready after
//! `ready`. A container whose spec image changed is restarted alone (restartCount + 1, new
//! imageID and containerID, readiness re-established). A pod with a deletionTimestamp has its
//! containers stopped at once (phase Succeeded or Failed) and is then deleted with grace 0, as
//! a kubelet finishes a graceful deletion; one that finalizers hold after that stays as it is.
//!
//! Every timestamp written is an event time (start time + delay, crash time + back-off), never
//! a sampling time, so re-evaluating later gives the same answer and the seeder can run a pod
//! forward to any instant. The API serializes times to whole seconds, so event times are
//! truncated to seconds before use.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::{
    api::core::v1::{
        Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
        ContainerStateWaiting, ContainerStatus, HostIP, Pod, PodCondition, PodIP, PodStatus,
    },
    apimachinery::pkg::apis::meta::v1::Time,
};

use super::ids;

/// The delays the simulated kubelet applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timing {
    /// Bound → containers running.
    pub start: SignedDuration,
    /// Container running → ready, for ordinary images.
    pub ready: SignedDuration,
    /// Container running → ready, for images containing `slow`.
    pub slow_ready: SignedDuration,
    /// Container running → exits with an error, for images containing `crash`.
    pub crash_after: SignedDuration,
    /// First crash-loop back-off; it doubles per restart up to `backoff_max`.
    pub backoff_base: SignedDuration,
    pub backoff_max: SignedDuration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            start: SignedDuration::from_secs(1),
            ready: SignedDuration::from_secs(1),
            slow_ready: SignedDuration::from_secs(10),
            crash_after: SignedDuration::from_secs(2),
            backoff_base: SignedDuration::from_secs(5),
            backoff_max: SignedDuration::from_secs(40),
        }
    }
}

impl Timing {
    /// The back-off before the restart that follows `restarts` restarts.
    pub fn backoff(&self, restarts: i32) -> SignedDuration {
        let factor = 1i64 << restarts.clamp(0, 20);
        let secs = self.backoff_base.as_secs().saturating_mul(factor);
        SignedDuration::from_secs(secs.min(self.backoff_max.as_secs()))
    }
}

/// What to do with a pod now.
#[derive(Debug, Clone, PartialEq)]
pub enum PodAction {
    /// Its status is already what it should be.
    Nothing,
    /// Write this status (PUT pods/status).
    WriteStatus(Box<PodStatus>),
    /// Its containers are stopped: delete it with grace 0 (finalizers are the server's
    /// business: they keep it, and nothing here removes them).
    Delete,
}

/// An action plus the instant the pod needs another look (a timer, not a poll).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub action: PodAction,
    pub wake_at: Option<Timestamp>,
}

/// The pod condition types the kubelet owns; all others are kept as they are.
const OWNED_CONDITIONS: [&str; 4] = ["PodScheduled", "Initialized", "ContainersReady", "Ready"];

/// Decides what the kubelet of the node at `host_ip` does with `pod` (bound to that node) at
/// `now`.
pub fn decide(pod: &Pod, host_ip: &str, now: Timestamp, timing: &Timing) -> Decision {
    let now = whole_seconds(now);
    let current = pod.status.clone().unwrap_or_default();
    let (next, wake_at) = match pod.metadata.deletion_timestamp.as_ref() {
        Some(_) => {
            // Containers stop first (the status says so, with a terminal phase), then the pod
            // is deleted with grace 0, as the kubelet's status manager does once the API shows
            // it finished: whoever deleted it, the server waits for this.
            let stopped = terminating(&current, now);
            if stopped == current {
                return Decision {
                    action: if held_by_finalizers(pod) {
                        PodAction::Nothing
                    } else {
                        PodAction::Delete
                    },
                    wake_at: None,
                };
            }
            (stopped, None)
        }
        None if matches!(current.phase.as_deref(), Some("Succeeded" | "Failed")) => {
            (current.clone(), None)
        }
        None => advance(pod, &current, host_ip, now, timing),
    };
    let action = if next == current {
        PodAction::Nothing
    } else {
        PodAction::WriteStatus(Box::new(next))
    };
    Decision { action, wake_at }
}

/// The status `pod` (bound to `host_ip`, created at `created`) has at `now` if the simulated
/// kubelet ran it all along. The seeder uses it to write what the kubelet would have written.
pub fn settle(pod: &Pod, host_ip: &str, now: Timestamp, timing: &Timing) -> PodStatus {
    let mut pod = pod.clone();
    for _ in 0..4 {
        let (next, _) = advance(
            &pod,
            &pod.status.clone().unwrap_or_default(),
            host_ip,
            whole_seconds(now),
            timing,
        );
        if pod.status.as_ref() == Some(&next) {
            break;
        }
        pod.status = Some(next);
    }
    pod.status.unwrap_or_default()
}

fn whole_seconds(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

fn time(t: Timestamp) -> Time {
    Time(whole_seconds(t))
}

fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The next status of a live pod, and when it changes next on its own.
fn advance(
    pod: &Pod,
    current: &PodStatus,
    host_ip: &str,
    now: Timestamp,
    timing: &Timing,
) -> (PodStatus, Option<Timestamp>) {
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or_default();
    let mut next = current.clone();
    next.host_ip = Some(host_ip.to_owned());
    next.host_ips = Some(vec![HostIP {
        ip: host_ip.to_owned(),
    }]);
    let start_time = current.start_time.as_ref().map_or(now, |t| t.0);
    next.start_time = Some(time(start_time));
    let running_at = start_time + timing.start;
    let starting = current
        .container_statuses
        .iter()
        .flatten()
        .all(|s| is_waiting(s, "ContainerCreating"));

    let mut wake_at = None;
    if starting && now < running_at {
        next.phase = Some("Pending".to_owned());
        next.container_statuses = Some(containers.iter().map(creating).collect());
        wake_at = Some(running_at);
    } else {
        let ip = ids::pod_ip(uid);
        next.phase = Some("Running".to_owned());
        next.pod_ip = Some(ip.clone());
        next.pod_ips = Some(vec![PodIP { ip }]);
        let mut statuses = Vec::with_capacity(containers.len());
        for container in containers {
            let prev = current
                .container_statuses
                .iter()
                .flatten()
                .find(|s| s.name == container.name);
            let (status, wake) = step_container(container, prev, uid, running_at, now, timing);
            wake_at = earliest(wake_at, wake);
            statuses.push(status);
        }
        next.container_statuses = Some(statuses);
    }
    next.init_container_statuses = init_statuses(pod, uid, start_time);
    set_conditions(pod, &mut next, now);
    (next, wake_at)
}

fn creating(container: &Container) -> ContainerStatus {
    ContainerStatus {
        name: container.name.clone(),
        image: container.image.clone().unwrap_or_default(),
        image_id: String::new(),
        ready: false,
        started: Some(false),
        restart_count: 0,
        state: Some(ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some("ContainerCreating".to_owned()),
                message: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn running(
    container: &Container,
    uid: &str,
    restart_count: i32,
    started_at: Timestamp,
) -> ContainerStatus {
    let image = container.image.clone().unwrap_or_default();
    ContainerStatus {
        name: container.name.clone(),
        image_id: ids::image_id(&image),
        image,
        container_id: Some(ids::container_id(uid, &container.name, restart_count)),
        ready: false,
        started: Some(true),
        restart_count,
        state: Some(ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(time(started_at)),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn terminated_state(
    prev: &ContainerStatus,
    exit_code: i32,
    reason: &str,
    finished_at: Timestamp,
) -> ContainerState {
    let started_at = prev
        .state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.clone());
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            container_id: prev.container_id.clone(),
            exit_code,
            reason: Some(reason.to_owned()),
            started_at,
            finished_at: Some(time(finished_at)),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Runs one container forward from `prev` to `now`; returns its status and its next event.
fn step_container(
    container: &Container,
    prev: Option<&ContainerStatus>,
    uid: &str,
    running_at: Timestamp,
    now: Timestamp,
    timing: &Timing,
) -> (ContainerStatus, Option<Timestamp>) {
    let spec_image = container.image.as_deref().unwrap_or_default();
    let mut status = match prev {
        None => running(container, uid, 0, running_at),
        Some(p) if p.state.as_ref().is_some_and(|s| s.terminated.is_some()) => {
            return (p.clone(), None);
        }
        Some(p) if is_waiting(p, "ContainerCreating") => {
            running(container, uid, p.restart_count, running_at)
        }
        Some(p) if p.image != spec_image => {
            // In-place image change: this container alone is killed and started again.
            let mut next = running(container, uid, p.restart_count + 1, now);
            next.last_state = Some(terminated_state(p, 0, "Completed", now));
            next
        }
        Some(p) => p.clone(),
    };
    // Run the crash loop forward: each pass applies one event that is already due.
    for _ in 0..64 {
        let crashing = spec_image.contains("crash");
        if let Some(started) = started_at(&status) {
            if crashing {
                let crash_at = started + timing.crash_after;
                if now < crash_at {
                    status.ready = false;
                    return (status, Some(crash_at));
                }
                let backoff = timing.backoff(status.restart_count);
                status.last_state = Some(terminated_state(&status, 1, "Error", crash_at));
                status.state = Some(ContainerState {
                    waiting: Some(ContainerStateWaiting {
                        reason: Some("CrashLoopBackOff".to_owned()),
                        message: Some(format!(
                            "back-off {}s restarting failed container={} pod={}",
                            backoff.as_secs(),
                            container.name,
                            uid
                        )),
                    }),
                    ..Default::default()
                });
                status.ready = false;
                status.started = Some(false);
                continue;
            }
            let delay = if spec_image.contains("slow") {
                timing.slow_ready
            } else {
                timing.ready
            };
            let ready_at = started + delay;
            status.ready = now >= ready_at;
            let wake = (!status.ready).then_some(ready_at);
            return (status, wake);
        }
        if is_waiting(&status, "CrashLoopBackOff") {
            let finished = status
                .last_state
                .as_ref()
                .and_then(|s| s.terminated.as_ref())
                .and_then(|t| t.finished_at.as_ref())
                .map_or(now, |t| t.0);
            let restart_at = finished + timing.backoff(status.restart_count);
            if now < restart_at {
                return (status, Some(restart_at));
            }
            let last_state = status.last_state.take();
            status = running(container, uid, status.restart_count + 1, restart_at);
            status.last_state = last_state;
            continue;
        }
        return (status, None);
    }
    (status, Some(now))
}

fn started_at(status: &ContainerStatus) -> Option<Timestamp> {
    let running = status.state.as_ref()?.running.as_ref()?;
    Some(
        running
            .started_at
            .as_ref()
            .map_or(Timestamp::UNIX_EPOCH, |t| t.0),
    )
}

fn is_waiting(status: &ContainerStatus, reason: &str) -> bool {
    status
        .state
        .as_ref()
        .and_then(|s| s.waiting.as_ref())
        .is_some_and(|w| w.reason.as_deref() == Some(reason))
}

/// Init containers ran to completion at the pod's start time.
fn init_statuses(pod: &Pod, uid: &str, start: Timestamp) -> Option<Vec<ContainerStatus>> {
    let inits = pod.spec.as_ref()?.init_containers.as_ref()?;
    if inits.is_empty() {
        return None;
    }
    Some(
        inits
            .iter()
            .map(|c| {
                let mut status = running(c, uid, 0, start);
                let finished = terminated_state(&status, 0, "Completed", start);
                status.state = Some(finished);
                status.started = Some(false);
                status.ready = true;
                status
            })
            .collect(),
    )
}

/// Whether the kubelet's grace-0 delete already happened and finalizers alone keep the pod:
/// deleting again would change nothing (a real server sets deletionGracePeriodSeconds to 0).
fn held_by_finalizers(pod: &Pod) -> bool {
    pod.metadata.deletion_grace_period_seconds == Some(0)
        && pod
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| !f.is_empty())
}

/// The status of a pod whose deletion started: every container stopped, not ready, and the
/// phase terminal (Succeeded when every container exited 0, else Failed), as the kubelet
/// reports before it deletes the pod.
fn terminating(current: &PodStatus, now: Timestamp) -> PodStatus {
    let mut next = current.clone();
    for status in next.container_statuses.iter_mut().flatten() {
        if status
            .state
            .as_ref()
            .is_some_and(|s| s.terminated.is_some())
        {
            continue;
        }
        status.state = Some(terminated_state(status, 0, "Completed", now));
        status.ready = false;
        status.started = Some(false);
    }
    let failed = next.container_statuses.iter().flatten().any(|s| {
        s.state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .is_some_and(|t| t.exit_code != 0)
    });
    next.phase = Some(if failed { "Failed" } else { "Succeeded" }.to_owned());
    let mut conditions = next.conditions.take().unwrap_or_default();
    for type_ in ["ContainersReady", "Ready"] {
        set_condition(
            &mut conditions,
            type_,
            false,
            Some("PodTerminating"),
            None,
            now,
        );
    }
    next.conditions = Some(conditions);
    next
}

/// Sets the kubelet-owned conditions; Ready also waits for every readiness gate to be True.
fn set_conditions(pod: &Pod, next: &mut PodStatus, now: Timestamp) {
    let mut conditions = next.conditions.take().unwrap_or_default();
    let unready: Vec<&str> = next
        .container_statuses
        .iter()
        .flatten()
        .filter(|s| !s.ready)
        .map(|s| s.name.as_str())
        .collect();
    let running = next.phase.as_deref() == Some("Running");
    let containers_ready = running && unready.is_empty();
    let gates: Vec<String> = pod
        .spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .map(|g| g.iter().map(|g| g.condition_type.clone()).collect())
        .unwrap_or_default();
    let missing_gate = gates.iter().find(|gate| {
        !conditions
            .iter()
            .any(|c| &c.type_ == *gate && c.status == "True")
    });
    let not_ready_message = format!("containers with unready status: [{}]", unready.join(" "));
    set_condition(&mut conditions, "PodScheduled", true, None, None, now);
    set_condition(&mut conditions, "Initialized", true, None, None, now);
    let (reason, message) = if containers_ready {
        (None, None)
    } else {
        (Some("ContainersNotReady"), Some(not_ready_message.clone()))
    };
    set_condition(
        &mut conditions,
        "ContainersReady",
        containers_ready,
        reason,
        message.clone(),
        now,
    );
    let (ready, reason, message) = match missing_gate {
        _ if !containers_ready => (false, reason, message),
        Some(gate) => (
            false,
            Some("ReadinessGatesNotReady"),
            Some(format!(
                "corresponding condition of pod readiness gate \"{gate}\" is not True"
            )),
        ),
        None => (true, None, None),
    };
    set_condition(&mut conditions, "Ready", ready, reason, message, now);
    // Owned conditions first, in the kubelet's order; the others after them, as they were.
    conditions.sort_by_key(|c| {
        OWNED_CONDITIONS
            .iter()
            .position(|t| *t == c.type_)
            .unwrap_or(OWNED_CONDITIONS.len())
    });
    next.conditions = Some(conditions);
}

/// Sets a condition; its lastTransitionTime changes only when its status does.
fn set_condition(
    conditions: &mut Vec<PodCondition>,
    type_: &str,
    value: bool,
    reason: Option<&str>,
    message: Option<String>,
    now: Timestamp,
) {
    let status = if value { "True" } else { "False" }.to_owned();
    let reason = reason.map(str::to_owned);
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(existing) => {
            if existing.status != status {
                existing.last_transition_time = Some(time(now));
            }
            existing.status = status;
            existing.reason = reason;
            existing.message = message;
        }
        None => conditions.push(PodCondition {
            type_: type_.to_owned(),
            status,
            reason,
            message,
            last_transition_time: Some(time(now)),
            ..Default::default()
        }),
    }
}

#[cfg(test)]
mod tests;
