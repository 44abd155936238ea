//! The embedded cluster at scale (harness = false): the store's memory per pod and the time to
//! create N pods and walk each through the status writes a kubelet makes, at 10,000 pods (and
//! 100,000 with `KRUISE_TUI_BENCH_100K=1`).
//!
//! A counting global allocator measures live heap bytes. The pods have the demo's bulk shape
//! (a CloneSet's pod with its two managedFields entries, about 4.7 KB of JSON): each is created,
//! bound, started and made ready through the store (four events each), as `demo-server --pods`
//! does through the API. Reported: heap per pod held by the store (objects, indexes and the
//! bounded event window), the window's size, the JSON per pod, and for comparison what the same
//! pod costs as a typed k8s-openapi `Pod` (what a kube-rs reflector cache holds).
//! Run: `cargo bench --bench cluster_scale` (or `cargo test --bench cluster_scale` for a quick
//! unoptimised run). Figures only; nothing is asserted.

use std::{hint::black_box, time::Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::{cluster::server::Store, kruise::KruiseVersion};
use serde_json::{Value, json};

#[path = "support/counting.rs"]
mod counting;

use counting::{Counting, live};

#[global_allocator]
static ALLOC: Counting = Counting;

fn mib(bytes: isize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

const TS: &str = "2026-11-27T16:51:21Z";

/// A bulk CloneSet's pod as the controller creates it (managedFields of its create included).
fn pod(i: usize) -> Value {
    let set = i / 100;
    let name = format!("bulk-{set:03}");
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{name}-{i:06x}"), "generateName": format!("{name}-"),
            "namespace": format!("demo-scale-{}", set / 10),
            "annotations": {"lifecycle.apps.kruise.io/timestamp": TS},
            "labels": {"app": name, "apps.kruise.io/cloneset-instance-id": format!("{i:06x}"),
                "controller-revision-hash": format!("{name}-85ddd87c64"),
                "lifecycle.apps.kruise.io/state": "Normal", "pod-template-hash": "85ddd87c64"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "blockOwnerDeletion": true,
                "controller": true, "kind": "CloneSet", "name": name,
                "uid": format!("c62b3310-5883-48db-8027-{set:012}")}],
            "managedFields": [{"manager": "kruise-tui-controllers", "operation": "Update", "apiVersion": "v1",
                "time": TS, "fieldsType": "FieldsV1", "fieldsV1": {
                "f:metadata": {"f:annotations": {".": {}, "f:lifecycle.apps.kruise.io/timestamp": {}},
                    "f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:apps.kruise.io/cloneset-instance-id": {},
                    "f:controller-revision-hash": {}, "f:lifecycle.apps.kruise.io/state": {}, "f:pod-template-hash": {}},
                    "f:ownerReferences": {".": {}, "k:{\"uid\":\"c62b3310-5883-48db-8027-442e253140bd\"}": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}},
                    "f:readinessGates": {}}}}]
        },
        "spec": {
            "containers": [{"name": "app", "image": "nginx:1.25.4", "imagePullPolicy": "IfNotPresent",
                "resources": {}, "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"}],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0, "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {},
            "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}]
        },
        "status": {"phase": "Pending", "qosClass": "BestEffort"}
    })
}

/// The pod after the kubelet's status write number `step` (1 bound, 2 started, 3 ready).
fn step(mut v: Value, i: usize, step: usize) -> Value {
    v["metadata"]
        .as_object_mut()
        .map(|m| m.remove("resourceVersion"));
    v["spec"]["nodeName"] = json!(format!("sim-node-{}", i % 53));
    let ready = if step >= 3 { "True" } else { "False" };
    v["status"] = json!({
        "phase": if step >= 2 { "Running" } else { "Pending" },
        "hostIP": "10.240.0.3", "podIP": format!("10.244.{}.{}", i / 250 % 250, i % 250),
        "podIPs": [{"ip": format!("10.244.{}.{}", i / 250 % 250, i % 250)}],
        "qosClass": "BestEffort", "startTime": TS,
        "conditions": [
            {"type": "InPlaceUpdateReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": TS},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": TS},
            {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": TS},
            {"type": "ContainersReady", "status": ready, "lastProbeTime": null, "lastTransitionTime": TS},
            {"type": "Ready", "status": ready, "lastProbeTime": null, "lastTransitionTime": TS}],
        "containerStatuses": [{"name": "app", "image": "nginx:1.25.4", "imageID": "docker.io/library/nginx@sha256:0123",
            "containerID": format!("containerd://{i:064x}"), "ready": step >= 3, "restartCount": 0, "started": step >= 2,
            "state": if step >= 2 { json!({"running": {"startedAt": TS}}) } else { json!({"waiting": {"reason": "ContainerCreating"}}) },
            "lastState": {}}]
    });
    v
}

fn run(pods: usize) -> anyhow::Result<()> {
    let before = live();
    let store = Store::new(KruiseVersion::V1_9)?;
    for n in 0..pods.div_ceil(1000) {
        store
            .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("demo-scale-{n}")}}))
            .map_err(anyhow::Error::from)?;
    }
    let empty = live();
    let started = Instant::now();
    for i in 0..pods {
        store.create(pod(i)).map_err(anyhow::Error::from)?;
    }
    let created = started.elapsed();
    let mut json_bytes = 0;
    for s in 1..=3 {
        for i in 0..pods {
            let set = i / 100;
            let ns = format!("demo-scale-{}", set / 10);
            let name = format!("bulk-{set:03}-{i:06x}");
            let Some(current) = store.get_value("v1", "Pod", &ns, &name) else {
                continue;
            };
            let next = store
                .update(step(current, i, s))
                .map_err(anyhow::Error::from)?;
            if s == 3 {
                json_bytes += serde_json::to_vec(&next)?.len();
            }
        }
    }
    let walked = started.elapsed();
    let held = live() - empty;
    let (events, window_bytes) = store.event_window();
    println!("{pods} pods in the embedded store:");
    println!(
        "  create: {:.2} s ({:.0} pods/s); create + 3 status writes each: {:.2} s ({:.0} writes/s)",
        created.as_secs_f64(),
        pods as f64 / created.as_secs_f64(),
        walked.as_secs_f64(),
        (4 * pods) as f64 / walked.as_secs_f64()
    );
    println!(
        "  heap held: {:.1} MiB, {:.0} bytes per pod ({:.0} bytes of JSON per pod); empty store {:.1} MiB",
        mib(held),
        held as f64 / pods as f64,
        json_bytes as f64 / pods as f64,
        mib(empty - before)
    );
    println!(
        "  event window: {events} events, {:.1} MiB of object JSON",
        mib(window_bytes as isize)
    );
    // What a kube-rs reflector (the controllers' and the simulator's caches) holds per pod.
    let sample = pods.min(10_000);
    let jsons: Vec<Vec<u8>> = store
        .list_values("v1", "Pod", None)
        .into_iter()
        .take(sample)
        .map(|mut v| {
            v["metadata"]
                .as_object_mut()
                .map(|m| m.remove("managedFields"));
            serde_json::to_vec(&v).unwrap_or_default()
        })
        .collect();
    let typed_before = live();
    let typed: Vec<Pod> = jsons
        .iter()
        .filter_map(|j| serde_json::from_slice(j).ok())
        .collect();
    let typed_bytes = live() - typed_before;
    println!(
        "  for comparison, a typed k8s-openapi Pod (managedFields dropped, as the controllers' and \
         simulator's caches hold it): {:.0} bytes per pod",
        typed_bytes as f64 / typed.len().max(1) as f64
    );
    black_box(typed);
    drop(store);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    run(10_000)?;
    if std::env::var_os("KRUISE_TUI_BENCH_100K").is_some() {
        run(100_000)?;
    } else {
        println!("(set KRUISE_TUI_BENCH_100K=1 for 100,000 pods)");
    }
    Ok(())
}
