//! Orderings used to pick SidecarSet upgrade candidates: Kubernetes' ActivePods order over
//! `core/v1` Pods, and adapters onto the shared `kruise::updatesort` priority (v1.8.4 tie rule)
//! and scatter sorts.

use std::{cmp::Ordering, collections::BTreeMap};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::kruise::{
    KruiseVersion,
    cloneset::{PodInfo, pod_sort},
    updatesort,
};

use crate::api::common::{UpdatePriorityStrategy, UpdateScatterTerm};

type Labels = BTreeMap<String, String>;

/// What the shared ActivePods comparator reads from a pod. Times are kept in nanoseconds
/// (not the seconds `PodInfo` documents) so sub-second differences still order pods as Go's
/// `Time.Equal` / `After` do; the comparator only compares them.
fn active_pod_info(pod: &Pod) -> PodInfo {
    let nanos = |t: &Time| i64::try_from(t.0.as_nanosecond()).unwrap_or(i64::MAX);
    let status = pod.status.as_ref();
    let ready = crate::api::pod::ready_condition(pod);
    PodInfo {
        phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
        node_name: pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        ready: ready.is_some(),
        ready_since: ready
            .and_then(|c| c.last_transition_time.as_ref())
            .map(nanos),
        created: pod.metadata.creation_timestamp.as_ref().map(nanos),
        restarts: status
            .iter()
            .flat_map(|s| s.container_statuses.iter().flatten())
            .map(|c| c.restart_count)
            .max()
            .unwrap_or(0),
        ..PodInfo::default()
    }
}

/// Kubernetes ActivePods order: unscheduled, Pending < Unknown < Running, not ready, ready
/// for less time, more restarts, newer creation first; through the CloneSet port's
/// [`pod_sort::active_pods_less`].
///
/// Port of k8s pkg/controller/controller_utils.go::ActivePods.Less (used by
/// sidecarcontrol.GetPodsSortFunc, v1.8.4).
pub fn active_pods_cmp(a: &Pod, b: &Pod) -> Ordering {
    pod_sort::ordering(
        pod_sort::active_pods_less,
        &active_pod_info(a),
        &active_pod_info(b),
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
    fn active_pods_order() {
        use k8s_openapi::api::core::v1::{ContainerStatus, PodCondition, PodSpec, PodStatus};
        let at = |s: i64| Time(k8s_openapi::jiff::Timestamp::from_second(s).unwrap());
        let running = |node: &str, ready_at: Option<i64>, restarts: i32| Pod {
            spec: Some(PodSpec {
                node_name: Some(node.to_owned()),
                ..Default::default()
            }),
            status: Some(PodStatus {
                phase: Some("Running".to_owned()),
                conditions: ready_at.map(|t| {
                    vec![PodCondition {
                        type_: "Ready".to_owned(),
                        status: "True".to_owned(),
                        last_transition_time: Some(at(t)),
                        ..Default::default()
                    }]
                }),
                container_statuses: Some(vec![ContainerStatus {
                    restart_count: restarts,
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let unscheduled = running("", Some(1), 0);
        let not_ready = running("n", None, 0);
        let ready_new = running("n", Some(100), 0);
        let ready_old = running("n", Some(10), 0);
        let ready_old_restarted = running("n", Some(10), 3);
        assert_eq!(active_pods_cmp(&unscheduled, &not_ready), Ordering::Less);
        assert_eq!(active_pods_cmp(&not_ready, &ready_new), Ordering::Less);
        assert_eq!(active_pods_cmp(&ready_new, &ready_old), Ordering::Less);
        assert_eq!(active_pods_cmp(&ready_old, &ready_new), Ordering::Greater);
        assert_eq!(
            active_pods_cmp(&ready_old_restarted, &ready_old),
            Ordering::Less
        );
        assert_eq!(active_pods_cmp(&ready_old, &ready_old), Ordering::Equal);
    }

    #[test]
    fn priority_ties_put_larger_index_first() {
        let strategy = UpdatePriorityStrategy {
            order_priority: vec![crate::api::common::UpdatePriorityOrderTerm {
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
