//! The simulated kruise-daemon's NodePodProbe side, pure: it runs the probes a node's
//! NodePodProbe lists, each on its own period (`kruise::probe_marker::daemon` workers: initial
//! delay, thresholds, container restarts), and gives the status to write when a result changes.
//!
//! How a simulated probe turns out (no command or socket is really run):
//! - the probed container must be running (its status in the pod says so), else the probe
//!   fails with `Container(<name>) is Non-running`, as upstream's does;
//! - a running container's probe succeeds, unless the pod annotation
//!   `sim.kruise-tui.io/probe-<probe name>` (the PodProbeMarker's probe name, e.g.
//!   `sim.kruise-tui.io/probe-healthy`) says `"fail"`; `"succeed"` or no annotation succeeds.
//!
//! So `kubectl annotate pod web-0 sim.kruise-tui.io/probe-healthy=fail` flips the pod's
//! condition and marker labels on the next periods (failureThreshold of them), and removing the
//! annotation flips them back.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, Probe};

use super::events::PodEvent;
use crate::kruise::probe_marker::{
    PROBE_FAILED, PROBE_SUCCEEDED, PROBE_UNKNOWN,
    daemon::{Outcome, ProbeKey, ProbeWorker, ProbedContainer, Results, node_status, period},
    types::{NodePodProbe, NodePodProbeStatus},
};

/// Pod annotation prefix steering a simulated probe: `sim.kruise-tui.io/probe-<probe>`.
pub const PROBE_ANNOTATION_PREFIX: &str = "sim.kruise-tui.io/probe-";

/// The event source component of the daemon's probe events.
pub const COMPONENT: &str = "kruise-daemon-podprobe";

struct Slot {
    worker: ProbeWorker,
    container: String,
    probe: Option<Probe>,
    next_at: Timestamp,
}

/// The probe workers and results of one node.
#[derive(Default)]
pub struct NodeProber {
    slots: BTreeMap<ProbeKey, Slot>,
    results: Results,
}

/// What a pass over a node's probes gives.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pass {
    /// The status to write (it differs from the NodePodProbe's).
    pub status: Option<NodePodProbeStatus>,
    /// Probe events, each about `(namespace, pod name, pod uid)`.
    pub events: Vec<((String, String, String), PodEvent)>,
    /// When the next probe is due.
    pub wake_at: Option<Timestamp>,
}

/// The running container `name` of `pod`, as the runtime would report it.
pub fn probed_container(pod: &Pod, name: &str) -> Option<ProbedContainer> {
    let status = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .find(|c| c.name == name)?;
    let id = status.container_id.clone().filter(|id| !id.is_empty())?;
    let state = status.state.as_ref();
    let running = state.and_then(|s| s.running.as_ref());
    let started_at = running
        .and_then(|r| r.started_at.as_ref())
        .or_else(|| {
            state
                .and_then(|s| s.terminated.as_ref())
                .and_then(|t| t.started_at.as_ref())
        })
        .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
    Some(ProbedContainer {
        name: name.to_owned(),
        id,
        running: running.is_some(),
        started_at,
    })
}

/// The simulated outcome of probe `probe_name` (`<marker>#<probe>` or a bare probe name) on
/// container `container` of `pod`; `None` when it is not running (the probe cannot run).
pub fn simulate(pod: &Pod, container: &str, probe_name: &str) -> Option<Outcome> {
    if !probed_container(pod, container).is_some_and(|c| c.running) {
        return None;
    }
    let short = probe_name.rsplit('#').next().unwrap_or(probe_name);
    let key = format!("{PROBE_ANNOTATION_PREFIX}{short}");
    let steered = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(&key))
        .map(String::as_str);
    Some(match steered {
        Some("fail") => Outcome {
            state: PROBE_FAILED,
            message: format!("simulated probe failure (pod annotation {key}: \"fail\")"),
        },
        _ => Outcome {
            state: PROBE_SUCCEEDED,
            message: String::new(),
        },
    })
}

impl NodeProber {
    /// Runs the probes of `npp` that are due at `now` (`pod(namespace, name)` reads the pod
    /// cache), keeping workers in step with its spec.
    ///
    /// Port of pkg/daemon/podprobe/pod_probe_controller.go::sync and the workers' loop (v1.8.4).
    pub fn pass(
        &mut self,
        npp: &NodePodProbe,
        pod: &dyn Fn(&str, &str) -> Option<Pod>,
        now: Timestamp,
    ) -> Pass {
        let mut out = Pass::default();
        let mut valid = BTreeSet::new();
        for pod_probe in &npp.spec.pod_probes {
            for probe in &pod_probe.probes {
                let key = ProbeKey {
                    namespace: pod_probe.namespace.clone(),
                    pod_name: pod_probe.name.clone(),
                    pod_uid: pod_probe.uid.clone(),
                    probe_name: probe.name.clone(),
                };
                valid.insert(key.clone());
                let slot = self.slots.entry(key).or_insert_with(|| Slot {
                    worker: ProbeWorker::default(),
                    container: probe.container_name.clone(),
                    probe: probe.probe.clone(),
                    next_at: now,
                });
                if slot.probe != probe.probe || slot.container != probe.container_name {
                    // A changed probe starts over from Unknown.
                    slot.worker = ProbeWorker::default();
                    slot.probe = probe.probe.clone();
                    slot.container = probe.container_name.clone();
                    slot.next_at = now;
                }
            }
        }
        self.slots.retain(|k, _| valid.contains(k));
        self.results.retain(&valid);
        for (key, slot) in &mut self.slots {
            if slot.next_at > now {
                continue;
            }
            slot.next_at = now + period(slot.probe.as_ref());
            let pod = pod(&key.namespace, &key.pod_name)
                .filter(|p| p.metadata.uid.as_deref() == Some(key.pod_uid.as_str()));
            let container = pod
                .as_ref()
                .and_then(|p| probed_container(p, &slot.container));
            let outcomes =
                slot.worker
                    .do_probe(slot.probe.as_ref(), container.as_ref(), now, || {
                        pod.as_ref()
                            .and_then(|p| simulate(p, &slot.container, &key.probe_name))
                    });
            for outcome in outcomes {
                // The Unknown of a new container is bookkeeping, not a probe result worth an event.
                if self.results.set(key, &outcome, now) && outcome.state != PROBE_UNKNOWN {
                    let reason = if outcome.state == PROBE_SUCCEEDED {
                        "KruiseProbeSucceeded"
                    } else {
                        "KruiseProbeFailed"
                    };
                    out.events.push((
                        (
                            key.namespace.clone(),
                            key.pod_name.clone(),
                            key.pod_uid.clone(),
                        ),
                        PodEvent {
                            type_: "Normal",
                            reason,
                            message: outcome.message.clone(),
                            component: COMPONENT,
                        },
                    ));
                }
            }
        }
        out.wake_at = self.slots.values().map(|s| s.next_at).min();
        let status = node_status(npp, &self.results, now);
        if npp.status.as_ref() != Some(&status)
            && !(npp.status.is_none() && status.pod_probe_statuses.is_empty())
        {
            out.status = Some(status);
        }
        out
    }

    /// Whether the node has no probes left.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

#[cfg(test)]
mod tests;
