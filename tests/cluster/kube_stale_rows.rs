//! A deleted object never stays in the console's stores: deletes during and right after bursts
//! of changes, across server restarts (watch resume), across compaction (410 Gone, relist) and
//! while a paged initial list is in flight.

use crate::msgs;

use std::{collections::BTreeSet, time::Duration};

use kruise_tui::{
    app::msg::{Kind, Msg},
    cluster::server::{EmbeddedCluster, ServerOptions, Store},
    kube::{WatchSet, connect::Connection},
};
use msgs::{PATIENCE, ready, until};
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const NS: &str = "default";

fn cloneset(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": name}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}},
            "updateStrategy": {"partition": 0}
        }
    })
}

fn server_names(store: &Store) -> BTreeSet<String> {
    store
        .list_values("apps.kruise.io/v1alpha1", "CloneSet", Some(NS))
        .iter()
        .filter_map(|v| v["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

fn store_names(watches: &WatchSet) -> BTreeSet<String> {
    watches
        .stores()
        .clonesets
        .state()
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect()
}

fn bump(store: &Store, name: &str, round: usize) {
    if let Some(mut v) = store.get_value("apps.kruise.io/v1alpha1", "CloneSet", NS, name) {
        v["spec"]["updateStrategy"]["partition"] = json!(round % 5);
        if let Some(m) = v["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        let _ = store.update(v);
    }
}

fn delete(store: &Store, name: &str) {
    let _ = store.delete_value("apps.kruise.io/v1alpha1", "CloneSet", NS, name);
}

/// Waits until the console's CloneSet store holds exactly what the server holds.
async fn converges(watches: &WatchSet, store: &Store, rx: &mut UnboundedReceiver<Msg>, what: &str) {
    let want = server_names(store);
    let wait = async {
        loop {
            if store_names(watches) == want {
                return;
            }
            // Drain messages so the channel does not grow; the stores are what is asserted.
            let _ = tokio::time::timeout(Duration::from_millis(50), rx.recv()).await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .is_err()
    {
        let have = store_names(watches);
        panic!(
            "{what}: stale rows {:?}, missing {:?}",
            have.difference(&want).collect::<Vec<_>>(),
            want.difference(&have).collect::<Vec<_>>()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_during_bursts_restarts_and_relists_are_never_lost() {
    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .expect("embedded cluster starts");
    let store = cluster.store();
    for i in 0..1200 {
        store.create(cloneset(&format!("cs-{i:04}"))).unwrap();
    }
    let client = cluster.client().await.unwrap();
    let (tx, mut rx) = unbounded_channel();
    let conn = Connection {
        client,
        context: Some("embedded".into()),
        contexts: vec!["embedded".into()],
        default_namespace: NS.into(),
        cluster_url: cluster.url(),
    };
    let watches = WatchSet::start(&conn, Some(NS.into()), tx, false);
    // Deletes while the paged first list (500 a page) is in flight.
    let early = store.clone();
    let deleter = tokio::spawn(async move {
        for i in (0..1200).step_by(7) {
            delete(&early, &format!("cs-{i:04}"));
            tokio::task::yield_now().await;
        }
    });
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| ready(s, Kind::CloneSet)).await;
    deleter.await.unwrap();
    converges(&watches, &store, &mut rx, "deletes during the first list").await;

    let mut alive: Vec<String> = server_names(&store).into_iter().collect();
    for round in 0..12 {
        // A burst of changes with deletes in the middle of it, then deletes right after.
        for (i, name) in alive.iter().enumerate().take(300) {
            bump(&store, name, round);
            if i % 50 == 25 {
                delete(&store, &alive[alive.len() - 1 - i]);
            }
        }
        delete(&store, &alive[round]);
        delete(&store, &alive[alive.len() / 2 + round]);
        match round % 3 {
            1 => {
                // Across a restart: deletes while down and right after the server returns.
                cluster.stop_serving().await;
                delete(&store, &alive[round + 20]);
                bump(&store, &alive[round + 21], round);
                cluster.start_serving().await.unwrap();
                delete(&store, &alive[round + 22]);
            }
            2 => {
                // Across compaction: the resumed watch gets 410 Gone and relists.
                cluster.stop_serving().await;
                delete(&store, &alive[round + 30]);
                store.compact();
                cluster.start_serving().await.unwrap();
                delete(&store, &alive[round + 31]);
            }
            _ => {}
        }
        converges(&watches, &store, &mut rx, &format!("round {round}")).await;
        alive = server_names(&store).into_iter().collect();
    }
}

/// The server side of the bug: every page of a list is served at the first page's version, so
/// a watch from the list's version replays what changed between the pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_of_a_list_are_one_snapshot() {
    use futures::{StreamExt, TryStreamExt};
    use kube::{
        Api,
        api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, WatchEvent, WatchParams},
    };

    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .unwrap();
    let store = cluster.store();
    for i in 0..5 {
        store.create(cloneset(&format!("cs-{i}"))).unwrap();
    }
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", "v1alpha1", "CloneSet"),
        "clonesets",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(cluster.client().await.unwrap(), NS, &ar);
    let first = api.list(&ListParams::default().limit(2)).await.unwrap();
    let listed_at = first.metadata.resource_version.clone().unwrap();
    let token = first.metadata.continue_.clone().unwrap();
    // Between the pages: one listed object goes, one not yet listed changes, one is added.
    delete(&store, "cs-0");
    bump(&store, "cs-3", 4);
    store.create(cloneset("cs-9")).unwrap();
    let second = api
        .list(&ListParams::default().limit(10).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(
        second.metadata.resource_version.as_deref(),
        Some(listed_at.as_str())
    );
    let names: Vec<_> = second
        .items
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    assert_eq!(
        names,
        ["cs-2", "cs-3", "cs-4"],
        "the state of the first page's version"
    );
    assert_eq!(
        second.items[1].data["spec"]["updateStrategy"]["partition"],
        0
    );
    let mut events = api
        .watch(&WatchParams::default(), &listed_at)
        .await
        .unwrap()
        .boxed();
    let mut replayed = Vec::new();
    while replayed.len() < 3 {
        match events.try_next().await.unwrap() {
            Some(WatchEvent::Added(o)) => {
                replayed.push(format!("ADDED {}", o.metadata.name.unwrap()))
            }
            Some(WatchEvent::Modified(o)) => {
                replayed.push(format!("MODIFIED {}", o.metadata.name.unwrap()))
            }
            Some(WatchEvent::Deleted(o)) => {
                replayed.push(format!("DELETED {}", o.metadata.name.unwrap()))
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(replayed, ["DELETED cs-0", "MODIFIED cs-3", "ADDED cs-9"]);
    // A token whose version left the history is 410 Expired, and the client starts over.
    store.compact();
    bump(&store, "cs-4", 1);
    let err = api
        .list(&ListParams::default().limit(10).continue_token(&token))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 410 && s.reason == "Expired"),
        "{err}"
    );
}
