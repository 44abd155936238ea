//! Which run of a container a log request means, read from the pod's status the way the
//! kubelet reads it (upstream `kubelet_pods.go::validateContainerLogStatus`), with the kubelet's
//! refusals word for word.
//!
//! The current run is the running one; a container that has exited (or waits in
//! `CrashLoopBackOff` after exiting) serves its last run, as the kubelet does; `previous=true`
//! serves the run before the last restart (`lastState.terminated`). A running `crash` image is
//! known to fail `crash_after` after it started (the simulated kubelet's timing), so its run
//! carries that end before the status says so.
//!
//! A status does not say which image a past run ran. It is the container's current image unless
//! a Kruise in-place update state (`apps.kruise.io/inplace-update-state`,
//! `kruise.io/sidecarset-inplace-update-state`) recorded another `imageID` for the container
//! just before that run ended: then it is the image, among the candidates (the images named in
//! the cluster's ControllerRevisions), whose simulated `imageID` matches, or that `imageID`.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{ContainerStateTerminated, ContainerStatus, Pod};
use serde_json::Value;

use super::{Exit, Run};
use crate::sim::{ids, kubelet::Timing};

/// Why there is no log to serve (the kubelet's messages; the API server answers 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    #[error("container {container:?} in pod {pod:?} is not available")]
    NotAvailable { container: String, pod: String },
    #[error("previous terminated container {container:?} in pod {pod:?} not found")]
    PreviousNotFound { container: String, pod: String },
    #[error("container {container:?} in pod {pod:?} is terminated")]
    Terminated { container: String, pod: String },
    #[error("container {container:?} in pod {pod:?} is waiting to start: {reason}")]
    Waiting {
        container: String,
        pod: String,
        reason: String,
    },
    #[error("container {container:?} in pod {pod:?} is waiting to start - no logs yet")]
    NoLogsYet { container: String, pod: String },
}

const INPLACE_STATE_KEYS: [&str; 2] = [
    "apps.kruise.io/inplace-update-state",
    "kruise.io/sidecarset-inplace-update-state",
];

/// The run of `container` in `pod` a log request means (`previous`: the one before the last
/// restart). `images` lists candidate image references for past runs (asked only when needed).
pub fn run_of(
    pod: &Pod,
    container: &str,
    previous: bool,
    timing: &Timing,
    images: &dyn Fn() -> Vec<String>,
) -> Result<Run, LogError> {
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let names = || (container.to_owned(), pod_name.clone());
    let status = pod.status.as_ref();
    let Some(cs) = find(
        status.and_then(|s| s.container_statuses.as_ref()),
        container,
    )
    .or_else(|| {
        find(
            status.and_then(|s| s.init_container_statuses.as_ref()),
            container,
        )
    })
    .or_else(|| {
        find(
            status.and_then(|s| s.ephemeral_container_statuses.as_ref()),
            container,
        )
    }) else {
        let (container, pod) = names();
        return Err(LogError::NotAvailable { container, pod });
    };
    let last = cs
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .filter(|t| has_id(t));
    let state = cs.state.as_ref();
    if previous {
        let Some(t) = last else {
            let (container, pod) = names();
            return Err(LogError::PreviousNotFound { container, pod });
        };
        return Ok(ended(pod, cs, t, past_image(pod, cs, t, images)));
    }
    if let Some(running) = state.and_then(|s| s.running.as_ref()) {
        let started = running
            .started_at
            .as_ref()
            .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
        let spec_image = pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.iter().find(|c| c.name == container))
            .and_then(|c| c.image.as_deref())
            .unwrap_or(&cs.image);
        let end = spec_image.contains("crash").then(|| Exit {
            at: started + timing.crash_after,
            code: 1,
        });
        return Ok(Run {
            started,
            end,
            ..base(
                pod,
                cs,
                cs.container_id.clone().unwrap_or_default(),
                &cs.image,
            )
        });
    }
    if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
        if has_id(t) {
            return Ok(ended(pod, cs, t, cs.image.clone()));
        }
        if let Some(last) = last {
            return Ok(ended(pod, cs, last, past_image(pod, cs, last, images)));
        }
        let (container, pod) = names();
        return Err(LogError::Terminated { container, pod });
    }
    if let Some(t) = last {
        return Ok(ended(pod, cs, t, past_image(pod, cs, t, images)));
    }
    let (container, pod) = names();
    match state.and_then(|s| s.waiting.as_ref()) {
        Some(w) => {
            let reason = match w.reason.as_deref().unwrap_or_default() {
                "ErrImagePull" => "image can't be pulled".to_owned(),
                "ImagePullBackOff" => "trying and failing to pull image".to_owned(),
                other => other.to_owned(),
            };
            Err(LogError::Waiting {
                container,
                pod,
                reason,
            })
        }
        None => Err(LogError::NoLogsYet { container, pod }),
    }
}

fn find<'a>(list: Option<&'a Vec<ContainerStatus>>, name: &str) -> Option<&'a ContainerStatus> {
    list.and_then(|l| l.iter().find(|s| s.name == name))
}

fn has_id(t: &ContainerStateTerminated) -> bool {
    t.container_id.as_deref().is_some_and(|id| !id.is_empty())
}

fn base(pod: &Pod, cs: &ContainerStatus, container_id: String, image: &str) -> Run {
    Run {
        pod: pod.metadata.name.clone().unwrap_or_default(),
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        container: cs.name.clone(),
        image: image.to_owned(),
        container_id,
        started: Timestamp::UNIX_EPOCH,
        end: None,
    }
}

/// A run that ended as `t` says; one that never started has an empty log.
fn ended(pod: &Pod, cs: &ContainerStatus, t: &ContainerStateTerminated, image: String) -> Run {
    let finished = t.finished_at.as_ref().map(|f| f.0);
    let started = t.started_at.as_ref().map(|s| s.0).or(finished);
    let started = started.unwrap_or(Timestamp::UNIX_EPOCH);
    Run {
        started,
        end: Some(Exit {
            at: finished.unwrap_or(started),
            code: t.exit_code,
        }),
        ..base(pod, cs, t.container_id.clone().unwrap_or_default(), &image)
    }
}

/// The image the run that ended as `t` ran (see the module docs).
fn past_image(
    pod: &Pod,
    cs: &ContainerStatus,
    t: &ContainerStateTerminated,
    images: &dyn Fn() -> Vec<String>,
) -> String {
    let Some(finished) = t.finished_at.as_ref().map(|f| f.0) else {
        return cs.image.clone();
    };
    let annotations = pod.metadata.annotations.as_ref();
    let recorded = INPLACE_STATE_KEYS
        .iter()
        .filter_map(|k| annotations.and_then(|a| a.get(*k)))
        .filter_map(|raw| serde_json::from_str::<Value>(raw).ok())
        .flat_map(|state| recorded_image_ids(&state, &cs.name))
        .find(|(updated, image_id)| {
            *image_id != cs.image_id
                && finished >= *updated - SignedDuration::from_secs(1)
                && finished <= *updated + SignedDuration::from_secs(60)
        });
    let Some((_, image_id)) = recorded else {
        return cs.image.clone();
    };
    images()
        .into_iter()
        .find(|candidate| ids::image_id(candidate) == image_id)
        .unwrap_or(image_id)
}

/// (updateTimestamp, imageID) pairs an in-place update state recorded for `container`: the
/// CloneSet/StatefulSet state is one object, the SidecarSet state one object per set.
fn recorded_image_ids(state: &Value, container: &str) -> Vec<(Timestamp, String)> {
    let one = |s: &Value| {
        let updated = s["updateTimestamp"].as_str()?.parse::<Timestamp>().ok()?;
        let image_id = s["lastContainerStatuses"][container]["imageID"].as_str()?;
        Some((updated, image_id.to_owned()))
    };
    match one(state) {
        Some(found) => vec![found],
        None => state
            .as_object()
            .into_iter()
            .flat_map(|m| m.values())
            .filter_map(one)
            .collect(),
    }
}

/// Every image reference named in these objects (ControllerRevisions: their templates).
pub fn previous_image_candidates(objects: &[Value]) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    match v {
                        Value::String(s) if k == "image" => out.push(s.clone()),
                        _ => walk(v, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for o in objects {
        walk(o, &mut out);
    }
    out.sort();
    out.dedup();
    out
}
