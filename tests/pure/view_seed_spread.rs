//! Snapshots (insta + TestBackend) and scripted key sessions of the spreading kinds' views:
//! `:ws` lists WorkloadSpreads (current/max per subset), Enter shows the subsets' node terms
//! and replicas and the pods per subset, Enter on a pod opens it; `:ud` lists
//! UnitedDeployments, Enter shows the subset workloads, Enter on a CloneSet subset opens its
//! rollout view. A failed list is said in the view.

use crate::harness;

use harness::Harness;
use kruise_tui::app::{
    Effect, Kind, Msg,
    msg::EffectResult,
    route::Route,
    uniteddeployments::{self, SubsetWorkload, TemplateKind},
    workloadspreads::{self, SpreadPod},
};
use serde_json::json;

fn spread_listing() -> workloadspreads::Listing {
    let zone = |z: &str| {
        json!({"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [z]}]})
    };
    let spreads = serde_json::from_value(json!([{
        "metadata": {"name": "api-spread", "namespace": "demo",
                     "creationTimestamp": "2026-01-10T11:00:00Z"},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                          "name": "api"},
            "subsets": [
                {"name": "zone-a", "requiredNodeSelectorTerm": zone("zone-a"), "maxReplicas": 3,
                 "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "api",
                                  "effect": "NoSchedule"}]},
                {"name": "zone-b", "requiredNodeSelectorTerm": zone("zone-b"),
                 "maxReplicas": "50%",
                 "preferredNodeSelectorTerms": [{"weight": 50, "preference": {
                     "matchExpressions": [{"key": "disk", "operator": "In",
                                           "values": ["ssd"]}]}}]}
            ]
        },
        "status": {"observedGeneration": 1, "subsetStatuses": [
            {"name": "zone-a", "replicas": 3, "missingReplicas": 0,
             "deletingPods": {"api-old": "2026-01-10T11:59:30Z"}},
            {"name": "zone-b", "replicas": 1, "missingReplicas": 2,
             "creatingPods": {"api-new": "2026-01-10T11:59:50Z"}}
        ]}
    }]))
    .expect("spreads");
    let pod = |subset: &str, name: &str, node: &str, ready: bool| SpreadPod {
        namespace: "demo".into(),
        spread: "api-spread".into(),
        subset: subset.into(),
        name: name.into(),
        node: node.into(),
        phase: if node.is_empty() {
            "Pending"
        } else {
            "Running"
        }
        .into(),
        ready,
        terminating: false,
    };
    workloadspreads::Listing {
        spreads,
        pods: vec![
            pod("zone-b", "api-b1", "node-b", true),
            pod("zone-a", "api-a2", "node-a", true),
            pod("zone-a", "api-a1", "node-a", true),
            pod("zone-b", "api-new", "", false),
        ],
    }
}

#[test]
fn workload_spreads_list_detail_and_pod() {
    let mut h = Harness::loaded(None, (140, 30));
    let effects = h.command("ws");
    assert_eq!(
        effects,
        vec![Effect::List(kruise_tui::app::Listing::WorkloadSpreads)]
    );
    assert!(h.screen().contains("Listing WorkloadSpreads"));
    h.feed(Msg::EffectDone(EffectResult::WorkloadSpreads(Ok(
        spread_listing(),
    ))));
    let screen = h.screen();
    insta::assert_snapshot!("ws_list", screen);
    assert!(screen.contains("zone-a 3/3 · zone-b 1/50%"), "{screen}");
    h.press(&["enter"]);
    let screen = h.screen();
    insta::assert_snapshot!("ws_detail", screen);
    // Pods by subset order (zone-a first), then name.
    let a1 = screen.find("api-a1").expect("api-a1");
    let a2 = screen.find("api-a2").expect("api-a2");
    let b1 = screen.find("api-b1").expect("api-b1");
    assert!(a1 < a2 && a2 < b1, "{screen}");
    // The third pod is api-b1; Enter opens it as :pods does.
    h.press(&["j", "j", "enter"]);
    match h.app.current() {
        Route::Pod(p) => assert_eq!((p.namespace.as_str(), p.name.as_str()), ("demo", "api-b1")),
        other => panic!("{other:?}"),
    }
    h.press(&["esc", "esc"]);
    assert!(h.screen().contains("WorkloadSpreads [1]"));
}

#[test]
fn workload_spreads_list_failure_is_shown() {
    let mut h = Harness::loaded(None, (100, 10));
    h.command("workloadspreads");
    h.feed(Msg::EffectDone(EffectResult::WorkloadSpreads(Err(
        "workloadspreads: forbidden".into(),
    ))));
    assert!(h.screen().contains("workloadspreads: forbidden"));
}

fn united_listing() -> uniteddeployments::Listing {
    let deployments = serde_json::from_value(json!([
        {
            "metadata": {"name": "shop", "namespace": "demo",
                         "creationTimestamp": "2026-01-10T11:00:00Z"},
            "spec": {
                "replicas": 5,
                "selector": {"matchLabels": {"app": "shop"}},
                "template": {"cloneSetTemplate": {"metadata": {"labels": {"app": "shop"}},
                    "spec": {"selector": {"matchLabels": {"app": "shop"}},
                             "template": {"spec": {"containers": [
                                 {"name": "shop", "image": "shop:1"}]}}}}},
                "topology": {"subsets": [
                    {"name": "zone-a", "replicas": 3, "nodeSelectorTerm": {"matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In",
                         "values": ["zone-a"]}]}},
                    {"name": "zone-b", "tolerations": [{"key": "spot", "operator": "Exists",
                                                        "effect": "NoSchedule"}]}
                ]},
                "updateStrategy": {"manualUpdate": {"partitions": {"zone-a": 1}}}
            },
            "status": {"replicas": 5, "readyReplicas": 4, "updatedReplicas": 2,
                       "updatedReadyReplicas": 2, "currentRevision": "shop-6d8f9c7b5",
                       "subsetReplicas": {"zone-a": 3, "zone-b": 2},
                       "updateStatus": {"updatedRevision": "shop-7f5d4b8c9",
                                        "currentPartitions": {"zone-a": 1, "zone-b": 0}}}
        },
        {
            "metadata": {"name": "db", "namespace": "demo",
                         "creationTimestamp": "2026-01-10T11:30:00Z"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"statefulSetTemplate": {"spec": {
                         "selector": {"matchLabels": {"app": "db"}},
                         "template": {"spec": {"containers": [{"name": "db", "image": "db:1"}]}}}}},
                     "topology": {"subsets": [{"name": "zone-a"}]}},
            "status": {"replicas": 0, "updatedReplicas": 0, "currentRevision": "db-1"}
        }
    ]))
    .expect("united deployments");
    let set =
        |subset: &str, suffix: &str, desired, ready, updated, partition: &str| SubsetWorkload {
            kind: TemplateKind::CloneSet,
            namespace: "demo".into(),
            owner: "shop".into(),
            subset: subset.into(),
            name: format!("shop-{subset}-{suffix}"),
            uid: format!("uid-{subset}"),
            selector: Default::default(),
            desired,
            replicas: desired,
            ready,
            updated,
            partition: Some(partition.into()),
        };
    uniteddeployments::Listing {
        deployments,
        workloads: vec![
            set("zone-a", "x7k2p", 3, 2, 2, "1"),
            set("zone-b", "q4m9z", 2, 2, 0, "0"),
        ],
    }
}

#[test]
fn united_deployments_list_detail_and_rollout() {
    let mut h = Harness::loaded(None, (140, 24));
    let effects = h.command("ud");
    assert_eq!(
        effects,
        vec![Effect::List(kruise_tui::app::Listing::UnitedDeployments)]
    );
    h.feed(Msg::EffectDone(EffectResult::UnitedDeployments(Ok(
        united_listing(),
    ))));
    // Sorted by name: db, shop.
    insta::assert_snapshot!("ud_list", h.screen());
    h.press(&["enter"]);
    let screen = h.screen();
    assert!(screen.contains("UnitedDeployment demo/db"), "{screen}");
    assert!(screen.contains("(not created yet)"), "{screen}");
    h.press(&["enter"]);
    assert!(matches!(h.app.current(), Route::UnitedDeployments(_)));
    h.press(&["esc", "j", "enter"]);
    let screen = h.screen();
    insta::assert_snapshot!("ud_detail", screen);
    assert!(
        screen.contains("6d8f9c7b5 → 7f5d4b8c9 (rolling out)"),
        "{screen}"
    );
    // The zone-b subset's CloneSet: its rollout view, as :workloads Enter opens it.
    h.press(&["j", "enter"]);
    match h.app.current() {
        Route::Rollout(v) => {
            assert_eq!(v.owner.kind, Kind::CloneSet);
            assert_eq!(v.owner.name, "shop-zone-b-q4m9z");
            assert_eq!(v.owner.uid, "uid-zone-b");
        }
        other => panic!("{other:?}"),
    }
    h.press(&["esc"]);
    assert!(h.screen().contains("UnitedDeployment demo/shop"));
}

#[test]
fn united_deployments_list_failure_is_shown() {
    let mut h = Harness::loaded(None, (100, 10));
    h.command("uniteddeployment");
    h.feed(Msg::EffectDone(EffectResult::UnitedDeployments(Err(
        "uniteddeployments: the server could not find the requested resource".into(),
    ))));
    assert!(
        h.screen()
            .contains("uniteddeployments: the server could not find")
    );
}
