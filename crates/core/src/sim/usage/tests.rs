use super::*;
use serde_json::json;

fn pod(phase: &str, annotations: serde_json::Value, started: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "demo", "uid": "uid-1", "annotations": annotations},
        "spec": {"containers": [
            {"name": "app", "image": "x", "resources": {
                "requests": {"cpu": "250m", "memory": "512Mi"},
                "limits": {"cpu": "500m", "memory": "1Gi"}}},
            {"name": "side", "image": "y"},
            {"name": "waiting", "image": "z"},
        ]},
        "status": {"phase": phase, "containerStatuses": [
            {"name": "app", "image": "x", "imageID": "", "ready": true, "restartCount": 0,
             "state": {"running": {"startedAt": started}}},
            {"name": "side", "image": "y", "imageID": "", "ready": true, "restartCount": 0,
             "state": {"running": {"startedAt": started}}},
            {"name": "waiting", "image": "z", "imageID": "", "ready": false, "restartCount": 3,
             "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
        ]},
    }))
    .unwrap()
}

fn at(s: &str) -> Scrape {
    scrape(s.parse().unwrap())
}

#[test]
fn scrapes_fall_on_the_resolution_and_figures_hold_within_one() {
    let s = at("2026-11-27T10:00:14Z");
    assert_eq!(s.at.to_string(), "2026-11-27T10:00:00Z");
    assert!(s.window >= SignedDuration::from_secs(15) && s.window < SignedDuration::from_secs(16));
    let p = pod("Running", json!({}), "2026-11-27T09:00:00Z");
    assert_eq!(
        pod_usage(&p, &s),
        pod_usage(&p, &at("2026-11-27T10:00:01Z"))
    );
    // Deterministic: the same pod at the same scrape, computed again.
    assert_eq!(pod_usage(&p.clone(), &s), pod_usage(&p, &s));
}

#[test]
fn only_running_containers_old_enough_have_a_figure() {
    let s = at("2026-11-27T10:00:00Z");
    let names = |p: &Pod| {
        pod_usage(p, &s)
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>()
    };
    let running = pod("Running", json!({}), "2026-11-27T09:59:50Z");
    assert_eq!(names(&running), ["app", "side"]);
    // Started 9 s before the scrape: too fresh for metrics-server.
    assert!(names(&pod("Running", json!({}), "2026-11-27T09:59:51Z")).is_empty());
    for phase in ["Pending", "Succeeded", "Failed"] {
        assert!(names(&pod(phase, json!({}), "2026-11-27T09:00:00Z")).is_empty());
    }
}

#[test]
fn never_above_the_limits_and_a_hot_pod_sits_near_its_cpu_limit() {
    let cold = pod("Running", json!({}), "2026-01-01T00:00:00Z");
    let hot = pod(
        "Running",
        json!({HOT_ANNOTATION: "hot"}),
        "2026-01-01T00:00:00Z",
    );
    let mut hot_seen = Vec::new();
    for i in 0..500 {
        let s = scrape(Timestamp::from_second(1_795_000_000 + i * 15).unwrap());
        for p in [&cold, &hot] {
            let u = pod_usage(p, &s);
            let app = u[0].1;
            assert!(app.cpu_nanos <= 500_000_000, "{app:?}");
            assert!(app.memory_bytes <= 1024 * 1024 * 1024, "{app:?}");
            assert_eq!(app.memory_bytes % 4096, 0);
            assert!(app.cpu_nanos > 0 && u[1].1.cpu_nanos > 0);
        }
        let h = pod_usage(&hot, &s)[0].1;
        assert!(h.cpu_nanos >= 450_000_000, "hot at {i}: {h:?}");
        hot_seen.push(h.cpu_nanos);
    }
    // It drifts, slowly: not constant, and never jumps by more than a few percent of the limit
    // between two scrapes.
    assert!(hot_seen.iter().any(|c| *c != hot_seen[0]));
    for pair in hot_seen.windows(2) {
        assert!(pair[0].abs_diff(pair[1]) < 20_000_000, "{pair:?}");
    }
}

#[test]
fn node_overhead_is_plausible_and_varies_by_node() {
    let s = at("2026-11-27T10:00:00Z");
    let a = node_overhead("sim-node-0", &s);
    let b = node_overhead("sim-node-1", &s);
    assert_ne!(a, b);
    for u in [a, b] {
        assert!((100_000_000..300_000_000).contains(&u.cpu_nanos), "{u:?}");
        assert!(u.memory_bytes >= 700 * 1024 * 1024 && u.memory_bytes % 4096 == 0);
    }
    assert_eq!([a, b].into_iter().sum::<Usage>(), a + b);
}
