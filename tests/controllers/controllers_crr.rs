//! ContainerRecreateRequests end to end on the embedded cluster: created through the API (kubectl
//! apply, kube-rs) as a user would, admitted by the webhook, driven by the CRR controller (the
//! manager side) and the simulated nodes' kruise-daemon (the node side). Not on an existing
//! cluster: there is no Kruise CRR webhook to stamp the labels the daemon goes by.

use crate::daemon_e2e as e2e;
use crate::kubectl as support_kubectl;
use crate::testbed;

use std::time::Duration;

use e2e::{Cluster, condition, container, wait_for};
use k8s_openapi::api::core::v1::{Event, Pod};
use kruise_tui::api::ContainerRecreateRequest;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
};
use serde_json::json;
use support_kubectl::Kubectl;

/// Why these tests do not run on an existing cluster.
const WEBHOOK: &str =
    "the embedded Kruise CRR webhook stamps the pod-uid and node-name labels the daemon needs";

fn crrs(c: &Cluster) -> Api<ContainerRecreateRequest> {
    Api::default_namespaced(c.client.clone())
}

fn crr_yaml(name: &str, pod: &str, containers: &[&str], extra: &str) -> String {
    let list: String = containers
        .iter()
        .map(|c| format!("  - name: {c}\n"))
        .collect();
    format!(
        "apiVersion: apps.kruise.io/v1alpha1\nkind: ContainerRecreateRequest\nmetadata:\n  name: {name}\nspec:\n  podName: {pod}\n  containers:\n{list}{extra}"
    )
}

/// Waits until the CRR is Completed (with its completion time) and returns it.
async fn completed(c: &Cluster, name: &str) -> ContainerRecreateRequest {
    let api = crrs(c);
    wait_for(&format!("CRR {name} Completed"), || async {
        api.get(name).await.ok().filter(|r| {
            r.phase() == "Completed"
                && r.status
                    .as_ref()
                    .is_some_and(|s| s.completion_time.is_some())
        })
    })
    .await
}

fn states(crr: &ContainerRecreateRequest) -> Vec<(String, String)> {
    crr.status
        .iter()
        .flat_map(|s| s.container_recreate_states.iter())
        .map(|s| (s.name.clone(), s.phase.clone()))
        .collect()
}

fn two_container_pod(name: &str, first_image: &str) -> serde_json::Value {
    json!({
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"containers": [
            {"name": "a", "image": first_image},
            {"name": "b", "image": "nginx:1.25"}
        ]}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crr_restarts_one_container_of_a_cloneset_pod_exactly_once() {
    if testbed::skip_on_existing_cluster(WEBHOOK) {
        return;
    }
    let c = e2e::start().await;
    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    kubectl
        .apply(
            &[],
            "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - {name: app, image: 'nginx:1.25'}\n      - {name: sidecar, image: 'busybox:1.36'}\n",
        )
        .await;
    let pods = c.pods();
    let pod: Pod = wait_for("the CloneSet's pod Ready", || async {
        let list = pods
            .list(&ListParams::default().labels("app=web"))
            .await
            .ok()?;
        list.items.into_iter().find(e2e::is_ready)
    })
    .await;
    let pod_name = pod.metadata.name.clone().unwrap();
    let uid = pod.metadata.uid.clone().unwrap();
    let (app_restarts, app_id) = container(&pod, "app");
    let sidecar = container(&pod, "sidecar");

    kubectl
        .apply(&[], &crr_yaml("restart-app", &pod_name, &["app"], ""))
        .await;
    let crr = completed(&c, "restart-app").await;
    let status = crr.status.clone().unwrap();
    assert_eq!(
        status.message, "",
        "completed by the daemon, not as a failure"
    );
    assert_eq!(states(&crr), [("app".to_owned(), "Succeeded".to_owned())]);
    // The webhook labelled it for the daemon; the manager drops the active label afterwards.
    assert_eq!(crr.label("crr.apps.kruise.io/pod-uid"), uid);
    let api = crrs(&c);
    wait_for("the active label dropped", || async {
        api.get("restart-app")
            .await
            .ok()
            .filter(|r| r.label("crr.apps.kruise.io/active").is_empty())
    })
    .await;

    let after = pods.get(&pod_name).await.unwrap();
    assert_eq!(
        after.metadata.uid.as_deref(),
        Some(uid.as_str()),
        "the same pod"
    );
    let (restarts, id) = container(&after, "app");
    assert_eq!(restarts, app_restarts + 1, "app restarted once");
    assert_ne!(id, app_id, "a new container");
    assert_eq!(container(&after, "sidecar"), sidecar, "sidecar untouched");
    // Exactly once: nothing restarts it again.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = c.wait_ready(&pod_name).await;
    assert_eq!(container(&later, "app").0, app_restarts + 1);

    // The daemon reported the kill on the pod, as kruise-daemon does.
    let events: Api<Event> = Api::default_namespaced(c.client.clone());
    let killing = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| {
            e.involved_object.name.as_deref() == Some(pod_name.as_str())
                && e.reason.as_deref() == Some("Killing")
        })
        .collect::<Vec<_>>();
    assert_eq!(killing.len(), 1, "{killing:?}");
    assert_eq!(
        killing[0].message.as_deref(),
        Some("Stopping container app by ContainerRecreateRequest restart-app")
    );

    // kubectl shows it with the CRD's columns, by its short name.
    let table = kubectl.ok(&["get", "crr"]).await;
    let header = table.lines().next().unwrap_or_default();
    assert!(
        header.contains("PHASE") && header.contains("POD") && header.contains("NODE"),
        "{table}"
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("restart-app"))
        .unwrap_or_default();
    assert!(
        row.contains("Completed") && row.contains(&pod_name),
        "{table}"
    );
    kubectl
        .assert_jsonpath(
            &["crr", "restart-app"],
            "{.status.containerRecreateStates[0].phase}",
            "Succeeded",
        )
        .await;
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordered_recreate_restarts_two_containers_one_after_the_other() {
    if testbed::skip_on_existing_cluster(WEBHOOK) {
        return;
    }
    let c = e2e::start().await;
    let before = c.ready_pod(two_container_pod("pair", "nginx:1.25")).await;
    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    kubectl
        .apply(
            &[],
            &crr_yaml(
                "both",
                "pair",
                &["a", "b"],
                "  strategy:\n    orderedRecreate: true\n    minStartedSeconds: 2\n",
            ),
        )
        .await;
    let crr = completed(&c, "both").await;
    assert_eq!(
        states(&crr),
        [
            ("a".to_owned(), "Succeeded".to_owned()),
            ("b".to_owned(), "Succeeded".to_owned())
        ]
    );
    let after = c.pods().get("pair").await.unwrap();
    assert_eq!(after.metadata.uid, before.metadata.uid);
    for name in ["a", "b"] {
        assert_eq!(
            container(&after, name).0,
            container(&before, name).0 + 1,
            "{name}"
        );
    }
    // b was stopped only after a had run again for more than minStartedSeconds.
    let status = |name: &str| {
        after
            .status
            .iter()
            .flat_map(|s| s.container_statuses.iter().flatten())
            .find(|c| c.name == name)
            .cloned()
            .unwrap()
    };
    let a_started = status("a")
        .state
        .unwrap()
        .running
        .unwrap()
        .started_at
        .unwrap()
        .0;
    let b_stopped = status("b")
        .last_state
        .unwrap()
        .terminated
        .unwrap()
        .finished_at
        .unwrap()
        .0;
    assert!(
        b_stopped.as_second() - a_started.as_second() > 2,
        "a started {a_started}, b stopped {b_stopped}"
    );
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn active_deadline_completes_an_unfinished_crr_and_ttl_deletes_it() {
    if testbed::skip_on_existing_cluster(WEBHOOK) {
        return;
    }
    let c = e2e::start().await;
    // `slow` images take 10 s to be ready again: longer than the deadline.
    let before = c
        .ready_pod(two_container_pod("slowpoke", "example/slow:1"))
        .await;
    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    kubectl
        .apply(
            &[],
            &crr_yaml(
                "late",
                "slowpoke",
                &["a"],
                "  activeDeadlineSeconds: 3\n  ttlSecondsAfterFinished: 2\n",
            ),
        )
        .await;
    let crr = completed(&c, "late").await;
    let status = crr.status.clone().unwrap();
    assert_eq!(
        status.message,
        "recreating has exceeded the activeDeadlineSeconds"
    );
    assert!(
        states(&crr).iter().all(|(_, phase)| phase != "Succeeded"),
        "{:?}",
        states(&crr)
    );
    // ttlSecondsAfterFinished: gone 2 s after completion.
    let api = crrs(&c);
    wait_for("the CRR deleted after its TTL", || async {
        matches!(api.get("late").await, Err(kube::Error::Api(s)) if s.code == 404).then_some(())
    })
    .await;
    let after = c.pods().get("slowpoke").await.unwrap();
    assert_eq!(after.metadata.uid, before.metadata.uid);
    assert!(container(&after, "a").0 <= container(&before, "a").0 + 1);
    assert_eq!(container(&after, "b"), container(&before, "b"));
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crr_whose_pod_goes_completes_as_failure() {
    if testbed::skip_on_existing_cluster(WEBHOOK) {
        return;
    }
    let c = e2e::start().await;
    c.ready_pod(two_container_pod("doomed", "nginx:1.25")).await;
    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    // minStartedSeconds keeps it Recreating long after the kill.
    kubectl
        .apply(
            &[],
            &crr_yaml(
                "orphan",
                "doomed",
                &["a"],
                "  strategy:\n    minStartedSeconds: 600\n",
            ),
        )
        .await;
    let api = crrs(&c);
    wait_for("the container killed", || async {
        let crr = api.get("orphan").await.ok()?;
        crr.status
            .as_ref()?
            .container_recreate_states
            .iter()
            .any(|s| s.is_killed)
            .then_some(())
    })
    .await;
    kubectl
        .ok(&["delete", "pod", "doomed", "--wait=false"])
        .await;
    let crr = completed(&c, "orphan").await;
    assert_eq!(crr.status.unwrap().message, "pod has gone");
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unready_grace_holds_the_pod_not_ready_before_the_restart_and_releases_it() {
    if testbed::skip_on_existing_cluster(WEBHOOK) {
        return;
    }
    let c = e2e::start().await;
    let mut pod = two_container_pod("gated", "nginx:1.25");
    pod["spec"]["readinessGates"] = json!([{"conditionType": "KruisePodReady"}]);
    let created: Pod = serde_json::from_value(pod).unwrap();
    c.pods()
        .create(&Default::default(), &created)
        .await
        .unwrap();
    // A Kruise workload controller would set its gate True; here the test does.
    let pods = c.pods();
    wait_for("the pod running", || async {
        let p = pods.get("gated").await.ok()?;
        (condition(&p, "ContainersReady").as_deref() == Some("True")).then_some(())
    })
    .await;
    let gate = json!({"status": {"conditions": [{"type": "KruisePodReady", "status": "True"}]}});
    pods.patch_status("gated", &PatchParams::default(), &Patch::Strategic(&gate))
        .await
        .unwrap();
    let before = c.wait_ready("gated").await;

    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    kubectl
        .apply(
            &[],
            &crr_yaml(
                "graceful",
                "gated",
                &["a"],
                "  strategy:\n    unreadyGracePeriodSeconds: 2\n",
            ),
        )
        .await;
    // While held: the finalizer is on the CRR and the pod is not ready through its gate.
    let api = crrs(&c);
    wait_for("the CRR holding the pod", || async {
        let crr = api.get("graceful").await.ok()?;
        let held = crr
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == "crr.apps.kruise.io/unready-acquired");
        let p = pods.get("gated").await.ok()?;
        (held && condition(&p, "KruisePodReady").as_deref() == Some("False")).then_some(())
    })
    .await;
    let crr = completed(&c, "graceful").await;
    assert_eq!(states(&crr), [("a".to_owned(), "Succeeded".to_owned())]);
    let acquired: jiff::Timestamp = crr
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("crr.apps.kruise.io/unready-acquired"))
        .expect("unready-acquired stamped")
        .parse()
        .unwrap();
    // Released: the finalizer goes and the gate (so the pod) is ready again.
    wait_for("the pod released", || async {
        let crr = api.get("graceful").await.ok()?;
        let p = pods.get("gated").await.ok()?;
        (crr.metadata.finalizers.iter().flatten().next().is_none() && e2e::is_ready(&p))
            .then_some(())
    })
    .await;
    let after = pods.get("gated").await.unwrap();
    assert_eq!(container(&after, "a").0, container(&before, "a").0 + 1);
    let restarted_at = after
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .find(|c| c.name == "a")
        .and_then(|c| c.state.clone()?.running?.started_at)
        .unwrap()
        .0;
    assert!(
        restarted_at.as_second() - acquired.as_second() >= 2,
        "the daemon waited unreadyGracePeriodSeconds: held {acquired}, restarted {restarted_at}"
    );
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_that_fails_follows_the_failure_policy() {
    if testbed::skip_on_existing_cluster(WEBHOOK) {
        return;
    }
    let c = e2e::start().await;
    let mut pod = two_container_pod("stubborn", "nginx:1.25");
    pod["metadata"]["annotations"] = json!({"sim.kruise-tui.io/kill-a": "fail"});
    let before = c.ready_pod(pod).await;
    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    kubectl
        .apply(
            &[],
            &crr_yaml(
                "ignore",
                "stubborn",
                &["a", "b"],
                "  strategy:\n    failurePolicy: Ignore\n",
            ),
        )
        .await;
    let crr = completed(&c, "ignore").await;
    assert_eq!(
        states(&crr),
        [
            ("a".to_owned(), "Failed".to_owned()),
            ("b".to_owned(), "Succeeded".to_owned())
        ]
    );
    let after = c.pods().get("stubborn").await.unwrap();
    assert_eq!(
        container(&after, "a"),
        container(&before, "a"),
        "a was never killed"
    );
    assert_eq!(container(&after, "b").0, container(&before, "b").0 + 1);

    kubectl
        .apply(&[], &crr_yaml("fail", "stubborn", &["a", "b"], ""))
        .await;
    let crr = completed(&c, "fail").await;
    let states = states(&crr);
    assert_eq!(states[0], ("a".to_owned(), "Failed".to_owned()));
    assert_ne!(
        states[1].1, "Succeeded",
        "policy Fail stops at a: {states:?}"
    );
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_nodes_and_controllers_beside_a_bare_server_complete_a_crr() {
    if testbed::skip_on_existing_cluster(WEBHOOK) {
        return;
    }
    let c = e2e::start_beside().await;
    c.nodes().await;
    let before = c.ready_pod(two_container_pod("remote", "nginx:1.25")).await;
    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    kubectl
        .apply(&[], &crr_yaml("remote-a", "remote", &["a"], ""))
        .await;
    let crr = completed(&c, "remote-a").await;
    assert_eq!(states(&crr), [("a".to_owned(), "Succeeded".to_owned())]);
    let after = c.pods().get("remote").await.unwrap();
    assert_eq!(after.metadata.uid, before.metadata.uid);
    assert_eq!(container(&after, "a").0, container(&before, "a").0 + 1);
    assert_eq!(container(&after, "b"), container(&before, "b"));
    c.finish().await;
}
