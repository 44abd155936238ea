//! Tests of the Advanced DaemonSet port: rolling passes, the partition plan and properties.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};
use proptest::prelude::*;

use super::*;
use crate::kruise::KruiseVersion;

/// The version these cases run at (an int partition reads the same at both).
const V: KruiseVersion = KruiseVersion::V1_8;

fn pod(name: &str, hash: &str, ready: bool) -> DsPod {
    DsPod {
        name: name.into(),
        hash: hash.into(),
        ready,
        ..Default::default()
    }
}

fn node(name: &str, canary: bool) -> DsNode {
    DsNode {
        name: name.into(),
        labels: if canary {
            [("pool".to_owned(), "canary".to_owned())].into()
        } else {
            Default::default()
        },
    }
}

fn spec(partition: i32, max_unavailable: i32, max_surge: i32) -> DsSpec {
    DsSpec {
        rolling_update: Some(DsRollingUpdate {
            partition: IntOrString::Int(partition),
            max_unavailable: Some(IntOrString::Int(max_unavailable)),
            max_surge: Some(IntOrString::Int(max_surge)),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn cluster(n: usize) -> (Vec<DsNode>, Vec<String>, NodeToPods) {
    let nodes: Vec<DsNode> = (0..n).map(|i| node(&format!("n{i}"), i % 2 == 0)).collect();
    let names = nodes.iter().map(|n| n.name.clone()).collect();
    let map = nodes
        .iter()
        .map(|n| {
            (
                n.name.clone(),
                vec![pod(&format!("ds-{}", n.name), "v1", true)],
            )
        })
        .collect();
    (nodes, names, map)
}

#[test]
fn standard_pass_replaces_up_to_max_unavailable_reverse_name_order() {
    let (nodes, names, map) = cluster(4);
    let step = rolling_update_step(&spec(0, 2, 0), "v2", &nodes, &names, &map, &|_| false, V);
    let step = step.unwrap_or_default();
    assert_eq!(step.pods_to_delete, vec!["ds-n3", "ds-n2"]);
    assert!(step.nodes_to_create.is_empty());
}

#[test]
fn surge_pass_creates_then_deletes_old_when_new_is_available() {
    let (nodes, names, mut map) = cluster(3);
    let step = rolling_update_step(&spec(0, 0, 1), "v2", &nodes, &names, &map, &|_| false, V)
        .unwrap_or_default();
    assert_eq!(step.nodes_to_create, vec!["n2"]);
    map.get_mut("n2")
        .into_iter()
        .for_each(|p| p.push(pod("ds-n2-new", "v2", true)));
    let step = rolling_update_step(&spec(0, 0, 1), "v2", &nodes, &names, &map, &|_| false, V)
        .unwrap_or_default();
    assert_eq!(step.pods_to_delete, vec!["ds-n2"]);
    assert_eq!(step.nodes_to_create, vec!["n1"]);
}

#[test]
fn in_place_type_patches_pods_that_allow_it() {
    let (nodes, names, map) = cluster(2);
    let mut s = spec(0, 2, 0);
    if let Some(r) = s.rolling_update.as_mut() {
        r.rolling_update_type = RollingUpdateType::InPlaceIfPossible;
    }
    let step = rolling_update_step(&s, "v2", &nodes, &names, &map, &|p| p.name == "ds-n1", V)
        .unwrap_or_default();
    assert_eq!(step.pods_in_place, vec!["ds-n1"]);
    assert_eq!(step.pods_to_delete, vec!["ds-n0"]);
}

#[test]
fn paused_pass_does_nothing() {
    let (nodes, names, map) = cluster(2);
    let mut s = spec(0, 2, 0);
    if let Some(r) = s.rolling_update.as_mut() {
        r.paused = true;
    }
    let step =
        rolling_update_step(&s, "v2", &nodes, &names, &map, &|_| false, V).unwrap_or_default();
    assert!(step.paused && step.pods_to_delete.is_empty());
}

#[test]
fn plan_reports_kept_nodes_and_expected_count() {
    let (nodes, names, mut map) = cluster(4);
    map.insert("n0".into(), vec![pod("ds-n0", "v2", true)]);
    let plan = plan_partition(
        &spec(0, 1, 0),
        "v2",
        &nodes,
        &names,
        &map,
        &IntOrString::Int(2),
        &|_| false,
        V,
    );
    let plan = plan.unwrap_or_else(|e| panic!("{e}"));
    // n0 is already new, so it uses one of the 2 slots the partition leaves.
    assert_eq!(plan.nodes_to_update, vec!["n0", "n3"]);
    assert_eq!(plan.nodes_waiting, vec!["n3"]);
    assert_eq!(plan.nodes_kept_old, vec!["n1", "n2"]);
    assert_eq!(plan.expected_updated_nodes, 2);
    assert!(plan.updated_beyond_partition.is_empty());
    let raised = plan_partition(
        &spec(0, 1, 0),
        "v2",
        &nodes,
        &names,
        &map,
        &IntOrString::Int(4),
        &|_| false,
        V,
    );
    let raised = raised.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(raised.updated_beyond_partition, vec!["n0"]);
    assert_eq!(raised.expected_updated_nodes, 1);
    assert_eq!(plan.this_pass.pods_to_delete, vec!["ds-n3"]);
}

#[test]
fn selector_node_missing_is_an_error() {
    let mut s = spec(0, 1, 0);
    if let Some(r) = s.rolling_update.as_mut() {
        r.selector = Some(LabelSelector {
            match_labels: Some([("pool".to_owned(), "canary".to_owned())].into()),
            ..Default::default()
        });
    }
    let map: NodeToPods = [("ghost".to_owned(), vec![pod("p", "v1", true)])].into();
    assert!(filter_nodes_to_update(&s, "v2", &map, &[], V).is_err());
}

#[test]
fn a_percent_partition_resolves_at_v1_9_only() {
    let pct = |s: &str| IntOrString::String(s.to_owned());
    let v19 = KruiseVersion::V1_9;
    assert_eq!(resolve_partition(&pct("25%"), 10, v19), Ok(2));
    assert_eq!(resolve_partition(&pct("5%"), 10, v19), Ok(0));
    assert_eq!(resolve_partition(&pct("100%"), 10, v19), Ok(10));
    assert_eq!(resolve_partition(&IntOrString::Int(3), 10, v19), Ok(3));
    assert!(resolve_partition(&pct("25"), 10, v19).is_err());
    assert!(resolve_partition(&pct("12.5%"), 10, v19).is_err());
    assert!(resolve_partition(&pct("25%"), 10, V).is_err());
    assert_eq!(resolve_partition(&IntOrString::Int(3), 10, V), Ok(3));
}

#[test]
fn a_percent_partition_keeps_its_floor_of_the_last_desired_count() {
    // 4 nodes, 25% of the 4 the last status counted: one node (n0, first by name) stays old.
    let (nodes, names, map) = cluster(4);
    let mut s = spec(0, 4, 0);
    if let Some(r) = s.rolling_update.as_mut() {
        r.partition = IntOrString::String("25%".to_owned());
    }
    s.desired_number_scheduled = 4;
    let v19 = KruiseVersion::V1_9;
    let chosen = filter_nodes_to_update(&s, "v2", &map, &nodes, v19);
    assert_eq!(chosen, Ok(vec!["n3".into(), "n2".into(), "n1".into()]));
    let step = rolling_update_step(&s, "v2", &nodes, &names, &map, &|_| false, v19);
    assert_eq!(
        step.map(|s| s.pods_to_delete),
        Ok(vec!["ds-n3".into(), "ds-n2".into(), "ds-n1".into()])
    );
    // v1.8.4 has no percent: the rolling update fails instead of guessing.
    assert!(filter_nodes_to_update(&s, "v2", &map, &nodes, V).is_err());
    // The plan takes the percent and reports it in nodes.
    let plan = plan_partition(
        &s,
        "v2",
        &nodes,
        &names,
        &map,
        &IntOrString::String("50%".to_owned()),
        &|_| false,
        v19,
    );
    let plan = plan.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.partition, 2);
    assert_eq!(plan.nodes_kept_old, vec!["n0", "n1"]);
}

proptest! {
    #[test]
    fn filter_respects_partition_and_selector(
        n in 0usize..10,
        partition in 0i32..12,
        bump in 0i32..4,
        updated in prop::collection::vec(any::<bool>(), 10),
        with_selector in any::<bool>(),
    ) {
        let (nodes, _, mut map) = cluster(n);
        for (i, up) in updated.iter().enumerate().take(n) {
            if *up {
                map.insert(format!("n{i}"), vec![pod(&format!("ds-n{i}"), "v2", true)]);
            }
        }
        let mut s = spec(partition, 1, 0);
        if with_selector && let Some(r) = s.rolling_update.as_mut() {
            r.selector = Some(LabelSelector {
                match_labels: Some([("pool".to_owned(), "canary".to_owned())].into()),
                ..Default::default()
            });
        }
        let list = filter_nodes_to_update(&s, "v2", &map, &nodes, V).unwrap_or_default();
        let unique: BTreeSet<&String> = list.iter().collect();
        prop_assert_eq!(unique.len(), list.len());
        prop_assert!(list.iter().all(|name| map.contains_key(name)));
        prop_assert!(i64::try_from(list.len()).unwrap_or(0) <= (i64::try_from(n).unwrap_or(0) - i64::from(partition)).max(0));
        if with_selector {
            for name in &list {
                let is_new = map[name].iter().any(|p| p.hash == "v2");
                let canary = nodes.iter().any(|nd| &nd.name == name && nd.labels.contains_key("pool"));
                prop_assert!(is_new || canary, "{name} updates without matching the selector");
            }
        }
        if let Some(r) = s.rolling_update.as_mut() {
            r.partition = IntOrString::Int(partition + bump);
        }
        let raised = filter_nodes_to_update(&s, "v2", &map, &nodes, V).unwrap_or_default();
        prop_assert!(raised.len() <= list.len());
    }
}
