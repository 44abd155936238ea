//! `kruise-tui plan`: mapping a served CloneSet and its pods (YAML fixtures) to the planner, and
//! the printed plan.

use std::path::Path;

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::{
    kruise::plan::{self, Action, Blocker, Direction},
    kube::plan_cmd::{parse_target, plan_input_from_objects, render_plan, selector_string},
};
use serde::Deserialize;
use serde_json::Value;

/// 2026-01-01T12:00:00Z.
const NOW: i64 = 1_767_268_800;

#[derive(Deserialize)]
struct List {
    items: Vec<Pod>,
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
    let list: List = serde_saphyr::from_str(&fixture("pods.yaml")).expect("pods fixture parses");
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
    let input = plan_input_from_objects(
        "v1beta1",
        cloneset("cloneset-v1beta1.yaml"),
        &pods(),
        "2",
        NOW,
    )
    .expect("maps");
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
fn targets_and_selectors() {
    assert!(parse_target("cs/web").is_ok());
    assert!(parse_target("clonesets/web").is_ok());
    let err = parse_target("deployment/web")
        .expect_err("unknown kind")
        .to_string();
    assert!(
        err.contains("unknown workload kind \"deployment\""),
        "{err}"
    );
    assert!(parse_target("web").is_err());
    let cs: kruise_tui::api::CloneSet =
        serde_json::from_value(cloneset("cloneset.yaml")).expect("typed CloneSet");
    assert_eq!(selector_string(&cs.spec.selector), "app=web");
}
