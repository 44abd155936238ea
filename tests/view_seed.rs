//! Snapshots (insta + TestBackend) of the seed kinds' views: `:acj` lists AdvancedCronJobs with
//! the next run in each job's zone (fixed clock 2026-01-10T12:00Z), Enter opens one job's
//! detail, and `P` asks the action layer to pause (or resume) it.

#[path = "fixtures/console/harness.rs"]
mod harness;

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
    assert_eq!(effects, vec![Effect::FetchCronJobs]);
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
    assert_eq!(req.target.kind, "AdvancedCronJob");
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
    h.press(&[":"]);
    h.type_text("advancedcronjobs");
    h.press(&["enter"]);
    h.feed(Msg::EffectDone(EffectResult::CronJobs(Err(
        "advancedcronjobs: forbidden".into(),
    ))));
    assert!(h.screen().contains("advancedcronjobs: forbidden"));
}
