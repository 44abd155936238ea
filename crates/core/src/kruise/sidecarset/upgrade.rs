//! Which matched pods get their sidecars upgraded in place this round: candidates, their
//! order (Kubernetes ActivePods order, then priority, then scatter) and the count allowed by
//! partition and maxUnavailable.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;

use crate::kruise::{
    intstr::{calculate_partition_replicas, scaled_value_apimachinery},
    selector,
};

use super::{
    control::{is_pod_ready, is_pod_state_consistent, is_sidecar_set_upgradable},
    order,
    pod_state::is_pod_sidecar_updated,
};
use crate::api::common::UpdateScatterTerm;
use crate::api::sidecarset::SidecarSet;

/// The outcome of [`next_upgrade_pods`]: indexes into the matched pods.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NextUpgrade {
    /// Pods to upgrade now, in order.
    pub upgrade: Vec<usize>,
    /// Pods whose non-image fields differ from the set (they need recreating).
    pub not_upgradable: Vec<usize>,
}

/// Picks the pods to upgrade now.
///
/// Candidates are pods not yet on the set's hash that match `updateStrategy.selector`; an
/// upgradable and consistent candidate waits, a non-upgradable one is reported. Waiting pods
/// are sorted, the last `partition` of them are held back, and then a not-ready pod is always
/// taken while a ready one needs room under maxUnavailable (pods already updated but
/// inconsistent or not ready use that room).
///
/// Port of pkg/controller/sidecarset/sidecarset_strategy.go::GetNextUpgradePods (v1.8.4).
pub fn next_upgrade_pods(set: &SidecarSet, pods: &[Pod]) -> NextUpgrade {
    let strategy = &set.spec.update_strategy;
    let selected = |pod: &Pod| match &strategy.selector {
        None => true,
        Some(sel) => {
            let empty = Default::default();
            let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
            selector::matches(sel, labels).unwrap_or(false)
        }
    };
    let mut waiting = Vec::new();
    let mut not_upgradable = Vec::new();
    for (i, pod) in pods.iter().enumerate() {
        if is_pod_sidecar_updated(set, pod) || !selected(pod) {
            continue;
        }
        match is_sidecar_set_upgradable(set, pod) {
            (true, true) => waiting.push(i),
            (false, _) => not_upgradable.push(i),
            (true, false) => {}
        }
    }
    let mut waiting = sort_update_indexes(set, pods, waiting);
    let count = calculate_upgrade_count(set, &waiting, pods);
    waiting.truncate(count);
    NextUpgrade {
        upgrade: waiting,
        not_upgradable,
    }
}

/// Orders candidates: ActivePods order, then priority, then scatter.
///
/// Port of pkg/controller/sidecarset/sidecarset_strategy.go::SortUpdateIndexes (v1.8.4).
pub fn sort_update_indexes(set: &SidecarSet, pods: &[Pod], mut indexes: Vec<usize>) -> Vec<usize> {
    let strategy = &set.spec.update_strategy;
    indexes.sort_by(|&a, &b| order::active_pods_cmp(&pods[a], &pods[b]));
    if let Some(priority) = &strategy.priority_strategy {
        order::priority_sort(priority, pods, &mut indexes);
    }
    if !strategy.scatter_strategy.is_empty() {
        let terms = parse_update_scatter_terms(&strategy.scatter_strategy, pods);
        indexes = order::scatter_sort(&terms, pods, indexes);
    }
    indexes
}

/// How many of the sorted waiting pods to upgrade now.
///
/// Port of pkg/controller/sidecarset/sidecarset_strategy.go::calculateUpgradeCount (v1.8.4).
fn calculate_upgrade_count(set: &SidecarSet, waiting: &[usize], pods: &[Pod]) -> usize {
    let total = i32::try_from(pods.len()).unwrap_or(i32::MAX);
    let strategy = &set.spec.update_strategy;
    let partition = calculate_partition_replicas(strategy.partition.as_ref(), Some(total))
        .unwrap_or_default()
        .max(0) as usize;
    if waiting.len() <= partition {
        return 0;
    }
    let waiting = &waiting[..waiting.len() - partition];
    let max_unavailable = strategy.max_unavailable.as_ref().map_or(1, |m| {
        scaled_value_apimachinery(m, total, true).unwrap_or_default()
    });
    let all = BTreeSet::new();
    let mut unavailable = pods
        .iter()
        .filter(|p| {
            is_pod_sidecar_updated(set, p)
                && (!is_pod_state_consistent(set, p, &all) || !is_pod_ready(set, p))
        })
        .count() as i64;
    let mut count = 0;
    for &i in waiting {
        if !is_pod_ready(set, &pods[i]) {
            count += 1;
            continue;
        }
        if unavailable >= i64::from(max_unavailable) {
            break;
        }
        unavailable += 1;
        count += 1;
    }
    count
}

/// Expands `value: "*"` terms into one term per distinct value of that label on the pods
/// (in pod order); other terms are kept, duplicates dropped.
///
/// Port of pkg/controller/sidecarset/sidecarset_strategy.go::parseUpdateScatterTerms (v1.8.4).
pub fn parse_update_scatter_terms(
    terms: &[UpdateScatterTerm],
    pods: &[Pod],
) -> Vec<UpdateScatterTerm> {
    let mut out: Vec<UpdateScatterTerm> = Vec::new();
    let mut push = |t: UpdateScatterTerm| {
        if !out.contains(&t) {
            out.push(t);
        }
    };
    for term in terms {
        if term.value != "*" {
            push(term.clone());
            continue;
        }
        for pod in pods {
            if let Some(v) = pod.metadata.labels.as_ref().and_then(|l| l.get(&term.key)) {
                push(UpdateScatterTerm {
                    key: term.key.clone(),
                    value: v.clone(),
                });
            }
        }
    }
    out
}
