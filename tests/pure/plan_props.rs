//! Property tests of the CloneSet port: partition monotonicity, orders are permutations, update
//! counts stay within the maxUnavailable budget.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::kruise::{
    FeatureGates, KruiseVersion,
    cloneset::{
        CloneSetParams, IsPodUpdateMode, PodInfo, calculate_diffs,
        pod_sort::{self, DeletionOrder},
        update::{self, UpdateOrder},
    },
    intstr,
    plan::{self, Change, Guards, PlanInput, PlanPod, PlanWorkload},
    updatesort::{PriorityStrategy, ScatterTerm, WeightTerm},
};
use proptest::prelude::*;

const NOW: i64 = 1_700_000_000;

fn arb_pod() -> impl Strategy<Value = (bool, bool, u8, u8, u8, u8)> {
    // (on update revision, ready, phase, node, lifecycle, zone)
    (any::<bool>(), any::<bool>(), 0u8..3, 0u8..4, 0u8..6, 0u8..3)
}

fn make_pods(specs: &[(bool, bool, u8, u8, u8, u8)]) -> Vec<PodInfo> {
    specs
        .iter()
        .enumerate()
        .map(|(i, &(new, ready, phase, node, lc, zone))| PodInfo {
            name: format!("p{i}"),
            uid: format!("p{i}"),
            revision: if new { "cs-new" } else { "cs-old" }.to_owned(),
            lifecycle_state: [
                "",
                "Normal",
                "PreparingNormal",
                "PreparingUpdate",
                "Updated",
                "PreparingDelete",
            ][usize::from(lc)]
            .to_owned(),
            phase: ["Pending", "Unknown", "Running"][usize::from(phase)].to_owned(),
            node_name: if node == 0 {
                String::new()
            } else {
                format!("n{node}")
            },
            ready,
            in_place_update_ready: true,
            ready_since: Some(NOW - 100 * i as i64),
            created: Some(NOW - 1000 + i as i64),
            restarts: (i % 3) as i32,
            labels: BTreeMap::from([("zone".to_owned(), format!("z{zone}"))]),
            ..PodInfo::default()
        })
        .collect()
}

fn is_permutation(a: &[usize], b: &[usize]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

proptest! {
    #[test]
    fn raising_the_partition_never_increases_expected_updated(
        replicas in 0i32..200, low in 0i32..220, step in 0i32..50, pct in 0u32..10001, pct_step in 0u32..2000,
    ) {
        let a = intstr::expected_updated_replicas(Some(&IntOrString::Int(low)), replicas);
        let b = intstr::expected_updated_replicas(Some(&IntOrString::Int(low + step)), replicas);
        prop_assert!(b <= a);
        let p1 = format!("{}%", f64::from(pct) / 100.0);
        let p2 = format!("{}%", f64::from((pct + pct_step).min(10000)) / 100.0);
        let a = intstr::expected_updated_replicas(Some(&IntOrString::String(p1)), replicas);
        let b = intstr::expected_updated_replicas(Some(&IntOrString::String(p2)), replicas);
        prop_assert!(b <= a, "{a} then {b}");
        prop_assert!((0..=replicas.max(0)).contains(&a));
    }

    #[test]
    fn update_order_is_a_permutation_of_the_candidates(
        specs in prop::collection::vec(arb_pod(), 0..40),
        weight in 0i32..100, scatter in any::<bool>(), head in any::<bool>(),
    ) {
        let pods = make_pods(&specs);
        let candidates: Vec<usize> = (0..pods.len()).filter(|i| i % 3 != 0).collect();
        let order = UpdateOrder {
            priority: Some(PriorityStrategy {
                weight_priority: vec![WeightTerm {
                    weight,
                    match_selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
                        match_labels: Some(BTreeMap::from([("zone".to_owned(), "z1".to_owned())])),
                        match_expressions: None,
                    },
                }],
                order_priority: Vec::new(),
            }),
            scatter: if scatter {
                vec![ScatterTerm { key: "zone".to_owned(), value: "z2".to_owned() }]
            } else {
                Vec::new()
            },
        };
        let version = if head { KruiseVersion::V1_9 } else { KruiseVersion::V1_8 };
        let sorted = update::sort_update_indexes(&pods, &candidates, &order, version);
        prop_assert!(is_permutation(&sorted, &candidates));
        // PreparingUpdate pods always lead.
        let first_other = sorted.iter().position(|&i| pods[i].lifecycle_state != "PreparingUpdate");
        if let Some(k) = first_other {
            prop_assert!(sorted[k..].iter().all(|&i| pods[i].lifecycle_state != "PreparingUpdate"));
        }
    }

    #[test]
    fn scale_down_order_is_a_permutation(specs in prop::collection::vec(arb_pod(), 0..40)) {
        let pods = make_pods(&specs);
        let refs: Vec<&PodInfo> = pods.iter().collect();
        let ranks = pod_sort::same_node_ranks(&refs);
        let available = |p: &PodInfo| p.is_available(0, NOW);
        let order = DeletionOrder { ranks: Some(&ranks), available: Some(&available) };
        let mut sorted = refs.clone();
        order.sort(&mut sorted);
        let mut a: Vec<&str> = sorted.iter().map(|p| p.name.as_str()).collect();
        let mut b: Vec<&str> = pods.iter().map(|p| p.name.as_str()).collect();
        a.sort_unstable();
        b.sort_unstable();
        prop_assert_eq!(a, b);
        // Unscheduled pods come first.
        let first_scheduled = sorted.iter().position(|p| !p.node_name.is_empty()).unwrap_or(sorted.len());
        prop_assert!(sorted[first_scheduled..].iter().all(|p| !p.node_name.is_empty()));
    }

    #[test]
    fn update_count_stays_within_the_unavailable_budget(
        specs in prop::collection::vec(arb_pod(), 0..30),
        replicas in 0i32..30, partition in 0i32..30, max_unavailable in 0i32..5, max_surge in 0i32..3,
        rollback in any::<bool>(),
    ) {
        let pods = make_pods(&specs);
        let cs = CloneSetParams {
            replicas,
            partition: Some(IntOrString::Int(partition)),
            max_unavailable: Some(IntOrString::Int(max_unavailable)),
            max_surge: Some(IntOrString::Int(max_surge)),
            ..CloneSetParams::default()
        };
        let gates = FeatureGates::new().with("CloneSetPartitionRollback", rollback);
        let diffs = calculate_diffs(&cs, &pods, "cs-old", "cs-new", IsPodUpdateMode::RevisionOnly, &gates, NOW);
        if !rollback {
            prop_assert!(diffs.update_num >= 0);
        }
        let target = if diffs.update_num < 0 { "cs-old" } else { "cs-new" };
        let candidates = update::update_candidates(&pods, diffs.update_num, "cs-new");
        let limited = update::limit_update_indexes(&pods, &candidates, &diffs, target, 0, NOW);
        let chosen = limited.can_update.len() as i32;
        prop_assert!(chosen <= diffs.update_num.abs());
        let unavailable = pods.iter().filter(|p| !p.is_available(0, NOW)).count() as i32;
        let target_unavailable = pods
            .iter()
            .filter(|p| !p.is_available(0, NOW) && p.revision == target)
            .count() as i32;
        prop_assert!(target_unavailable + chosen <= diffs.update_max_unavailable.max(target_unavailable));
        let newly_unavailable = limited.can_update.iter().filter(|&&i| pods[i].is_available(0, NOW)).count() as i32;
        prop_assert!(unavailable + newly_unavailable <= diffs.update_max_unavailable.max(unavailable));
        prop_assert_eq!(limited.can_update.len() + limited.blocked.len(), candidates.len());
    }

    #[test]
    fn plan_moves_are_unique_and_within_update_num(
        specs in prop::collection::vec(arb_pod(), 1..30), partition in 0i32..30, pub_budget in prop::option::of(0i32..4),
    ) {
        let pods: Vec<PlanPod> = make_pods(&specs)
            .into_iter()
            .map(|p| PlanPod {
                name: p.name,
                revision: p.revision,
                phase: p.phase,
                node_name: p.node_name,
                ready: p.ready,
                ready_since: p.ready_since,
                in_place_update_ready: true,
                lifecycle_state: p.lifecycle_state,
                labels: p.labels,
                created: p.created,
                ..PlanPod::default()
            })
            .collect();
        let replicas = pods.len() as i32;
        let input = PlanInput {
            workload: PlanWorkload {
                name: "cs".to_owned(),
                replicas,
                current_revision: "cs-old".to_owned(),
                update_revision: "cs-new".to_owned(),
                ..PlanWorkload::default()
            },
            pods,
            change: Change::Partition(partition.min(replicas).to_string()),
            guards: Guards { pub_unavailable_allowed: pub_budget, protection: None },
            gates: FeatureGates::new(),
            version: KruiseVersion::V1_8,
            now: NOW,
        };
        let planned = plan::plan(&input).expect("valid partition");
        let mut names: Vec<&str> = planned.moves.iter().map(|m| m.name.as_str()).collect();
        let total = names.len();
        names.sort_unstable();
        names.dedup();
        prop_assert_eq!(names.len(), total);
        prop_assert!(planned.next_step().count() as i32 <= planned.diffs.update_num.abs());
        if let Some(b) = pub_budget {
            let available_now = planned
                .next_step()
                .filter(|m| input.pods.iter().any(|p| p.name == m.name && p.ready && p.phase == "Running" && (p.lifecycle_state.is_empty() || p.lifecycle_state == "Normal")))
                .count() as i32;
            prop_assert!(available_now <= b.max(0) || !FeatureGates::new().enabled("PodUnavailableBudgetDeleteGate"));
        }
    }
}
