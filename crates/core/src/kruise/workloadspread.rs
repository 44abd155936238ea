//! Port of the WorkloadSpread pod webhook and status (`pkg/util/workloadspread/workloadspread.go`,
//! `pkg/controller/workloadspread`, v1.8.4): which subset a new pod of the target workload goes
//! to, what is injected into it, and the per-subset status the controller derives from the pods.
//!
//! Upstream's webhook picks the first schedulable subset whose `missingReplicas` is above 0 (or
//! -1, unlimited) and injects the subset's tolerations, preferred terms and required term
//! (appended to each of the pod's own required terms, or as the only term), then records
//! `{"name": SPREAD, "subset": SUBSET}` in the pod annotation `apps.kruise.io/matched-workloadspread`.
//! Subset patches are applied by the caller (a strategic merge on the whole pod).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector, Pod};
use serde::{Deserialize, Serialize};

use super::intstr::scaled_value_kruise;
use crate::api::{
    WorkloadSpread,
    keys::MATCHED_WORKLOADSPREAD,
    workloadspread::{WorkloadSpreadSubset, WorkloadSpreadSubsetStatus},
};

/// The pod annotation's value, as upstream marshals `InjectWorkloadSpread`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injected {
    pub name: String,
    pub subset: String,
}

/// Reads the pod annotation; `None` for a value upstream's webhook would not have written.
pub fn parse(annotation: &str) -> Option<Injected> {
    serde_json::from_str(annotation).ok()
}

/// A subset's maxReplicas against the workload's replicas (percent rounds up, as upstream's
/// `GetScaledValueFromIntOrPercent(..., true)`); -1 for unlimited or unreadable.
pub fn max_replicas(subset: &WorkloadSpreadSubset, workload_replicas: i32) -> i32 {
    match &subset.max_replicas {
        None => -1,
        Some(v) => scaled_value_kruise(v, workload_replicas, true).unwrap_or(-1),
    }
}

/// `missingReplicas` as the controller writes it: how many more pods the subset takes (never
/// below 0), or -1 when unlimited.
pub fn missing_replicas(max: i32, active: i32) -> i32 {
    if max < 0 { -1 } else { (max - active).max(0) }
}

/// The subset a new pod goes to, given the pods each subset already holds (`active`): the
/// first with room, in spec order. `None` when every subset is full (the pod is left alone).
pub fn choose_subset<'a>(
    spread: &'a WorkloadSpread,
    active: &BTreeMap<String, i32>,
    workload_replicas: i32,
) -> Option<&'a WorkloadSpreadSubset> {
    spread.spec.subsets.iter().find(|s| {
        let have = active.get(&s.name).copied().unwrap_or(0);
        missing_replicas(max_replicas(s, workload_replicas), have) != 0
    })
}

/// Injects `subset` of `spread` into `pod` (tolerations, node affinity, the annotation).
pub fn inject(pod: &mut Pod, spread: &str, subset: &WorkloadSpreadSubset) {
    let spec = pod.spec.get_or_insert_with(Default::default);
    if !subset.tolerations.is_empty() {
        spec.tolerations
            .get_or_insert_with(Vec::new)
            .extend(subset.tolerations.iter().cloned());
    }
    let affinity = spec.affinity.get_or_insert_with(Affinity::default);
    let node = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    if !subset.preferred_node_selector_terms.is_empty() {
        node.preferred_during_scheduling_ignored_during_execution
            .get_or_insert_with(Vec::new)
            .extend(subset.preferred_node_selector_terms.iter().cloned());
    }
    if let Some(term) = &subset.required_node_selector_term {
        let required = node
            .required_during_scheduling_ignored_during_execution
            .get_or_insert_with(NodeSelector::default);
        if required.node_selector_terms.is_empty() {
            required.node_selector_terms = vec![term.clone()];
        } else {
            for own in &mut required.node_selector_terms {
                if let Some(exprs) = &term.match_expressions {
                    own.match_expressions
                        .get_or_insert_with(Vec::new)
                        .extend(exprs.iter().cloned());
                }
                if let Some(fields) = &term.match_fields {
                    own.match_fields
                        .get_or_insert_with(Vec::new)
                        .extend(fields.iter().cloned());
                }
            }
        }
    }
    let value = serde_json::to_string(&Injected {
        name: spread.to_owned(),
        subset: subset.name.clone(),
    })
    .unwrap_or_default();
    pod.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(MATCHED_WORKLOADSPREAD.to_owned(), value);
}

/// The subset statuses the controller writes from the active pods per subset (pods being
/// created or deleted are not tracked here: the caller knows none in flight).
pub fn subset_statuses(
    spread: &WorkloadSpread,
    active: &BTreeMap<String, i32>,
    workload_replicas: i32,
) -> Vec<WorkloadSpreadSubsetStatus> {
    spread
        .spec
        .subsets
        .iter()
        .map(|s| {
            let replicas = active.get(&s.name).copied().unwrap_or(0);
            WorkloadSpreadSubsetStatus {
                name: s.name.clone(),
                replicas,
                missing_replicas: missing_replicas(max_replicas(s, workload_replicas), replicas),
                ..Default::default()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::{
        api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm},
        apimachinery::pkg::util::intstr::IntOrString,
    };

    fn zone(name: &str, max: Option<IntOrString>) -> WorkloadSpreadSubset {
        WorkloadSpreadSubset {
            name: name.into(),
            required_node_selector_term: Some(NodeSelectorTerm {
                match_expressions: Some(vec![NodeSelectorRequirement {
                    key: "topology.kubernetes.io/zone".into(),
                    operator: "In".into(),
                    values: Some(vec![name.into()]),
                }]),
                match_fields: None,
            }),
            max_replicas: max,
            ..Default::default()
        }
    }

    fn spread() -> WorkloadSpread {
        let mut ws = WorkloadSpread::default();
        ws.metadata.name = Some("api".into());
        ws.spec.subsets = vec![
            zone("zone-a", Some(IntOrString::Int(2))),
            zone("zone-b", None),
        ];
        ws
    }

    #[test]
    fn the_first_subset_with_room_takes_the_pod() {
        let ws = spread();
        let mut active = BTreeMap::new();
        assert_eq!(
            choose_subset(&ws, &active, 4).map(|s| &*s.name),
            Some("zone-a")
        );
        active.insert("zone-a".to_owned(), 2);
        assert_eq!(
            choose_subset(&ws, &active, 4).map(|s| &*s.name),
            Some("zone-b")
        );
        let statuses = subset_statuses(&ws, &active, 4);
        assert_eq!(
            statuses
                .iter()
                .map(|s| (s.replicas, s.missing_replicas))
                .collect::<Vec<_>>(),
            [(2, 0), (0, -1)]
        );
    }

    #[test]
    fn percent_max_rounds_up_against_the_workload() {
        let s = zone("zone-a", Some(IntOrString::String("50%".into())));
        assert_eq!(max_replicas(&s, 5), 3);
        assert_eq!(missing_replicas(3, 5), 0);
    }

    #[test]
    fn the_required_term_is_appended_to_each_own_term_and_the_pod_annotated() {
        let mut pod = Pod::default();
        let own = NodeSelectorTerm {
            match_expressions: Some(vec![NodeSelectorRequirement {
                key: "disk".into(),
                operator: "Exists".into(),
                values: None,
            }]),
            match_fields: None,
        };
        pod.spec = Some(Default::default());
        if let Some(spec) = pod.spec.as_mut() {
            spec.affinity = Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![own],
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        inject(&mut pod, "api", &zone("zone-a", None));
        let terms = pod
            .spec
            .and_then(|s| s.affinity)
            .and_then(|a| a.node_affinity)
            .and_then(|n| n.required_during_scheduling_ignored_during_execution)
            .map(|r| r.node_selector_terms)
            .unwrap_or_default();
        assert_eq!(terms.len(), 1);
        let keys: Vec<String> = terms[0]
            .match_expressions
            .iter()
            .flatten()
            .map(|e| e.key.clone())
            .collect();
        assert_eq!(keys, ["disk", "topology.kubernetes.io/zone"]);
        assert_eq!(
            pod.metadata
                .annotations
                .and_then(|a| a.get(MATCHED_WORKLOADSPREAD).cloned())
                .as_deref(),
            Some(r#"{"name":"api","subset":"zone-a"}"#)
        );
    }
}
