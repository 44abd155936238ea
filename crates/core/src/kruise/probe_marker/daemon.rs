//! The kruise-daemon side of NodePodProbes: one worker per probe (initial delay, period,
//! success/failure thresholds, container restarts), the results it records, and the
//! NodePodProbe status built from them. How a probe is actually run (exec, tcp) is the
//! caller's business: [`ProbeWorker::do_probe`] takes its outcome.
//!
//! Port of pkg/daemon/podprobe/worker.go::doProbe, results_manager.go and
//! pod_probe_controller.go::syncUpdateNodePodProbeStatus (v1.8.4). Results are kept per probe
//! (upstream keys them by container ID, so two probes of one container overwrite each other).

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::{api::core::v1::Probe, apimachinery::pkg::apis::meta::v1::Time};

use super::{
    PROBE_FAILED, PROBE_SUCCEEDED, PROBE_UNKNOWN,
    types::{ContainerProbeState, NodePodProbe, NodePodProbeStatus, PodProbeStatus},
};

/// A result is re-recorded (lastProbeTime refreshed) at least this often.
pub const MAX_SYNC_PROBE_SECONDS: i64 = 600;

/// A container as the node's runtime reports it, for probing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbedContainer {
    /// The container's name in the pod.
    pub name: String,
    /// Its runtime ID (changes with each restart).
    pub id: String,
    pub running: bool,
    pub started_at: Timestamp,
}

/// A probe's outcome: Succeeded or Failed, and its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub state: &'static str,
    pub message: String,
}

/// The state of one probe worker between runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeWorker {
    container_id: String,
    last_result: &'static str,
    result_run: i32,
}

/// How often a probe runs (periodSeconds, at least 1 s).
pub fn period(probe: Option<&Probe>) -> SignedDuration {
    SignedDuration::from_secs(i64::from(
        probe.and_then(|p| p.period_seconds).unwrap_or(0).max(1),
    ))
}

impl ProbeWorker {
    /// One probe run at `now`: the results to record, in order (the initial Unknown when the
    /// container changed, Failed for a container that is not running, then the outcome once it
    /// has repeated its threshold's times). `run` is called only past the initial delay; it
    /// returns `None` when the probe could not run (upstream logs the error and records
    /// nothing).
    pub fn do_probe(
        &mut self,
        probe: Option<&Probe>,
        container: Option<&ProbedContainer>,
        now: Timestamp,
        run: impl FnOnce() -> Option<Outcome>,
    ) -> Vec<Outcome> {
        let mut out = Vec::new();
        let Some(container) = container else {
            return out;
        };
        if self.container_id != container.id {
            self.container_id = container.id.clone();
            out.push(Outcome {
                state: PROBE_UNKNOWN,
                message: String::new(),
            });
        }
        if !container.running {
            out.push(Outcome {
                state: PROBE_FAILED,
                message: format!("Container({}) is Non-running", container.name),
            });
        }
        let initial_delay = i64::from(
            probe
                .and_then(|p| p.initial_delay_seconds)
                .unwrap_or(0)
                .max(1),
        );
        if now.as_second() - container.started_at.as_second() < initial_delay {
            return out;
        }
        let Some(result) = run() else {
            return out;
        };
        if self.last_result == result.state {
            self.result_run += 1;
        } else {
            self.last_result = result.state;
            self.result_run = 1;
        }
        let threshold = |t: Option<i32>| t.unwrap_or(0).max(1);
        let failure = threshold(probe.and_then(|p| p.failure_threshold));
        let success = threshold(probe.and_then(|p| p.success_threshold));
        if (result.state == PROBE_FAILED && self.result_run < failure)
            || (result.state == PROBE_SUCCEEDED && self.result_run < success)
        {
            return out;
        }
        out.push(result);
        out
    }

    /// The container ID the worker last saw ("" before its first run).
    pub fn container_id(&self) -> &str {
        &self.container_id
    }
}

/// Which probe a result belongs to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProbeKey {
    pub namespace: String,
    pub pod_name: String,
    pub pod_uid: String,
    /// `<PodProbeMarker>#<probe>`.
    pub probe_name: String,
}

/// One recorded result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub state: &'static str,
    pub message: String,
    pub last_probe_time: Timestamp,
}

/// The latest result of every probe of a node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Results {
    map: BTreeMap<ProbeKey, Recorded>,
}

impl Results {
    /// Records `outcome` when it differs from the last one (or that one is older than
    /// [`MAX_SYNC_PROBE_SECONDS`]); returns whether it was recorded.
    pub fn set(&mut self, key: &ProbeKey, outcome: &Outcome, now: Timestamp) -> bool {
        let now = whole_seconds(now);
        let stale = |r: &Recorded| {
            r.state != outcome.state
                || r.message != outcome.message
                || now.as_second() - r.last_probe_time.as_second() >= MAX_SYNC_PROBE_SECONDS
        };
        if self.map.get(key).is_some_and(|r| !stale(r)) {
            return false;
        }
        self.map.insert(
            key.clone(),
            Recorded {
                state: outcome.state,
                message: outcome.message.clone(),
                last_probe_time: now,
            },
        );
        true
    }

    /// Forgets the probes not in `keep`.
    pub fn retain(&mut self, keep: &BTreeSet<ProbeKey>) {
        self.map.retain(|k, _| keep.contains(k));
    }

    /// The recorded result of `key`.
    pub fn get(&self, key: &ProbeKey) -> Option<&Recorded> {
        self.map.get(key)
    }

    /// Every recorded result.
    pub fn iter(&self) -> impl Iterator<Item = (&ProbeKey, &Recorded)> {
        self.map.iter()
    }
}

fn whole_seconds(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

/// The NodePodProbe status from its current status and the recorded results: states of probes
/// no longer in the spec are dropped, each result overwrites its probe's state (the transition
/// time moves when the state changes).
///
/// Port of pkg/daemon/podprobe/pod_probe_controller.go::syncUpdateNodePodProbeStatus and
/// updateNodePodProbeStatus (v1.8.4).
pub fn node_status(npp: &NodePodProbe, results: &Results, now: Timestamp) -> NodePodProbeStatus {
    let now = Time(whole_seconds(now));
    let valid: BTreeSet<(&str, &str)> = npp
        .spec
        .pod_probes
        .iter()
        .flat_map(|p| {
            p.probes
                .iter()
                .map(move |c| (p.uid.as_str(), c.name.as_str()))
        })
        .collect();
    let mut status = NodePodProbeStatus::default();
    for old in npp.status.iter().flat_map(|s| s.pod_probe_statuses.iter()) {
        let states: Vec<ContainerProbeState> = old
            .probe_states
            .iter()
            .filter(|s| valid.contains(&(old.uid.as_str(), s.name.as_str())))
            .cloned()
            .collect();
        if !states.is_empty() {
            status.pod_probe_statuses.push(PodProbeStatus {
                namespace: old.namespace.clone(),
                name: old.name.clone(),
                uid: old.uid.clone(),
                probe_states: states,
            });
        }
    }
    for (key, result) in results.iter() {
        if !valid.contains(&(key.pod_uid.as_str(), key.probe_name.as_str())) {
            continue;
        }
        let index = match status
            .pod_probe_statuses
            .iter()
            .position(|s| s.uid == key.pod_uid)
        {
            Some(i) => i,
            None => {
                status.pod_probe_statuses.push(PodProbeStatus {
                    namespace: key.namespace.clone(),
                    name: key.pod_name.clone(),
                    uid: key.pod_uid.clone(),
                    probe_states: Vec::new(),
                });
                status.pod_probe_statuses.len() - 1
            }
        };
        let states = &mut status.pod_probe_statuses[index].probe_states;
        let probe_time = Some(Time(result.last_probe_time));
        match states.iter_mut().find(|s| s.name == key.probe_name) {
            Some(s) => {
                if s.state != result.state {
                    s.last_transition_time = Some(now.clone());
                }
                s.state = result.state.to_owned();
                s.message = result.message.clone();
                s.last_probe_time = probe_time;
            }
            None => states.push(ContainerProbeState {
                name: key.probe_name.clone(),
                state: result.state.to_owned(),
                last_probe_time: probe_time,
                last_transition_time: Some(now.clone()),
                message: result.message.clone(),
            }),
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    fn running(id: &str, since: i64) -> ProbedContainer {
        ProbedContainer {
            name: "main".to_owned(),
            id: id.to_owned(),
            running: true,
            started_at: t(since),
        }
    }

    fn ok() -> Option<Outcome> {
        Some(succeeded())
    }

    fn succeeded() -> Outcome {
        Outcome {
            state: PROBE_SUCCEEDED,
            message: String::new(),
        }
    }

    fn failed() -> Option<Outcome> {
        Some(failure())
    }

    fn failure() -> Outcome {
        Outcome {
            state: PROBE_FAILED,
            message: "boom".into(),
        }
    }

    #[test]
    fn a_worker_waits_for_the_initial_delay_and_honours_thresholds() {
        let probe: Probe = serde_json::from_value(json!({
            "initialDelaySeconds": 3, "failureThreshold": 2, "periodSeconds": 5
        }))
        .unwrap();
        assert_eq!(period(Some(&probe)), SignedDuration::from_secs(5));
        assert_eq!(period(None), SignedDuration::from_secs(1));
        let mut w = ProbeWorker::default();
        let c = running("containerd://a", 0);
        // A new container reports Unknown; the probe itself waits for the delay.
        let first = w.do_probe(Some(&probe), Some(&c), t(1), || panic!("too early"));
        assert_eq!(
            first.iter().map(|o| o.state).collect::<Vec<_>>(),
            [PROBE_UNKNOWN]
        );
        assert_eq!(w.do_probe(Some(&probe), Some(&c), t(3), ok), [succeeded()]);
        // One failure is below the threshold of 2; the second counts.
        assert!(w.do_probe(Some(&probe), Some(&c), t(8), failed).is_empty());
        assert_eq!(
            w.do_probe(Some(&probe), Some(&c), t(13), failed),
            [failure()]
        );
        // No container (yet): nothing at all.
        assert!(w.do_probe(Some(&probe), None, t(14), ok).is_empty());
        // A stopped container fails at once.
        let stopped = ProbedContainer {
            running: false,
            ..c.clone()
        };
        let out = w.do_probe(Some(&probe), Some(&stopped), t(15), || None);
        assert_eq!(out.len(), 1, "the probe could not run: {out:?}");
        assert_eq!(out[0].state, PROBE_FAILED);
        assert_eq!(out[0].message, "Container(main) is Non-running");
    }

    #[test]
    fn results_are_recorded_on_change_and_fold_into_the_node_status() {
        let npp: NodePodProbe = serde_json::from_value(json!({
            "metadata": {"name": "n1"},
            "spec": {"podProbes": [{"name": "p", "namespace": "ns", "uid": "u1",
                "probes": [{"name": "m#healthy", "containerName": "main"}]}]},
            "status": {"podProbeStatuses": [{"name": "old", "namespace": "ns", "uid": "u0",
                "probeStates": [{"name": "m#healthy", "state": "Succeeded"}]}]}
        }))
        .unwrap();
        let key = ProbeKey {
            namespace: "ns".into(),
            pod_name: "p".into(),
            pod_uid: "u1".into(),
            probe_name: "m#healthy".into(),
        };
        let mut results = Results::default();
        assert!(results.set(&key, &succeeded(), t(0)));
        assert!(!results.set(&key, &succeeded(), t(1)), "unchanged");
        let status = node_status(&npp, &results, t(1));
        assert_eq!(
            status.pod_probe_statuses.len(),
            1,
            "the gone pod's states are dropped"
        );
        let state = &status.pod_probe_statuses[0].probe_states[0];
        assert_eq!(state.state, PROBE_SUCCEEDED);
        assert_eq!(state.last_probe_time, Some(Time(t(0))));
        assert_eq!(state.last_transition_time, Some(Time(t(1))));

        let mut written = npp.clone();
        written.status = Some(status.clone());
        assert_eq!(node_status(&written, &results, t(5)), status, "stable");
        assert!(results.set(&key, &failure(), t(6)));
        let flipped = node_status(&written, &results, t(6));
        let state = &flipped.pod_probe_statuses[0].probe_states[0];
        assert_eq!(
            (state.state.as_str(), state.message.as_str()),
            (PROBE_FAILED, "boom")
        );
        assert_eq!(state.last_transition_time, Some(Time(t(6))));
        assert!(
            results.set(&key, &failure(), t(6 + MAX_SYNC_PROBE_SECONDS)),
            "refreshed"
        );
    }
}
