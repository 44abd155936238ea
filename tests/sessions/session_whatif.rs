//! `w` what-if as a scripted key session against the embedded cluster with its controllers and
//! simulated nodes: the What-if view shows the predicted steps while the console sends no
//! mutating request at all (counted on the server); from the confirm dialog it simulates the
//! exact request and `Esc` returns to the dialog; doing the action for real (`]` + `y`) then
//! updates exactly the pods the what-if's first step named.

use crate::live;
use crate::testbed;

use kruise_tui::{
    actions::whatif::Simulation,
    app::{
        dialog::Overlay,
        route::{Fetch, Route},
    },
};
use live::{Live, rollout, settled, updated};

const WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: "nginx:1.25"}]}
  updateStrategy: {type: InPlaceIfPossible, partition: 6, maxUnavailable: 2}
"#;

/// Waits for the What-if view's answer.
async fn simulated(live: &mut Live) -> Box<Simulation> {
    live.until(
        "the simulation",
        30,
        |app| matches!(app.current(), Route::WhatIf(v) if v.result != Fetch::Loading),
    )
    .await;
    let result = match live.app.current() {
        Route::WhatIf(v) => v.result.clone(),
        _ => Fetch::Failed("not the What-if view".into()),
    };
    match result {
        Fetch::Loaded(sim) => sim,
        other => panic!("no simulation: {other:?}\n{}", live.screen()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_sends_nothing_and_its_first_step_is_what_then_happens() {
    if testbed::skip_on_existing_cluster(
        "counts the console's requests in the embedded server's request log",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], WEB).await;
    live.until("web listed", 30, |app| {
        kruise_tui::app::keys::selection(app).is_some_and(|s| s.name == "web")
    })
    .await;
    live.press(&["enter"]).await;
    live.until("6 pods ready", 60, |app| {
        rollout(app).is_some_and(|v| v.rows().len() == 6 && v.rows().iter().all(|r| r.all_ready))
    })
    .await;
    kubectl
        .ok(&[
            "patch",
            "cloneset",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}}}}"#,
        ])
        .await;
    live.until("the new revision, nothing updated", 30, |app| {
        rollout(app)
            .and_then(|v| v.summary.as_ref())
            .is_some_and(|s| s.current_revision != s.update_revision)
            && settled(app)
    })
    .await;

    // `w` in the rollout view: the next batch, simulated; nothing sent.
    let sent = live.sent().len();
    live.press(&["w"]).await;
    let sim = simulated(&mut live).await;
    let screen = live.screen();
    assert!(screen.contains("simulation — nothing sent"), "{screen}");
    assert!(screen.contains("step 1"), "{screen}");
    let first = sim.steps.first().expect("a first step").updated_pods();
    assert!(!first.is_empty(), "{sim:#?}");
    assert!(
        sim.stop.to_string().contains("partition"),
        "the next batch stops at its partition: {}",
        sim.stop
    );
    live.settle(1000).await;
    assert_eq!(live.sent().len(), sent, "w sent a mutating request");
    live.press(&["esc"]).await;
    assert!(
        rollout(&live.app).is_some(),
        "Esc goes back to the rollout view"
    );

    // `]` opens the dialog; `w` there simulates its exact request; Esc returns to it.
    live.press(&["]"]).await;
    let preview = live.confirm_dialog().await;
    let sent = live.sent().len();
    live.press(&["w"]).await;
    let from_dialog = simulated(&mut live).await;
    assert_eq!(
        from_dialog.request.as_ref(),
        Some(&preview.prepared.request),
        "the dialog's request is the one simulated"
    );
    assert_eq!(from_dialog.steps[0].updated_pods(), first);
    live.press(&["esc"]).await;
    assert!(
        matches!(live.app.overlay(), Some(Overlay::Confirm(_))),
        "Esc returns to the confirm dialog"
    );
    live.settle(500).await;
    assert_eq!(live.sent().len(), sent, "w from the dialog sent nothing");

    // Done for real: exactly the pods the what-if's first step named update.
    let before = updated(&live.app);
    let status = live.confirm().await;
    assert!(status.contains("sent"), "{status}");
    live.until("the batch done", 60, |app| {
        settled(app) && updated(app).len() > before.len()
    })
    .await;
    let moved: Vec<String> = updated(&live.app).difference(&before).cloned().collect();
    assert_eq!(moved, first, "the pods that updated are the ones predicted");
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_works_read_only_and_sends_nothing() {
    if testbed::skip_on_existing_cluster(
        "counts the console's requests in the embedded server's request log",
    ) {
        return;
    }
    let mut live = Live::start(true).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], WEB).await;
    live.until("web listed", 30, |app| {
        kruise_tui::app::keys::selection(app).is_some_and(|s| s.name == "web")
    })
    .await;
    // From the workloads list.
    live.press(&["w"]).await;
    let sim = simulated(&mut live).await;
    assert_eq!(sim.target.name, "web");
    live.settle(1000).await;
    assert_eq!(
        live.sent(),
        [],
        "no mutating request from a --readonly what-if"
    );
    live.shutdown().await;
}
