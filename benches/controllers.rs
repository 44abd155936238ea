//! The embedded controllers at scale (std::time, no harness), in one process as `demo-server`
//! runs them (API server, simulated nodes, controllers):
//! - `demo-server --pods 10000`: time until it serves with the story played (what prints
//!   `ready`), then until every pod is Ready; idle CPU once converged; RSS;
//! - a 1,000-replica CloneSet: time to create it and to roll an image change through it.
//!
//! Run: `cargo bench --bench controllers` (or `cargo test --bench controllers` for a quick
//! debug-profile run with fewer pods).

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::{
    api::CloneSet,
    cluster::demo::{DemoCluster, DemoOptions},
};
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

/// Resident set size and CPU time (user + system, seconds) of this process, from /proc.
fn rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

fn cpu_seconds() -> f64 {
    // Fields 14 and 15 of /proc/self/stat: utime and stime in clock ticks (100 per second).
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1;
            let fields: Vec<&str> = after.split_whitespace().collect();
            let utime: f64 = fields.get(11)?.parse().ok()?;
            let stime: f64 = fields.get(12)?.parse().ok()?;
            Some((utime + stime) / 100.0)
        })
        .unwrap_or(0.0)
}

fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

async fn ready_pods(client: &Client) -> (usize, usize) {
    let api: Api<Pod> = Api::all(client.clone());
    match api.list(&ListParams::default()).await {
        Ok(list) => (
            list.items.iter().filter(|p| ready(p)).count(),
            list.items.len(),
        ),
        Err(_) => (0, 0),
    }
}

async fn wait_until<F, Fut>(what: &str, limit: Duration, mut done: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while started.elapsed() < limit {
        if done().await {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    println!("  ({what}: not reached within {limit:?})");
    started.elapsed()
}

fn main() -> anyhow::Result<()> {
    // `cargo test --bench controllers` passes `--bench`-less args: a quick, smaller run.
    let quick = !std::env::args().any(|a| a == "--bench");
    let pods = if quick { 600 } else { 10_000 };
    let big = if quick { 100 } else { 1_000 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let dir = tempfile::tempdir()?;
        let started = Instant::now();
        let demo = DemoCluster::start(DemoOptions {
            listen: "127.0.0.1:0".parse()?,
            kubeconfig_out: dir.path().join("kubeconfig"),
            pods: Some(pods),
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
        .await?;
        let serving = started.elapsed();
        println!(
            "demo-server --pods {pods}: serving with the story played in {:.2} s",
            serving.as_secs_f64()
        );
        let client = demo.client().await?;
        // The story holds about `pods` pods (plus one daemon pod per node); every one Ready,
        // but for the crash-looping checkout pod.
        let all_ready = wait_until("every pod Ready", Duration::from_secs(600), || {
            let client = client.clone();
            async move {
                let (ready, total) = ready_pods(&client).await;
                total >= pods && ready + 1 >= total
            }
        })
        .await;
        let (ready, total) = ready_pods(&client).await;
        println!(
            "  {ready}/{total} pods Ready {:.1} s after serving ({:.1} s from start)",
            all_ready.as_secs_f64(),
            (serving + all_ready).as_secs_f64()
        );
        // Let the last statuses settle, then measure idle.
        tokio::time::sleep(Duration::from_secs(20)).await;
        let cpu0 = cpu_seconds();
        let idle_window = Duration::from_secs(30);
        tokio::time::sleep(idle_window).await;
        let idle = (cpu_seconds() - cpu0) / idle_window.as_secs_f64() * 100.0;
        println!(
            "  idle: {idle:.2} % of one core over {}s (server + simulated nodes + controllers); RSS {} MiB",
            idle_window.as_secs(),
            rss_mib()
        );

        // A 1,000-replica CloneSet: created, then an image change rolled through it in place.
        let cs: CloneSet = serde_json::from_value(json!({
            "metadata": {"name": "big", "namespace": "default"},
            "spec": {
                "replicas": big,
                "selector": {"matchLabels": {"app": "big"}},
                "template": {"metadata": {"labels": {"app": "big"}},
                             "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}},
                "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "20%"},
            },
        }))?;
        let api: Api<CloneSet> = Api::namespaced(client.clone(), "default");
        let status = |api: Api<CloneSet>| async move {
            api.get("big")
                .await
                .ok()
                .and_then(|c| c.status)
                .unwrap_or_default()
        };
        api.create(&PostParams::default(), &cs).await?;
        let created = wait_until("big ready", Duration::from_secs(600), || {
            let api = api.clone();
            async move { status(api).await.ready_replicas == big }
        })
        .await;
        println!(
            "CloneSet of {big}: all ready {:.1} s after create",
            created.as_secs_f64()
        );
        let before = status(api.clone()).await.update_revision;
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}});
        api.patch("big", &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        let rolled = wait_until("big rolled", Duration::from_secs(900), || {
            let api = api.clone();
            let before = before.clone();
            async move {
                let s = status(api).await;
                s.update_revision != before
                    && s.updated_ready_replicas == big
                    && s.current_revision == s.update_revision
            }
        })
        .await;
        println!(
            "  image change (in place, maxUnavailable 20%) converged in {:.1} s",
            rolled.as_secs_f64()
        );
        demo.shutdown().await;
        anyhow::Ok(())
    })
}
