//! Snapshots (insta + TestBackend) of `:pps` (PersistentPodStates: the list, then one with each
//! pod's kept and current placement; Enter on a pod opens it) and `:distributor`
//! (ResourceDistributions: the list, then one with its target namespaces evaluated here and
//! whether each copy is in sync).

use crate::harness;

use std::collections::BTreeMap;

use harness::Harness;
use kruise_tui::{
    app::{
        Effect, Msg,
        distributions::{CopyObject, Listing as RdListing},
        msg::EffectResult,
        persistentpodstates::{Listing as PpsListing, PodPlace},
        route::Route,
    },
    kruise::distribution::{Namespace, make_copy},
};
use serde_json::json;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn node(name: &str, zone: &str) -> (String, BTreeMap<String, String>) {
    (
        name.to_owned(),
        labels(&[
            ("kubernetes.io/hostname", name),
            ("topology.kubernetes.io/zone", zone),
        ]),
    )
}

fn pps_listing() -> PpsListing {
    let kept = |node: &str, zone: &str| {
        json!({"nodeName": node, "nodeTopologyLabels": {
            "kubernetes.io/hostname": node, "topology.kubernetes.io/zone": zone}})
    };
    let states = serde_json::from_value(json!([
        {
            "metadata": {"name": "db", "namespace": "demo",
                         "creationTimestamp": "2026-01-10T10:00:00Z"},
            "spec": {
                "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "db"},
                "requiredPersistentTopology": {"nodeTopologyKeys": ["topology.kubernetes.io/zone"]},
                "preferredPersistentTopology": [{"weight": 100,
                    "preference": {"nodeTopologyKeys": ["kubernetes.io/hostname"]}}]
            },
            "status": {"observedGeneration": 1, "podStates": {
                "db-0": kept("node-a", "zone-a"),
                "db-1": kept("node-b", "zone-b"),
                "db-2": kept("node-c", "zone-c"),
                "db-3": kept("node-a", "zone-a"),
                "db-4": kept("node-b", "zone-b")
            }}
        },
        {
            "metadata": {"name": "cache", "namespace": "demo",
                         "creationTimestamp": "2026-01-10T11:59:00Z"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "cache"},
                     "preferredPersistentTopology": [{"weight": 50,
                        "preference": {"nodeTopologyKeys": ["topology.kubernetes.io/zone"]}}]}
        }
    ]))
    .expect("states");
    let pod = |name: &str, node: &str, ready: bool| PodPlace {
        namespace: "demo".into(),
        name: name.into(),
        owner_kind: "StatefulSet".into(),
        owner: "db".into(),
        node: node.into(),
        phase: if node.is_empty() {
            "Pending"
        } else {
            "Running"
        }
        .into(),
        ready,
    };
    PpsListing {
        states,
        pods: vec![
            pod("db-0", "node-a", true),
            // Recreated on a node of another zone, not Ready yet: the record still says zone-b.
            pod("db-1", "node-c", false),
            // Recreated on another node of the same zone.
            pod("db-2", "node-f", false),
            pod("db-4", "", false),
            // Not kept yet.
            pod("db-5", "node-b", false),
        ],
        nodes: Ok([
            node("node-a", "zone-a"),
            node("node-b", "zone-b"),
            node("node-c", "zone-c"),
            node("node-f", "zone-c"),
        ]
        .into_iter()
        .collect()),
    }
}

#[test]
fn persistent_pod_states_list_detail_and_pod() {
    let mut h = Harness::loaded(None, (150, 24));
    let effects = h.command("pps");
    assert_eq!(
        effects,
        vec![Effect::List(kruise_tui::app::Listing::PersistentPodStates)]
    );
    assert!(h.screen().contains("Listing PersistentPodStates"));
    h.feed(Msg::EffectDone(EffectResult::PersistentPodStates(Ok(
        pps_listing(),
    ))));
    // Sorted by name: cache, db. db keeps 5 and has one pod in another zone.
    insta::assert_snapshot!("pps_list", h.screen());
    h.press(&["j", "enter"]);
    let screen = h.screen();
    insta::assert_snapshot!("pps_detail", screen);
    for (pod, state) in [
        ("db-0", "match"),
        ("db-1", "moved"),
        ("db-2", "match"),
        ("db-3", "pod gone"),
        ("db-4", "pending"),
        ("db-5", "not kept"),
    ] {
        let line = screen
            .lines()
            .find(|l| l.contains(&format!("│{pod} ")))
            .unwrap_or_else(|| panic!("{pod} row: {screen}"));
        assert!(line.contains(state), "{pod}: {line}");
    }
    // Enter on the moved pod opens it; on a pod gone, says so.
    h.press(&["j", "enter"]);
    match h.app.current() {
        Route::Pod(p) => assert_eq!((p.namespace.as_str(), p.name.as_str()), ("demo", "db-1")),
        other => panic!("{other:?}"),
    }
    h.press(&["esc", "j", "j", "enter"]);
    assert!(matches!(h.app.current(), Route::PersistentPodStates(_)));
    assert!(h.screen().contains("pod db-3 does not exist"));
    // Esc back to the list, cursor kept on db.
    h.press(&["esc"]);
    assert!(h.screen().contains("PersistentPodStates [2]"));
}

#[test]
fn persistent_pod_states_failure_and_unreadable_nodes() {
    let mut h = Harness::loaded(None, (100, 10));
    h.command("persistentpodstates");
    h.feed(Msg::EffectDone(EffectResult::PersistentPodStates(Err(
        "persistentpodstates: forbidden".into(),
    ))));
    assert!(h.screen().contains("persistentpodstates: forbidden"));

    let mut h = Harness::loaded(None, (150, 20));
    h.command("persistentpodstate");
    let mut listing = pps_listing();
    listing.nodes = Err("nodes: forbidden".into());
    h.feed(Msg::EffectDone(EffectResult::PersistentPodStates(Ok(
        listing,
    ))));
    h.press(&["j", "enter"]);
    let screen = h.screen();
    assert!(screen.contains("node labels unavailable"), "{screen}");
    // Without the labels, db-2 on another node cannot be called a match.
    let line = screen.lines().find(|l| l.contains("│db-2 ")).expect("db-2");
    assert!(line.contains("unknown"), "{line}");
}

fn rd_listing() -> RdListing {
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "registry-creds"}, "type": "Opaque",
        "data": {"token": "czNjcjN0"}});
    let distributions = serde_json::from_value(json!([
        {
            "metadata": {"name": "registry-creds", "uid": "u-1", "generation": 1,
                         "creationTimestamp": "2026-01-10T11:00:00Z"},
            "spec": {"resource": secret,
                     "targets": {"includedNamespaces": {"list": [{"name": "team-a"}, {"name": "ghost"}]},
                                 "namespaceLabelSelector": {"matchLabels": {"registry": "private"}},
                                 "excludedNamespaces": {"list": [{"name": "team-d"}]}}},
            "status": {"desired": 4, "succeeded": 2, "failed": 2, "observedGeneration": 1,
                       "conditions": [
                           {"type": "GetResourceFailed", "status": "False", "reason": "Succeeded"},
                           {"type": "ConflictOccurred", "status": "True",
                            "reason": "conflict with existing resources because of the same namespace, group, version, kind and name",
                            "failedNamespace": ["team-c"]},
                           {"type": "NamespaceNotExists", "status": "True",
                            "reason": "namespace not found or is terminating",
                            "failedNamespace": ["ghost"]}
                       ]}
        },
        {
            "metadata": {"name": "app-settings", "creationTimestamp": "2026-01-09T12:00:00Z"},
            "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "settings"}, "data": {"a": "1"}},
                     "targets": {"allNamespaces": true,
                                 "excludedNamespaces": {"list": [{"name": "kube-system"}]}}},
            "status": {"desired": 5, "succeeded": 5, "failed": 0}
        }
    ]))
    .expect("distributions");
    let ns = |name: &str, l: &[(&str, &str)]| Namespace {
        name: name.into(),
        labels: labels(l),
        terminating: false,
    };
    let copy = |namespace: &str, body: serde_json::Value| CopyObject {
        kind: "Secret".into(),
        namespace: namespace.into(),
        name: "registry-creds".into(),
        body,
    };
    let mut stale = make_copy("registry-creds", "u-1", &secret, "team-b");
    stale["data"]["token"] = json!("b2xk");
    let mut hand = secret.clone();
    hand["metadata"]["namespace"] = json!("team-c");
    RdListing {
        distributions,
        namespaces: Ok(vec![
            ns("default", &[]),
            ns("kube-system", &[]),
            ns("team-a", &[]),
            ns("team-b", &[("registry", "private")]),
            ns("team-c", &[("registry", "private")]),
            ns("team-d", &[("registry", "private")]),
            ns("team-e", &[]),
        ]),
        copies: vec![
            copy(
                "team-a",
                make_copy("registry-creds", "u-1", &secret, "team-a"),
            ),
            copy("team-b", stale),
            copy("team-c", hand),
            // Left over where the targets no longer reach.
            copy(
                "team-e",
                make_copy("registry-creds", "u-1", &secret, "team-e"),
            ),
        ],
        copy_errors: Vec::new(),
    }
}

#[test]
fn distributions_list_and_namespaces() {
    let mut h = Harness::loaded(None, (140, 26));
    let effects = h.command("distributor");
    assert_eq!(
        effects,
        vec![Effect::List(kruise_tui::app::Listing::Distributions)]
    );
    h.feed(Msg::EffectDone(EffectResult::Distributions(Ok(
        rd_listing(),
    ))));
    insta::assert_snapshot!("rd_list", h.screen());
    h.press(&["j", "enter"]);
    let screen = h.screen();
    insta::assert_snapshot!("rd_detail", screen);
    let row = |ns: &str| {
        screen
            .lines()
            .find(|l| l.contains(&format!("│   {ns} ")))
            .unwrap_or_else(|| panic!("{ns}: {screen}"))
            .to_owned()
    };
    assert!(row("team-a").contains("in sync"));
    assert!(row("team-b").contains("out of sync") && row("team-b").contains("data"));
    assert!(row("team-c").contains("conflict"));
    assert!(row("ghost").contains("no namespace"));
    assert!(row("team-e").contains("no longer targeted"));
    assert!(!screen.contains("│   team-d "), "excluded: {screen}");
    assert!(screen.contains("ConflictOccurred"));
    // All namespaces but the one excluded by name.
    h.press(&["esc", "k", "enter"]);
    let screen = h.screen();
    assert!(screen.contains("Target namespaces here (6)"), "{screen}");
    assert!(!screen.contains("│   kube-system "), "{screen}");
}

#[test]
fn distributions_list_failure_is_shown() {
    let mut h = Harness::loaded(None, (100, 10));
    h.command("resourcedistributions");
    h.feed(Msg::EffectDone(EffectResult::Distributions(Err(
        "resourcedistributions: forbidden".into(),
    ))));
    assert!(h.screen().contains("resourcedistributions: forbidden"));
}
