//! The simulated daemon's CRR plans, run second by second together with the simulated kubelet
//! and the manager's plan, as the three loops would run against a server.

use jiff::Timestamp;
use k8s_openapi::{
    api::core::v1::{Container, Node, Pod, PodSpec},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use serde_json::json;

use super::*;
use crate::kruise::crr::{admission::inject_pod_into_crr, manager};

const V19: crate::kruise::KruiseVersion = crate::kruise::KruiseVersion::V1_9;
use crate::sim::kubelet::{self, PodAction, Timing};

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn pod(containers: &[&str]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            namespace: Some("ns".into()),
            uid: Some("uid-1".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            node_name: Some("sim-node-0".into()),
            containers: containers
                .iter()
                .map(|name| Container {
                    name: (*name).into(),
                    image: Some("nginx:1".into()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        status: None,
    }
}

fn kubelet_step(pod: &mut Pod, now: Timestamp) {
    for _ in 0..4 {
        match kubelet::decide(pod, "10.0.0.10", now, &Timing::default()).action {
            PodAction::WriteStatus(status) => pod.status = Some(*status),
            _ => return,
        }
    }
}

/// A CRR for `containers` of `pod`, admitted (labels, statusContext) at `now`.
fn crr(
    pod: &Pod,
    containers: &[&str],
    strategy: serde_json::Value,
    now: Timestamp,
) -> ContainerRecreateRequest {
    let mut c: ContainerRecreateRequest = serde_json::from_value(json!({
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"podName": "p", "strategy": strategy,
                 "containers": containers.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()}
    }))
    .unwrap();
    c.metadata.creation_timestamp = Some(Time(now));
    inject_pod_into_crr(
        crate::kruise::KruiseVersion::V1_9,
        &mut c,
        pod,
        Some(&Node::default()),
    )
    .unwrap();
    c
}

fn restarts(pod: &Pod, name: &str) -> i32 {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .find(|c| c.name == name)
        .map_or(-1, |c| c.restart_count)
}

/// Runs kubelet, manager and daemon once per second from `from`; returns the CRR when it
/// completes (or as it is at `until`) and the seconds at which each kill happened.
fn run(
    pod: &mut Pod,
    mut c: ContainerRecreateRequest,
    from: i64,
    until: i64,
) -> (ContainerRecreateRequest, Vec<(i64, String)>) {
    let mut kills = Vec::new();
    for s in from..=until {
        let now = t(s);
        kubelet_step(pod, now);
        let m = manager::plan(&c, Some(pod), now);
        let annotations = c.metadata.annotations.get_or_insert_with(Default::default);
        for (k, v) in m.annotations {
            match v {
                Some(v) => annotations.insert(k, v),
                None => annotations.remove(&k),
            };
        }
        if let Some(status) = m.status {
            c.status = Some(status);
        }
        let d = plan(V19, std::slice::from_ref(&c), Some(pod), now);
        for p in d.phases {
            c.status = p.status;
        }
        if let Some(kill) = d.kill {
            kills.push((s, kill.container.clone()));
            pod.status = Some(kill.status);
        }
        if let Some((_, states)) = d.states {
            c.status
                .get_or_insert_with(Default::default)
                .container_recreate_states = states;
        }
        if let Some(next) = d.complete {
            c.status = next.status;
        }
        if c.phase() == phase::COMPLETED {
            break;
        }
    }
    (c, kills)
}

fn state_phases(c: &ContainerRecreateRequest) -> Vec<(String, String)> {
    c.status
        .iter()
        .flat_map(|s| s.container_recreate_states.iter())
        .map(|s| (s.name.clone(), s.phase.clone()))
        .collect()
}

#[test]
fn one_container_is_recreated_exactly_once_and_the_crr_completes() {
    let mut p = pod(&["app", "sidecar"]);
    for s in 0..4 {
        kubelet_step(&mut p, t(s));
    }
    let before_id = runtime(&p)["app"].id.clone();
    let c = crr(&p, &["app"], json!({}), t(5));
    let (c, kills) = run(&mut p, c, 5, 30);
    assert_eq!(c.phase(), phase::COMPLETED, "{:?}", c.status);
    assert_eq!(c.status.as_ref().unwrap().message, "");
    assert_eq!(state_phases(&c), [("app".into(), "Succeeded".into())]);
    assert_eq!(
        kills,
        [(6, "app".to_owned())],
        "killed once, in the pass after the CRR went Recreating"
    );
    assert_eq!(restarts(&p, "app"), 1);
    assert_eq!(
        restarts(&p, "sidecar"),
        0,
        "the other container is untouched"
    );
    assert_ne!(runtime(&p)["app"].id, before_id, "a new container ID");
}

#[test]
fn ordered_recreate_waits_for_each_container_and_min_started_seconds() {
    let mut p = pod(&["a", "b"]);
    for s in 0..4 {
        kubelet_step(&mut p, t(s));
    }
    let c = crr(
        &p,
        &["a", "b"],
        json!({"orderedRecreate": true, "minStartedSeconds": 3}),
        t(5),
    );
    let (c, kills) = run(&mut p, c, 5, 60);
    assert_eq!(c.phase(), phase::COMPLETED, "{:?}", c.status);
    assert_eq!(
        state_phases(&c),
        [
            ("a".into(), "Succeeded".into()),
            ("b".into(), "Succeeded".into())
        ]
    );
    let [(ka, a), (kb, b)] = kills.as_slice() else {
        panic!("two kills expected: {kills:?}");
    };
    assert_eq!((a.as_str(), b.as_str()), ("a", "b"));
    assert!(
        kb - ka > 3,
        "b waits until a has been up minStartedSeconds: {kills:?}"
    );
    assert_eq!((restarts(&p, "a"), restarts(&p, "b")), (1, 1));
}

#[test]
fn without_order_both_containers_are_killed_in_successive_passes() {
    let mut p = pod(&["a", "b"]);
    for s in 0..4 {
        kubelet_step(&mut p, t(s));
    }
    let c = crr(&p, &["a", "b"], json!({}), t(5));
    let (c, kills) = run(&mut p, c, 5, 30);
    assert_eq!(c.phase(), phase::COMPLETED);
    assert_eq!(kills.len(), 2);
    assert!(
        kills[1].0 - kills[0].0 <= 1,
        "b does not wait for a: {kills:?}"
    );
}

#[test]
fn a_steered_kill_failure_follows_the_failure_policy() {
    let mut p = pod(&["a", "b"]);
    for s in 0..4 {
        kubelet_step(&mut p, t(s));
    }
    p.metadata.annotations =
        Some([(format!("{KILL_ANNOTATION_PREFIX}a"), "fail".to_owned())].into());
    let fail = crr(&p, &["a", "b"], json!({"orderedRecreate": true}), t(5));
    let (done, kills) = run(&mut p.clone(), fail, 5, 30);
    assert_eq!(done.phase(), phase::COMPLETED);
    assert!(kills.is_empty(), "policy Fail stops at the first failure");
    let states = &done.status.as_ref().unwrap().container_recreate_states;
    assert_eq!(states[0].phase, "Failed");
    assert_eq!(
        states[0].message,
        "kill container error: simulated runtime failure (pod annotation sim.kruise-tui.io/kill-a: \"fail\")"
    );

    let ignore = crr(
        &p,
        &["a", "b"],
        json!({"orderedRecreate": true, "failurePolicy": "Ignore"}),
        t(5),
    );
    let (done, kills) = run(&mut p, ignore, 5, 30);
    assert_eq!(done.phase(), phase::COMPLETED);
    assert_eq!(
        state_phases(&done),
        [
            ("a".into(), "Failed".into()),
            ("b".into(), "Succeeded".into())
        ]
    );
    assert_eq!(
        kills.iter().map(|k| k.1.as_str()).collect::<Vec<_>>(),
        ["b"]
    );
}

#[test]
fn other_crrs_of_the_pod_wait_pending_and_completed_ones_are_left_alone() {
    let mut p = pod(&["a"]);
    for s in 0..4 {
        kubelet_step(&mut p, t(s));
    }
    let first = crr(&p, &["a"], json!({}), t(5));
    let mut second = crr(&p, &["a"], json!({}), t(6));
    second.metadata.name = Some("r2".into());
    let out = plan(V19, &[second.clone(), first.clone()], Some(&p), t(6));
    let phases: Vec<(Option<&str>, &str)> = out
        .phases
        .iter()
        .map(|c| (c.metadata.name.as_deref(), c.phase()))
        .collect();
    assert_eq!(phases, [(Some("r2"), "Pending"), (Some("r"), "Recreating")]);
    assert!(out.kill.is_none(), "the phase is written before any kill");

    let mut done = first.clone();
    done.status = Some(crate::kruise::crr::types::ContainerRecreateRequestStatus {
        phase: phase::COMPLETED.into(),
        completion_time: Some(Time(t(7))),
        ..Default::default()
    });
    assert_eq!(plan(V19, &[done], Some(&p), t(8)), Plan::default());
}

#[test]
fn a_container_restarted_while_its_states_write_was_lost_still_counts_as_killed() {
    let mut p = pod(&["a"]);
    for s in 0..4 {
        kubelet_step(&mut p, t(s));
    }
    let mut c = crr(&p, &["a"], json!({}), t(5));
    c.status = Some(crate::kruise::crr::types::ContainerRecreateRequestStatus {
        phase: phase::RECREATING.into(),
        ..Default::default()
    });
    // The kill happened but the states that said so were never written.
    p.status = restart(&p, "a", t(6));
    let out = plan(V19, std::slice::from_ref(&c), Some(&p), t(6));
    assert!(out.kill.is_none(), "no second kill: {out:?}");
    let (_, states) = out.states.expect("states written");
    assert_eq!(states[0].phase, phase::RECREATING);
    assert!(
        states[0].is_killed,
        "a Recreating container is marked killed"
    );
}
