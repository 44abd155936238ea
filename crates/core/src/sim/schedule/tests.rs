//! Unit tests of the simulated scheduler.

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSpec,
    Taint, Toleration,
};

use super::*;
use crate::kruise::scheduling::term_matches;
use crate::sim::nodes::node_object;

fn nodes() -> Vec<Node> {
    let now = Timestamp::from_second(1_800_000_000).unwrap();
    let mut nodes: Vec<Node> = (0..3).map(|i| node_object(i, now)).collect();
    nodes[2].spec.as_mut().unwrap().taints = Some(vec![Taint {
        key: "dedicated".into(),
        value: Some("db".into()),
        effect: "NoSchedule".into(),
        ..Default::default()
    }]);
    nodes
}

fn pod(spec: PodSpec) -> Pod {
    Pod {
        spec: Some(spec),
        ..Default::default()
    }
}

fn db_toleration() -> Toleration {
    Toleration {
        key: Some("dedicated".into()),
        operator: Some("Equal".into()),
        value: Some("db".into()),
        effect: Some("NoSchedule".into()),
        ..Default::default()
    }
}

#[test]
fn pods_spread_to_the_least_loaded_untainted_node() {
    let nodes = nodes();
    let mut load = HashMap::new();
    assert_eq!(
        pick_node(&pod(PodSpec::default()), &nodes, &load),
        Ok("sim-node-0")
    );
    load.insert("sim-node-0".to_owned(), 5);
    load.insert("sim-node-1".to_owned(), 2);
    assert_eq!(
        pick_node(&pod(PodSpec::default()), &nodes, &load),
        Ok("sim-node-1")
    );
}

#[test]
fn taints_need_a_matching_toleration() {
    let nodes = nodes();
    let load = HashMap::new();
    let spec = PodSpec {
        node_selector: Some(BTreeMap::from([(
            "kubernetes.io/hostname".into(),
            "sim-node-2".into(),
        )])),
        ..Default::default()
    };
    let err = pick_node(&pod(spec.clone()), &nodes, &load).unwrap_err();
    assert!(err.starts_with("0/3 nodes are available:"), "{err}");
    assert!(err.contains("1 node(s) had untolerated taint"), "{err}");
    assert!(
        err.contains("2 node(s) didn't match Pod's node affinity/selector"),
        "{err}"
    );

    let tolerated = PodSpec {
        tolerations: Some(vec![db_toleration()]),
        ..spec
    };
    assert_eq!(pick_node(&pod(tolerated), &nodes, &load), Ok("sim-node-2"));

    let wrong_value = Toleration {
        value: Some("web".into()),
        ..db_toleration()
    };
    assert!(!tolerates(
        &wrong_value,
        &nodes[2].spec.as_ref().unwrap().taints.as_ref().unwrap()[0]
    ));
    let exists_all = Toleration {
        operator: Some("Exists".into()),
        ..Default::default()
    };
    assert!(tolerates(
        &exists_all,
        &nodes[2].spec.as_ref().unwrap().taints.as_ref().unwrap()[0]
    ));
}

#[test]
fn node_selector_restricts_to_matching_labels() {
    let nodes = nodes();
    let spec = PodSpec {
        node_selector: Some(BTreeMap::from([(
            "topology.kubernetes.io/zone".into(),
            "zone-b".into(),
        )])),
        ..Default::default()
    };
    assert_eq!(
        pick_node(&pod(spec), &nodes, &HashMap::new()),
        Ok("sim-node-1")
    );
}

fn affinity(terms: Vec<NodeSelectorTerm>) -> PodSpec {
    PodSpec {
        affinity: Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: terms,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn expr(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: Some(values.iter().map(|v| (*v).to_owned()).collect()),
    }
}

#[test]
fn required_node_affinity_terms_are_ored_and_expressions_anded() {
    let nodes = nodes();
    let load = HashMap::new();
    let not_zone_a = affinity(vec![NodeSelectorTerm {
        match_expressions: Some(vec![
            expr("topology.kubernetes.io/zone", "NotIn", &["zone-a"]),
            expr("kubernetes.io/os", "In", &["linux"]),
        ]),
        ..Default::default()
    }]);
    assert_eq!(pick_node(&pod(not_zone_a), &nodes, &load), Ok("sim-node-1"));

    let by_field = affinity(vec![
        NodeSelectorTerm {
            match_expressions: Some(vec![expr("missing", "Exists", &[])]),
            ..Default::default()
        },
        NodeSelectorTerm {
            match_fields: Some(vec![expr("metadata.name", "In", &["sim-node-1"])]),
            ..Default::default()
        },
    ]);
    assert_eq!(pick_node(&pod(by_field), &nodes, &load), Ok("sim-node-1"));

    assert!(pick_node(&pod(affinity(vec![])), &nodes, &load).is_err());
    assert!(
        pick_node(
            &pod(affinity(vec![NodeSelectorTerm::default()])),
            &nodes,
            &load
        )
        .is_err(),
        "an empty term matches nothing"
    );
}

#[test]
fn gt_and_lt_compare_integers() {
    let mut labels = BTreeMap::new();
    labels.insert("gen".to_owned(), "5".to_owned());
    let term = |op| NodeSelectorTerm {
        match_expressions: Some(vec![expr("gen", op, &["4"])]),
        ..Default::default()
    };
    assert!(term_matches(&term("Gt"), &labels, "n"));
    assert!(!term_matches(&term("Lt"), &labels, "n"));
    labels.insert("gen".to_owned(), "x".to_owned());
    assert!(!term_matches(&term("Gt"), &labels, "n"));
}

#[test]
fn unschedulable_nodes_are_skipped() {
    let mut nodes = nodes();
    nodes[0].spec.as_mut().unwrap().unschedulable = Some(true);
    assert_eq!(
        pick_node(&pod(PodSpec::default()), &nodes, &HashMap::new()),
        Ok("sim-node-1")
    );
}

#[test]
fn only_unbound_live_default_scheduler_pods_are_scheduled() {
    assert!(wants_scheduling(&pod(PodSpec::default())));
    assert!(!wants_scheduling(&pod(PodSpec {
        node_name: Some("n".into()),
        ..Default::default()
    })));
    assert!(!wants_scheduling(&pod(PodSpec {
        scheduler_name: Some("volcano".into()),
        ..Default::default()
    })));
}

#[test]
fn unfit_pods_get_an_unschedulable_condition_once() {
    let now = Timestamp::from_second(1_800_000_000).unwrap();
    let mut p = pod(PodSpec::default());
    let status = unschedulable_status(&p, "0/3 nodes are available", now).unwrap();
    let cond = &status.conditions.as_ref().unwrap()[0];
    assert_eq!(
        (
            cond.type_.as_str(),
            cond.status.as_str(),
            cond.reason.as_deref()
        ),
        ("PodScheduled", "False", Some("Unschedulable"))
    );
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    p.status = Some(status);
    assert_eq!(
        unschedulable_status(&p, "0/3 nodes are available", now),
        None
    );
    assert!(unschedulable_status(&p, "0/4 nodes are available", now).is_some());
}
