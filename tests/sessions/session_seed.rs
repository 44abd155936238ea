//! Scripted key sessions of the seed kinds' views against the test bed (the embedded cluster,
//! or an existing one under KRUISE_TUI_TEST_KUBECONFIG): `:acj` is
//! opened on an empty list, an AdvancedCronJob created with kubectl appears in it without a
//! key press, Enter shows its next run in its zone, and `P` (confirmed) pauses it on the
//! server, which the view then shows.

use crate::live;

use kruise_tui::app::{
    App,
    route::{Fetch, Route},
};
use live::Live;

const ACJ: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata: {name: warmup}
spec:
  schedule: "0 9 * * 1-5"
  timeZone: Europe/Berlin
  template:
    broadcastJobTemplate:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: pull, image: "nginx:1.26"}]
"#;

fn listed(app: &App, name: &str) -> bool {
    match app.current() {
        Route::CronJobs(v) => match &v.listing {
            Fetch::Loaded(jobs) => jobs
                .iter()
                .any(|j| j.metadata.name.as_deref() == Some(name)),
            _ => false,
        },
        _ => false,
    }
}

fn paused_shown(app: &App) -> bool {
    match app.current() {
        Route::CronJobs(v) => v.current().is_some_and(|j| j.spec.paused),
        _ => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_job_created_with_kubectl_appears_and_pauses() {
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    live.press(&[":"]).await;
    live.type_text("acj").await;
    live.press(&["enter"]).await;
    live.until(
        "the empty list",
        30,
        |app| matches!(app.current(), Route::CronJobs(v) if matches!(v.listing, Fetch::Loaded(_))),
    )
    .await;
    assert!(live.screen().contains("No AdvancedCronJob here"));

    kubectl.apply(&[], ACJ).await;
    // No key is pressed: the periodic list brings it in.
    live.until("warmup listed", 30, |app| listed(app, "warmup"))
        .await;
    let screen = live.screen();
    assert!(screen.contains("Europe/Berlin"), "{screen}");
    assert!(
        screen.contains(" CET ") || screen.contains(" CEST "),
        "{screen}"
    );

    live.press(&["enter"]).await;
    let screen = live.screen();
    assert!(
        screen.contains(&format!("AdvancedCronJob {}/warmup", live.ns())),
        "{screen}"
    );
    assert!(screen.contains("Next run"), "{screen}");
    assert!(screen.contains("BroadcastJob"), "{screen}");

    live.press(&["P"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(
        preview.prepared.changes,
        vec!["paused false → true".to_owned()]
    );
    let status = live.confirm().await;
    assert!(status.contains("warmup"), "{status}");
    kubectl
        .assert_jsonpath(&["advancedcronjobs", "warmup"], "{.spec.paused}", "true")
        .await;
    live.until("the pause shown", 30, paused_shown).await;
    assert!(live.screen().contains("yes (P resumes)"));
    live.shutdown().await;
}
