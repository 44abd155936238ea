//! The embedded CloneSet controller end to end: the embedded cluster with simulated nodes and
//! the controllers running, a CloneSet created and walked through a partition rollout with
//! kubectl as a user would, the plan API's prediction checked against what the controller then
//! did, and maxUnavailable sampled from a pod watch the whole time.

use crate::kubectl;
use crate::testbed;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kruise_tui::{api::CloneSet, kruise::plan};
use kube::{
    Api, Client,
    runtime::{WatchStreamExt as _, watcher},
};
use kubectl::Kubectl;
use testbed::Testbed;

/// Polls `f` every 100 ms until it holds, or panics after `secs` seconds.
async fn wait_for<F, Fut>(what: &str, secs: u64, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < deadline {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out after {secs}s waiting for: {what}");
}

fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn revision(p: &Pod) -> String {
    p.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("controller-revision-hash").cloned())
        .unwrap_or_default()
}

fn restarts(p: &Pod) -> i32 {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map_or(0, |c| c.iter().map(|c| c.restart_count).sum())
}

/// Active pods of the CloneSet, by name.
async fn pods_of(client: &Client, app: &str) -> BTreeMap<String, Pod> {
    let api: Api<Pod> = Api::default_namespaced(client.clone());
    api.list(&kube::api::ListParams::default().labels(&format!("app={app}")))
        .await
        .expect("list pods")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(|p| (p.metadata.name.clone().unwrap_or_default(), p))
        .collect()
}

async fn cloneset(client: &Client, name: &str) -> CloneSet {
    let api: Api<CloneSet> = Api::default_namespaced(client.clone());
    api.get(name).await.expect("get cloneset")
}

/// What a pod watch saw: the most active pods unready at once, and the order pods changed
/// revision.
#[derive(Default)]
struct Sampler {
    max_unready: usize,
    moved: Vec<String>,
    last: BTreeMap<String, (String, bool)>,
}

fn sample(client: &Client, app: &str) -> Arc<Mutex<Sampler>> {
    let seen: Arc<Mutex<Sampler>> = Arc::default();
    let api: Api<Pod> = Api::default_namespaced(client.clone());
    let config = watcher::Config::default().labels(&format!("app={app}"));
    let out = seen.clone();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(watcher(api, config).default_backoff());
        while let Some(Ok(event)) = stream.next().await {
            let Ok(mut s) = out.lock() else { return };
            let pod = match event {
                watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => pod,
                watcher::Event::Delete(pod) => {
                    s.last
                        .remove(pod.metadata.name.as_deref().unwrap_or_default());
                    continue;
                }
                _ => continue,
            };
            let name = pod.metadata.name.clone().unwrap_or_default();
            // A terminating pod has left the workload (upstream counts active pods only).
            if pod.metadata.deletion_timestamp.is_some() {
                s.last.remove(&name);
                continue;
            }
            let now = (revision(&pod), ready(&pod));
            if let Some((rev, _)) = s.last.get(&name)
                && *rev != now.0
            {
                s.moved.push(name.clone());
            }
            s.last.insert(name, now);
            let unready = s.last.values().filter(|(_, r)| !r).count();
            s.max_unready = s.max_unready.max(unready);
        }
    });
    seen
}

const WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
spec:
  replicas: 6
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.25
  updateStrategy:
    type: InPlaceIfPossible
    maxUnavailable: 2
"#;

/// The plan API's prediction for `partition` on the CloneSet as it is now.
async fn predict(client: &Client, partition: &str) -> plan::Plan {
    let cs = cloneset(client, "web").await;
    let json = serde_json::to_value(&cs).expect("json");
    let pods: Vec<Pod> = pods_of(client, "web").await.into_values().collect();
    let input = kruise_tui::actions::preview::plan_input_from_objects(
        "v1alpha1",
        json,
        &pods,
        partition,
        jiff::Timestamp::now().as_second(),
    )
    .expect("plan input");
    plan::plan(&input).expect("plan")
}

async fn wait_status(client: &Client, what: &str, want: impl Fn(&CloneSet) -> bool) {
    wait_for(what, 60, || async { want(&cloneset(client, "web").await) }).await;
}

fn status(cs: &CloneSet) -> (i32, i32, i32, i32) {
    let s = cs.status.clone().unwrap_or_default();
    (
        s.replicas,
        s.ready_replicas,
        s.updated_replicas,
        s.expected_updated_replicas.unwrap_or(-1),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_rollout_walks_in_place_as_planned_and_rolls_back() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());

    kubectl.apply(&[], WEB).await;
    wait_status(&client, "6 ready pods", |cs| status(cs) == (6, 6, 6, 6)).await;
    let before = pods_of(&client, "web").await;
    assert_eq!(before.len(), 6);
    let old_revision = cloneset(&client, "web")
        .await
        .status
        .unwrap_or_default()
        .update_revision;

    // A new image under partition 6: nothing moves, 0 expected.
    kubectl
        .ok(&[
            "patch", "cloneset", "web", "--type", "merge", "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}},"updateStrategy":{"partition":6}}}"#,
        ])
        .await;
    wait_status(&client, "the new revision observed", |cs| {
        let s = cs.status.clone().unwrap_or_default();
        s.observed_generation == cs.metadata.generation.unwrap_or(0)
            && s.update_revision != old_revision
    })
    .await;
    let cs = cloneset(&client, "web").await;
    assert_eq!(status(&cs), (6, 6, 0, 0));
    let new_revision = cs.status.clone().unwrap_or_default().update_revision;

    // Partition 50%: the plan names the pods; the controller moves exactly those, in place.
    let prediction = predict(&client, "50%").await;
    let predicted: BTreeSet<String> = prediction.moves.iter().map(|m| m.name.clone()).collect();
    let first_step: BTreeSet<String> = prediction.next_step().map(|m| m.name.clone()).collect();
    assert_eq!(predicted.len(), 3, "{prediction:?}");
    assert_eq!(first_step.len(), 2, "maxUnavailable 2 lets two go first");
    let sampler = sample(&client, "web");
    tokio::time::sleep(Duration::from_millis(300)).await;
    kubectl
        .ok(&[
            "patch",
            "cloneset",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"updateStrategy":{"partition":"50%"}}}"#,
        ])
        .await;
    wait_status(&client, "3 updated and ready", |cs| {
        status(cs) == (6, 6, 3, 3)
    })
    .await;
    let after = pods_of(&client, "web").await;
    let updated: BTreeSet<String> = after
        .values()
        .filter(|p| revision(p) == new_revision)
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    assert_eq!(
        updated, predicted,
        "the controller moved the predicted pods"
    );
    {
        let s = sampler.lock().expect("sampler");
        let first: BTreeSet<String> = s.moved.iter().take(2).cloned().collect();
        assert_eq!(
            first, first_step,
            "the first step moved the pods planned for it"
        );
    }
    for (name, pod) in &after {
        let old = &before[name];
        assert_eq!(
            pod.metadata.uid, old.metadata.uid,
            "{name} updated in place"
        );
        let bump = i32::from(updated.contains(name));
        assert_eq!(restarts(pod), restarts(old) + bump, "{name}'s restarts");
    }

    // Raising the partition (gate on in the demo) rolls them back, in place.
    kubectl
        .ok(&[
            "patch",
            "cloneset",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"updateStrategy":{"partition":6}}}"#,
        ])
        .await;
    wait_status(&client, "rolled back", |cs| status(cs) == (6, 6, 0, 0)).await;
    let rolled = pods_of(&client, "web").await;
    assert!(rolled.values().all(|p| revision(p) == old_revision));
    assert!(
        rolled
            .iter()
            .all(|(n, p)| p.metadata.uid == before[n].metadata.uid)
    );

    // Partition 0: all six move.
    kubectl
        .ok(&[
            "patch",
            "cloneset",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"updateStrategy":{"partition":0}}}"#,
        ])
        .await;
    wait_status(&client, "all updated", |cs| {
        status(cs) == (6, 6, 6, 6)
            && cs
                .status
                .as_ref()
                .is_some_and(|s| s.current_revision == new_revision)
    })
    .await;
    let max_unready = sampler.lock().expect("sampler").max_unready;
    assert!(
        max_unready <= 2,
        "maxUnavailable 2 exceeded: {max_unready} unready at once"
    );
    assert!(max_unready >= 1, "the sampler saw pods restart");

    // The story is in the events, as upstream tells it.
    let events = kubectl
        .ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=web",
            "-o",
            "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}",
        ])
        .await;
    for reason in ["SuccessfulCreate", "SuccessfulUpdatePodInPlace"] {
        assert!(events.contains(reason), "{reason} in {events}");
    }
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_deletes_the_named_pods_and_recreate_replaces_pods() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    kubectl
        .apply(
            &[],
            &WEB.replace("type: InPlaceIfPossible", "type: ReCreate"),
        )
        .await;
    wait_status(&client, "6 ready", |cs| status(cs) == (6, 6, 6, 6)).await;

    // Scale down with podsToDelete: exactly those go, and the list empties.
    let names: Vec<String> = pods_of(&client, "web").await.into_keys().collect();
    let doomed = [names[0].clone(), names[3].clone()];
    let patch =
        serde_json::json!({"spec": {"replicas": 4, "scaleStrategy": {"podsToDelete": doomed}}});
    kubectl
        .ok(&[
            "patch",
            "cloneset",
            "web",
            "--type",
            "merge",
            "-p",
            &patch.to_string(),
        ])
        .await;
    wait_for("the named pods gone", 30, || async {
        let now = pods_of(&client, "web").await;
        now.len() == 4 && doomed.iter().all(|d| !now.contains_key(d))
    })
    .await;
    wait_for("podsToDelete truncated", 10, || async {
        cloneset(&client, "web")
            .await
            .spec
            .scale_strategy
            .is_none_or(|s| s.pods_to_delete.is_empty())
    })
    .await;

    // Recreate: a new image replaces every pod (new names) under maxUnavailable.
    let sampler = sample(&client, "web");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before: BTreeSet<String> = pods_of(&client, "web").await.into_keys().collect();
    let old_revision = cloneset(&client, "web")
        .await
        .status
        .unwrap_or_default()
        .update_revision;
    kubectl
        .ok(&[
            "patch", "cloneset", "web", "--type", "merge", "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.27"}]}}}}"#,
        ])
        .await;
    wait_status(&client, "recreated", |cs| {
        status(cs) == (4, 4, 4, 4)
            && cs.status.as_ref().is_some_and(|s| {
                s.current_revision == s.update_revision && s.update_revision != old_revision
            })
    })
    .await;
    let after: BTreeSet<String> = pods_of(&client, "web").await.into_keys().collect();
    assert!(
        after.is_disjoint(&before),
        "every pod was recreated: {after:?} vs {before:?}"
    );
    let max_unready = sampler.lock().expect("sampler").max_unready;
    assert!(max_unready <= 2, "maxUnavailable 2 exceeded: {max_unready}");
    let events = kubectl
        .ok(&[
            "get",
            "events",
            "-o",
            "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}",
        ])
        .await;
    for reason in ["SuccessfulDelete", "SuccessfulUpdatePodReCreate"] {
        assert!(events.contains(reason), "{reason} in {events}");
    }
    tb.shutdown().await;
}
