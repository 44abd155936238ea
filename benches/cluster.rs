//! Embedded API server benchmarks (std::time, no harness): seeding 10,000 pods in-process, a full
//! LIST of them through the kube client (server + client time, bytes), a paged LIST (limit=500),
//! and watch throughput (events/s) to 1 and 20 watchers.
//!
//! Run: `cargo bench --bench cluster` (or `cargo test --bench cluster` for a quick debug-profile run).

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kruise_tui::cluster::server::{EmbeddedCluster, ServerOptions};
use kube::{
    Api,
    api::{ListParams, WatchEvent, WatchParams},
};
use serde_json::json;

const PODS: usize = 10_000;

fn pod(i: usize) -> serde_json::Value {
    let ns = format!("ns-{}", i % 10);
    let owner = format!("cs-{}", i % 100);
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{owner}-{i:05}"), "namespace": ns,
            "labels": {"app": owner, "apps.kruise.io/cloneset-instance-id": format!("{i:05}"),
                "controller-revision-hash": format!("{owner}-7d9f8b6c5")},
            "annotations": {"apps.kruise.io/runtime-containers-meta": "{}"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": owner,
                "uid": format!("00000000-0000-4000-8000-{i:012}"), "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "nodeName": format!("node-{}", i % 20),
            "containers": [{"name": "main", "image": "nginx:1.25", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 5}}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30
        },
        "status": {
            "phase": "Running", "podIP": format!("10.0.{}.{}", i / 250, i % 250), "hostIP": "192.168.0.1",
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"}],
            "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0, "image": "nginx:1.25",
                "imageID": "docker.io/library/nginx@sha256:abc", "started": true,
                "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]
        }
    })
}

/// Resident set size from /proc (Linux), in MiB.
fn rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|k| k.parse::<u64>().ok())
            })
        })
        .map(|kb| kb / 1024)
        .unwrap_or(0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn watch_throughput(c: &EmbeddedCluster, watchers: usize, changes: usize) -> f64 {
    let client = c.client().await.expect("client");
    let store = c.store();
    store
        .create(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("bench-{watchers}"), "namespace": "default"}}))
        .expect("configmap");
    let rv = store.current_rv().to_string();
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let mut tasks = Vec::new();
    for _ in 0..watchers {
        let s = api
            .watch(
                &WatchParams::default().fields(&format!("metadata.name=bench-{watchers}")),
                &rv,
            )
            .await
            .expect("watch");
        tasks.push(tokio::spawn(async move {
            let mut s = s.boxed();
            let mut n = 0;
            while n < changes {
                match s.try_next().await {
                    Ok(Some(WatchEvent::Modified(_))) => n += 1,
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
            n
        }));
    }
    let started = Instant::now();
    for i in 0..changes {
        store
            .update(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("bench-{watchers}"), "namespace": "default"}, "data": {"i": i.to_string()}}))
            .expect("update");
    }
    let mut delivered = 0;
    for t in tasks {
        delivered += t.await.unwrap_or(0);
    }
    delivered as f64 / started.elapsed().as_secs_f64()
}

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let c = EmbeddedCluster::start(ServerOptions::default()).await?;
        let store = c.store();
        for n in 0..10 {
            store
                .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("ns-{n}")}}))
                .map_err(anyhow::Error::from)?;
        }
        let rss_before = rss_mib();
        let started = Instant::now();
        for i in 0..PODS {
            store.create(pod(i)).map_err(anyhow::Error::from)?;
        }
        let seed = started.elapsed();
        println!("seed {PODS} pods in-process: {:.0} ms ({:.0} pods/s)", seed.as_secs_f64() * 1e3, PODS as f64 / seed.as_secs_f64());
        println!("process RSS: {rss_before} MiB before seeding, {} MiB after", rss_mib());

        let client = c.client().await?;
        let mut raw_times = Vec::new();
        let mut bytes = 0;
        for _ in 0..5 {
            let req = http::Request::get("/api/v1/pods").body(Vec::new())?;
            let t = Instant::now();
            let text = client.request_text(req).await?;
            raw_times.push(t.elapsed());
            bytes = text.len();
        }
        println!(
            "LIST {PODS} pods, raw bytes (server + transfer): median {:.0} ms, {:.1} MiB",
            median(raw_times).as_secs_f64() * 1e3,
            bytes as f64 / (1024.0 * 1024.0)
        );

        let pods: Api<Pod> = Api::all(client.clone());
        let mut typed = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let l = pods.list(&ListParams::default()).await?;
            typed.push(t.elapsed());
            assert_eq!(l.items.len(), PODS);
        }
        println!("LIST {PODS} pods into k8s-openapi Pods (kube client): median {:.0} ms", median(typed).as_secs_f64() * 1e3);

        let t = Instant::now();
        let first = pods.list(&ListParams::default().limit(500)).await?;
        let first_page = t.elapsed();
        let mut total = first.items.len();
        let mut token = first.metadata.continue_;
        while let Some(tok) = token.filter(|t| !t.is_empty()) {
            let page = pods.list(&ListParams::default().limit(500).continue_token(&tok)).await?;
            total += page.items.len();
            token = page.metadata.continue_;
        }
        println!(
            "paged LIST limit=500: first page {:.1} ms, all {total} pods {:.0} ms",
            first_page.as_secs_f64() * 1e3,
            t.elapsed().as_secs_f64() * 1e3
        );

        let sel = Instant::now();
        let l = pods.list(&ListParams::default().labels("app=cs-7")).await?;
        println!("LIST labelSelector app=cs-7 ({} of {PODS}): {:.1} ms", l.items.len(), sel.elapsed().as_secs_f64() * 1e3);

        println!("watch, 1 watcher: {:.0} events/s", watch_throughput(&c, 1, 20_000).await);
        println!("watch, 20 watchers: {:.0} events/s delivered in all", watch_throughput(&c, 20, 5_000).await);
        c.shutdown().await;
        Ok(())
    })
}
