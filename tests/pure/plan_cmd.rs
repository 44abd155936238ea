//! `kruise-tui plan`: mapping a served CloneSet, Advanced DaemonSet (with its nodes) and their pods
//! (YAML fixtures) to the planner, and the printed plan.

use std::path::Path;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kruise_tui::{
    actions::preview::{ads::ads_plan_input_from_objects, plan_input_from_objects},
    cmd::render::render_plan,
    kruise::plan::{self, Action, Blocker, Direction},
    kube::workload::pod_selector,
};
use serde::Deserialize;
use serde_json::Value;

/// 2026-01-01T12:00:00Z.
const NOW: i64 = 1_767_268_800;

#[derive(Deserialize)]
struct List<T> {
    items: Vec<T>,
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/plan")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cloneset(name: &str) -> Value {
    serde_saphyr::from_str(&fixture(name)).expect("CloneSet fixture parses")
}

fn pods() -> Vec<Pod> {
    let list: List<Pod> =
        serde_saphyr::from_str(&fixture("pods.yaml")).expect("pods fixture parses");
    list.items
}

fn names(plan: &plan::Plan) -> Vec<(&str, Option<&Blocker>)> {
    plan.moves
        .iter()
        .map(|m| (m.name.as_str(), m.blocked.as_ref()))
        .collect()
}

#[test]
fn v1alpha1_partition_2_moves_not_ready_first_then_most_recently_ready() {
    let input = plan_input_from_objects("v1alpha1", cloneset("cloneset.yaml"), &pods(), "2", NOW)
        .expect("maps");
    assert_eq!(
        input.pods.len(),
        6,
        "foreign and terminating pods are left out"
    );
    assert_eq!(input.workload.strategy_type, "InPlaceIfPossible");
    let plan = plan::plan(&input).expect("plans");
    assert_eq!(plan.direction, Direction::Forward);
    assert_eq!(plan.partition, 2);
    assert_eq!(plan.max_unavailable, 2);
    assert_eq!(
        names(&plan),
        vec![
            ("web-c", None),
            ("web-b", None),
            ("web-e", Some(&Blocker::MaxUnavailable)),
        ]
    );
    assert!(
        plan.moves
            .iter()
            .all(|m| m.action == Action::InPlace && m.to_revision == "web-new")
    );
    let s = plan.status;
    assert_eq!(
        (
            s.replicas,
            s.ready_replicas,
            s.available_replicas,
            s.updated_replicas
        ),
        (6, 5, 5, 1)
    );
    assert_eq!(s.expected_updated_replicas, 4);
    assert_eq!(s.updated_after_next_step, 3);
    assert_eq!(s.updated_at_convergence, 4);

    let text = render_plan(&plan, &input, "2");
    let expected = fixture("expected-partition-2.txt");
    assert_eq!(text, expected, "rendered:\n{text}");
}

#[test]
fn v1beta1_weight_priority_and_v1_8_tie_rule() {
    let mut input = plan_input_from_objects(
        "v1beta1",
        cloneset("cloneset-v1beta1.yaml"),
        &pods(),
        "2",
        NOW,
    )
    .expect("maps");
    // v1.8.4's tie rule (v1.9.0 keeps the incoming order: `tie_order_follows_the_release`).
    input.version = kruise_tui::kruise::KruiseVersion::V1_8;
    assert_eq!(input.workload.strategy_type, "ReCreate");
    assert!(input.workload.priority.is_some());
    let plan = plan::plan(&input).expect("plans");
    // zone=b (web-d) first; then v1.8.4 puts the larger pod index first on ties.
    assert_eq!(
        names(&plan),
        vec![
            ("web-d", None),
            ("web-e", Some(&Blocker::MaxUnavailable)),
            ("web-c", Some(&Blocker::MaxUnavailable)),
        ]
    );
    assert!(plan.moves.iter().all(|m| m.action == Action::Recreate));
}

#[test]
fn bad_partitions_are_typed_errors_with_clear_messages() {
    for (text, needle) in [
        ("abc", "not a number of pods"),
        ("150%", "over 100%"),
        ("-1", "negative"),
        ("7", "more than the 6 replicas"),
    ] {
        let input =
            plan_input_from_objects("v1alpha1", cloneset("cloneset.yaml"), &pods(), text, NOW)
                .expect("maps");
        let err = plan::plan(&input).expect_err(text).to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
}

#[test]
fn selectors() {
    let cs: kruise_tui::api::CloneSet =
        serde_json::from_value(cloneset("cloneset.yaml")).expect("typed CloneSet");
    let selector = pod_selector(&cs.spec.selector).expect("the fixture's selector is valid");
    assert_eq!(selector.to_string(), "app=web");
    let bad: LabelSelector = serde_json::from_value(
        serde_json::json!({"matchExpressions": [{"key": "tier", "operator": "Near"}]}),
    )
    .expect("a selector object");
    let err = pod_selector(&bad)
        .expect_err("unknown operator")
        .to_string();
    assert!(err.contains("pod selector is not valid"), "{err}");
}

fn ads_objects() -> (Value, Vec<Node>, Vec<Pod>) {
    let ads: Value = serde_saphyr::from_str(&fixture("ads.yaml")).expect("ADS fixture parses");
    let nodes: List<Node> =
        serde_saphyr::from_str(&fixture("ads-nodes.yaml")).expect("nodes fixture parses");
    let pods: List<Pod> =
        serde_saphyr::from_str(&fixture("ads-pods.yaml")).expect("pods fixture parses");
    (ads, nodes.items, pods.items)
}

#[test]
fn ads_partition_1_updates_nodes_in_reverse_name_order_under_max_unavailable() {
    let (ads, nodes, pods) = ads_objects();
    let input = ads_plan_input_from_objects(ads, &nodes, &pods, "1", NOW).expect("maps");
    assert_eq!(input.pods.len(), 5, "the pod of another owner is left out");
    assert_eq!(
        input.workload.replicas, 5,
        "node-f's taint is not tolerated"
    );
    let plan = plan::plan(&input).expect("plans");
    assert_eq!(plan.direction, Direction::Forward);
    assert_eq!(
        (plan.partition, plan.max_unavailable, plan.max_surge),
        (1, 1, 0)
    );
    assert_eq!(
        (
            plan.current_revision.as_str(),
            plan.update_revision.as_str()
        ),
        ("agent-old", "agent-new")
    );
    // node-e is updated already; then d, c, b (reverse name order) up to 5 - 1 nodes. log-b is
    // unavailable, so it goes regardless of the budget; the budget of 1 takes log-d.
    assert_eq!(
        names(&plan),
        vec![
            ("log-d", None),
            ("log-c", Some(&Blocker::MaxUnavailable)),
            ("log-b", None),
        ]
    );
    assert!(plan.moves.iter().all(|m| m.action == Action::Recreate));
    assert_eq!(
        plan.skipped,
        vec![(
            "log-a".to_owned(),
            "on node node-a, kept on the old revision by the partition".to_owned()
        )]
    );
    let s = plan.status;
    assert_eq!(
        (
            s.replicas,
            s.ready_replicas,
            s.available_replicas,
            s.updated_replicas
        ),
        (5, 4, 4, 1)
    );
    assert_eq!(s.expected_updated_replicas, 4);
    assert_eq!(s.updated_after_next_step, 3);
    assert_eq!(s.updated_at_convergence, 4);

    let text = render_plan(&plan, &input, "1");
    let expected = fixture("expected-ads-partition-1.txt");
    assert_eq!(text, expected, "rendered:\n{text}");
}

#[test]
fn ads_update_selector_holds_back_unmatched_nodes_and_surge_blocks_by_max_surge() {
    let (mut ads, nodes, pods) = ads_objects();
    let rolling = ads
        .pointer_mut("/spec/updateStrategy/rollingUpdate")
        .expect("rollingUpdate");
    rolling["selector"] = serde_json::json!({"matchLabels": {"zone": "a"}});
    rolling["maxUnavailable"] = serde_json::json!(0);
    rolling["maxSurge"] = serde_json::json!(1);
    let input = ads_plan_input_from_objects(ads, &nodes, &pods, "0", NOW).expect("maps");
    let plan = plan::plan(&input).expect("plans");
    assert_eq!((plan.max_unavailable, plan.max_surge), (0, 1));
    // Only zone=a nodes update: node-e (done), then node-c and node-a in reverse name order;
    // one surge pod at a time.
    assert_eq!(
        names(&plan),
        vec![("log-c", None), ("log-a", Some(&Blocker::MaxSurge))]
    );
    let held: Vec<&str> = plan.skipped.iter().map(|(_, why)| why.as_str()).collect();
    assert_eq!(
        held,
        vec![
            "on node node-b, not matched by the update selector",
            "on node node-d, not matched by the update selector"
        ]
    );
    assert_eq!(plan.status.expected_updated_replicas, 3);
}

/// v1.9.0 keeps pods the priority terms tie in their incoming order (#2107); v1.8.4 put the
/// larger index first.
#[test]
fn tie_order_follows_the_release() {
    let input = plan_input_from_objects(
        "v1beta1",
        cloneset("cloneset-v1beta1.yaml"),
        &pods(),
        "2",
        NOW,
    )
    .expect("maps");
    assert_eq!(input.version, kruise_tui::kruise::KruiseVersion::V1_9);
    let new_plan = plan::plan(&input).expect("plans");
    let v19 = names(&new_plan);
    let mut old = input.clone();
    old.version = kruise_tui::kruise::KruiseVersion::V1_8;
    let old_plan = plan::plan(&old).expect("plans");
    let v18 = names(&old_plan);
    assert_eq!(v19[0], ("web-d", None));
    assert_eq!(v18[0], ("web-d", None));
    assert_ne!(v19, v18, "the tie rule differs");
}

#[test]
fn ads_bad_partitions_are_refused() {
    for (text, needle) in [
        ("abc", "not a number of pods"),
        ("-1", "negative"),
        ("6", "more than the 5 nodes that should run"),
        ("40%", "not a percent"),
    ] {
        let (ads, nodes, pods) = ads_objects();
        let mut input = ads_plan_input_from_objects(ads, &nodes, &pods, text, NOW).expect("maps");
        // v1.8.4 counts an Advanced DaemonSet's partition in nodes only (v1.9.0 takes a percent).
        input.version = kruise_tui::kruise::KruiseVersion::V1_8;
        let err = plan::plan(&input).expect_err(text).to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
}
