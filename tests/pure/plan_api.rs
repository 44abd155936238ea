//! The plan API on hand-built CloneSets: forward, rollback (gate on/off), pause, undo, delete
//! with protection, PUB budget, scaling first; the same pods planned as an Advanced DaemonSet.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::kruise::{
    FeatureGates, KruiseVersion,
    daemonset::{DsNode, DsSpec},
    plan::{
        self, Action, AdsInput, Blocker, Change, Direction, Guards, PlanError, PlanInput, PlanPod,
        PlanWorkload, Protection, WorkloadKind,
    },
};

const NOW: i64 = 1_700_000_000;

fn pod(name: &str, rev: &str, ready_for: i64) -> PlanPod {
    PlanPod {
        name: name.to_owned(),
        revision: rev.to_owned(),
        phase: "Running".to_owned(),
        node_name: format!("node-{name}"),
        ready: true,
        ready_since: Some(NOW - ready_for),
        in_place_update_ready: true,
        created: Some(NOW - 10_000),
        ..PlanPod::default()
    }
}

/// 5 replicas: p0..p2 on cs-old, p3..p4 on cs-new (rollout in progress), partition 3.
fn input(change: Change) -> PlanInput {
    PlanInput {
        workload: PlanWorkload {
            namespace: "ns".to_owned(),
            name: "cs".to_owned(),
            replicas: 5,
            partition: Some(IntOrString::Int(3)),
            max_unavailable: Some(IntOrString::Int(1)),
            current_revision: "cs-old".to_owned(),
            update_revision: "cs-new".to_owned(),
            ..PlanWorkload::default()
        },
        pods: vec![
            pod("p0", "cs-old", 500),
            pod("p1", "cs-old", 100),
            pod("p2", "cs-old", 300),
            pod("p3", "cs-new", 50),
            pod("p4", "cs-new", 20),
        ],
        change,
        guards: Guards::default(),
        gates: FeatureGates::new(),
        version: KruiseVersion::V1_8,
        now: NOW,
    }
}

fn order(p: &plan::Plan) -> Vec<(&str, Option<Blocker>)> {
    p.moves
        .iter()
        .map(|m| (m.name.as_str(), m.blocked.clone()))
        .collect()
}

#[test]
fn lowering_the_partition_updates_most_recently_ready_first() {
    let p = plan::plan(&input(Change::Partition("0".to_owned()))).expect("plans");
    assert_eq!(p.direction, Direction::Forward);
    assert_eq!(
        order(&p),
        vec![
            ("p1", None),
            ("p2", Some(Blocker::MaxUnavailable)),
            ("p0", Some(Blocker::MaxUnavailable))
        ]
    );
    assert_eq!(p.status.expected_updated_replicas, 5);
    assert_eq!(
        (
            p.status.updated_after_next_step,
            p.status.updated_at_convergence
        ),
        (3, 5)
    );
    assert!(p.moves.iter().all(|m| m.action == Action::Recreate));
}

#[test]
fn percent_partition_keeps_one_pod_updating() {
    // 99% of 5 rounds up to 5, but a percent other than 100% always leaves one pod to update.
    let p = plan::plan(&input(Change::Partition("99%".to_owned()))).expect("plans");
    assert_eq!(p.partition, 4);
    assert_eq!(p.status.expected_updated_replicas, 1);
}

#[test]
fn raising_the_partition_rolls_back_only_with_the_gate() {
    let off = plan::plan(&input(Change::Partition("5".to_owned()))).expect("plans");
    assert_eq!(off.direction, Direction::None);
    assert!(off.moves.is_empty());
    assert!(
        off.notes
            .iter()
            .any(|n| n.contains("CloneSetPartitionRollback")),
        "{:?}",
        off.notes
    );

    let mut on = input(Change::Partition("5".to_owned()));
    on.gates = FeatureGates::new().with("CloneSetPartitionRollback", true);
    let p = plan::plan(&on).expect("plans");
    assert_eq!(p.direction, Direction::Rollback);
    // Newest-ready new pods roll back first; maxUnavailable 1 lets one go now.
    assert_eq!(
        order(&p),
        vec![("p4", None), ("p3", Some(Blocker::MaxUnavailable))]
    );
    assert!(p.moves.iter().all(|m| m.to_revision == "cs-old"));
    assert_eq!(
        (
            p.status.updated_after_next_step,
            p.status.updated_at_convergence
        ),
        (1, 0)
    );
}

#[test]
fn pause_blocks_everything() {
    let mut i = input(Change::Pause);
    i.workload.partition = Some(IntOrString::Int(0));
    let p = plan::plan(&i).expect("plans");
    assert!(p.paused);
    assert!(!p.moves.is_empty());
    assert!(p.moves.iter().all(|m| m.blocked == Some(Blocker::Paused)));
    assert_eq!(p.status.updated_at_convergence, p.status.updated_replicas);
    let mut resumed = i.clone();
    resumed.workload.paused = true;
    resumed.change = Change::Resume;
    assert_eq!(plan::plan(&resumed).expect("plans").next_step().count(), 1);
}

#[test]
fn undo_makes_the_current_revision_the_target() {
    let mut i = input(Change::Undo { to: None });
    i.workload.partition = Some(IntOrString::Int(0));
    let p = plan::plan(&i).expect("plans");
    assert_eq!(p.update_revision, "cs-old");
    assert_eq!(p.direction, Direction::Forward);
    assert_eq!(
        order(&p),
        vec![("p4", None), ("p3", Some(Blocker::MaxUnavailable))]
    );

    let mut done = input(Change::Undo { to: None });
    done.workload.update_revision = "cs-old".to_owned();
    assert!(matches!(
        plan::plan(&done),
        Err(PlanError::NothingToUndo(..))
    ));
}

#[test]
fn delete_respects_protection_and_pub() {
    let mut i = input(Change::Delete);
    i.guards.protection = Some(Protection::Denied(
        "policy.kruise.io/delete-protection=Always".to_owned(),
    ));
    let p = plan::plan(&i).expect("plans");
    assert_eq!(p.direction, Direction::Delete);
    assert_eq!(p.moves.len(), 5);
    assert!(
        p.moves
            .iter()
            .all(|m| matches!(m.blocked, Some(Blocker::Protection(_))))
    );

    let mut i = input(Change::Delete);
    i.guards.pub_unavailable_allowed = Some(2);
    let p = plan::plan(&i).expect("plans");
    let free = p.moves.iter().filter(|m| m.blocked.is_none()).count();
    assert_eq!(free, 2);
    assert!(
        p.moves[2..]
            .iter()
            .all(|m| m.blocked == Some(Blocker::PodUnavailableBudget))
    );
}

#[test]
fn pub_budget_limits_in_place_updates_only_with_its_gate() {
    let mut i = input(Change::Partition("0".to_owned()));
    i.workload.strategy_type = "InPlaceIfPossible".to_owned();
    i.workload.max_unavailable = Some(IntOrString::Int(3));
    i.guards.pub_unavailable_allowed = Some(1);
    let p = plan::plan(&i).expect("plans");
    assert_eq!(
        p.next_step().count(),
        3,
        "the update gate is off by default"
    );
    i.gates = FeatureGates::new().with("PodUnavailableBudgetUpdateGate", true);
    let p = plan::plan(&i).expect("plans");
    assert_eq!(
        order(&p),
        vec![
            ("p1", None),
            ("p2", Some(Blocker::PodUnavailableBudget)),
            ("p0", Some(Blocker::PodUnavailableBudget))
        ]
    );
}

#[test]
fn a_pending_scale_up_comes_first() {
    let mut i = input(Change::Partition("0".to_owned()));
    i.workload.replicas = 6;
    let p = plan::plan(&i).expect("plans");
    assert!(p.moves.iter().all(|m| m.blocked.is_some()));
    assert!(
        p.notes.iter().any(|n| n.contains("create 1 pod")),
        "{:?}",
        p.notes
    );
}

/// The same pods as an Advanced DaemonSet: one per node `node-pN`, every node should run one.
fn ads_input(change: Change) -> PlanInput {
    let mut i = input(change);
    i.workload.kind = WorkloadKind::AdvancedDaemonSet;
    i.workload.partition = Some(IntOrString::Int(5));
    let nodes: Vec<DsNode> = i
        .pods
        .iter()
        .map(|p| DsNode {
            name: p.node_name.clone(),
            ..DsNode::default()
        })
        .collect();
    i.workload.ads = Some(AdsInput {
        nodes_that_should_run: nodes.iter().map(|n| n.name.clone()).collect(),
        nodes,
        spec: DsSpec::default(),
    });
    i
}

#[test]
fn advanced_daemonset_plans_by_node() {
    let p = plan::plan(&ads_input(Change::Partition("0".to_owned()))).expect("plans");
    assert_eq!(p.kind, WorkloadKind::AdvancedDaemonSet);
    assert_eq!((p.partition, p.max_unavailable, p.max_surge), (0, 1, 0));
    // Updated nodes (p4, p3) come first and need nothing; the rest in reverse node-name order.
    assert_eq!(
        order(&p),
        vec![
            ("p2", None),
            ("p1", Some(Blocker::MaxUnavailable)),
            ("p0", Some(Blocker::MaxUnavailable))
        ]
    );
    assert_eq!(p.status.expected_updated_replicas, 5);
    assert_eq!(p.status.updated_after_next_step, 3);
    assert_eq!(p.current_revision, "cs-old");

    let paused = plan::plan(&ads_input(Change::Pause)).expect("plans");
    assert!(paused.moves.is_empty(), "partition 5 keeps every old pod");
    assert_eq!(paused.skipped.len(), 3);
    let mut resumed = ads_input(Change::Partition("2".to_owned()));
    resumed.workload.paused = true;
    let p = plan::plan(&resumed).expect("plans");
    assert_eq!(order(&p), vec![("p2", Some(Blocker::Paused))]);
    assert_eq!(
        p.status.updated_at_convergence, 2,
        "paused: nothing converges"
    );

    let err = plan::plan(&ads_input(Change::Undo { to: None })).expect_err("undo");
    assert!(matches!(err, PlanError::Unsupported(_)), "{err}");
    let err = plan::plan(&ads_input(Change::Partition("6".to_owned())))
        .expect_err("too big")
        .to_string();
    assert!(err.contains("more than the 5"), "{err}");
}

#[test]
fn an_advanced_daemonset_plans_a_percent_partition_on_v1_9_in_nodes_rounded_down() {
    let at = |text: &str, version: KruiseVersion| {
        let mut i = ads_input(Change::Partition(text.to_owned()));
        i.version = version;
        if let Some(ads) = i.workload.ads.as_mut() {
            ads.spec.desired_number_scheduled = 5;
        }
        plan::plan(&i)
    };
    // 30% of the 5 nodes the last status counted is 1.5: 1 node held (a CloneSet would hold 2).
    let p = at("30%", KruiseVersion::V1_9).expect("plans");
    assert_eq!(p.partition, 1);
    assert_eq!(p.status.expected_updated_replicas, 4);
    assert_eq!(
        order(&p),
        vec![("p2", None), ("p1", Some(Blocker::MaxUnavailable))]
    );
    assert!(
        p.notes.iter().any(
            |n| n == "partition 30% is 1 of the 5 nodes the last status counted (rounded down)"
        ),
        "{:?}",
        p.notes
    );
    // The same nodes as the int it resolves to.
    let int = at("1", KruiseVersion::V1_9).expect("plans");
    assert_eq!(order(&int), order(&p));
    // v1.8.4's partition is an int32.
    let err = at("30%", KruiseVersion::V1_8)
        .expect_err("v1.8.4")
        .to_string();
    assert!(err.contains("not a percent"), "{err}");
}

#[test]
fn kinds_parse() {
    assert_eq!(
        WorkloadKind::parse("ads"),
        Some(WorkloadKind::AdvancedDaemonSet)
    );
    assert_eq!(WorkloadKind::parse("Clone"), Some(WorkloadKind::CloneSet));
    assert_eq!(WorkloadKind::parse("deploy"), None);
}

#[test]
fn in_place_lifecycle_hook_parks_hooked_pods() {
    use kruise_tui::kruise::cloneset::lifecycle::{Lifecycle, LifecycleHook};
    let mut i = input(Change::Partition("0".to_owned()));
    i.workload.strategy_type = "InPlaceIfPossible".to_owned();
    i.workload.max_unavailable = Some(IntOrString::Int(3));
    i.workload.lifecycle = Some(Lifecycle {
        in_place_update: Some(LifecycleHook {
            finalizers_handler: vec!["example.com/drain".to_owned()],
            ..LifecycleHook::default()
        }),
        ..Lifecycle::default()
    });
    i.pods[2].finalizers = vec!["example.com/drain".to_owned()];
    let p = plan::plan(&i).expect("plans");
    assert_eq!(
        order(&p),
        vec![
            ("p1", None),
            ("p2", Some(Blocker::LifecycleHook)),
            ("p0", None)
        ]
    );
    // ReCreate does not consult the in-place hook.
    i.workload.strategy_type = "ReCreate".to_owned();
    assert_eq!(plan::plan(&i).expect("plans").next_step().count(), 3);
}

fn asts_input(change: Change) -> PlanInput {
    let mut i = input(change);
    i.workload.kind = WorkloadKind::AdvancedStatefulSet;
    i.workload.name = "db".to_owned();
    i.workload.partition = Some(IntOrString::Int(5));
    i.workload.max_unavailable = None;
    i.workload.current_revision = "db-old".to_owned();
    i.workload.update_revision = "db-new".to_owned();
    i.pods = (0..5)
        .map(|o| pod(&format!("db-{o}"), "db-old", 100))
        .collect();
    i
}

#[test]
fn advanced_statefulset_updates_from_the_highest_ordinal() {
    let p = plan::plan(&asts_input(Change::Partition("2".to_owned()))).expect("plans");
    assert_eq!(p.kind, WorkloadKind::AdvancedStatefulSet);
    assert_eq!(p.direction, Direction::Forward);
    assert_eq!(
        order(&p),
        vec![
            ("db-4", None),
            ("db-3", Some(Blocker::MaxUnavailable)),
            ("db-2", Some(Blocker::MaxUnavailable))
        ]
    );
    assert_eq!(p.status.expected_updated_replicas, 3);
    assert_eq!(
        (
            p.status.updated_after_next_step,
            p.status.updated_at_convergence
        ),
        (1, 3)
    );

    let err = plan::plan(&asts_input(Change::Partition("40%".to_owned())))
        .expect_err("percent")
        .to_string();
    assert!(err.contains("number of pods, not a percent"), "{err}");

    let paused = plan::plan(&asts_input(Change::Pause)).expect("plans");
    assert!(paused.moves.is_empty(), "partition 5 of 5 keeps every pod");
}
