//! Unit tests of the simulated kubelet's decisions.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::{
    api::core::v1::{Container, Pod, PodCondition, PodReadinessGate, PodSpec},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};

use super::*;
use crate::api::pod::is_ready;

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn pod(images: &[(&str, &str)]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            namespace: Some("ns".into()),
            uid: Some("uid-1".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            node_name: Some("sim-node-0".into()),
            containers: images
                .iter()
                .map(|(name, image)| Container {
                    name: (*name).into(),
                    image: Some((*image).into()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        status: None,
    }
}

/// Applies decisions the way the driver does, stepping the clock to each wake time.
fn run_until(pod: &mut Pod, until: Timestamp, timing: &Timing) -> Vec<Timestamp> {
    let mut now = t(0);
    let mut wakes = Vec::new();
    loop {
        let decision = decide(pod, "10.0.0.10", now, timing);
        match decision.action {
            PodAction::WriteStatus(status) => {
                pod.status = Some(*status);
                continue;
            }
            PodAction::Delete => panic!("unexpected delete"),
            PodAction::Nothing => {}
        }
        match decision.wake_at {
            Some(w) if w <= until => {
                assert!(w > now, "a wake time must be in the future");
                wakes.push(w);
                now = w;
            }
            _ => return wakes,
        }
    }
}

fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

fn container<'a>(pod: &'a Pod, name: &str) -> &'a ContainerStatus {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|s| s.iter().find(|c| c.name == name))
        .unwrap()
}

#[test]
fn a_bound_pod_goes_pending_then_running_then_ready() {
    let timing = Timing::default();
    let mut p = pod(&[("app", "nginx:1.25")]);

    let first = decide(&p, "10.0.0.10", t(0), &timing);
    let PodAction::WriteStatus(status) = first.action else {
        panic!("expected a status write");
    };
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    assert_eq!(first.wake_at, Some(t(1)));
    p.status = Some(*status);
    assert!(!is_ready(&p));
    assert_eq!(
        decide(&p, "10.0.0.10", t(0), &timing).action,
        PodAction::Nothing,
        "nothing changes before the wake time"
    );

    let second = decide(&p, "10.0.0.10", t(1), &timing);
    let PodAction::WriteStatus(status) = second.action else {
        panic!("expected a status write");
    };
    p.status = Some(*status);
    assert_eq!(p.status.as_ref().unwrap().phase.as_deref(), Some("Running"));
    assert!(!is_ready(&p));
    assert_eq!(second.wake_at, Some(t(2)));
    let app = container(&p, "app");
    assert_eq!(app.image_id, ids::image_id("nginx:1.25"));
    assert!(app.container_id.is_some());
    assert!(p.status.as_ref().unwrap().pod_ip.is_some());

    run_until(&mut p, t(60), &timing);
    assert!(is_ready(&p));
    assert_eq!(container(&p, "app").restart_count, 0);
    let decision = decide(&p, "10.0.0.10", t(100), &timing);
    assert_eq!(decision.action, PodAction::Nothing);
    assert_eq!(decision.wake_at, None, "a settled pod needs no timer");
}

#[test]
fn slow_images_take_ten_seconds_to_become_ready() {
    let timing = Timing::default();
    let mut p = pod(&[("app", "example/slow-app:1")]);
    run_until(&mut p, t(10), &timing);
    assert!(!is_ready(&p), "not ready 9 s after start");
    run_until(&mut p, t(11), &timing);
    assert!(is_ready(&p));
}

#[test]
fn crash_images_loop_with_climbing_restarts_and_never_become_ready() {
    let timing = Timing::default();
    let mut p = pod(&[("app", "example/app:2-crash"), ("side", "busybox")]);
    let wakes = run_until(&mut p, t(300), &timing);
    let app = container(&p, "app");
    assert!(app.restart_count >= 4, "restartCount {}", app.restart_count);
    assert!(!is_ready(&p));
    assert!(
        container(&p, "side").ready,
        "the healthy container is ready"
    );
    assert!(wakes.len() > 8, "the crash loop is driven by timers");
    let waiting = app.state.as_ref().and_then(|s| s.waiting.as_ref());
    let running = app.state.as_ref().and_then(|s| s.running.as_ref());
    assert!(
        waiting.is_some_and(|w| w.reason.as_deref() == Some("CrashLoopBackOff"))
            || running.is_some()
    );
    let last = app.last_state.as_ref().and_then(|s| s.terminated.as_ref());
    assert_eq!(last.map(|t| t.exit_code), Some(1));
}

#[test]
fn backoff_doubles_and_is_capped() {
    let timing = Timing::default();
    assert_eq!(timing.backoff(0), SignedDuration::from_secs(5));
    assert_eq!(timing.backoff(1), SignedDuration::from_secs(10));
    assert_eq!(timing.backoff(10), SignedDuration::from_secs(40));
    assert_eq!(timing.backoff(i32::MAX), SignedDuration::from_secs(40));
}

#[test]
fn an_image_change_restarts_only_that_container() {
    let timing = Timing::default();
    let mut p = pod(&[("app", "nginx:1.25"), ("side", "busybox:1")]);
    run_until(&mut p, t(10), &timing);
    assert!(is_ready(&p));
    let side_before = container(&p, "side").clone();
    let app_before = container(&p, "app").clone();

    p.spec.as_mut().unwrap().containers[0].image = Some("nginx:1.26".into());
    let decision = decide(&p, "10.0.0.10", t(20), &timing);
    let PodAction::WriteStatus(status) = decision.action else {
        panic!("expected a status write");
    };
    p.status = Some(*status);
    let app = container(&p, "app");
    assert_eq!(app.restart_count, app_before.restart_count + 1);
    assert_eq!(app.image, "nginx:1.26");
    assert_eq!(app.image_id, ids::image_id("nginx:1.26"));
    assert_ne!(app.container_id, app_before.container_id);
    assert!(!app.ready);
    assert!(
        !is_ready(&p),
        "the pod is not ready while the container restarts"
    );
    assert_eq!(
        container(&p, "side"),
        &side_before,
        "the other container is untouched"
    );
    assert_eq!(decision.wake_at, Some(t(21)));

    let decision = decide(&p, "10.0.0.10", t(21), &timing);
    let PodAction::WriteStatus(status) = decision.action else {
        panic!("expected readiness to come back");
    };
    p.status = Some(*status);
    assert!(is_ready(&p));
    assert_eq!(container(&p, "app").restart_count, 1);
}

#[test]
fn readiness_gates_hold_ready_until_their_condition_is_true() {
    let timing = Timing::default();
    let mut p = pod(&[("app", "nginx")]);
    p.spec.as_mut().unwrap().readiness_gates = Some(vec![PodReadinessGate {
        condition_type: "InPlaceUpdateReady".into(),
    }]);
    run_until(&mut p, t(10), &timing);
    assert!(!is_ready(&p));
    assert_eq!(
        condition(&p, "ContainersReady").map(|c| c.status.as_str()),
        Some("True")
    );
    assert_eq!(
        condition(&p, "Ready").and_then(|c| c.reason.as_deref()),
        Some("ReadinessGatesNotReady")
    );

    // Another controller sets the gate's condition: the kubelet keeps it and turns Ready on.
    let conditions = p.status.as_mut().unwrap().conditions.as_mut().unwrap();
    conditions.push(PodCondition {
        type_: "InPlaceUpdateReady".into(),
        status: "True".into(),
        ..Default::default()
    });
    let decision = decide(&p, "10.0.0.10", t(11), &timing);
    let PodAction::WriteStatus(status) = decision.action else {
        panic!("expected Ready to flip");
    };
    p.status = Some(*status);
    assert!(is_ready(&p));
    assert_eq!(
        condition(&p, "InPlaceUpdateReady").map(|c| c.status.as_str()),
        Some("True")
    );
}

#[test]
fn a_deleted_pod_stops_its_containers_then_is_deleted_without_waiting_for_its_deadline() {
    let timing = Timing::default();
    let mut p = pod(&[("app", "nginx")]);
    run_until(&mut p, t(10), &timing);
    // Deleted by someone else with the default grace period: its deadline is 30 s away.
    p.metadata.deletion_timestamp = Some(Time(t(40)));
    p.metadata.deletion_grace_period_seconds = Some(30);

    let decision = decide(&p, "10.0.0.10", t(10), &timing);
    let PodAction::WriteStatus(status) = decision.action else {
        panic!("expected containers to stop");
    };
    p.status = Some(*status);
    assert!(!is_ready(&p));
    let app = container(&p, "app");
    let stopped = app.state.as_ref().unwrap().terminated.as_ref().unwrap();
    assert_eq!(stopped.exit_code, 0);
    assert_eq!(
        p.status.as_ref().unwrap().phase.as_deref(),
        Some("Succeeded"),
        "the phase is terminal before the kubelet deletes the pod"
    );

    // The stopped status is what the API shows now: the kubelet deletes it at once.
    let decision = decide(&p, "10.0.0.10", t(11), &timing);
    assert_eq!(decision.action, PodAction::Delete);
    assert_eq!(decision.wake_at, None);
}

#[test]
fn a_pod_held_by_finalizers_after_the_kubelets_delete_is_left_alone() {
    let timing = Timing::default();
    let mut p = pod(&[("app", "nginx")]);
    run_until(&mut p, t(10), &timing);
    p.metadata.deletion_timestamp = Some(Time(t(40)));
    p.metadata.deletion_grace_period_seconds = Some(30);
    p.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let PodAction::WriteStatus(status) = decide(&p, "10.0.0.10", t(10), &timing).action else {
        panic!("expected containers to stop, finalizers or not");
    };
    p.status = Some(*status);
    // The kubelet's grace-0 delete: the server keeps the pod for its finalizers.
    assert_eq!(
        decide(&p, "10.0.0.10", t(11), &timing).action,
        PodAction::Delete
    );
    p.metadata.deletion_grace_period_seconds = Some(0);
    p.metadata.deletion_timestamp = Some(Time(t(11)));
    let decision = decide(&p, "10.0.0.10", t(12), &timing);
    assert_eq!(decision.action, PodAction::Nothing, "nothing to force");
    assert_eq!(decision.wake_at, None);
}

#[test]
fn settle_matches_running_the_kubelet_step_by_step() {
    let timing = Timing::default();
    for image in ["nginx:1", "x/slow:1", "x/crash:1"] {
        let mut stepped = pod(&[("app", image)]);
        stepped.status = Some(PodStatus {
            start_time: Some(Time(t(0))),
            ..Default::default()
        });
        let fresh = stepped.clone();
        run_until(&mut stepped, t(200), &timing);
        let settled = settle(&fresh, "10.0.0.10", t(200), &timing);
        let a = &stepped.status.as_ref().unwrap().container_statuses;
        assert_eq!(a, &settled.container_statuses, "image {image}");
        assert_eq!(
            decide(
                &Pod {
                    status: Some(settled),
                    ..fresh.clone()
                },
                "10.0.0.10",
                t(200),
                &timing
            )
            .action,
            PodAction::Nothing,
            "a settled status is stable for image {image}"
        );
    }
}

#[test]
fn a_pod_past_its_deadline_shows_stopped_containers_before_it_is_deleted() {
    let timing = Timing::default();
    let mut p = pod(&[("app", "nginx")]);
    run_until(&mut p, t(10), &timing);
    // Deleted with grace 0 but held by a finalizer: the deadline has already passed.
    p.metadata.deletion_timestamp = Some(Time(t(10)));
    let decision = decide(&p, "10.0.0.10", t(11), &timing);
    let PodAction::WriteStatus(status) = decision.action else {
        panic!("expected the containers to stop first");
    };
    assert_eq!(
        decision.wake_at, None,
        "the watch brings the written status back"
    );
    p.status = Some(*status);
    assert!(!is_ready(&p));
    assert_eq!(
        decide(&p, "10.0.0.10", t(11), &timing).action,
        PodAction::Delete
    );
}
