//! The simulated nodes against the embedded API server, through the kube client: scheduling
//! (nodeSelector, taints/tolerations), Pending → Running → Ready, crash loops, in-place image
//! changes.

use std::time::Duration;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{Container, Node, Pod, PodSpec, Toleration};
use kruise_tui::cluster::{
    server::{EmbeddedCluster, ServerOptions},
    sim::{self, SimOptions, kubelet::Timing},
};
use kube::{
    Api, Client,
    api::{ObjectMeta, Patch, PatchParams, PostParams},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Harness {
    cluster: EmbeddedCluster,
    client: Client,
    stop: CancellationToken,
    sim: tokio::task::JoinHandle<anyhow::Result<()>>,
}

async fn start() -> Harness {
    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .unwrap();
    let client = cluster.client().await.unwrap();
    let stop = CancellationToken::new();
    let timing = Timing {
        crash_after: SignedDuration::from_secs(1),
        backoff_base: SignedDuration::from_secs(1),
        backoff_max: SignedDuration::from_secs(2),
        ..Timing::default()
    };
    let opts = SimOptions {
        nodes: 3,
        timing,
        heartbeat: Duration::from_secs(2),
        lease_renew: Duration::from_millis(500),
        ..SimOptions::default()
    };
    let sim = tokio::spawn(sim::run(client.clone(), opts, stop.clone()));
    // The nodes are registered before the loop starts; wait for them.
    let nodes: Api<Node> = Api::all(client.clone());
    wait_for(|| async {
        nodes
            .list(&Default::default())
            .await
            .map(|l| l.items.len() == 3)
            .unwrap_or(false)
    })
    .await;
    Harness {
        cluster,
        client,
        stop,
        sim,
    }
}

impl Harness {
    async fn finish(self) {
        self.stop.cancel();
        self.sim.await.unwrap().unwrap();
        self.cluster.shutdown().await;
    }
}

/// Polls `check` every 100 ms for up to 60 s.
async fn wait_for<F, Fut>(mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..600 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("condition not reached in 60 s");
}

fn pod(name: &str, containers: &[(&str, &str)], spec: PodSpec) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: containers
                .iter()
                .map(|(n, i)| Container {
                    name: (*n).into(),
                    image: Some((*i).into()),
                    ..Default::default()
                })
                .collect(),
            ..spec
        }),
        status: None,
    }
}

fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn node_of(p: &Pod) -> Option<&str> {
    p.spec.as_ref()?.node_name.as_deref()
}

async fn get(api: &Api<Pod>, name: &str) -> Pod {
    api.get(name).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_are_scheduled_by_selector_and_taints_and_become_ready() {
    let h = start().await;
    let nodes: Api<Node> = Api::all(h.client.clone());
    let taint =
        json!({"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}});
    nodes
        .patch("sim-node-2", &PatchParams::default(), &Patch::Merge(&taint))
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(h.client.clone(), "default");
    let on_node_2 = |tolerate: bool| PodSpec {
        node_selector: Some(
            [("kubernetes.io/hostname".to_owned(), "sim-node-2".to_owned())].into(),
        ),
        tolerations: tolerate.then(|| {
            vec![Toleration {
                key: Some("dedicated".into()),
                operator: Some("Equal".into()),
                value: Some("db".into()),
                effect: Some("NoSchedule".into()),
                ..Default::default()
            }]
        }),
        ..Default::default()
    };
    let zone_b = PodSpec {
        node_selector: Some(
            [(
                "topology.kubernetes.io/zone".to_owned(),
                "zone-b".to_owned(),
            )]
            .into(),
        ),
        ..Default::default()
    };
    let pp = PostParams::default();
    pods.create(&pp, &pod("zoned", &[("app", "nginx:1.25")], zone_b))
        .await
        .unwrap();
    pods.create(
        &pp,
        &pod("tolerant", &[("app", "nginx:1.25")], on_node_2(true)),
    )
    .await
    .unwrap();
    pods.create(
        &pp,
        &pod("anywhere", &[("app", "nginx:1.25")], PodSpec::default()),
    )
    .await
    .unwrap();

    for name in ["zoned", "tolerant", "anywhere"] {
        wait_for(|| async { ready(&get(&pods, name).await) }).await;
    }
    // The simulator learns of the taint through its node watch, a different stream from its pod
    // watch (as a real scheduler's cache does). By now it has scheduled pods created after the
    // taint, so its node cache has the taint too: only then is the intolerant pod created, so a
    // loaded machine cannot reorder the two streams and place it before the taint is seen.
    pods.create(
        &pp,
        &pod("intolerant", &[("app", "nginx:1.25")], on_node_2(false)),
    )
    .await
    .unwrap();
    assert_eq!(node_of(&get(&pods, "zoned").await), Some("sim-node-1"));
    assert_eq!(node_of(&get(&pods, "tolerant").await), Some("sim-node-2"));
    assert_ne!(
        node_of(&get(&pods, "anywhere").await),
        Some("sim-node-2"),
        "the taint keeps it off"
    );
    let running = get(&pods, "anywhere").await;
    let status = running.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let c = &status.container_statuses.unwrap()[0];
    assert!(c.image_id.starts_with("nginx@sha256:"));
    assert!(
        c.state
            .as_ref()
            .unwrap()
            .running
            .as_ref()
            .unwrap()
            .started_at
            .is_some()
    );

    wait_for(|| async {
        let p = get(&pods, "intolerant").await;
        p.status.and_then(|s| s.conditions).is_some_and(|c| {
            c.iter()
                .any(|c| c.reason.as_deref() == Some("Unschedulable"))
        })
    })
    .await;
    let p = get(&pods, "intolerant").await;
    assert_eq!(node_of(&p), None);
    assert!(!ready(&p));
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_images_climb_restarts_and_image_changes_restart_one_container() {
    let h = start().await;
    let pods: Api<Pod> = Api::namespaced(h.client.clone(), "default");
    let pp = PostParams::default();
    pods.create(
        &pp,
        &pod(
            "crasher",
            &[("app", "example/app:1-crash")],
            PodSpec::default(),
        ),
    )
    .await
    .unwrap();
    pods.create(
        &pp,
        &pod(
            "pair",
            &[("app", "nginx:1.25"), ("side", "busybox:1.36")],
            PodSpec::default(),
        ),
    )
    .await
    .unwrap();

    wait_for(|| async { ready(&get(&pods, "pair").await) }).await;
    let before = get(&pods, "pair")
        .await
        .status
        .unwrap()
        .container_statuses
        .unwrap();
    let patch = json!({"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}});
    pods.patch("pair", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .unwrap();
    wait_for(|| async {
        let p = get(&pods, "pair").await;
        let cs = p
            .status
            .clone()
            .and_then(|s| s.container_statuses)
            .unwrap_or_default();
        ready(&p)
            && cs
                .iter()
                .any(|c| c.name == "app" && c.image == "nginx:1.26" && c.ready)
    })
    .await;
    let after = get(&pods, "pair")
        .await
        .status
        .unwrap()
        .container_statuses
        .unwrap();
    let find = |cs: &[k8s_openapi::api::core::v1::ContainerStatus], n: &str| {
        cs.iter().find(|c| c.name == n).cloned().unwrap()
    };
    let (app0, app1) = (find(&before, "app"), find(&after, "app"));
    assert_eq!(app1.restart_count, app0.restart_count + 1);
    assert_ne!(app1.image_id, app0.image_id);
    assert_ne!(app1.container_id, app0.container_id);
    assert_eq!(
        find(&after, "side"),
        find(&before, "side"),
        "the other container is untouched"
    );

    wait_for(|| async {
        let p = get(&pods, "crasher").await;
        p.status
            .and_then(|s| s.container_statuses)
            .is_some_and(|cs| cs[0].restart_count >= 2)
    })
    .await;
    let p = get(&pods, "crasher").await;
    assert!(!ready(&p), "a crashing container never becomes ready");
    let events: Api<k8s_openapi::api::core::v1::Event> =
        Api::namespaced(h.client.clone(), "default");
    let reasons: Vec<(String, String)> = events
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|e| {
            (
                e.involved_object.name.unwrap_or_default(),
                e.reason.unwrap_or_default(),
            )
        })
        .collect();
    for (pod, reason) in [
        ("crasher", "BackOff"),
        ("crasher", "Scheduled"),
        ("pair", "Killing"),
    ] {
        assert!(
            reasons.iter().any(|(p, r)| p == pod && r == reason),
            "no {reason} event for {pod}: {reasons:?}"
        );
    }
    let c = &p.status.unwrap().container_statuses.unwrap()[0];
    assert_eq!(
        c.last_state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .map(|t| t.exit_code),
        Some(1)
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_pod_stops_its_containers_and_goes_when_its_finalizer_does() {
    let h = start().await;
    let pods: Api<Pod> = Api::namespaced(h.client.clone(), "default");
    let mut held = pod("held", &[("app", "nginx:1.25")], PodSpec::default());
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    pods.create(&PostParams::default(), &held).await.unwrap();
    wait_for(|| async { ready(&get(&pods, "held").await) }).await;

    pods.delete("held", &Default::default()).await.unwrap();
    wait_for(|| async {
        let p = get(&pods, "held").await;
        let stopped = p
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .all(|c| c.state.as_ref().is_some_and(|s| s.terminated.is_some()))
            });
        p.metadata.deletion_timestamp.is_some() && stopped && !ready(&p)
    })
    .await;

    let release = json!({"metadata": {"finalizers": null}});
    pods.patch("held", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .unwrap();
    wait_for(|| async { pods.get_opt("held").await.unwrap().is_none() }).await;
    h.finish().await;
}

/// Like kubelets, the simulated nodes renew a Lease each in kube-node-lease (held by and owned
/// by their Node) and keep the Ready heartbeat fresh, so a node lifecycle controller never
/// finds them unreachable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_renew_their_leases_and_ready_heartbeats() {
    use k8s_openapi::api::coordination::v1::Lease;
    let h = start().await;
    let leases: Api<Lease> = Api::namespaced(h.client.clone(), "kube-node-lease");
    let nodes: Api<Node> = Api::all(h.client.clone());
    let renewed = |l: &Lease| l.spec.as_ref().and_then(|s| s.renew_time.clone());
    let ready_beat = |n: &Node| {
        n.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
            .and_then(|c| c.last_heartbeat_time.clone())
    };
    wait_for(|| async {
        leases
            .list(&Default::default())
            .await
            .is_ok_and(|l| l.items.len() == 3)
    })
    .await;
    let mut first = Vec::new();
    for i in 0..3 {
        let name = format!("sim-node-{i}");
        let lease = leases.get(&name).await.unwrap();
        let node = nodes.get(&name).await.unwrap();
        let spec = lease.spec.clone().unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some(name.as_str()));
        assert_eq!(spec.lease_duration_seconds, Some(40));
        let owner = &lease.metadata.owner_references.clone().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), Some(&owner.uid)),
            ("Node", name.as_str(), node.metadata.uid.as_ref())
        );
        first.push((renewed(&lease).unwrap(), ready_beat(&node).unwrap()));
    }
    for (i, (renew, beat)) in first.into_iter().enumerate() {
        let name = format!("sim-node-{i}");
        wait_for(|| async {
            let lease = leases.get(&name).await.unwrap();
            renewed(&lease).is_some_and(|t| t.0 > renew.0)
        })
        .await;
        wait_for(|| async {
            let node = nodes.get(&name).await.unwrap();
            ready_beat(&node).is_some_and(|t| t.0 > beat.0)
        })
        .await;
    }

    // Someone (a node lifecycle controller) marks a node unreachable: it is Ready again at once,
    // without waiting for the next heartbeat.
    let unknown = json!({"status": {"conditions": [{
        "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
        "message": "Kubelet stopped posting node status.",
    }]}});
    nodes
        .patch_status(
            "sim-node-0",
            &PatchParams::default(),
            &Patch::Strategic(&unknown),
        )
        .await
        .unwrap();
    wait_for(|| async {
        let node = nodes.get("sim-node-0").await.unwrap();
        node.status
            .and_then(|s| s.conditions)
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
    })
    .await;
    h.finish().await;
}

/// A pod deleted by someone else with the default grace period: the simulated kubelet stops its
/// containers (the API shows them terminated, the phase terminal) and then deletes it with
/// grace 0, as the server waits for it to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_bound_pod_goes_after_its_containers_stop() {
    use futures::{StreamExt as _, TryStreamExt as _};
    use kube::runtime::watcher;
    let h = start().await;
    let pods: Api<Pod> = Api::namespaced(h.client.clone(), "default");
    pods.create(
        &PostParams::default(),
        &pod("doomed", &[("app", "nginx:1.25")], PodSpec::default()),
    )
    .await
    .unwrap();
    wait_for(|| async { ready(&get(&pods, "doomed").await) }).await;

    let config = watcher::Config::default().fields("metadata.name=doomed");
    let mut events = watcher(pods.clone(), config).boxed();
    while !matches!(
        events.try_next().await.unwrap(),
        Some(watcher::Event::InitDone)
    ) {}
    // Deleted by someone else, with the default grace period (30 s).
    pods.delete("doomed", &Default::default()).await.unwrap();
    let deleted = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(event) = events.try_next().await.unwrap() {
            if let watcher::Event::Delete(p) = event {
                return p;
            }
        }
        panic!("the watch ended");
    })
    .await
    .expect("the pod was deleted");
    // Its last state: containers stopped, the phase terminal. (This server removes a
    // terminating pod without finalizers on that status write already; a real one keeps it
    // until the kubelet's grace-0 delete.)
    let status = deleted.status.clone().unwrap_or_default();
    assert!(deleted.metadata.deletion_timestamp.is_some());
    assert!(!ready(&deleted));
    assert_eq!(status.phase.as_deref(), Some("Succeeded"));
    let containers = status.container_statuses.unwrap_or_default();
    assert!(
        !containers.is_empty()
            && containers
                .iter()
                .all(|c| c.state.as_ref().is_some_and(|s| s.terminated.is_some())),
        "{containers:?}"
    );
    h.finish().await;
}

/// With a real kube-scheduler leading (its Lease in kube-system renewed recently) the simulator
/// leaves binding to it and only runs what lands on its nodes; once the Lease goes, it binds
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_kube_scheduler_binds_pods_instead_of_the_simulator() {
    use k8s_openapi::api::coordination::v1::Lease;
    let h = start().await;
    let leases: Api<Lease> = Api::namespaced(h.client.clone(), "kube-system");
    let now = jiff::Timestamp::now();
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
        "spec": {
            "holderIdentity": "control-plane_4d1f",
            "leaseDurationSeconds": 600,
            "acquireTime": now.to_string(),
            "renewTime": now.to_string(),
        },
    }))
    .unwrap();
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(h.client.clone(), "default");
    // Give the simulator time to see the Lease, then a pod: it stays unbound.
    tokio::time::sleep(Duration::from_millis(500)).await;
    pods.create(
        &PostParams::default(),
        &pod("left", &[("app", "nginx:1.25")], PodSpec::default()),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        node_of(&get(&pods, "left").await),
        None,
        "left to the real scheduler"
    );

    // The "real scheduler" binds it to a simulated node: the simulated kubelet runs it.
    let binding = json!({
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "left", "namespace": "default"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "sim-node-1"},
    });
    let request = http::Request::post("/api/v1/namespaces/default/pods/left/binding")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&binding).unwrap())
        .unwrap();
    h.client
        .request::<serde_json::Value>(request)
        .await
        .unwrap();
    wait_for(|| async { ready(&get(&pods, "left").await) }).await;

    // No scheduler any more: the simulator binds new pods again.
    leases
        .delete("kube-scheduler", &Default::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    pods.create(
        &PostParams::default(),
        &pod("ours", &[("app", "nginx:1.25")], PodSpec::default()),
    )
    .await
    .unwrap();
    wait_for(|| async { node_of(&get(&pods, "ours").await).is_some() }).await;
    h.finish().await;
}
