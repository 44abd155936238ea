//! Orderings used to pick SidecarSet upgrade candidates: Kubernetes' ActivePods order over
//! `core/v1` Pods, and adapters onto the shared `kruise::updatesort` priority (v1.8.4 tie rule)
//! and scatter sorts.

use std::{cmp::Ordering, collections::BTreeMap};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::kruise::{KruiseVersion, updatesort};

use super::types::{UpdatePriorityStrategy, UpdateScatterTerm};

type Labels = BTreeMap<String, String>;

fn phase_ordinal(pod: &Pod) -> u8 {
    match pod.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Unknown") => 1,
        Some("Running") => 2,
        _ => 0,
    }
}

fn ready_condition(pod: &Pod) -> Option<Option<&Time>> {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
        .map(|c| c.last_transition_time.as_ref())
}

fn max_restarts(pod: &Pod) -> i32 {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
}

/// `afterOrZero`: a zero (unset) time sorts first, else the later time first.
fn after_or_zero(a: Option<&Time>, b: Option<&Time>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => y.0.cmp(&x.0),
    }
}

/// Kubernetes ActivePods order: unscheduled, Pending < Unknown < Running, not ready, ready
/// for less time, more restarts, newer creation first.
///
/// Port of k8s pkg/controller/controller_utils.go::ActivePods.Less (used by
/// sidecarcontrol.GetPodsSortFunc, v1.8.4).
pub fn active_pods_cmp(a: &Pod, b: &Pod) -> Ordering {
    let node = |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default()
    };
    let (na, nb) = (node(a), node(b));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return if na.is_empty() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let by_phase = phase_ordinal(a).cmp(&phase_ordinal(b));
    if by_phase != Ordering::Equal {
        return by_phase;
    }
    let (ra, rb) = (ready_condition(a), ready_condition(b));
    if ra.is_some() != rb.is_some() {
        return if ra.is_none() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    if let (Some(ta), Some(tb)) = (ra, rb) {
        let by_ready = after_or_zero(ta, tb);
        if ta != tb && by_ready != Ordering::Equal {
            return by_ready;
        }
    }
    let by_restarts = max_restarts(b).cmp(&max_restarts(a));
    if by_restarts != Ordering::Equal {
        return by_restarts;
    }
    after_or_zero(
        a.metadata.creation_timestamp.as_ref(),
        b.metadata.creation_timestamp.as_ref(),
    )
}

/// The SidecarSet strategy in the shared update-sort model.
fn shared_priority(strategy: &UpdatePriorityStrategy) -> updatesort::PriorityStrategy {
    updatesort::PriorityStrategy {
        weight_priority: strategy
            .weight_priority
            .iter()
            .map(|t| updatesort::WeightTerm {
                weight: t.weight,
                match_selector: t.match_selector.clone(),
            })
            .collect(),
        order_priority: strategy
            .order_priority
            .iter()
            .map(|t| updatesort::OrderTerm {
                ordered_key: t.ordered_key.clone(),
            })
            .collect(),
    }
}

/// Stable priority sort with the v1.8.4 tie-break (equal priority puts the larger pod index
/// first), through the shared [`updatesort::priority_sort`].
///
/// A strategy with neither weight nor order terms ties every pod, so it orders the candidates
/// by descending pod index here (this port's behaviour before it moved onto the shared sort,
/// which leaves such a strategy a no-op).
///
/// Port of pkg/util/updatesort/priority_sort.go::prioritySort.Sort (v1.8.4).
pub fn priority_sort(strategy: &UpdatePriorityStrategy, pods: &[Pod], indexes: &mut [usize]) {
    if strategy.weight_priority.is_empty() && strategy.order_priority.is_empty() {
        indexes.sort_by(|a, b| b.cmp(a));
        return;
    }
    let labels: Vec<Option<&Labels>> = pods
        .iter()
        .map(|p| p.metadata.labels.as_ref().or(Some(&EMPTY)))
        .collect();
    updatesort::priority_sort(
        &shared_priority(strategy),
        &labels,
        indexes,
        KruiseVersion::V1_8,
    );
}

/// Scatters candidates matching each term among the others, through the shared
/// [`updatesort::scatter_sort`].
///
/// Port of pkg/util/updatesort/scatter_sort.go::scatterSort.Sort (v1.8.4).
pub fn scatter_sort(terms: &[UpdateScatterTerm], pods: &[Pod], indexes: Vec<usize>) -> Vec<usize> {
    let labels: Vec<Option<&Labels>> = pods
        .iter()
        .map(|p| p.metadata.labels.as_ref().or(Some(&EMPTY)))
        .collect();
    let terms: Vec<updatesort::ScatterTerm> = terms
        .iter()
        .map(|t| updatesort::ScatterTerm {
            key: t.key.clone(),
            value: t.value.clone(),
        })
        .collect();
    updatesort::scatter_sort(&terms, &labels, &indexes)
}

static EMPTY: Labels = Labels::new();

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(labels: &[(&str, &str)]) -> Pod {
        let mut p = Pod::default();
        p.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        p
    }

    #[test]
    fn priority_ties_put_larger_index_first() {
        let strategy = UpdatePriorityStrategy {
            order_priority: vec![super::super::types::UpdatePriorityOrderTerm {
                ordered_key: "k".to_owned(),
            }],
            ..Default::default()
        };
        let pods = [
            pod(&[("k", "a-5")]),
            pod(&[("k", "a-5")]),
            pod(&[("k", "a-10")]),
            pod(&[]),
        ];
        let mut idx = vec![0, 1, 2, 3];
        priority_sort(&strategy, &pods, &mut idx);
        assert_eq!(idx, vec![3, 2, 1, 0]);
        let mut idx = vec![0, 2, 1];
        priority_sort(&UpdatePriorityStrategy::default(), &pods, &mut idx);
        assert_eq!(idx, vec![2, 1, 0]);
    }

    proptest::proptest! {
        #[test]
        fn scatter_sort_permutes_its_input(
            values in proptest::collection::vec(0u8..3, 1..40),
            keep in proptest::collection::vec(proptest::bool::ANY, 40),
        ) {
            let pods: Vec<Pod> = values.iter().map(|v| pod(&[("zone", &format!("z{v}"))])).collect();
            let indexes: Vec<usize> = (0..pods.len()).filter(|&i| keep[i]).collect();
            let terms = [
                UpdateScatterTerm { key: "zone".to_owned(), value: "z0".to_owned() },
                UpdateScatterTerm { key: "zone".to_owned(), value: "z1".to_owned() },
            ];
            let mut out = scatter_sort(&terms, &pods, indexes.clone());
            out.sort_unstable();
            proptest::prop_assert_eq!(out, indexes);
        }
    }
}
