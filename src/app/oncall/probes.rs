//! PodProbeMarker rows (`:ppm`): per marker, per matched pod, per probe: the probe state the
//! node reports (NodePodProbe status), the pod condition the result is written to, the labels
//! and annotations of the state's marker policy found on the pod, the last probe time and the
//! message.

use std::{collections::HashMap, sync::Arc};

use jiff::Timestamp;

use super::super::{rows::PodRow, stores::Stores};
use crate::{
    api::{NodePodProbe, PodProbeMarker, nodepodprobe::ContainerProbeState},
    kruise::selector,
};

#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRow {
    pub namespace: String,
    pub marker: String,
    pub probe: String,
    pub pod: String,
    /// Succeeded | Failed | Unknown; "" before the first probe.
    pub state: String,
    /// The pod condition's type and status (`True`, `False`, "" when absent).
    pub condition: String,
    pub condition_status: String,
    /// `key=value` of the state's policy labels and annotations the pod carries.
    pub applied: Vec<String>,
    pub last_probe: Option<Timestamp>,
    pub message: String,
}

/// Probe states by (namespace, pod, "marker#probe").
type States<'a> = HashMap<(&'a str, &'a str, &'a str), &'a ContainerProbeState>;

fn states(probes: &[Arc<NodePodProbe>]) -> States<'_> {
    let mut out = HashMap::new();
    for npp in probes {
        let Some(status) = &npp.status else { continue };
        for pod in &status.pod_probe_statuses {
            for s in &pod.probe_states {
                out.insert(
                    (pod.namespace.as_str(), pod.name.as_str(), s.name.as_str()),
                    s,
                );
            }
        }
    }
    out
}

fn marker_rows(
    m: &PodProbeMarker,
    states: &States<'_>,
    pods: &[Arc<PodRow>],
    out: &mut Vec<ProbeRow>,
) {
    let ns = m.metadata.namespace.clone().unwrap_or_default();
    let name = m.metadata.name.clone().unwrap_or_default();
    let Some(sel) = m.spec.selector.as_ref().filter(|s| !selector::is_empty(s)) else {
        return;
    };
    for pod in crate::app::podindex::in_namespace(pods, &ns) {
        let labels = &pod.pod.metadata.labels;
        if !selector::matches(sel, labels).unwrap_or(false) {
            continue;
        }
        let annotations = &pod.pod.metadata.annotations;
        for probe in &m.spec.probes {
            let key = format!("{name}#{}", probe.name);
            let state = states.get(&(ns.as_str(), pod.name.as_str(), key.as_str()));
            let condition = if probe.pod_condition_type.is_empty() {
                probe.name.clone()
            } else {
                probe.pod_condition_type.clone()
            };
            let cond = pod
                .pod
                .status
                .conditions
                .iter()
                .find(|c| c.type_ == condition);
            let state_name = state.map(|s| s.state.clone()).unwrap_or_default();
            let mut applied = Vec::new();
            for policy in probe.marker_policy.iter().filter(|p| p.state == state_name) {
                for (map, on_pod) in [
                    (&policy.labels, &labels),
                    (&policy.annotations, &annotations),
                ] {
                    for (k, v) in map {
                        if on_pod.get(k) == Some(v) {
                            applied.push(format!("{k}={v}"));
                        }
                    }
                }
            }
            let message = state
                .map(|s| s.message.clone())
                .filter(|m| !m.is_empty())
                .or_else(|| cond.and_then(|c| c.message.as_ref().map(|m| m.to_string())))
                .unwrap_or_default();
            out.push(ProbeRow {
                namespace: ns.clone(),
                marker: name.clone(),
                probe: probe.name.clone(),
                pod: pod.name.clone(),
                state: state_name,
                condition,
                condition_status: cond.map(|c| c.status.to_string()).unwrap_or_default(),
                applied,
                last_probe: state
                    .and_then(|s| s.last_probe_time.as_ref())
                    .or_else(|| cond.and_then(|c| c.last_probe_time.as_ref()))
                    .map(|t| t.0),
                message: message.lines().next().unwrap_or_default().to_owned(),
            });
        }
    }
}

pub fn build_probes(
    stores: &Stores,
    namespace: Option<&str>,
    pods: &[Arc<PodRow>],
) -> Vec<ProbeRow> {
    let node_probes = stores.oncall.node_probes.state();
    let states = states(&node_probes);
    let mut markers = stores.oncall.probe_markers.state();
    markers.retain(|m| namespace.is_none_or(|n| m.metadata.namespace.as_deref() == Some(n)));
    markers.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    let mut out = Vec::new();
    for m in &markers {
        marker_rows(m, &states, pods, &mut out);
    }
    out
}

impl super::Search for ProbeRow {
    fn search(&self) -> String {
        format!(
            "{}/{} {} {} {}",
            self.namespace, self.marker, self.probe, self.pod, self.state
        )
    }
}
