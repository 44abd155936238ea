//! Triage's ranking: stuck rollouts, crash loops and what ages out.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::*;
use crate::api::{SlimPod, pod::SlimContainerStatus};

pub(super) fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

pub(super) fn workload(updated: i32, expected: i32) -> WorkloadRow {
    WorkloadRow {
        kind: Kind::CloneSet,
        namespace: "demo".into(),
        name: "checkout".into(),
        uid: "uid-checkout".into(),
        selector: LabelSelector::default(),
        desired: 6,
        ready: 6,
        updated,
        expected: Some(expected),
        partition: None,
        paused: false,
        current_revision: "checkout-old".into(),
        update_revision: "checkout-new".into(),
        protection: None,
        created: Some(at(0)),
        search: String::new(),
    }
}

pub(super) fn pod(
    name: &str,
    revision: &str,
    ready: bool,
    restarts: i32,
    crash: bool,
) -> Arc<PodRow> {
    let state = crash.then(|| crate::api::pod::SlimContainerState {
        waiting: Some(Box::new(crate::api::pod::SlimStateDetail {
            reason: Some("CrashLoopBackOff".into()),
            ..Default::default()
        })),
        ..Default::default()
    });
    Arc::new(PodRow {
        pod: Arc::new(SlimPod {
            status: crate::api::pod::SlimPodStatus {
                container_statuses: vec![SlimContainerStatus {
                    name: "main".into(),
                    ready,
                    restart_count: restarts,
                    state,
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            },
            ..Default::default()
        }),
        namespace: "demo".into(),
        name: name.into(),
        ready: String::new(),
        all_ready: ready,
        status: if crash { "CrashLoopBackOff" } else { "Running" }.into(),
        restarts,
        node: "node-1".into(),
        revision: revision.into(),
        owner_uid: Some("uid-checkout".into()),
        created: Some(at(0)),
        search: String::new(),
    })
}

fn run(
    now: Timestamp,
    workloads: &[WorkloadRow],
    pods: &[Arc<PodRow>],
    memory: &mut Memory,
) -> Vec<Problem> {
    run_with(now, workloads, pods, memory, &HashMap::new())
}

pub(super) fn run_with(
    now: Timestamp,
    workloads: &[WorkloadRow],
    pods: &[Arc<PodRow>],
    memory: &mut Memory,
    progress: &HashMap<String, Conditions>,
) -> Vec<Problem> {
    run_index(now, workloads, &PodIndex::build(pods), memory, progress)
}

fn run_index(
    now: Timestamp,
    workloads: &[WorkloadRow],
    pods: &PodIndex,
    memory: &mut Memory,
    progress: &HashMap<String, Conditions>,
) -> Vec<Problem> {
    let owners = HashMap::from([("uid-checkout".to_owned(), 0)]);
    let input = Input {
        now,
        stall_seconds: 600,
        workloads,
        owners: &owners,
        pods,
        budgets: &[],
        restarts: &[],
        denials: &[],
        progress,
        rollouts: &[],
    };
    triage(&input, memory)
}

#[test]
fn a_crashing_update_revision_is_a_stuck_rollout_first_then_its_crash_loop() {
    let pods = [
        pod("checkout-a", "checkout-new", false, 4, true),
        pod("checkout-b", "checkout-old", true, 0, false),
    ];
    let mut memory = Memory::default();
    let out = run(at(3600), &[workload(1, 6)], &pods, &mut memory);
    let kinds: Vec<ProblemKind> = out.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [ProblemKind::StuckRollout, ProblemKind::CrashLoop]);
    assert!(
        out[0]
            .why
            .contains("1 pod of the new revision new not ready"),
        "{}",
        out[0].why
    );
    assert_eq!(
        out[0].owner.as_ref().map(|o| o.name.as_str()),
        Some("checkout")
    );
    assert!(out[1].why.contains("on the new revision"), "{}", out[1].why);
    assert_eq!(
        out[1].object.as_ref().map(|o| o.name.as_str()),
        Some("checkout-a")
    );
}

#[test]
fn no_progress_for_the_stall_time_is_stuck_and_progress_clears_it() {
    let pods = [pod("checkout-a", "checkout-new", true, 0, false)];
    let mut memory = Memory::default();
    assert!(run(at(0), &[workload(1, 6)], &pods, &mut memory).is_empty());
    assert!(run(at(599), &[workload(1, 6)], &pods, &mut memory).is_empty());
    let out = run(at(600), &[workload(1, 6)], &pods, &mut memory);
    assert_eq!(out.len(), 1);
    assert!(out[0].why.contains("no progress for 10m"), "{}", out[0].why);
    // One more pod updated: progress, the clock starts again.
    assert!(run(at(700), &[workload(2, 6)], &pods, &mut memory).is_empty());
    // A paused rollout is held on purpose.
    let mut paused = workload(2, 6);
    paused.paused = true;
    assert!(run(at(5000), &[paused], &pods, &mut memory).is_empty());
}

#[test]
fn restarts_climbing_on_an_unready_old_pod_are_a_crash_loop_that_ages_out() {
    let mut memory = Memory::default();
    let mut done = workload(6, 6);
    done.current_revision = done.update_revision.clone();
    let none = HashMap::new();
    let first = pod("checkout-b", "checkout-old", false, 1, false);
    let mut index = PodIndex::build(std::slice::from_ref(&first));
    let workloads = std::slice::from_ref(&done);
    assert!(run_index(at(0), workloads, &index, &mut memory, &none).is_empty());
    // The pod's next event carries a higher count: the index stamps when it rose.
    let climbed = pod("checkout-b", "checkout-old", false, 2, false);
    index.replace(Some(&first), Some(&climbed), at(10));
    let out = run_index(at(10), workloads, &index, &mut memory, &none);
    assert_eq!(out.len(), 1);
    assert!(out[0].why.contains("old revision"), "{}", out[0].why);
    let later = run_index(
        at(10 + RESTART_WINDOW_SECONDS),
        workloads,
        &index,
        &mut memory,
        &none,
    );
    assert!(later.is_empty(), "{later:?}");
    // The same count again (a resync) is no rise.
    let mut fresh = PodIndex::build(std::slice::from_ref(&climbed));
    fresh.replace(Some(&climbed), Some(&climbed), at(20));
    assert_eq!(fresh.restart_rose("demo", "checkout-b"), None);
}

#[test]
fn a_restart_someone_asked_for_is_not_a_crash_loop() {
    let mut done = workload(6, 6);
    done.current_revision = done.update_revision.clone();
    let workloads = std::slice::from_ref(&done);
    let owners = HashMap::from([("uid-checkout".to_owned(), 0)]);
    let first = pod("checkout-b", "checkout-old", true, 0, false);
    let restarted = pod("checkout-b", "checkout-old", false, 1, false);
    let mut index = PodIndex::build(std::slice::from_ref(&first));
    index.replace(Some(&first), Some(&restarted), at(100));
    let crr = |created: i64| CrrRow {
        namespace: "demo".into(),
        name: "checkout-b-restart".into(),
        phase: "Recreating".into(),
        pod: "checkout-b".into(),
        node: "node-1".into(),
        containers: vec![("main".into(), "Recreating".into())],
        message: String::new(),
        created: Some(at(created)),
        deadline: None,
    };
    let run = |restarts: &[CrrRow], index: &PodIndex| {
        let input = Input {
            now: at(101),
            stall_seconds: 600,
            workloads,
            owners: &owners,
            pods: index,
            budgets: &[],
            restarts,
            denials: &[],
            progress: &HashMap::new(),
            rollouts: &[],
        };
        triage(&input, &mut Memory::default())
    };
    // Unexplained: a crash loop.
    let kinds: Vec<ProblemKind> = run(&[], &index).iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [ProblemKind::CrashLoop]);
    // A ContainerRecreateRequest for the pod made just before: asked for.
    assert!(run(&[crr(95)], &index).is_empty());
    // One made long before (or after) the restart explains nothing.
    assert_eq!(
        run(&[crr(100 - ASKED_RESTART_SECONDS - 1)], &index).len(),
        1
    );
    assert_eq!(run(&[crr(101)], &index).len(), 1);
    // The container failed on its own (exit 1) after the ask: a crash, asked for or not.
    let mut crashed = (*restarted).clone();
    let mut slim = (*crashed.pod).clone();
    let mut statuses = slim.status.container_statuses.to_vec();
    statuses[0].last_state = Some(crate::api::pod::SlimContainerState {
        terminated: Some(Box::new(crate::api::pod::SlimStateDetail {
            reason: Some("Error".into()),
            exit_code: Some(1),
            ..Default::default()
        })),
        ..Default::default()
    });
    slim.status.container_statuses = statuses.into();
    crashed.pod = Arc::new(slim);
    let crashed = Arc::new(crashed);
    let mut crash_index = PodIndex::build(std::slice::from_ref(&first));
    crash_index.replace(Some(&first), Some(&crashed), at(100));
    assert_eq!(run(&[crr(95)], &crash_index).len(), 1);
    // An in-place update that began just before: asked for too.
    let mut in_place = (*restarted).clone();
    let mut slim = (*in_place.pod).clone();
    let state = format!(
        r#"{{"revision":"checkout-new","updateTimestamp":"{}","lastContainerStatuses":null}}"#,
        at(90)
    );
    slim.metadata.annotations = crate::api::pod::StrMap::from_pairs(vec![(
        "apps.kruise.io/inplace-update-state".into(),
        state.as_str().into(),
    )]);
    in_place.pod = Arc::new(slim);
    let in_place = Arc::new(in_place);
    let mut index = PodIndex::build(std::slice::from_ref(&first));
    index.replace(Some(&first), Some(&in_place), at(100));
    assert!(run(&[], &index).is_empty());
}
