//! The kube layer against a real HTTP API server (tests/kube_mock): discovery, paged lists,
//! watches into the stores, coalesced messages, failure episodes and recovery, the v1beta1
//! CloneSet mapping, and the effect executor (YAML, events, `:ns` switch).

use crate::kube_mock;
use crate::msgs;

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::{
    app::{
        Effect,
        msg::{EffectResult, Kind, Msg, ObjectRef},
    },
    cli::KubeArgs,
    kube::{Executor, WatchSet},
};
use kube_mock::{MockApi, Options, cloneset, event, pod};
use msgs::{
    PATIENCE, cloneset_names, collect_after, discovered, effect_result, failures, has,
    partition_of, ready, serves, until,
};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

async fn seeded(options: Options) -> MockApi {
    let version = options.cloneset_version;
    let mock = MockApi::start(options).await;
    for (i, name) in ["web", "api", "worker"].iter().enumerate() {
        mock.put("clonesets", cloneset(version, "demo", name, 3, i as i32));
    }
    mock.put("clonesets", cloneset(version, "other", "elsewhere", 1, 0));
    for i in 0..5 {
        mock.put("pods", pod("demo", &format!("web-{i}")));
    }
    mock.put("pods", pod("other", "elsewhere-0"));
    mock
}

async fn started(mock: &MockApi) -> (WatchSet, UnboundedReceiver<Msg>, Vec<Msg>) {
    let (tx, mut rx) = unbounded_channel();
    let watches = WatchSet::start(&mock.connection(), Some("demo".into()), tx, false);
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        ready(s, Kind::CloneSet) && ready(s, Kind::Pod) && ready(s, Kind::DaemonSet)
    })
    .await;
    (watches, rx, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovers_lists_and_stores_clonesets_and_slim_pods() {
    let mock = seeded(Options::default()).await;
    let (watches, _rx, seen) = started(&mock).await;

    let discovery = discovered(&seen).expect("Discovered sent");
    assert!(!discovery.kruise_missing);
    // CloneSet is only at v1alpha1 while the preferred version is v1beta1.
    assert!(serves(&discovery, "CloneSet", "v1alpha1"));
    assert!(serves(&discovery, "StatefulSet", "v1beta1"));
    assert_eq!(discovery.namespace.as_deref(), Some("demo"));
    assert_eq!(discovery.namespaces, ["demo", "other"]);
    assert_eq!(discovery.context.as_deref(), Some("mock"));
    assert!(has(&seen, |m| matches!(
        m,
        Msg::StoreChanged(Kind::CloneSet)
    )));
    // Pods arrive by key (the app patches just those rows).
    assert!(has(
        &seen,
        |m| matches!(m, Msg::PodsChanged(keys) if !keys.is_empty())
    ));

    let stores = watches.stores();
    assert_eq!(cloneset_names(stores), ["api", "web", "worker"]);
    assert_eq!(partition_of(stores, "api"), Some(IntOrString::Int(1)));
    for cs in stores.clonesets.state() {
        assert!(
            cs.metadata.managed_fields.is_none(),
            "managedFields dropped"
        );
    }
    let pods = stores.pods.state();
    assert_eq!(pods.len(), 5, "only the demo namespace");
    for p in &pods {
        let json = serde_json::to_value(&**p).expect("serializes");
        assert!(
            json["metadata"].get("managedFields").is_none(),
            "managedFields dropped"
        );
        assert_eq!(p.spec.containers[0].image, "nginx:1.25");
        assert_eq!(p.status.container_statuses[0].image_id, "sha256:abc");
    }
    assert!(stores.statefulsets.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_follow_creates_deletes_and_partition_patches() {
    let mock = seeded(Options::default()).await;
    let (watches, mut rx, _) = started(&mock).await;
    let stores = watches.stores().clone();
    let changed = |s: &[Msg]| has(s, |m| matches!(m, Msg::StoreChanged(Kind::CloneSet)));

    let mut seen = Vec::new();
    mock.put("clonesets", cloneset("v1alpha1", "demo", "batch", 2, 0));
    until(&mut rx, &mut seen, PATIENCE, |s| {
        changed(s) && stores.clonesets.len() == 4
    })
    .await;
    assert_eq!(cloneset_names(&stores), ["api", "batch", "web", "worker"]);

    seen.clear();
    mock.delete("clonesets", "demo", "web");
    until(&mut rx, &mut seen, PATIENCE, |s| {
        changed(s) && stores.clonesets.len() == 3
    })
    .await;
    assert_eq!(cloneset_names(&stores), ["api", "batch", "worker"]);

    seen.clear();
    mock.modify("clonesets", "demo", "api", |cs| {
        cs["spec"]["updateStrategy"]["partition"] = serde_json::json!(0);
    });
    until(&mut rx, &mut seen, PATIENCE, |s| {
        changed(s) && partition_of(&stores, "api") == Some(IntOrString::Int(0))
    })
    .await;

    // Objects of other namespaces never reach a namespaced store.
    mock.put("clonesets", cloneset("v1alpha1", "other", "stray", 1, 0));
    mock.put("pods", pod("demo", "web-5"));
    seen.clear();
    until(&mut rx, &mut seen, PATIENCE, |_| stores.pods.len() == 6).await;
    assert_eq!(cloneset_names(&stores), ["api", "batch", "worker"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_is_reported_once_and_watches_resume() {
    let mut mock = seeded(Options::default()).await;
    let (watches, mut rx, _) = started(&mock).await;
    let stores = watches.stores().clone();

    mock.stop_serving();
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        failures(s, Kind::Pod) >= 1 && failures(s, Kind::CloneSet) >= 1
    })
    .await;
    // Let the watches retry a few times (0.25 + 0.5 + 1 + 2 s): still one report per kind.
    collect_after(&mut rx, &mut seen, Duration::from_secs(4)).await;
    assert_eq!(failures(&seen, Kind::Pod), 1, "{seen:#?}");
    assert_eq!(failures(&seen, Kind::CloneSet), 1, "{seen:#?}");
    let error = seen
        .iter()
        .find_map(|m| match m {
            Msg::WatchFailed { error, .. } => Some(error.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert!(!error.is_empty());
    assert!(!has(&seen, |m| matches!(m, Msg::WatchRecovered(_))));
    assert_eq!(
        stores.pods.len(),
        5,
        "the store keeps its last state while down"
    );

    // Changed while the server was away, then served again.
    mock.put("pods", pod("demo", "web-5"));
    mock.start_serving().await;
    seen.clear();
    // The product bar: watches resume within 5 s of the server's return.
    until(&mut rx, &mut seen, Duration::from_secs(5), |s| {
        has(s, |m| matches!(m, Msg::WatchRecovered(Kind::Pod)))
            && has(s, |m| matches!(m, Msg::WatchRecovered(Kind::CloneSet)))
            && stores.pods.len() == 6
    })
    .await;

    seen.clear();
    mock.put("clonesets", cloneset("v1alpha1", "demo", "after", 1, 0));
    until(&mut rx, &mut seen, PATIENCE, |_| {
        stores.clonesets.len() == 4
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_down_at_start_is_one_failure_per_kind_until_it_serves() {
    let mut mock = seeded(Options::default()).await;
    mock.stop_serving();
    let (tx, mut rx) = unbounded_channel();
    let watches = WatchSet::start(&mock.connection(), Some("demo".into()), tx, false);
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        failures(s, Kind::Pod) == 1 && failures(s, Kind::CloneSet) == 1
    })
    .await;
    // Several list retries later: still one report each, and no false recovery.
    collect_after(&mut rx, &mut seen, Duration::from_secs(3)).await;
    assert_eq!(failures(&seen, Kind::Pod), 1, "{seen:#?}");
    assert_eq!(failures(&seen, Kind::CloneSet), 1, "{seen:#?}");
    assert!(
        !has(&seen, |m| matches!(m, Msg::WatchRecovered(_))),
        "{seen:#?}"
    );

    mock.start_serving().await;
    until(&mut rx, &mut seen, PATIENCE, |s| {
        has(s, |m| matches!(m, Msg::WatchRecovered(Kind::Pod)))
            && has(s, |m| matches!(m, Msg::WatchRecovered(Kind::CloneSet)))
            && has(s, |m| matches!(m, Msg::Discovered(_)))
            && ready(s, Kind::Pod)
            && ready(s, Kind::CloneSet)
    })
    .await;
    assert_eq!(watches.stores().pods.len(), 5);
    assert_eq!(cloneset_names(watches.stores()), ["api", "web", "worker"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_kruise_says_so_and_still_shows_pods() {
    let mock = MockApi::start(Options {
        kruise: false,
        ..Options::default()
    })
    .await;
    mock.put("pods", pod("demo", "plain-0"));
    let (watches, _rx, seen) = started(&mock).await;
    let discovery = discovered(&seen).expect("Discovered sent");
    assert!(discovery.kruise_missing);
    assert!(discovery.kruise_kinds.is_empty());
    assert!(ready(&seen, Kind::StatefulSet));
    assert!(watches.stores().clonesets.is_empty());
    assert_eq!(watches.stores().pods.len(), 1);
    assert!(
        !mock.requests().iter().any(|r| r.contains("clonesets")),
        "kinds that are not served are not watched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1beta1_clonesets_map_into_the_internal_model() {
    let mock = seeded(Options {
        cloneset_version: "v1beta1",
        ..Options::default()
    })
    .await;
    let (watches, _rx, seen) = started(&mock).await;
    let discovery = discovered(&seen).expect("Discovered sent");
    assert!(serves(&discovery, "CloneSet", "v1beta1"));
    let stores = watches.stores();
    assert_eq!(cloneset_names(stores), ["api", "web", "worker"]);
    assert_eq!(partition_of(stores, "worker"), Some(IntOrString::Int(2)));
    assert!(
        mock.requests()
            .iter()
            .any(|r| r.starts_with("GET /apis/apps.kruise.io/v1beta1/namespaces/demo/clonesets"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_initial_pod_list_is_paged() {
    let mock = MockApi::start(Options::default()).await;
    for i in 0..1200 {
        mock.put("pods", pod("demo", &format!("p-{i:04}")));
    }
    let (watches, _rx, _) = started(&mock).await;
    assert_eq!(watches.stores().pods.len(), 1200);
    let pod_lists: Vec<String> = mock
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("GET /api/v1/namespaces/demo/pods?") && !r.contains("watch"))
        .filter(|r| r.contains("limit=500"))
        .collect();
    assert_eq!(pod_lists.len(), 3, "{pod_lists:#?}");
    assert!(pod_lists.iter().any(|r| r.contains("continue=1000")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executor_fetches_yaml_and_events_and_switches_namespace() {
    let mock = seeded(Options::default()).await;
    mock.put(
        "events",
        event(
            "demo",
            "e1",
            "Pod",
            "web-0",
            "Pulled",
            "2026-01-01T00:02:00Z",
        ),
    );
    mock.put(
        "events",
        event(
            "demo",
            "e2",
            "Pod",
            "web-0",
            "Started",
            "2026-01-01T00:03:00Z",
        ),
    );
    mock.put(
        "events",
        event(
            "demo",
            "e0",
            "Pod",
            "web-0",
            "Scheduled",
            "2026-01-01T00:01:00Z",
        ),
    );
    mock.put(
        "events",
        event(
            "demo",
            "e3",
            "Pod",
            "web-1",
            "Killing",
            "2026-01-01T00:04:00Z",
        ),
    );
    let (tx, mut rx) = unbounded_channel();
    let mut executor = Executor::with_connection(
        KubeArgs::default(),
        mock.connection(),
        Some("demo".into()),
        tx,
    );
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| ready(s, Kind::CloneSet)).await;

    let web = ObjectRef {
        kind: Kind::CloneSet,
        namespace: Some("demo".into()),
        name: "web".into(),
    };
    executor.execute(Effect::FetchYaml(web.clone())).await;
    let yaml = effect_result(&mut rx, &mut seen, |r| match r {
        EffectResult::Yaml { target, yaml } if *target == web => Some(yaml.clone()),
        _ => None,
    })
    .await
    .expect("YAML result");
    assert!(yaml.contains("name: web"), "{yaml}");
    assert!(yaml.contains("partition: 0"), "{yaml}");
    assert!(!yaml.contains("managedFields"), "{yaml}");

    let pod_ref = ObjectRef {
        kind: Kind::Pod,
        namespace: Some("demo".into()),
        name: "web-0".into(),
    };
    executor.execute(Effect::FetchEvents(pod_ref.clone())).await;
    let events = effect_result(&mut rx, &mut seen, |r| match r {
        EffectResult::Events { target, events } if *target == pod_ref => Some(events.clone()),
        _ => None,
    })
    .await
    .expect("events result");
    let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(reasons, ["Scheduled", "Pulled", "Started"], "newest last");
    assert_eq!(events[0].count, 2);
    assert_eq!(events[0].source, "kruise-manager");
    assert!(events[0].last_seen.is_some());

    executor
        .execute(Effect::FetchYaml(ObjectRef {
            name: "nope".into(),
            ..web.clone()
        }))
        .await;
    let failed = effect_result(&mut rx, &mut seen, |r| match r {
        EffectResult::Failed { what, .. } if what.contains("nope") => Some(()),
        _ => None,
    })
    .await;
    assert!(failed.is_some(), "{seen:#?}");

    executor
        .execute(Effect::Switch {
            context: None,
            namespace: Some("other".into()),
        })
        .await;
    seen.clear();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        has(s, |m| matches!(m, Msg::EffectDone(EffectResult::Switched))) && ready(s, Kind::CloneSet)
    })
    .await;
    let replaced = seen
        .iter()
        .position(|m| matches!(m, Msg::StoresReplaced(_)))
        .expect("StoresReplaced sent");
    let first_ready = seen
        .iter()
        .position(|m| matches!(m, Msg::StoreReady(_)))
        .expect("StoreReady sent");
    assert!(replaced < first_ready, "new stores are announced first");
    let Msg::StoresReplaced(stores) = &seen[replaced] else {
        unreachable!()
    };
    assert_eq!(cloneset_names(stores), ["elsewhere"]);
    assert_eq!(executor.namespace(), Some("other"));
    assert_eq!(cloneset_names(&executor.stores()), ["elsewhere"]);

    executor
        .execute(Effect::Switch {
            context: None,
            namespace: None,
        })
        .await;
    seen.clear();
    until(&mut rx, &mut seen, PATIENCE, |s| ready(s, Kind::CloneSet)).await;
    assert_eq!(
        cloneset_names(&executor.stores()),
        ["api", "elsewhere", "web", "worker"]
    );
}
