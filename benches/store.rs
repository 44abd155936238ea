//! Pod store benchmark (harness = false): how much memory a pod takes in the console's store,
//! and how fast watch events are applied.
//!
//! A counting global allocator measures live heap bytes. 10,000 kubectl-like pods (~4 KB of
//! JSON each, managedFields included) are deserialized straight into the compact `SlimPod` (as
//! the watch's `WatchedPod`) and fed through the kube layer's `PodFeed` into the console's pod
//! store (the path the pod watch takes); then the app's pod rows are built from the store. The
//! same pods as full k8s-openapi `Pod`s in a plain reflector store are the comparison.
//! Run: `cargo bench --bench store` (or `cargo test --bench store` for an unoptimised run).

use std::{hint::black_box, time::Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::{
    api::{SlimPod, pod::WatchedPod},
    app::{
        rows::build_pods,
        stores::{OncallStores, Stores, pod_store},
    },
    kube::watch::{Feed, PodFeed},
};
use kube::runtime::{reflector, watcher::Event};
use serde_json::json;

#[path = "support/counting.rs"]
mod counting;

use counting::{Counting, live};

#[global_allocator]
static ALLOC: Counting = Counting;

const PODS: usize = 10_000;

/// A pod as `kubectl get pod -o json` shows one from a CloneSet with a sidecar.
fn pod_json(i: usize, generation: usize) -> String {
    let name = format!("web-{i:05}-x7k2p");
    let ts = "2026-01-01T00:00:00Z";
    let container = |n: &str, image: &str| {
        json!({
            "name": n, "image": image, "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                    {"name": "LOG_LEVEL", "value": "info"}],
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                               "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-abcde", "readOnly": true}],
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"
        })
    };
    let status = |n: &str, image: &str| {
        json!({"name": n, "image": image, "imageID": format!("docker.io/library/{image}@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
               "containerID": format!("containerd://{:064x}", i), "ready": true, "restartCount": generation % 3, "started": true,
               "state": {"running": {"startedAt": ts}}, "lastState": {}})
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": format!("team-{}", i % 100), "uid": format!("{:08x}-1111-2222-3333-{:012x}", i, i),
            "resourceVersion": format!("{}", 100_000 + i * 7 + generation), "creationTimestamp": ts, "generateName": "web-",
            "labels": {"app": "web", "controller-revision-hash": "web-7d9f8c6b5", "apps.kruise.io/cloneset-instance-id": "x7k2p",
                       "lifecycle.apps.kruise.io/state": "Normal"},
            "annotations": {"apps.kruise.io/inplace-update-state": "{\"revision\":\"web-7d9f8c6b5\",\"updateTimestamp\":\"2026-01-01T00:00:00Z\"}",
                            "kruise.io/sidecarset-hash": "{\"log-agent\":{\"hash\":\"4x8v\",\"sidecarSetName\":\"log-agent\"}}"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web",
                                 "uid": "5f2c1e9a-1111-2222-3333-444455556666", "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                {"manager": "kruise-manager", "operation": "Update", "apiVersion": "v1", "time": ts, "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:apps.kruise.io/inplace-update-state": {}},
                              "f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:controller-revision-hash": {}},
                              "f:ownerReferences": {".": {}, "k:{\"uid\":\"5f2c1e9a-1111-2222-3333-444455556666\"}": {}}},
                              "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {},
                                         "f:name": {}, "f:ports": {}, "f:readinessProbe": {}, "f:resources": {}}},
                                         "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": ts, "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"ContainersReady\"}": {".": {}, "f:lastProbeTime": {}, "f:status": {}, "f:type": {}},
                                                             "k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {}, "f:status": {}, "f:type": {}}},
                                           "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}}}
            ]
        },
        "spec": {
            "containers": [container("main", "nginx:1.25.3"), container("log-agent", "fluent-bit:2.2")],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": true, "nodeName": format!("node-{}", i % 50),
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access-abcde", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}]
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.1.5", "podIP": format!("10.244.{}.{}", i / 250, i % 250),
            "podIPs": [{"ip": format!("10.244.{}.{}", i / 250, i % 250)}], "qosClass": "Burstable", "startTime": ts,
            "conditions": [
                {"type": "InPlaceUpdateReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": ts},
                {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": ts},
                {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": ts},
                {"type": "ContainersReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": ts},
                {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": ts}],
            "containerStatuses": [status("main", "nginx:1.25.3"), status("log-agent", "fluent-bit:2.2")]
        }
    })
    .to_string()
}

fn mib(bytes: isize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let jsons: Vec<String> = (0..PODS).map(|i| pod_json(i, 0)).collect();
    let json_bytes: usize = jsons.iter().map(String::len).sum();
    println!(
        "{PODS} pods, {:.0} bytes of JSON per pod on average",
        json_bytes as f64 / PODS as f64
    );

    // SlimPod through the kube layer's PodFeed (first list: Init, InitApply..., InitDone).
    let before = live();
    let started = Instant::now();
    let (pod_reader, writer) = pod_store();
    let mut feed = PodFeed::new(writer);
    feed.apply(Event::Init);
    for json in &jsons {
        let pod: WatchedPod = serde_json::from_str(json).expect("bench pod JSON is valid");
        feed.apply(Event::InitApply(pod));
    }
    feed.apply(Event::InitDone);
    let list_time = started.elapsed();
    black_box(feed.take_changes());
    let slim_bytes = live() - before;
    assert_eq!(pod_reader.len(), PODS);
    println!(
        "SlimPod store:       {:>7.0} bytes/pod ({:.1} MiB for {PODS}); initial list applied in {:.1} ms ({:.1} µs/pod, deserialize + store)",
        slim_bytes as f64 / PODS as f64,
        mib(slim_bytes),
        list_time.as_secs_f64() * 1e3,
        list_time.as_secs_f64() * 1e6 / PODS as f64
    );

    // The app's pod rows over that store (what the Pods view and the indexes read).
    let (clonesets, _) = reflector::store();
    let (statefulsets, _) = reflector::store();
    let (daemonsets, _) = reflector::store();
    let stores = Stores {
        clonesets,
        statefulsets,
        daemonsets,
        pods: pod_reader.clone(),
        oncall: OncallStores::new().0,
    };
    let before = live();
    let started = Instant::now();
    let rows = build_pods(&stores, None, &[]);
    let rows_time = started.elapsed();
    let rows_bytes = live() - before;
    println!(
        "pod rows:            {:>7.0} bytes/pod ({:.1} MiB); built in {:.1} ms",
        rows_bytes as f64 / PODS as f64,
        mib(rows_bytes),
        rows_time.as_secs_f64() * 1e3
    );
    println!(
        "store + rows:        {:>7.0} bytes/pod",
        (slim_bytes + rows_bytes) as f64 / PODS as f64
    );

    // Where a SlimPod's bytes go: each part cloned on its own, for every pod (shared strings
    // cost a reference count, not a copy, so this counts each pod's own allocations).
    let pods: Vec<std::sync::Arc<SlimPod>> = pod_reader.state();
    let part = |name: &str, f: &dyn Fn(&SlimPod) -> Box<dyn std::any::Any>| {
        let before = live();
        let parts: Vec<Box<dyn std::any::Any>> = pods.iter().map(|p| f(p)).collect();
        let bytes =
            live() - before - (PODS * std::mem::size_of::<Box<dyn std::any::Any>>()) as isize;
        drop(parts);
        println!("  {name:<28} {:>6.0} bytes/pod", bytes as f64 / PODS as f64);
    };
    println!(
        "  SlimPod itself (inline)      {:>6} bytes/pod",
        std::mem::size_of::<SlimPod>()
    );
    part("metadata (whole)", &|p| Box::new(p.metadata.clone()));
    part("metadata.labels", &|p| Box::new(p.metadata.labels.clone()));
    part("metadata.annotations", &|p| {
        Box::new(p.metadata.annotations.clone())
    });
    part("metadata.ownerReferences", &|p| {
        Box::new(p.metadata.owner_references.clone())
    });
    part("spec", &|p| Box::new(p.spec.clone()));
    part("status (whole)", &|p| Box::new(p.status.clone()));
    part("status.conditions", &|p| {
        Box::new(p.status.conditions.clone())
    });
    part("status.containerStatuses", &|p| {
        Box::new(p.status.container_statuses.clone())
    });
    drop(pods);
    println!(
        "interned strings: {}",
        kruise_tui::api::pod::intern::interned()
    );

    // Full k8s-openapi Pods (what a console storing whole pods holds), managedFields kept.
    let before = live();
    let (full_store, mut full_writer) = reflector::store::<Pod>();
    full_writer.apply_watcher_event(&Event::Init);
    for json in &jsons {
        let pod: Pod = serde_json::from_str(json).expect("bench pod JSON is valid");
        full_writer.apply_watcher_event(&Event::InitApply(pod));
    }
    full_writer.apply_watcher_event(&Event::InitDone);
    let full_bytes = live() - before;
    assert_eq!(full_store.len(), PODS);
    println!(
        "full Pod store:      {:>7.0} bytes/pod ({:.1} MiB for {PODS})",
        full_bytes as f64 / PODS as f64,
        mib(full_bytes)
    );
    println!(
        "SlimPod takes {:.1} % of a full Pod",
        100.0 * slim_bytes as f64 / full_bytes as f64
    );
    drop(full_store);
    drop(full_writer);

    // 10,000 watch events (MODIFIED), each deserialized and applied as the pod watch does.
    let updates: Vec<String> = (0..PODS).map(|i| pod_json(i, 1)).collect();
    let started = Instant::now();
    for json in &updates {
        let pod: WatchedPod = serde_json::from_str(json).expect("bench pod JSON is valid");
        black_box(feed.apply(Event::Apply(pod)));
    }
    let elapsed = started.elapsed();
    println!(
        "10,000 watch events: {:.1} ms ({:.1} µs/event, deserialize + apply)",
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e6 / PODS as f64
    );
    black_box(feed.take_changes());

    // Applying only (objects already decoded): the store's own cost.
    let decoded: Vec<WatchedPod> = updates
        .iter()
        .map(|json| serde_json::from_str(json).expect("bench pod JSON is valid"))
        .collect();
    let started = Instant::now();
    for pod in decoded {
        black_box(feed.apply(Event::Apply(pod)));
    }
    let elapsed = started.elapsed();
    println!(
        "10,000 store applies: {:.1} ms ({:.2} µs/event, apply only)",
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e6 / PODS as f64
    );
    assert_eq!(pod_reader.len(), PODS);
    drop(rows);
}
