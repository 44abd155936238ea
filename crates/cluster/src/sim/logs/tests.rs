use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::*;
use crate::sim::{ids, kubelet::Timing};

fn t0() -> Timestamp {
    "2025-03-10T12:00:00Z".parse().unwrap()
}

fn secs(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

fn run(image: &str, end: Option<Exit>) -> Run {
    Run {
        pod: "web-x".into(),
        namespace: "demo".into(),
        uid: "3f1c0d6e-0000-4000-8000-000000000001".into(),
        container: "main".into(),
        image: image.into(),
        container_id: ids::container_id("3f1c0d6e", "main", 0),
        started: t0(),
        end,
    }
}

fn texts(lines: &[LogLine]) -> Vec<&str> {
    lines.iter().map(|l| l.text.as_str()).collect()
}

#[test]
fn a_run_logs_the_same_lines_every_time_and_a_restart_logs_afresh() {
    let r = run("nginx:1.25.4", None);
    let until = t0() + secs(60);
    let a = lines(&r, None, until, None);
    assert_eq!(a, lines(&r, None, until, None));
    let mut restarted = r.clone();
    restarted.container_id = ids::container_id("3f1c0d6e", "main", 1);
    let b = lines(&restarted, None, until, None);
    assert_ne!(texts(&a), texts(&b), "another run, other requests");
    assert!(a.windows(2).all(|w| w[0].at <= w[1].at), "in time order");
    assert!(a.iter().all(|l| l.at >= t0() && l.at <= until));
}

#[test]
fn nginx_prints_its_entrypoint_and_version_then_access_lines() {
    let r = run("nginx:1.25.4", None);
    let all = lines(&r, None, t0() + secs(61), None);
    let text = texts(&all);
    assert!(text[0].starts_with("/docker-entrypoint.sh:"), "{text:?}");
    assert!(
        text.contains(&"2025/03/10 12:00:00 [notice] 1#1: nginx/1.25.4"),
        "{text:?}"
    );
    let access: Vec<&&str> = text.iter().filter(|l| l.contains("HTTP/1.1\"")).collect();
    // One line about every two seconds over the minute after the first second.
    assert!(
        (25..=31).contains(&access.len()),
        "{} access lines",
        access.len()
    );
    let first = access[0];
    assert!(first.starts_with("10."), "{first}");
    assert!(first.contains(" - - [10/Mar/2025:12:00:0"), "{first}");
}

#[test]
fn each_image_family_logs_in_its_own_format() {
    let until = t0() + secs(120);
    let pg = lines(&run("postgres:16.2", None), None, until, None);
    assert!(
        texts(&pg)
            .iter()
            .any(|l| l.contains("LOG:  starting PostgreSQL 16.2 "))
    );
    assert!(
        texts(&pg)
            .iter()
            .any(|l| l.ends_with("database system is ready to accept connections"))
    );
    assert!(
        pg.last().unwrap().text.starts_with("2025-03-10 12:01:"),
        "{:?}",
        pg.last()
    );

    let fb = lines(&run("fluent/fluent-bit:3.0.4", None), None, until, None);
    assert_eq!(fb[0].text, "Fluent Bit v3.0.4");
    assert!(fb.last().unwrap().text.starts_with("[2025/03/10 12:0"));

    let app = lines(&run("demo/checkout:1.4.2", None), None, until, None);
    assert!(
        app[0]
            .text
            .contains("msg=\"starting checkout\" version=1.4.2 image=demo/checkout:1.4.2"),
        "{:?}",
        app[0]
    );
    assert!(
        texts(&app)
            .iter()
            .any(|l| l.contains("msg=\"request served\""))
    );
    assert!(
        texts(&app)
            .iter()
            .any(|l| l.contains("msg=heartbeat uptime="))
    );

    let shipper = lines(&run("demo/logtail:1.1", None), None, until, None);
    assert!(
        texts(&shipper)
            .iter()
            .any(|l| l.contains("msg=\"shipped batch\""))
    );
    assert!(!texts(&shipper).iter().any(|l| l.contains("request served")));
}

#[test]
fn a_crash_image_logs_its_failure_before_it_exits_and_nothing_periodic() {
    let end = Exit {
        at: t0() + secs(2),
        code: 1,
    };
    let r = run("demo/checkout:1.5.0-crash", Some(end));
    let all = lines(&r, None, t0() + secs(30), None);
    let text = texts(&all);
    assert!(text[0].contains("starting checkout"), "{text:?}");
    assert!(text[0].contains("image=demo/checkout:1.5.0-crash"));
    assert!(text.iter().any(|l| l.contains("level=error")), "{text:?}");
    assert!(
        text.last()
            .unwrap()
            .ends_with("msg=\"checkout exited\" code=1"),
        "{text:?}"
    );
    assert!(!text.iter().any(|l| l.contains("request served")));
    assert!(
        all.iter().all(|l| l.at < end.at),
        "the failure comes before the exit"
    );
    // Every run of the image fails the same way.
    let mut other = r.clone();
    other.container_id = ids::container_id("3f1c0d6e", "main", 7);
    other.started = t0() + secs(100);
    other.end = Some(Exit {
        at: other.started + secs(2),
        code: 1,
    });
    let again = lines(&other, None, t0() + secs(200), None);
    let strip = |l: &LogLine| l.text.split_once(' ').map(|(_, rest)| rest.to_owned());
    assert_eq!(
        all.iter().map(strip).collect::<Vec<_>>(),
        again.iter().map(strip).collect::<Vec<_>>()
    );
}

#[test]
fn a_stopped_run_ends_with_its_shutdown_and_a_killed_one_with_silence() {
    let stop = t0() + secs(30);
    let r = run("nginx:1.26.0", Some(Exit { at: stop, code: 0 }));
    let all = lines(&r, None, stop + secs(60), None);
    assert_eq!(
        all.last().unwrap().text,
        "2025/03/10 12:00:30 [notice] 1#1: exit"
    );
    assert!(
        texts(&all).contains(
            &"2025/03/10 12:00:30 [notice] 1#1: signal 3 (SIGQUIT) received, shutting down"
        )
    );
    let periodic_after_stop = all
        .iter()
        .filter(|l| l.text.contains("HTTP/1.1") && l.at >= stop)
        .count();
    assert_eq!(periodic_after_stop, 0);
    assert_eq!(
        next_line_at(&r, stop + secs(1)),
        None,
        "a stopped run prints no more"
    );

    let killed = run(
        "nginx:1.26.0",
        Some(Exit {
            at: stop,
            code: 137,
        }),
    );
    let all = lines(&killed, None, stop + secs(60), None);
    assert!(
        all.last().unwrap().text.contains("HTTP/1.1"),
        "{:?}",
        all.last()
    );
}

#[test]
fn tail_and_since_cut_the_same_log() {
    let r = run("demo/checkout:1.4.2", None);
    let until = t0() + secs(300);
    let all = lines(&r, None, until, None);
    assert_eq!(
        lines(&r, None, until, Some(7)),
        all[all.len() - 7..].to_vec()
    );
    assert_eq!(lines(&r, None, until, Some(0)), Vec::new());
    assert_eq!(lines(&r, None, until, Some(100_000)), all);
    let since = t0() + secs(250);
    let recent: Vec<LogLine> = all.iter().filter(|l| l.at >= since).cloned().collect();
    assert!(!recent.is_empty());
    assert_eq!(lines(&r, Some(since), until, None), recent);
    assert_eq!(
        lines(&r, Some(since), until, Some(3)),
        recent[recent.len() - 3..].to_vec()
    );
}

#[test]
fn following_line_by_line_gives_the_whole_log() {
    for image in ["nginx:1.25.4", "postgres:16.2", "demo/checkout:1.5.0-crash"] {
        let end = image.contains("crash").then(|| Exit {
            at: t0() + secs(2),
            code: 1,
        });
        let r = run(image, end);
        let until = t0() + secs(40);
        let mut followed = Vec::new();
        let mut cursor = t0() - secs(1);
        while let Some(next) = next_line_at(&r, cursor).filter(|n| *n <= until) {
            assert!(next > cursor);
            let due = lines(&r, Some(cursor + SignedDuration::from_nanos(1)), next, None);
            assert!(!due.is_empty(), "{image}: a line is due at {next}");
            followed.extend(due);
            cursor = next;
        }
        assert_eq!(followed, lines(&r, None, until, None), "{image}");
    }
}

#[test]
fn a_long_run_keeps_only_its_newest_lines() {
    let r = run("nginx:1.25.4", None);
    let all = lines(&r, None, t0() + secs(86_400), None);
    assert_eq!(all.len() as u64, KEPT_LINES);
    assert!(
        !all[0].text.starts_with("/docker-entrypoint.sh"),
        "rotated away"
    );
}

#[test]
fn timestamps_are_rfc3339_with_trimmed_nanoseconds() {
    assert_eq!(rfc3339_nano(t0()), "2025-03-10T12:00:00Z");
    let t = t0() + SignedDuration::from_nanos(120_500_000);
    assert_eq!(rfc3339_nano(t), "2025-03-10T12:00:00.1205Z");
    let line = LogLine {
        at: t,
        text: "hello".into(),
    };
    assert_eq!(line.stamped(), "2025-03-10T12:00:00.1205Z hello");
}

fn pod(status: serde_json::Value, annotations: serde_json::Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "web-x", "namespace": "demo", "uid": "u-1", "annotations": annotations},
        "spec": {"containers": [{"name": "nginx", "image": "nginx:1.26.0"}]},
        "status": {"containerStatuses": [status]},
    }))
    .unwrap()
}

fn no_images() -> Vec<String> {
    Vec::new()
}

#[test]
fn the_kubelet_refuses_like_the_real_one() {
    let creating = pod(
        json!({"name": "nginx", "image": "nginx:1.26.0", "imageID": "", "ready": false, "restartCount": 0,
               "state": {"waiting": {"reason": "ContainerCreating"}}}),
        json!({}),
    );
    let t = Timing::default();
    let err = run_of(&creating, "nginx", false, &t, &no_images).unwrap_err();
    assert_eq!(
        err.to_string(),
        "container \"nginx\" in pod \"web-x\" is waiting to start: ContainerCreating"
    );
    let err = run_of(&creating, "nginx", true, &t, &no_images).unwrap_err();
    assert_eq!(
        err.to_string(),
        "previous terminated container \"nginx\" in pod \"web-x\" not found"
    );
    let err = run_of(&creating, "other", false, &t, &no_images).unwrap_err();
    assert_eq!(
        err.to_string(),
        "container \"other\" in pod \"web-x\" is not available"
    );
}

#[test]
fn a_crash_loop_serves_the_crashed_run_now_and_as_previous() {
    let crashed = pod(
        json!({"name": "nginx", "image": "demo/checkout:1.5.0-crash", "imageID": "x", "ready": false, "restartCount": 2,
               "containerID": "containerd://c2",
               "state": {"waiting": {"reason": "CrashLoopBackOff"}},
               "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "containerID": "containerd://c2",
                   "startedAt": "2025-03-10T12:00:10Z", "finishedAt": "2025-03-10T12:00:12Z"}}}),
        json!({}),
    );
    let t = Timing::default();
    let now = run_of(&crashed, "nginx", false, &t, &no_images).unwrap();
    let prev = run_of(&crashed, "nginx", true, &t, &no_images).unwrap();
    assert_eq!(now, prev);
    assert_eq!(prev.container_id, "containerd://c2");
    assert_eq!(
        prev.end,
        Some(Exit {
            at: "2025-03-10T12:00:12Z".parse().unwrap(),
            code: 1
        })
    );
    let log = lines(&prev, None, t0() + secs(60), None);
    assert!(log.last().unwrap().text.contains("exited\" code=1"));
}

#[test]
fn a_running_crash_image_is_known_to_fail_after_crash_after() {
    let mut p = pod(
        json!({"name": "nginx", "image": "demo/checkout:1.5.0-crash", "imageID": "x", "ready": false, "restartCount": 3,
               "containerID": "containerd://c3",
               "state": {"running": {"startedAt": "2025-03-10T12:00:20Z"}}}),
        json!({}),
    );
    if let Some(spec) = p.spec.as_mut() {
        spec.containers[0].image = Some("demo/checkout:1.5.0-crash".into());
    }
    let timing = Timing::default();
    let r = run_of(&p, "nginx", false, &timing, &no_images).unwrap();
    let started: Timestamp = "2025-03-10T12:00:20Z".parse().unwrap();
    assert_eq!(r.end.map(|e| e.at), Some(started + timing.crash_after));
}

#[test]
fn the_run_before_an_in_place_update_ran_the_old_image() {
    let state = json!({"revision": "web-2", "updateTimestamp": "2025-03-10T12:00:30Z",
        "lastContainerStatuses": {"nginx": {"imageID": ids::image_id("nginx:1.25.4")}}})
    .to_string();
    let updated = pod(
        json!({"name": "nginx", "image": "nginx:1.26.0", "imageID": ids::image_id("nginx:1.26.0"),
               "ready": true, "restartCount": 1, "containerID": "containerd://c1",
               "state": {"running": {"startedAt": "2025-03-10T12:00:31Z"}},
               "lastState": {"terminated": {"exitCode": 0, "reason": "Completed", "containerID": "containerd://c0",
                   "startedAt": "2025-03-10T12:00:00Z", "finishedAt": "2025-03-10T12:00:31Z"}}}),
        json!({"apps.kruise.io/inplace-update-state": state}),
    );
    let t = Timing::default();
    let candidates = || vec!["nginx:1.26.0".to_owned(), "nginx:1.25.4".to_owned()];
    let prev = run_of(&updated, "nginx", true, &t, &candidates).unwrap();
    assert_eq!(prev.image, "nginx:1.25.4");
    let log = lines(&prev, None, t0() + secs(90), None);
    assert!(texts(&log).iter().any(|l| l.ends_with("nginx/1.25.4")));
    assert_eq!(
        log.last().unwrap().text,
        "2025/03/10 12:00:31 [notice] 1#1: exit"
    );
    // Without the candidates the digest is all that is known.
    let prev = run_of(&updated, "nginx", true, &t, &no_images).unwrap();
    assert_eq!(prev.image, ids::image_id("nginx:1.25.4"));
    // The current run is the new image.
    let now = run_of(&updated, "nginx", false, &t, &candidates).unwrap();
    assert_eq!(now.image, "nginx:1.26.0");
}

#[test]
fn candidates_are_every_image_the_revisions_name() {
    let revs = [
        json!({"data": {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "nginx:1.25.4"}]}}}}}),
        json!({"data": {"spec": {"containers": [{"name": "s", "image": "demo/logtail:1.0"}, {"image": "nginx:1.25.4"}]}}}),
    ];
    assert_eq!(
        previous_image_candidates(&revs),
        vec!["demo/logtail:1.0".to_owned(), "nginx:1.25.4".to_owned()]
    );
}
