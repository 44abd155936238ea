//! The embedded SidecarSet controller end to end, on the embedded test bed with simulated
//! nodes (not on an existing cluster: injection is the embedded pod webhook's), objects created through the API as a user would (kube-rs and kubectl): injection
//! into a CloneSet's new pods, the in-place upgrade under partition and maxUnavailable (pods
//! sampled while it runs), status, pause, a hot upgrade, and injection of a historic revision.

use crate::kubectl as support_kubectl;
use crate::testbed;
use crate::workloads;

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::Event, core::v1::Pod};
use kruise_tui::api::{CloneSet, SidecarSet};
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};
use support_kubectl::Kubectl;
use testbed::Testbed;

/// Why these tests do not run on an existing cluster.
const INJECTION: &str = "sidecars are injected by the embedded Kruise pod webhook";
/// Guard against a hung test; what is asserted is the state reached, not the time.
const PATIENCE: Duration = Duration::from_secs(60);

/// The embedded test bed, a client and kubectl in its namespace; None on an existing cluster.
async fn start() -> Option<(Testbed, Client, Kubectl)> {
    if testbed::skip_on_existing_cluster(INJECTION) {
        return None;
    }
    let tb = Testbed::start().await;
    let (client, kubectl) = (tb.client.clone(), Kubectl::at(tb.kubeconfig(), tb.ns()));
    Some((tb, client, kubectl))
}

/// Polls `probe` until it returns Some, panicking with `what` after [`PATIENCE`].
async fn wait_for<T, F, Fut>(what: &str, probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    workloads::wait_for(PATIENCE.as_secs(), what, probe).await
}

async fn create_cloneset(client: &Client, name: &str, replicas: i32) {
    let cs: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "app:1"}]},
            },
            "updateStrategy": {"type": "InPlaceIfPossible"},
        },
    }))
    .unwrap();
    Api::<CloneSet>::default_namespaced(client.clone())
        .create(&PostParams::default(), &cs)
        .await
        .unwrap();
}

async fn pods_of(client: &Client, app: &str) -> Vec<Pod> {
    Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect()
}

fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn spec_image(p: &Pod, container: &str) -> String {
    p.spec
        .as_ref()
        .and_then(|s| s.containers.iter().find(|c| c.name == container))
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}

/// `(image, ready, restartCount, containerID)` of a container's status.
fn cstatus(p: &Pod, container: &str) -> (String, bool, i32, String) {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.name == container))
        .map(|c| {
            (
                c.image.clone(),
                c.ready,
                c.restart_count,
                c.container_id.clone().unwrap_or_default(),
            )
        })
        .unwrap_or_default()
}

fn annotation(p: &Pod, key: &str) -> String {
    p.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .cloned()
        .unwrap_or_default()
}

/// The set's entry in the pod's `kruise.io/sidecarset-hash` annotation.
fn hash_entry(p: &Pod, set: &str) -> Value {
    serde_json::from_str::<Value>(&annotation(p, "kruise.io/sidecarset-hash"))
        .map(|v| v[set].clone())
        .unwrap_or(Value::Null)
}

async fn ready_pods(client: &Client, app: &str, n: usize) -> Vec<Pod> {
    wait_for(&format!("{n} ready pods of {app}"), || async {
        let pods = pods_of(client, app).await;
        (pods.len() == n && pods.iter().all(ready)).then_some(pods)
    })
    .await
}

async fn sidecarset(client: &Client, name: &str) -> SidecarSet {
    Api::<SidecarSet>::all(client.clone())
        .get(name)
        .await
        .unwrap()
}

/// `(matched, updated, ready, updatedReady)` once observedGeneration caught up.
async fn status_is(client: &Client, name: &str, want: (i32, i32, i32, i32)) -> SidecarSet {
    wait_for(&format!("SidecarSet {name} status {want:?}"), || async {
        let set = sidecarset(client, name).await;
        let s = set.status.clone()?;
        let got = (
            s.matched_pods,
            s.updated_pods,
            s.ready_pods,
            s.updated_ready_pods,
        );
        (got == want && Some(s.observed_generation) == set.metadata.generation).then_some(set)
    })
    .await
}

async fn revisions_of(client: &Client, set: &str) -> Vec<ControllerRevision> {
    Api::<ControllerRevision>::namespaced(client.clone(), "kruise-system")
        .list(&ListParams::default().labels(&format!("kruise.io/sidecarset-name={set}")))
        .await
        .unwrap()
        .items
}

const AGENT_SET: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: log-agent
spec:
  selector:
    matchLabels:
      app: web
  containers:
  - name: agent
    image: agent:1
    volumeMounts:
    - name: logs
      mountPath: /var/log/app
  volumes:
  - name: logs
    emptyDir: {}
  updateStrategy:
    partition: 1
    maxUnavailable: 1
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sidecarset_injects_new_pods_and_upgrades_them_in_place_under_its_partition() {
    let Some((tb, client, kubectl)) = start().await else {
        return;
    };
    kubectl.apply(&[], AGENT_SET).await;
    // Pods record the revision they were injected from: let the controller register it first.
    wait_for("the first revision", || async {
        let set = sidecarset(&client, "log-agent").await;
        set.status
            .map(|s| s.latest_revision)
            .filter(|r| !r.is_empty())
    })
    .await;
    create_cloneset(&client, "web", 4).await;

    // Injection: the sidecar, its volume and the hash annotations, in every new pod.
    let before = ready_pods(&client, "web", 4).await;
    let set = status_is(&client, "log-agent", (4, 4, 4, 4)).await;
    let set_hash = set.metadata.annotations.clone().unwrap()["kruise.io/sidecarset-hash"].clone();
    let first_revision = set.status.clone().unwrap().latest_revision;
    for p in &before {
        assert_eq!(spec_image(p, "agent"), "agent:1");
        assert_eq!(spec_image(p, "app"), "app:1");
        let names: Vec<_> = p
            .spec
            .as_ref()
            .unwrap()
            .containers
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["agent", "app"], "BeforeAppContainer by default");
        assert!(
            p.spec
                .as_ref()
                .unwrap()
                .volumes
                .iter()
                .flatten()
                .any(|v| v.name == "logs")
        );
        let entry = hash_entry(p, "log-agent");
        assert_eq!(entry["hash"], json!(set_hash));
        assert_eq!(entry["controllerRevision"], json!(first_revision));
        assert!(!annotation(p, "kruise.io/sidecarset-hash-without-image").is_empty());
        assert_eq!(
            annotation(p, "kruise.io/sidecarset-injected-list"),
            "log-agent"
        );
    }
    let revs = revisions_of(&client, "log-agent").await;
    assert_eq!(revs.len(), 1);
    assert_eq!(
        revs[0].metadata.name.as_deref(),
        Some(first_revision.as_str())
    );

    // The upgrade, with kubectl: partition 1 of 4 keeps one pod on agent:1.
    let o = kubectl
        .run(&[
            "patch",
            "sidecarset",
            "log-agent",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/containers/0/image","value":"agent:2"}]"#,
        ])
        .await;
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let mut worst = 0;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let pods = pods_of(&client, "web").await;
        // Upgraded but not yet running the new sidecar and ready: the unavailable ones.
        let unavailable = pods
            .iter()
            .filter(|p| spec_image(p, "agent") == "agent:2")
            .filter(|p| !ready(p) || cstatus(p, "agent").0 != "agent:2" || !cstatus(p, "agent").1)
            .count();
        worst = worst.max(unavailable);
        let done = pods
            .iter()
            .filter(|p| {
                spec_image(p, "agent") == "agent:2"
                    && cstatus(p, "agent").0 == "agent:2"
                    && ready(p)
            })
            .count();
        if done == 3 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out: {done} of 3 upgraded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(worst >= 1, "the sampler saw upgrades in flight");
    assert!(
        worst <= 1,
        "maxUnavailable 1 exceeded: {worst} upgraded pods unavailable at once"
    );
    let set = status_is(&client, "log-agent", (4, 3, 4, 3)).await;
    let second_revision = set.status.clone().unwrap().latest_revision;
    assert_ne!(second_revision, first_revision);
    assert_eq!(revisions_of(&client, "log-agent").await.len(), 2);
    // The partition holds: a while later still exactly 3.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = pods_of(&client, "web").await;
    let upgraded: Vec<&Pod> = after
        .iter()
        .filter(|p| spec_image(p, "agent") == "agent:2")
        .collect();
    assert_eq!(upgraded.len(), 3);
    for p in &after {
        let old = before
            .iter()
            .find(|b| b.metadata.name == p.metadata.name)
            .expect("the same pods, in place");
        assert_eq!(p.metadata.uid, old.metadata.uid);
        let (was, now) = (cstatus(old, "agent"), cstatus(p, "agent"));
        let bumped = i32::from(spec_image(p, "agent") == "agent:2");
        assert_eq!(
            now.2,
            was.2 + bumped,
            "sidecar restartCount of {:?}",
            p.metadata.name
        );
        assert_eq!(
            cstatus(p, "app"),
            cstatus(old, "app"),
            "the app container is untouched"
        );
        if bumped == 1 {
            assert_eq!(
                hash_entry(p, "log-agent")["controllerRevision"],
                json!(second_revision)
            );
            let state = annotation(p, "kruise.io/sidecarset-inplace-update-state");
            assert!(
                state.contains("log-agent"),
                "in-place state recorded: {state}"
            );
            assert_eq!(
                condition(p, "SidecarSetUpgradable"),
                Some((
                    "True".to_owned(),
                    "AllSidecarsetUpgradable".to_owned(),
                    r#"{"log-agent":true}"#.to_owned()
                ))
            );
        }
    }
    kubectl
        .assert_jsonpath(
            &["sidecarset", "log-agent"],
            "{.status.matchedPods} {.status.updatedPods} {.status.readyPods} {.status.updatedReadyPods}",
            "4 3 4 3",
        )
        .await;

    // Paused: lowering the partition upgrades nothing until it is resumed.
    let sets: Api<SidecarSet> = Api::all(client.clone());
    let patch = |v: Value| Patch::Merge(v);
    sets.patch(
        "log-agent",
        &PatchParams::default(),
        &patch(json!({"spec": {"updateStrategy": {"paused": true, "partition": 0}}})),
    )
    .await
    .unwrap();
    status_is(&client, "log-agent", (4, 3, 4, 3)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let paused = pods_of(&client, "web").await;
    assert_eq!(
        paused
            .iter()
            .filter(|p| spec_image(p, "agent") == "agent:2")
            .count(),
        3,
        "a paused SidecarSet upgrades nothing"
    );
    sets.patch(
        "log-agent",
        &PatchParams::default(),
        &patch(json!({"spec": {"updateStrategy": {"paused": false}}})),
    )
    .await
    .unwrap();
    status_is(&client, "log-agent", (4, 4, 4, 4)).await;

    // A change beyond the image cannot be made in place: pods are marked, the set says so.
    sets.patch(
        "log-agent",
        &PatchParams::default(),
        &Patch::Json::<()>(
            serde_json::from_value(json!([
                {"op": "add", "path": "/spec/containers/0/args", "value": ["--verbose"]},
            ]))
            .unwrap(),
        ),
    )
    .await
    .unwrap();
    status_is(&client, "log-agent", (4, 0, 4, 0)).await;
    wait_for("pods marked not upgradable", || async {
        let pods = pods_of(&client, "web").await;
        pods.iter()
            .all(|p| {
                condition(p, "SidecarSetUpgradable").is_some_and(|(status, reason, _)| {
                    status == "False" && reason == "UpdateImmutableField"
                })
            })
            .then_some(())
    })
    .await;
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    wait_for("the NotUpgradablePods event", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items
            .iter()
            .any(|e| {
                e.reason.as_deref() == Some("NotUpgradablePods")
                    && e.involved_object.name.as_deref() == Some("log-agent")
                    && e.message.as_deref()
                        == Some("SidecarSet in-place update detected 4 not upgradable pod(s) in this round, will skip them.")
            })
            .then_some(())
    })
    .await;
    let untouched = pods_of(&client, "web").await;
    assert!(
        untouched
            .iter()
            .all(|p| spec_image(p, "agent") == "agent:2")
    );
    tb.shutdown().await;
}

/// `(status, reason, message)` of a pod condition.
fn condition(p: &Pod, type_: &str) -> Option<(String, String, String)> {
    p.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| {
            (
                c.status.clone(),
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        })
}

const ENVOY_SET: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: mesh
spec:
  selector:
    matchLabels:
      app: shop
  containers:
  - name: envoy
    image: envoy:1
    upgradeStrategy:
      upgradeType: HotUpgrade
      hotUpgradeEmptyImage: envoy:empty
"#;

mod hot_upgrade;
