//! Property tests of the Advanced StatefulSet port (kruise-workloads.md §6).

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;

use super::*;
use crate::kruise::{FeatureGates, KruiseVersion};

fn pod(ordinal: usize, updated: bool, ready: bool, specified: bool) -> AstsPod {
    AstsPod {
        name: format!("web-{ordinal}"),
        revision: if updated {
            "web-new".into()
        } else {
            "web-old".into()
        },
        phase: "Running".into(),
        ready,
        specified_delete: specified,
        ..Default::default()
    }
}

fn slots_strategy() -> impl Strategy<Value = Vec<Option<AstsPod>>> {
    prop::collection::vec(
        prop::option::weighted(
            0.8,
            (any::<bool>(), any::<bool>(), prop::bool::weighted(0.1)),
        ),
        0..16,
    )
    .prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, s)| s.map(|(u, r, d)| pod(i, u, r, d)))
            .collect()
    })
}

fn rolling(partition: i32, unordered: bool) -> RollingUpdate {
    RollingUpdate {
        partition,
        unordered_update: unordered.then(UnorderedUpdate::default),
        ..Default::default()
    }
}

proptest! {
    #[test]
    fn raising_partition_never_updates_more(
        slots in slots_strategy(),
        replicas in 0i32..16,
        p in 0i32..16,
        bump in 0i32..8,
        unordered in any::<bool>(),
    ) {
        let gates = FeatureGates::new();
        let count = |partition| {
            sort_pods_to_update(Some(&rolling(partition, unordered)), "web-new", replicas, &slots, &gates, KruiseVersion::V1_8).len()
        };
        prop_assert!(count(p + bump) <= count(p));
    }

    #[test]
    fn update_order_is_a_duplicate_free_subset_of_the_pods(
        slots in slots_strategy(),
        replicas in 0i32..16,
        p in 0i32..16,
        unordered in any::<bool>(),
    ) {
        let gates = FeatureGates::new();
        let order = sort_pods_to_update(Some(&rolling(p, unordered)), "web-new", replicas, &slots, &gates, KruiseVersion::V1_8);
        let unique: BTreeSet<usize> = order.iter().copied().collect();
        prop_assert_eq!(unique.len(), order.len());
        prop_assert!(order.iter().all(|&i| slots.get(i).is_some_and(Option::is_some)));
        prop_assert!(i32::try_from(order.len()).unwrap_or(i32::MAX) <= (replicas - p).max(0));
        if !unordered {
            prop_assert!(order.iter().all(|&i| i32::try_from(i).unwrap_or(i32::MAX) >= p));
            prop_assert!(order.windows(2).all(|w| w[0] > w[1]));
        }
    }

    #[test]
    fn a_pass_never_breaks_more_available_pods_than_allowed(
        slots in slots_strategy(),
        p in 0i32..8,
        max in 1i32..4,
    ) {
        let spec = AstsSpec {
            replicas: i32::try_from(slots.len()).unwrap_or(0),
            pod_management_policy: PodManagementPolicy::Parallel,
            rolling_update: Some(RollingUpdate {
                partition: p,
                max_unavailable: Some(IntOrString::Int(max)),
                ..Default::default()
            }),
            ..Default::default()
        };
        let gates = FeatureGates::new();
        let step = rolling_update_step(&spec, &gates, KruiseVersion::V1_8, "web-new", &slots, &|_| false).unwrap_or_default();
        let before: BTreeSet<&String> = step.unavailable_before.iter().collect();
        let touched: Vec<i32> = step.specified_deleted.iter().copied().chain(step.updated.iter().map(|(o, _)| *o)).collect();
        let broken = touched
            .iter()
            .filter(|o| !before.contains(&format!("web-{o}")))
            .count();
        let budget = usize::try_from((max - i32::try_from(before.len()).unwrap_or(i32::MAX)).max(0)).unwrap_or(0);
        prop_assert!(broken <= budget, "broke {broken} with budget {budget}: {step:?}");
    }

    #[test]
    fn ordered_rollout_keeps_the_lowest_ordinals_old(
        replicas in 0i32..10,
        partition in 0i32..12,
        reserved in prop::collection::btree_set(0i32..12, 0..4),
    ) {
        let spec = AstsSpec {
            replicas,
            reserve_ordinals: reserved.iter().map(|&r| IntOrString::Int(r)).collect(),
            rolling_update: Some(RollingUpdate { partition, ..Default::default() }),
            ..Default::default()
        };
        let gates = FeatureGates::new();
        let range = replicas_range(&spec, &gates);
        let live: Vec<i32> = (range.start..range.end).filter(|&o| range.contains(o)).collect();
        let pods: Vec<AstsPod> = live
            .iter()
            .map(|&o| pod(usize::try_from(o).unwrap_or(0), false, true, false))
            .collect();
        let state = converge_partition(&spec, &gates, KruiseVersion::V1_8, &pods, "web-old", "web-new");
        prop_assert!(state.is_ok());
        let state = state.unwrap_or_default();
        let keep = usize::try_from(partition).unwrap_or(0).min(live.len());
        prop_assert_eq!(&state.old_revision_ordinals, &live[..keep].to_vec());
        prop_assert_eq!(&state.update_revision_ordinals, &live[keep..].to_vec());
    }
}
