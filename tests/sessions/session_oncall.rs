//! Scripted key sessions of the on-call views against the demo story (embedded cluster with its
//! controllers and simulated nodes): triage lists the crashing checkout rollout first and, after
//! `u` (undo) on it, checkout leaves the list; `:pub`, `:crr`, `:sidecarset` (and its Enter),
//! `:ppm` show the demo's objects and follow changes made with kubectl.

use crate::live;
use crate::testbed;

use kruise_tui::app::{
    App,
    dialog::Overlay,
    oncall::{ProblemKind, Screen},
    route::{Fetch, Route},
};
use live::Live;

fn checkout_listed(app: &App) -> bool {
    app.oncall()
        .triage
        .iter()
        .any(|p| p.subject.ends_with("demo/checkout"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triage_lists_the_crashing_rollout_first_and_drops_it_after_undo() {
    if testbed::skip_on_existing_cluster(
        "plays the demo story, which only the embedded cluster seeds",
    ) {
        return;
    }
    let mut live = Live::start_story().await;
    live.press(&[":"]).await;
    live.type_text("triage").await;
    live.press(&["enter"]).await;
    live.until("checkout stuck in triage", 90, |app| {
        app.oncall().triage.first().is_some_and(|p| {
            p.kind == ProblemKind::StuckRollout && p.subject == "CloneSet demo/checkout"
        })
    })
    .await;
    let screen = live.screen();
    assert!(screen.contains("Triage — demo — worst first"), "{screen}");
    assert!(
        screen.contains("stuck rollout  CloneSet demo/checkout"),
        "{screen}"
    );
    assert!(
        screen.contains("u undo · [ partition up · P pause"),
        "{screen}"
    );
    // The crash loop is split by revision: checkout's crashing pods are on the new one.
    assert!(
        live.app
            .oncall()
            .triage
            .iter()
            .any(|p| p.kind == ProblemKind::CrashLoop
                && p.subject == "CloneSet demo/checkout"
                && p.why.contains("on the new revision")),
        "{:?}",
        live.app.oncall().triage
    );

    // `u` on the row: the revision picker, then the confirm dialog, through the action layer.
    live.press(&["u"]).await;
    live.until("the revisions listed", 30, |app| {
        matches!(app.overlay(), Some(Overlay::Revisions(p)) if matches!(p.revisions, Fetch::Loaded(_)))
    })
    .await;
    live.press(&["enter"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(preview.prepared.target.name, "checkout");
    let status = live.confirm().await;
    assert!(status.contains(": sent: "), "{status}");
    // The undo restarts the crashing pod in place: asked for, so no crash loop; its budget
    // has no room until that pod is Ready again, then both are gone.
    live.until("checkout and its budget gone from triage", 120, |app| {
        !checkout_listed(app)
            && !app
                .oncall()
                .triage
                .iter()
                .any(|p| p.subject.ends_with("demo/checkout-pub"))
    })
    .await;
    // Still in triage, and checkout's budget recovered with it.
    assert!(matches!(live.app.current(), Route::Oncall(v) if v.screen == Screen::Triage));
    // (The status line still says what was sent to checkout; the table does not list it.)
    let screen = live.screen();
    let table: Vec<&str> = screen.lines().skip(1).collect();
    let table = table[..table.len() - 1].join("\n");
    assert!(!table.contains("demo/checkout"), "{screen}");
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oncall_views_show_the_demo_objects_and_follow_kubectl() {
    if testbed::skip_on_existing_cluster(
        "plays the demo story, which only the embedded cluster seeds",
    ) {
        return;
    }
    let mut live = Live::start_story().await;
    let kubectl = live.kubectl();

    // Budgets: checkout-pub exhausted by the crashing pod; a kubectl patch shows at once.
    live.press(&[":"]).await;
    live.type_text("pub").await;
    live.press(&["enter"]).await;
    live.until("both budgets, checkout's exhausted", 90, |app| {
        let b = &app.oncall().budgets;
        b.len() == 2
            && b.iter()
                .any(|b| b.name == "checkout-pub" && b.allowed == 0 && b.exhausted())
    })
    .await;
    let screen = live.screen();
    assert!(screen.contains("checkout-pub"), "{screen}");
    assert!(screen.contains("CloneSet/checkout"), "{screen}");
    // The Workloads view's PUB column reads the same budgets.
    let checkout_uid = live
        .app
        .workloads()
        .iter()
        .find(|w| w.name == "checkout")
        .map(|w| w.uid.clone())
        .expect("checkout listed");
    assert_eq!(live.app.oncall().budget_left.get(&checkout_uid), Some(&0));
    kubectl
        .ok(&[
            "-n",
            "demo",
            "patch",
            "pub",
            "web-pub",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"maxUnavailable":"50%"}}"#,
        ])
        .await;
    live.until("web-pub allows 5 after the patch", 60, |app| {
        app.oncall()
            .budgets
            .iter()
            .any(|b| b.name == "web-pub" && b.allowed == 5 && b.desired == 5)
    })
    .await;

    // Restarts: db's two CRRs, one completed.
    live.press(&[":"]).await;
    live.type_text("crr").await;
    live.press(&["enter"]).await;
    live.until("db's restarts, one completed", 120, |app| {
        let r = &app.oncall().restarts;
        r.iter()
            .any(|r| r.name == "db-0-restart-postgres" && r.phase == "Completed")
            && r.iter().any(|r| r.name == "db-1-restart-postgres")
    })
    .await;
    let screen = live.screen();
    assert!(screen.contains("db-0-restart-postgres"), "{screen}");
    assert!(screen.contains("postgres:Succeeded"), "{screen}");
    // Enter shows the CRR's YAML.
    live.press(&["enter"]).await;
    live.until(
        "the CRR's YAML",
        30,
        |app| matches!(app.current(), Route::Yaml(v) if matches!(v.lines, Fetch::Loaded(_))),
    )
    .await;
    assert!(live.screen().contains("kind: ContainerRecreateRequest"));

    // SidecarSets: logtail, its pods' sidecar versions; pausing it shows live.
    live.press(&[":"]).await;
    live.type_text("sidecarset").await;
    live.press(&["enter"]).await;
    live.until("logtail with its matched pods", 60, |app| {
        app.oncall()
            .sidecarsets
            .iter()
            .any(|s| s.name == "logtail" && s.matched == 10)
    })
    .await;
    kubectl
        .ok(&[
            "patch",
            "sidecarset",
            "logtail",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"updateStrategy":{"paused":true}}}"#,
        ])
        .await;
    live.until("logtail paused", 60, |app| {
        app.oncall()
            .sidecarsets
            .iter()
            .any(|s| s.name == "logtail" && s.paused)
    })
    .await;
    live.press(&["enter"]).await;
    live.until("each web pod's logtail mapped to a revision", 60, |app| {
        let rows = app.sidecar_pods("logtail");
        rows.len() == 10
            && rows
                .iter()
                .all(|r| r.container == "logtail" && r.revision.starts_with("logtail-"))
    })
    .await;
    let screen = live.screen();
    assert!(
        screen.contains("SidecarSet logtail — sidecars of its pods [10]"),
        "{screen}"
    );

    // Probe markers: web-health on every web pod, results written back to the pods.
    live.press(&[":"]).await;
    live.type_text("ppm").await;
    live.press(&["enter"]).await;
    live.until("web-health probed on the web pods", 90, |app| {
        let p = &app.oncall().probes;
        p.len() == 10
            && p.iter().all(|r| r.marker == "web-health")
            && p.iter().any(|r| {
                r.state == "Succeeded"
                    && r.condition_status == "True"
                    && r.applied.contains(&"gameserver-state=idle".to_owned())
            })
    })
    .await;
    let screen = live.screen();
    assert!(screen.contains("web-health/healthy"), "{screen}");
    assert!(screen.contains("game.kruise.io/healthy True"), "{screen}");
    live.shutdown().await;
}
