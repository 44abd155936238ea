//! Watch semantics of the embedded API server: fan-out without loss or reordering, resume from a
//! resourceVersion, 410 Gone after compaction, initial events with their bookmark, selector
//! transitions, and recovery after the server stops and starts serving again.

use crate::common;

use std::time::Duration;

use common::*;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::json;

fn cm(name: &str, n: usize) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"n": n.to_string()}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_twenty_watchers_ten_thousand_changes() {
    const WATCHERS: usize = 20;
    const CHANGES: usize = 10_000;
    let c = start().await;
    let client = c.client().await.unwrap();
    let store = c.store();
    store.create(cm("counter", 0)).unwrap();
    let rv = store.current_rv().to_string();
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let mut tasks = Vec::new();
    for _ in 0..WATCHERS {
        let stream = api
            .watch(&WatchParams::default().timeout(280), &rv)
            .await
            .unwrap();
        tasks.push(tokio::spawn(async move {
            let mut stream = stream.boxed();
            let mut seen = Vec::with_capacity(CHANGES);
            while seen.len() < CHANGES {
                match stream.try_next().await.unwrap() {
                    Some(WatchEvent::Modified(o)) => {
                        let n: usize = o.data.unwrap()["n"].parse().unwrap();
                        let rv: u64 = o.metadata.resource_version.unwrap().parse().unwrap();
                        seen.push((n, rv));
                    }
                    Some(WatchEvent::Bookmark(_)) => {}
                    other => panic!("unexpected watch event {other:?}"),
                }
            }
            seen
        }));
    }
    for n in 1..=CHANGES {
        store.update(cm("counter", n)).unwrap();
    }
    for t in tasks {
        let seen = tokio::time::timeout(Duration::from_secs(120), t)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(seen.len(), CHANGES);
        for (i, (n, _)) in seen.iter().enumerate() {
            assert_eq!(*n, i + 1, "every change, in order");
        }
        assert!(
            seen.windows(2).all(|w| w[0].1 < w[1].1),
            "resourceVersions increase"
        );
    }
}

#[tokio::test]
async fn resume_from_version_and_gone_after_compaction() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let store = c.store();
    store.create(cm("a", 0)).unwrap();
    let from = store.current_rv().to_string();
    store.update(cm("a", 1)).unwrap();
    store.create(cm("b", 0)).unwrap();
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let mut s = api
        .watch(&WatchParams::default().timeout(5), &from)
        .await
        .unwrap()
        .boxed();
    match s.try_next().await.unwrap() {
        Some(WatchEvent::Modified(o)) => assert_eq!(o.data.unwrap()["n"], "1"),
        other => panic!("expected the replayed change, got {other:?}"),
    }
    match s.try_next().await.unwrap() {
        Some(WatchEvent::Added(o)) => assert_eq!(o.metadata.name.as_deref(), Some("b")),
        other => panic!("expected the replayed add, got {other:?}"),
    }

    store.compact();
    let mut s = api
        .watch(&WatchParams::default().timeout(5), &from)
        .await
        .unwrap()
        .boxed();
    match s.try_next().await.unwrap() {
        Some(WatchEvent::Error(e)) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
        }
        other => panic!("expected 410 Gone, got {other:?}"),
    }
}

#[tokio::test]
async fn initial_events_end_with_a_bookmark() {
    let c = start().await;
    let client = c.client().await.unwrap();
    c.store().create(cm("a", 0)).unwrap();
    c.store().create(cm("b", 0)).unwrap();
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let wp = WatchParams::default().initial_events().timeout(5);
    let mut s = api.watch(&wp, "").await.unwrap().boxed();
    let mut added = 0;
    loop {
        match s.try_next().await.unwrap() {
            // Every namespace also holds its kube-root-ca.crt, as on a real cluster.
            Some(WatchEvent::Added(o))
                if o.metadata.name.as_deref() == Some("kube-root-ca.crt") => {}
            Some(WatchEvent::Added(_)) => added += 1,
            Some(WatchEvent::Bookmark(b)) => {
                assert_eq!(
                    b.metadata
                        .annotations
                        .get("k8s.io/initial-events-end")
                        .map(String::as_str),
                    Some("true")
                );
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(added, 2);
}

#[tokio::test]
async fn selector_watch_sees_objects_leave_and_enter() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let store = c.store();
    store.create(pod_json("p", json!({"app": "web"}))).unwrap();
    let rv = store.current_rv().to_string();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let mut s = pods
        .watch(&WatchParams::default().labels("app=web").timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    // Out of the selector, then back in.
    for app in ["db", "web"] {
        pods.patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app": app}}})),
        )
        .await
        .unwrap();
    }
    assert!(matches!(
        s.try_next().await.unwrap(),
        Some(WatchEvent::Deleted(_))
    ));
    assert!(matches!(
        s.try_next().await.unwrap(),
        Some(WatchEvent::Added(_))
    ));
}

#[tokio::test]
async fn watchers_recover_after_an_outage() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    api.create(
        &PostParams::default(),
        &serde_json::from_value(cm("x", 0)).unwrap(),
    )
    .await
    .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let w = watcher(api.clone(), watcher::Config::default()).applied_objects();
    let task = tokio::spawn(async move {
        let mut w = w.boxed();
        while let Some(ev) = w.next().await {
            // (Not the namespace's kube-root-ca.crt, which every namespace holds.)
            if let Ok(o) = ev
                && o.metadata.name.as_deref() != Some("kube-root-ca.crt")
            {
                let _ = tx.send(
                    o.data
                        .unwrap_or_default()
                        .get("n")
                        .cloned()
                        .unwrap_or_default(),
                );
            }
        }
    });
    let first = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap();
    assert_eq!(first.as_deref(), Some("0"));

    c.stop_serving().await;
    assert!(
        api.list(&ListParams::default()).await.is_err(),
        "nothing is served"
    );
    c.store().update(cm("x", 1)).unwrap();
    c.start_serving().await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if rx.recv().await.as_deref() == Some("1") {
                return true;
            }
        }
    })
    .await;
    assert_eq!(
        got,
        Ok(true),
        "the watcher saw the change made during the outage"
    );
    task.abort();
}

#[tokio::test]
async fn metadata_only_lists_and_watches() {
    let c = start().await;
    let client = c.client().await.unwrap();
    c.store()
        .create(pod_json("p", json!({"app": "web"})))
        .unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client);
    let l = pods.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(l.items.len(), 1);
    assert_eq!(l.items[0].metadata.labels.as_ref().unwrap()["app"], "web");
    assert_eq!(
        l.items[0].types.as_ref().unwrap().kind,
        "PartialObjectMetadata"
    );
    let m = pods.get_metadata("p").await.unwrap();
    assert_eq!(m.metadata.name.as_deref(), Some("p"));
    let rv = c.store().current_rv().to_string();
    let mut s = pods
        .watch_metadata(&WatchParams::default().timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    c.store().create(pod_json("q", json!({}))).unwrap();
    match s.try_next().await.unwrap() {
        Some(WatchEvent::Added(o)) => {
            assert_eq!(o.metadata.name.as_deref(), Some("q"));
            assert_eq!(o.types.unwrap().kind, "PartialObjectMetadata");
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// Shutdown while watchers are connected, one of which reads nothing (its socket fills, so the
/// server's watch task is blocked sending): the demo cluster stops (the controllers' and the
/// simulator's watches included), and the silent watcher's connection is closed rather than
/// left open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_completes_while_watchers_are_connected() {
    use kruise_tui::cluster::demo::{DemoCluster, DemoOptions};
    use std::io::{Read as _, Write as _};

    let dir = tempfile::tempdir().unwrap();
    let demo = DemoCluster::start(DemoOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        kubeconfig_out: dir.path().join("kc"),
        pods: None,
        seed: true,
        nodes: true,
        controllers: true,
        kruise_webhooks: true,
        remove_kubeconfig: true,
        kruise_version: kruise_tui::kruise::KruiseVersion::V1_9,
        kruise_rollout: true,
        streaming_lists: true,
        metrics: true,
    })
    .await
    .unwrap();
    let client = demo.client().await.unwrap();
    // A watcher that reads: a kube-rs watcher over every pod.
    let pods: Api<Pod> = Api::all(client.clone());
    let reader = tokio::spawn(async move {
        let mut s = watcher(pods, watcher::Config::default())
            .default_backoff()
            .boxed();
        while s.next().await.is_some() {}
    });
    // A watcher that reads nothing, over plain HTTP with the token; lots of changes follow.
    let port = demo.url().rsplit(':').next().unwrap().to_owned();
    let token = demo.cluster().token().to_owned();
    let mut silent = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    write!(
        silent,
        "GET /api/v1/configmaps?watch=true HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    let store = demo.cluster().store();
    // 16 MB in all: more than the socket buffers hold, less than the watch window (so the
    // watcher is not closed for lagging before the shutdown).
    let big = "x".repeat(16 * 1024);
    for n in 0..1_000 {
        store
            .create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("load-{n}"), "namespace": "default"},
                "data": {"big": big}}))
            .unwrap();
    }
    tokio::time::timeout(Duration::from_secs(60), demo.shutdown())
        .await
        .expect("shutdown completes while watchers are connected");
    // The silent watcher's connection ends: reading it to the end finishes.
    silent
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut sink = Vec::new();
    let read = silent.read_to_end(&mut sink);
    assert!(
        read.is_ok(),
        "the silent watcher's connection is closed: {read:?}"
    );
    assert!(sink.starts_with(b"HTTP/1.1 200"));
    reader.abort();
}
