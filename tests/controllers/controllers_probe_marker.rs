//! PodProbeMarkers end to end on the test bed (the embedded cluster, or an existing one under
//! KRUISE_TUI_TEST_KUBECONFIG): created with kubectl as a user would,
//! the PodProbeMarker controller lists the probes in each node's NodePodProbe, the simulated
//! nodes' kruise-daemon runs them (steered by the `sim.kruise-tui.io/probe-<probe>` pod
//! annotation) and the NodePodProbe controller writes the condition and the marker policy's
//! labels and annotations onto the pods.

use crate::daemon_e2e as e2e;
use crate::kubectl as support_kubectl;

use e2e::{Cluster, condition, wait_for};
use k8s_openapi::api::core::v1::Pod;
use kruise_tui::api::{NodePodProbe, PodProbeMarker};
use kube::{Api, api::ListParams};
use serde_json::json;
use support_kubectl::Kubectl;

const CONDITION: &str = "game.kruise.io/healthy";

const MARKER: &str = r#"apiVersion: apps.kruise.io/v1alpha1
kind: PodProbeMarker
metadata:
  name: game
spec:
  selector:
    matchLabels:
      app: game
  probes:
  - name: healthy
    containerName: main
    probe:
      exec:
        command: ["/healthy.sh"]
      periodSeconds: 1
    podConditionType: game.kruise.io/healthy
    markerPolicy:
    - state: Succeeded
      labels:
        gameserver-healthy: "true"
      annotations:
        controller.kubernetes.io/pod-deletion-cost: "5"
    - state: Failed
      labels:
        gameserver-healthy: "false"
      annotations:
        controller.kubernetes.io/pod-deletion-cost: "-5"
"#;

fn pod(name: &str, app: &str) -> serde_json::Value {
    json!({
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
    })
}

fn label(p: &Pod, key: &str) -> Option<String> {
    p.metadata.labels.as_ref()?.get(key).cloned()
}

fn annotation(p: &Pod, key: &str) -> Option<String> {
    p.metadata.annotations.as_ref()?.get(key).cloned()
}

/// Waits until pod `name` shows the condition status and the policy marks of `healthy`.
async fn marked(c: &Cluster, name: &str, healthy: bool) -> Pod {
    let pods = c.pods();
    let (status, value, cost) = if healthy {
        ("True", "true", "5")
    } else {
        ("False", "false", "-5")
    };
    wait_for(&format!("pod {name} marked healthy={healthy}"), || async {
        pods.get(name).await.ok().filter(|p| {
            condition(p, CONDITION).as_deref() == Some(status)
                && label(p, "gameserver-healthy").as_deref() == Some(value)
                && annotation(p, "controller.kubernetes.io/pod-deletion-cost").as_deref()
                    == Some(cost)
        })
    })
    .await
}

/// The probes the NodePodProbes list for the test's pods (the nodes are shared on an existing
/// cluster).
async fn probes_listed(c: &Cluster) -> Vec<String> {
    let npps: Api<NodePodProbe> = Api::all(c.client.clone());
    npps.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .flat_map(|n| n.spec.pod_probes.iter())
        .filter(|p| p.namespace == c.ns())
        .flat_map(|p| {
            p.probes
                .iter()
                .map(move |q| format!("{}:{}", p.name, q.name))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_marker_marks_matched_pods_and_a_steered_failure_flips_them() {
    let c = e2e::start().await;
    for (name, app) in [("game-0", "game"), ("game-1", "game"), ("other", "web")] {
        c.ready_pod(pod(name, app)).await;
    }
    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    kubectl.apply(&[], MARKER).await;

    for name in ["game-0", "game-1"] {
        let p = marked(&c, name, true).await;
        let message = p
            .status
            .iter()
            .flat_map(|s| s.conditions.iter().flatten())
            .find(|c| c.type_ == CONDITION)
            .and_then(|c| c.message.clone());
        assert_eq!(message, None, "a passing probe has no message");
    }
    // Every simulated node got its NodePodProbe; the matched pods' probes are listed there.
    let npps: Api<NodePodProbe> = Api::all(c.client.clone());
    let simulated = npps
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|n| {
            n.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("sim-node-"))
        })
        .count();
    assert_eq!(simulated, 3);
    let mut listed = probes_listed(&c).await;
    listed.sort();
    assert_eq!(listed, ["game-0:game#healthy", "game-1:game#healthy"]);
    let other = c.pods().get("other").await.unwrap();
    assert_eq!(label(&other, "gameserver-healthy"), None, "not selected");
    assert_eq!(condition(&other, CONDITION), None);
    // The marker's status and finalizer.
    let markers: Api<PodProbeMarker> = Api::default_namespaced(c.client.clone());
    let ppm = wait_for("matchedPods 2", || async {
        markers
            .get("game")
            .await
            .ok()
            .filter(|m| m.status.as_ref().is_some_and(|s| s.matched_pods == 2))
    })
    .await;
    assert_eq!(
        ppm.metadata.finalizers.as_deref(),
        Some(&["kruise.io/node-pod-probe-cleanup".to_owned()][..])
    );
    kubectl
        .assert_jsonpath(&["podprobemarker", "game"], "{.status.matchedPods}", "2")
        .await;

    // Steer game-0's probe to fail: its marks flip per markerPolicy; game-1 keeps its own.
    kubectl
        .ok(&[
            "annotate",
            "pod",
            "game-0",
            "sim.kruise-tui.io/probe-healthy=fail",
        ])
        .await;
    let failed = marked(&c, "game-0", false).await;
    let message = failed
        .status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .find(|c| c.type_ == CONDITION)
        .and_then(|c| c.message.clone());
    assert_eq!(
        message.as_deref(),
        Some("simulated probe failure (pod annotation sim.kruise-tui.io/probe-healthy: \"fail\")")
    );
    let healthy = c.pods().get("game-1").await.unwrap();
    assert_eq!(
        label(&healthy, "gameserver-healthy").as_deref(),
        Some("true")
    );
    kubectl
        .assert_jsonpath(
            &["pod", "game-0"],
            "{.metadata.labels.gameserver-healthy}",
            "false",
        )
        .await;
    // And back.
    kubectl
        .ok(&[
            "annotate",
            "pod",
            "game-0",
            "sim.kruise-tui.io/probe-healthy-",
        ])
        .await;
    marked(&c, "game-0", true).await;

    // Deleting the marker removes its probes from the NodePodProbes, then the marker goes.
    kubectl.ok(&["delete", "podprobemarker", "game"]).await;
    wait_for("the marker and its probes gone", || async {
        let gone = matches!(markers.get("game").await, Err(kube::Error::Api(s)) if s.code == 404);
        (gone && probes_listed(&c).await.is_empty()).then_some(())
    })
    .await;
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_nodes_and_controllers_beside_a_bare_server_mark_pods() {
    let c = e2e::start_beside().await;
    c.nodes().await;
    // The marker first: the pod is listed in its NodePodProbe before it has an IP.
    let kubectl = Kubectl::at(c.tb.kubeconfig(), c.ns());
    kubectl.apply(&[], MARKER).await;
    c.ready_pod(pod("game-0", "game")).await;
    marked(&c, "game-0", true).await;
    kubectl
        .ok(&[
            "annotate",
            "pod",
            "game-0",
            "sim.kruise-tui.io/probe-healthy=fail",
        ])
        .await;
    marked(&c, "game-0", false).await;
    c.finish().await;
}
