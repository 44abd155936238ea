//! The simulated probes: periods, steering by annotation, container restarts, status writes.

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use super::*;

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn pod(container_id: &str, started: i64, annotations: serde_json::Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "annotations": annotations},
        "spec": {"containers": [{"name": "main"}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
            "image": "nginx", "imageID": "x", "containerID": container_id,
            "state": {"running": {"startedAt": t(started).to_string()}}}]}
    }))
    .unwrap()
}

fn npp(period: i64, failure_threshold: i32) -> NodePodProbe {
    serde_json::from_value(json!({
        "metadata": {"name": "sim-node-0"},
        "spec": {"podProbes": [{"name": "p", "namespace": "ns", "uid": "u1", "probes": [{
            "name": "m#healthy", "containerName": "main",
            "probe": {"exec": {"command": ["true"]}, "periodSeconds": period, "failureThreshold": failure_threshold}}]}]}
    }))
    .unwrap()
}

fn state(status: &NodePodProbeStatus) -> (&str, &str) {
    let s = &status.pod_probe_statuses[0].probe_states[0];
    (s.state.as_str(), s.message.as_str())
}

#[test]
fn a_running_container_passes_and_an_annotation_makes_it_fail_after_the_threshold() {
    let mut node = npp(2, 2);
    let mut prober = NodeProber::default();
    let healthy = pod("containerd://a", 0, json!({}));
    let read = |p: Pod| move |_: &str, _: &str| Some(p.clone());

    // Within the initial delay: the new container's Unknown only.
    let first = prober.pass(&node, &read(healthy.clone()), t(0));
    assert_eq!(state(first.status.as_ref().unwrap()).0, "Unknown");
    assert!(first.events.is_empty());
    assert_eq!(first.wake_at, Some(t(2)), "the next probe one period later");
    node.status = first.status;

    let ok = prober.pass(&node, &read(healthy.clone()), t(2));
    assert_eq!(state(ok.status.as_ref().unwrap()), ("Succeeded", ""));
    assert_eq!(ok.events[0].1.reason, "KruiseProbeSucceeded");
    node.status = ok.status;
    // Not due yet: nothing.
    let early = prober.pass(&node, &read(healthy.clone()), t(3));
    assert_eq!(early.status, None);
    assert!(early.events.is_empty());
    // Due, same result: no write.
    assert_eq!(
        prober.pass(&node, &read(healthy.clone()), t(4)).status,
        None
    );

    let steered = pod(
        "containerd://a",
        0,
        json!({"sim.kruise-tui.io/probe-healthy": "fail"}),
    );
    assert_eq!(
        prober.pass(&node, &read(steered.clone()), t(6)).status,
        None,
        "one failure is below failureThreshold 2"
    );
    let failed = prober.pass(&node, &read(steered.clone()), t(8));
    let status = failed.status.expect("flipped");
    assert_eq!(
        state(&status),
        (
            "Failed",
            "simulated probe failure (pod annotation sim.kruise-tui.io/probe-healthy: \"fail\")"
        )
    );
    assert_eq!(failed.events[0].1.reason, "KruiseProbeFailed");
    node.status = Some(status);

    let back = pod(
        "containerd://a",
        0,
        json!({"sim.kruise-tui.io/probe-healthy": "succeed"}),
    );
    let recovered = prober.pass(&node, &read(back), t(10));
    assert_eq!(state(recovered.status.as_ref().unwrap()).0, "Succeeded");
}

#[test]
fn a_restarted_container_starts_over_and_a_stopped_one_fails() {
    let mut node = npp(1, 1);
    let mut prober = NodeProber::default();
    let read = |p: Pod| move |_: &str, _: &str| Some(p.clone());
    for s in 0..3 {
        if let Some(status) = prober
            .pass(&node, &read(pod("containerd://a", 0, json!({}))), t(s))
            .status
        {
            node.status = Some(status);
        }
    }
    assert_eq!(state(node.status.as_ref().unwrap()).0, "Succeeded");
    // Restarted at t(3): Unknown until past the initial delay of 1 s.
    let restarted = prober.pass(&node, &read(pod("containerd://b", 3, json!({}))), t(3));
    assert_eq!(state(restarted.status.as_ref().unwrap()).0, "Unknown");

    let mut stopped = pod("containerd://b", 3, json!({}));
    let c = &mut stopped
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[0];
    c.state = Some(k8s_openapi::api::core::v1::ContainerState {
        waiting: Some(Default::default()),
        ..Default::default()
    });
    let out = prober.pass(&node, &read(stopped), t(4));
    assert_eq!(
        state(out.status.as_ref().unwrap()),
        ("Failed", "Container(main) is Non-running")
    );
}

#[test]
fn probes_of_gone_pods_stop_and_no_pod_means_no_result() {
    let node = npp(1, 1);
    let mut prober = NodeProber::default();
    let out = prober.pass(&node, &|_, _| None, t(0));
    assert_eq!(out.status, None, "nothing to report, nothing written");
    assert_eq!(out.wake_at, Some(t(0) + SignedDuration::from_secs(1)));
    let mut empty = node.clone();
    empty.spec.pod_probes.clear();
    let out = prober.pass(&empty, &|_, _| None, t(1));
    assert!(prober.is_empty());
    assert_eq!(out.wake_at, None, "no probes, no timer");
}
