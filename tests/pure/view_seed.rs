//! Snapshots (insta + TestBackend) of the seed kinds' views: `:acj` lists AdvancedCronJobs with
//! the next run in each job's zone (fixed clock 2026-01-10T12:00Z), Enter opens one job's
//! detail, and `P` asks the action layer to pause (or resume) it. `:bcj` lists BroadcastJobs and
//! Enter shows one with its pods per node.

use crate::harness;

use harness::Harness;
use kruise_tui::{
    actions::Action,
    api::AdvancedCronJob,
    app::{Effect, Msg, msg::EffectResult},
};

fn jobs() -> Vec<AdvancedCronJob> {
    serde_json::from_value(serde_json::json!([
        {
            "metadata": {"name": "nightly-report", "namespace": "demo"},
            "spec": {"schedule": "30 2 * * *", "timeZone": "America/New_York",
                     "concurrencyPolicy": "Forbid",
                     "template": {"jobTemplate": {"spec": {"template": {"spec": {
                         "containers": [{"name": "r", "image": "report:1"}]}}}}}},
            "status": {"active": [{"kind": "Job", "name": "nightly-report-29470110"}],
                       "lastScheduleTime": "2026-01-10T07:30:00Z"}
        },
        {
            "metadata": {"name": "image-warmup", "namespace": "demo"},
            "spec": {"schedule": "0 9 * * 1-5", "timeZone": "Europe/Berlin", "paused": true,
                     "template": {"broadcastJobTemplate": {"spec": {"template": {"spec": {
                         "containers": [{"name": "w", "image": "nginx:1.26"}]}}}}}}
        },
        {
            "metadata": {"name": "broken", "namespace": "demo"},
            "spec": {"schedule": "0 9 * *", "template": {}}
        }
    ]))
    .expect("jobs")
}

#[test]
fn cron_jobs_list_detail_and_pause() {
    let mut h = Harness::loaded(None, (130, 20));
    h.press(&[":"]);
    let effects = h.type_text("acj");
    assert!(effects.is_empty());
    let effects = h.press(&["enter"]);
    assert_eq!(
        effects,
        vec![Effect::List(kruise_tui::app::Listing::CronJobs)]
    );
    insta::assert_snapshot!("acj_loading", h.screen());
    h.feed(Msg::EffectDone(EffectResult::CronJobs(Ok(jobs()))));
    // Sorted by name: broken, image-warmup, nightly-report.
    insta::assert_snapshot!("acj_list", h.screen());
    h.press(&["j", "j", "enter"]);
    insta::assert_snapshot!("acj_detail", h.screen());
    let effects = h.press(&["P"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    assert_eq!(req.action, Action::Pause);
    assert_eq!(req.target.kind.kind, "AdvancedCronJob");
    assert_eq!(req.target.name, "nightly-report");
    // The paused one resumes; Esc goes back to the list with the cursor kept.
    h.press(&["esc", "esc", "k"]);
    let effects = h.press(&["P"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    assert_eq!(
        (req.action.clone(), req.target.name.as_str()),
        (Action::Resume, "image-warmup")
    );
}

#[test]
fn cron_jobs_list_failure_is_shown() {
    let mut h = Harness::loaded(None, (100, 10));
    h.command("advancedcronjobs");
    h.feed(Msg::EffectDone(EffectResult::CronJobs(Err(
        "advancedcronjobs: forbidden".into(),
    ))));
    assert!(h.screen().contains("advancedcronjobs: forbidden"));
}

fn broadcast_listing() -> kruise_tui::app::broadcastjobs::Listing {
    use kruise_tui::app::broadcastjobs::{JobPod, Listing};
    let jobs = serde_json::from_value(serde_json::json!([
        {
            "metadata": {"name": "warmup", "namespace": "demo",
                         "creationTimestamp": "2026-01-10T11:00:00Z"},
            "spec": {"parallelism": 2,
                     "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 600,
                                          "ttlSecondsAfterFinished": 3600},
                     "template": {"spec": {"containers": [{"name": "w", "image": "nginx:1.26"}]}}},
            "status": {"desired": 3, "active": 0, "succeeded": 3, "failed": 0,
                       "phase": "completed", "startTime": "2026-01-10T11:00:01Z",
                       "completionTime": "2026-01-10T11:00:40Z",
                       "conditions": [{"type": "Complete", "status": "True",
                                       "message": "Job completed, 3 pods succeeded, 0 pods failed"}]}
        },
        {
            "metadata": {"name": "agent", "namespace": "ops",
                         "creationTimestamp": "2026-01-10T11:58:00Z"},
            "spec": {"completionPolicy": {"type": "Never"},
                     "template": {"spec": {"containers": [{"name": "a", "image": "agent:2"}]}}},
            "status": {"desired": 3, "active": 2, "succeeded": 0, "failed": 1, "phase": "running"}
        }
    ]))
    .expect("broadcast jobs");
    let pod = |node: &str, phase: &str| JobPod {
        namespace: "demo".into(),
        owner: "warmup".into(),
        name: format!("warmup-{node}"),
        node: node.into(),
        phase: phase.into(),
        ready: false,
    };
    Listing {
        jobs,
        pods: vec![
            pod("node-c", "Succeeded"),
            pod("node-a", "Succeeded"),
            pod("node-b", "Succeeded"),
        ],
    }
}

#[test]
fn broadcast_jobs_list_and_pods_per_node() {
    let mut h = Harness::loaded(None, (140, 20));
    let effects = h.command("bcj");
    assert_eq!(
        effects,
        vec![Effect::List(kruise_tui::app::Listing::BroadcastJobs)]
    );
    assert!(h.screen().contains("Listing BroadcastJobs"));
    h.feed(Msg::EffectDone(EffectResult::BroadcastJobs(Ok(
        broadcast_listing(),
    ))));
    // Sorted by namespace: demo/warmup, ops/agent.
    insta::assert_snapshot!("bcj_list", h.screen());
    h.press(&["enter"]);
    let screen = h.screen();
    insta::assert_snapshot!("bcj_detail", screen);
    // The pods of the job, one per node, ordered by node.
    let a = screen.find("warmup-node-a").expect("node-a pod");
    let c = screen.find("warmup-node-c").expect("node-c pod");
    assert!(a < c);
    h.press(&["esc", "j", "enter"]);
    assert!(h.screen().contains("BroadcastJob ops/agent"));
    assert!(h.screen().contains("Pods per node (0)"));
}

#[test]
fn broadcast_jobs_list_failure_is_shown() {
    let mut h = Harness::loaded(None, (100, 10));
    h.command("broadcastjobs");
    h.feed(Msg::EffectDone(EffectResult::BroadcastJobs(Err(
        "broadcastjobs: forbidden".into(),
    ))));
    assert!(h.screen().contains("broadcastjobs: forbidden"));
}

#[test]
fn broadcast_jobs_filter_by_name_and_keep_it_across_reloads() {
    let mut h = Harness::loaded(None, (140, 20));
    h.command("bcj");
    h.feed(Msg::EffectDone(EffectResult::BroadcastJobs(Ok(
        broadcast_listing(),
    ))));
    assert!(h.screen().contains("BroadcastJobs [2]"));
    // `/` narrows the list as the name is typed (namespace/name, case-insensitive).
    h.press(&["/"]);
    h.type_text("OPS/ag");
    let screen = h.screen();
    assert!(screen.contains("BroadcastJobs [1] /OPS/ag"), "{screen}");
    assert!(screen.contains("/OPS/ag█"), "{screen}");
    assert!(!screen.contains("warmup"), "{screen}");
    // Enter keeps the filter; Enter again opens the one row shown.
    h.press(&["enter", "enter"]);
    assert!(h.screen().contains("BroadcastJob ops/agent"));
    h.press(&["esc"]);
    // A fresh listing is filtered too.
    h.feed(Msg::EffectDone(EffectResult::BroadcastJobs(Ok(
        broadcast_listing(),
    ))));
    assert!(h.screen().contains("BroadcastJobs [1] /OPS/ag"));
    // Esc clears it: both again, the cursor still on agent.
    h.press(&["esc"]);
    let screen = h.screen();
    assert!(screen.contains("BroadcastJobs [2]"), "{screen}");
    h.press(&["enter"]);
    assert!(h.screen().contains("BroadcastJob ops/agent"));
    // No match says so; Esc while typing drops the filter.
    h.press(&["esc", "/"]);
    h.type_text("zzz");
    assert!(
        h.screen()
            .contains("Nothing matches /zzz (esc clears the filter)")
    );
    h.press(&["esc"]);
    assert!(h.screen().contains("BroadcastJobs [2]"));
    // The detail has no filter.
    h.press(&["enter", "/"]);
    assert!(h.screen().contains("nothing to filter in this view"));
}

#[test]
fn cron_jobs_filtered_row_is_the_one_acted_on() {
    let mut h = Harness::loaded(None, (130, 20));
    h.command("acj");
    h.feed(Msg::EffectDone(EffectResult::CronJobs(Ok(jobs()))));
    h.press(&["/"]);
    h.type_text("night");
    h.press(&["enter"]);
    assert!(h.screen().contains("AdvancedCronJobs [1] /night"));
    let effects = h.press(&["P"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    assert_eq!(req.target.name, "nightly-report");
}
