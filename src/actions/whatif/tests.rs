//! The what-if on hand-made workloads: each one first created and settled by the simulation
//! itself (the controller creates its revisions and pods, the kubelet runs them), then the
//! action prepared by the action layer and simulated.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::{api::core::v1::Node, apimachinery::pkg::util::intstr::IntOrString};
use serde_json::{Value, json};

use super::*;
use crate::{
    actions::{Action, preview::preview_input},
    kruise::plan,
    sim::nodes::node_object,
};

fn t0() -> Timestamp {
    Timestamp::from_second(1_700_000_000).expect("valid time")
}

fn nodes() -> Vec<Node> {
    (0..3).map(|i| node_object(i, t0())).collect()
}

fn cloneset(image: &str, partition: i32) -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "demo", "uid": "uid-web", "generation": 1,
                     "resourceVersion": "1"},
        "spec": {
            "replicas": 10,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "main", "image": image}]}},
            "updateStrategy": {"type": "InPlaceIfPossible", "partition": partition,
                               "maxUnavailable": 2},
        },
    })
}

fn target(kind: &str, name: &str) -> Target {
    Target {
        kind: crate::api::kinds::find("apps.kruise.io", kind).expect("a Kruise kind"),
        namespace: Some("demo".to_owned()),
        name: name.to_owned(),
    }
}

fn world(target: Target, version: &str, plural: &str, object: Value) -> World {
    World {
        target,
        state: ObjectState {
            version: version.to_owned(),
            plural: plural.to_owned(),
            object,
            revisions: Vec::new(),
        },
        pods: Vec::new(),
        revisions: Vec::new(),
        nodes: nodes(),
    }
}

/// Runs `world` (with `action` applied) from `at`; returns the simulation, the world after it
/// and the time it ended.
fn step(
    world: World,
    action: Option<Action>,
    at: Timestamp,
) -> (Simulation, World, Timestamp, Option<Prepared>) {
    let prepared = action.map(|a| {
        crate::actions::prepare(&world.target, &a, &world.state).expect("the action prepares")
    });
    let (sim, after) = run(world, prepared.as_ref(), &Settings::new(at)).expect("it simulates");
    let end = at + SignedDuration::from_secs(sim.seconds + 1);
    (sim, after, end, prepared)
}

/// web: 10 pods at nginx:1.25, then nginx:1.27 set with partition 6: four pods updated.
fn web() -> (World, Timestamp) {
    let w = world(
        target("CloneSet", "web"),
        "v1alpha1",
        "clonesets",
        cloneset("nginx:1.25", 6),
    );
    let (created, w, at, _) = step(w, None, t0());
    assert_eq!(created.steps.len(), 1, "{created:#?}");
    assert_eq!(created.steps[0].created.len(), 10);
    assert_eq!(created.stop, Stop::Converged);
    let image = Action::SetImage {
        images: vec![("main".to_owned(), "nginx:1.27".to_owned())],
    };
    let (rolled, w, at, _) = step(w, Some(image), at);
    assert_eq!(rolled.stop, Stop::Partition { held: 6 }, "{rolled:#?}");
    assert_eq!(rolled.steps.last().map(|s| s.after.updated_ready), Some(4));
    (w, at)
}

#[test]
fn partition_6_to_0_with_max_unavailable_2_updates_two_at_a_time_to_10_of_10() {
    let (w, at) = web();
    let zero = Action::Partition {
        value: IntOrString::Int(0),
    };
    let (sim, _, _, _) = step(w, Some(zero), at);
    assert_eq!(sim.action.as_deref(), Some("partition → 0"));
    assert_eq!(sim.before.updated, 4);
    let in_place: Vec<usize> = sim.steps.iter().map(|s| s.in_place.len()).collect();
    assert_eq!(in_place, vec![2, 2, 2], "{sim:#?}");
    assert!(
        sim.steps
            .iter()
            .all(|s| s.created.is_empty() && s.deleted.is_empty())
    );
    let counts: Vec<(i32, i32)> = sim
        .steps
        .iter()
        .map(|s| (s.after.updated, s.after.ready))
        .collect();
    assert_eq!(counts, vec![(6, 10), (8, 10), (10, 10)]);
    // Every pod named once, none of the four already updated.
    let mut moved: Vec<String> = sim.steps.iter().flat_map(Step::updated_pods).collect();
    moved.sort();
    moved.dedup();
    assert_eq!(moved.len(), 6);
    assert_eq!(sim.stop, Stop::Converged);
}

#[test]
fn a_crash_image_stops_with_new_pods_never_ready_and_the_rest_kept() {
    let w = world(
        target("CloneSet", "web"),
        "v1alpha1",
        "clonesets",
        cloneset("nginx:1.25", 0),
    );
    let (_, w, at, _) = step(w, None, t0());
    let crash = Action::SetImage {
        images: vec![("main".to_owned(), "nginx:crash".to_owned())],
    };
    let (sim, after, _, _) = step(w, Some(crash), at);
    assert_eq!(sim.steps.len(), 1, "{sim:#?}");
    assert_eq!(sim.steps[0].in_place.len(), 2);
    let Stop::NeverReady { pods, kept } = &sim.stop else {
        panic!("expected never-ready, got {:?}", sim.stop);
    };
    assert_eq!(pods, &sim.steps[0].updated_pods());
    assert_eq!(*kept, 8);
    assert_eq!(sim.steps[0].after.ready, 8);
    assert!(sim.stop.to_string().contains("never become ready"));
    // The crashing pods' restart counts climbed in the copy.
    let restarts: i32 = after
        .pods
        .iter()
        .filter(|p| pods.contains(p.metadata.name.as_ref().expect("named")))
        .flat_map(|p| {
            p.status
                .iter()
                .flat_map(|s| s.container_statuses.iter().flatten())
        })
        .map(|c| c.restart_count)
        .sum();
    assert!(restarts >= 2, "restarts {restarts}");
}

#[test]
fn the_first_step_names_exactly_the_pods_the_plan_api_puts_next() {
    let (w, at) = web();
    for partition in [5, 3, 0] {
        let action = Action::Partition {
            value: IntOrString::Int(partition),
        };
        let input = preview_input(
            &w.target,
            &action,
            &w.state,
            &w.pods,
            &w.nodes,
            at.as_second(),
        )
        .expect("plan input");
        let plan = plan::plan(&input).expect("plan");
        let mut planned: Vec<String> = plan.next_step().map(|m| m.name.clone()).collect();
        planned.sort();
        let (sim, _, _, _) = step(w.clone(), Some(action), at);
        assert_eq!(
            sim.steps[0].updated_pods(),
            planned,
            "partition {partition}"
        );
        assert_eq!(planned.len(), (6 - partition).min(2) as usize);
    }
}

#[test]
fn pause_moves_nothing_and_says_paused() {
    let (w, at) = web();
    let (sim, _, _, _) = step(w.clone(), Some(Action::Pause), at);
    assert!(sim.steps.is_empty(), "{sim:#?}");
    assert_eq!(sim.stop, Stop::Paused);
    // Nothing pending: the controllers as things stand change nothing either.
    let (sim, _, _, _) = step(w, None, at);
    assert!(sim.steps.is_empty());
    assert_eq!(sim.stop, Stop::Partition { held: 6 });
}

#[test]
fn a_stale_request_is_refused_not_simulated() {
    let (w, at) = web();
    let prepared = crate::actions::prepare(
        &w.target,
        &Action::Partition {
            value: IntOrString::Int(0),
        },
        &w.state,
    )
    .expect("prepares");
    let mut changed = w;
    changed.state.object["spec"]["updateStrategy"]["partition"] = json!(8);
    let err = simulate(changed, Some(&prepared), &Settings::new(at)).expect_err("pin fails");
    assert!(err.contains("does not apply"), "{err}");
}

#[test]
fn an_advanced_statefulset_recreates_the_highest_ordinal_first() {
    let set = |image: &str| {
        json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "demo", "uid": "uid-db", "generation": 1},
            "spec": {
                "replicas": 3,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}},
                             "spec": {"containers": [{"name": "main", "image": image}]}},
                "updateStrategy": {"type": "RollingUpdate",
                                   "rollingUpdate": {"partition": 0}},
            },
        })
    };
    let w = world(
        target("StatefulSet", "db"),
        "v1beta1",
        "statefulsets",
        set("db:1"),
    );
    let (created, w, at, _) = step(w, None, t0());
    assert_eq!(created.stop, Stop::Converged, "{created:#?}");
    let image = Action::SetImage {
        images: vec![("main".to_owned(), "db:2".to_owned())],
    };
    let (sim, _, _, _) = step(w, Some(image), at);
    let recreated: Vec<String> = sim.steps.iter().flat_map(|s| s.recreated.clone()).collect();
    assert_eq!(recreated, vec!["db-2", "db-1", "db-0"], "{sim:#?}");
    assert_eq!(sim.stop, Stop::Converged);
    assert_eq!(sim.steps.last().map(|s| s.after.updated_ready), Some(3));
}

#[test]
fn an_advanced_daemonset_rolls_every_node() {
    let ds = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "demo", "uid": "uid-agent", "generation": 1},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                         "spec": {"containers": [{"name": "main", "image": "agent:1"}]}},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"rollingUpdateType": "Standard",
                                                 "maxUnavailable": 1}},
        },
    });
    let w = world(target("DaemonSet", "agent"), "v1alpha1", "daemonsets", ds);
    let (created, w, at, _) = step(w, None, t0());
    assert_eq!(created.stop, Stop::Converged, "{created:#?}");
    assert_eq!(created.steps[0].created.len(), 3);
    let image = Action::SetImage {
        images: vec![("main".to_owned(), "agent:2".to_owned())],
    };
    let (sim, _, _, _) = step(w, Some(image), at);
    let recreated: usize = sim.steps.iter().map(|s| s.recreated.len()).sum();
    assert_eq!(recreated, 3, "{sim:#?}");
    assert_eq!(sim.stop, Stop::Converged);
}
