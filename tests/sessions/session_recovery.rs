//! Scripted key sessions of the on-call recovery keys against the embedded cluster with its
//! controllers and simulated nodes: `r` restarts a pod's containers in place (the request
//! completes and the restart count goes up by one); `r` on three marked pods under a
//! PodUnavailableBudget with maxUnavailable 1 restarts them one after another, never two
//! unavailable at once (sampled); `x` sets delete protection and `ctrl-d` shows the denial
//! before anything is sent (`n` keeps the object, a confirmed delete is refused by the
//! admission chain); Cascading is "would be denied: N active replicas" in `:protect` and
//! flips once the workload is scaled to 0.

use crate::kubectl;
use crate::live;
use crate::testbed;
use crate::workloads;

use kruise_tui::{
    actions::{Action, guard::Verdict},
    app::{
        App,
        dialog::Overlay,
        route::{Fetch, Route},
    },
};
use kube::Api;
use kubectl::Kubectl;
use live::Live;
use workloads::UnavailableSampler;

fn cloneset(name: &str, replicas: i32) -> String {
    format!(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{{name: main, image: "nginx:1.25"}}, {{name: side, image: "busybox:1.36"}}]
"#
    )
}

const BUDGET: &str = r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: web-pub}
spec:
  selector: {matchLabels: {app: web}}
  maxUnavailable: 1
"#;

fn rollout_ready(app: &App, replicas: usize) -> bool {
    match app.current() {
        Route::Rollout(v) => v.rows().len() == replicas && v.rows().iter().all(|r| r.all_ready),
        _ => false,
    }
}

async fn open_rollout(live: &mut Live, name: &str, replicas: usize) {
    live.until("the workload listed", 30, |app| {
        kruise_tui::app::keys::selection(app).is_some_and(|s| s.name == name)
    })
    .await;
    live.press(&["enter"]).await;
    live.until("every pod ready", 90, |app| rollout_ready(app, replicas))
        .await;
}

async fn restarts(kubectl: &Kubectl, pod: &str, container: &str) -> i64 {
    kubectl
        .jsonpath(
            &["pod", pod],
            &format!("{{.status.containerStatuses[?(@.name==\"{container}\")].restartCount}}"),
        )
        .await
        .trim()
        .parse()
        .unwrap_or(-1)
}

fn panel_done(app: &App) -> bool {
    matches!(app.overlay(), Some(Overlay::Restart(p)) if p.done.is_some())
}

fn selected_pod(app: &App) -> String {
    kruise_tui::app::keys::selection(app)
        .map(|s| s.name)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_restarts_a_container_in_place_and_its_restart_count_goes_up_by_one() {
    if testbed::skip_on_existing_cluster(
        "the restart's CRR needs the embedded Kruise CRR webhook (its pod-uid and node-name labels)",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], &cloneset("web", 2)).await;
    open_rollout(&mut live, "web", 2).await;
    let pod = selected_pod(&live.app);
    let before = restarts(&kubectl, &pod, "main").await;
    let side_before = restarts(&kubectl, &pod, "side").await;

    live.press(&["r"]).await;
    let screen = live.screen();
    assert!(
        screen.contains(&format!("Restart containers of pod {pod}")),
        "{screen}"
    );
    assert!(
        screen.contains("main,side"),
        "every container by default: {screen}"
    );
    // Only main.
    for _ in 0.."main,side".len() {
        live.press(&["backspace"]).await;
    }
    live.type_text("main").await;
    live.press(&["enter"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(preview.prepared.request.verb, "POST");
    assert!(
        preview
            .prepared
            .notes
            .iter()
            .any(|n| n == "budget: no PodUnavailableBudget protects this pod"),
        "{:?}",
        preview.prepared.notes
    );
    let Action::Restart { containers, .. } = &preview.prepared.action else {
        panic!("a restart");
    };
    assert_eq!(containers, &vec!["main".to_owned()]);
    live.press(&["y"]).await;
    live.until("the restart done", 120, panel_done).await;
    let screen = live.screen();
    let Some(Overlay::Restart(panel)) = live.app.overlay() else {
        panic!("the panel");
    };
    assert!(
        matches!(&panel.done, Some(Ok(_))),
        "{:?}\n{screen}",
        panel.done
    );
    let step = &panel.steps[0];
    assert_eq!(step.state, "ready again", "{screen}");
    assert_eq!(
        step.containers
            .iter()
            .map(|(n, p, _)| (n.as_str(), p.as_str()))
            .collect::<Vec<_>>(),
        vec![("main", "Succeeded")]
    );
    let crr = step.crr.clone().expect("a request");
    assert!(screen.contains(&crr), "{screen}");
    kubectl
        .assert_jsonpath(&["crr", &crr], "{.status.phase}", "Completed")
        .await;
    assert_eq!(restarts(&kubectl, &pod, "main").await, before + 1);
    assert_eq!(restarts(&kubectl, &pod, "side").await, side_before);
    // The journal holds the create, with no revert.
    let (entries, _) = live.journal.read().expect("journal");
    let last = entries.last().expect("an entry");
    assert_eq!(last.request.verb, "POST");
    assert!(last.result.ok && last.inverse.is_none(), "{last:?}");
    live.press(&["esc"]).await;
    assert!(live.app.overlay().is_none());
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_on_three_marked_pods_under_a_budget_restarts_them_one_at_a_time() {
    if testbed::skip_on_existing_cluster(
        "the restarts' CRRs need the embedded Kruise CRR and PUB webhooks",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    // The budget first, so the pods are created carrying its annotation.
    kubectl.apply(&[], BUDGET).await;
    kubectl.apply(&[], &cloneset("web", 3)).await;
    open_rollout(&mut live, "web", 3).await;
    let names: Vec<String> = match live.app.current() {
        Route::Rollout(v) => v.rows().iter().map(|r| r.name.clone()).collect(),
        _ => Vec::new(),
    };
    let mut before = Vec::new();
    for pod in &names {
        before.push(restarts(&kubectl, pod, "main").await);
    }
    // The PUB controller counts the pods after they are ready: wait for its budget of one.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while kubectl
        .jsonpath(&["pub", "web-pub"], "{.status.unavailableAllowed}")
        .await
        .trim()
        != "1"
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the budget never reached 1"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    live.press(&["space", "space", "space", "r", "enter"]).await;
    let preview = live.confirm_dialog().await;
    let notes = preview.prepared.notes.join("\n");
    assert!(
        notes.contains("then 2 more pod(s), one after another"),
        "{notes}"
    );
    assert!(
        notes.contains("budget: allowed: PodUnavailableBudget web-pub has 1 unavailable allowed"),
        "{notes}"
    );
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::default_namespaced(live.tb.new_client().await);
    let sampler = UnavailableSampler::start(pods, "web", 3);
    live.press(&["y"]).await;
    live.until("three restarts done", 240, panel_done).await;
    let worst = sampler.finish().await;
    let screen = live.screen();
    let Some(Overlay::Restart(panel)) = live.app.overlay() else {
        panic!("the panel");
    };
    assert!(
        matches!(&panel.done, Some(Ok(_))),
        "{:?}\n{screen}",
        panel.done
    );
    assert!(
        panel.steps.iter().all(|s| s.state == "ready again"),
        "{screen}"
    );
    assert!(worst <= 1, "{worst} pods were unavailable at once");
    assert!(worst >= 1, "the sampler saw the restarts (worst {worst})");
    for (pod, was) in names.iter().zip(before) {
        assert_eq!(restarts(&kubectl, pod, "main").await, was + 1, "{pod}");
    }
    live.shutdown().await;
}

fn protect_rows(app: &App) -> Vec<(String, String, Verdict)> {
    match app.current() {
        Route::Protect(v) => match &v.report {
            Fetch::Loaded(r) => r
                .rows
                .iter()
                .map(|r| (r.target.name.clone(), r.value.clone(), r.verdict.clone()))
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_protects_and_ctrl_d_shows_the_denial_and_n_keeps_the_object() {
    if testbed::skip_on_existing_cluster(
        "the embedded deletion-protection webhook refuses the delete; counts the request log",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], &cloneset("web", 2)).await;
    live.until("web listed", 30, |app| {
        kruise_tui::app::keys::selection(app).is_some_and(|s| s.name == "web")
    })
    .await;
    live.press(&["x"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(
        preview.prepared.changes,
        vec!["delete-protection off → Always".to_owned()]
    );
    let status = live.confirm().await;
    assert!(
        status.contains("sent: delete-protection off → Always"),
        "{status}"
    );
    let labels = kubectl
        .jsonpath(&["cloneset", "web"], "{.metadata.labels}")
        .await;
    assert!(
        labels.contains(r#""policy.kruise.io/delete-protection":"Always""#),
        "{labels}"
    );
    live.settle(500).await;

    live.press(&["ctrl-d"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(preview.prepared.request.verb, "DELETE");
    let screen = live.screen();
    assert!(
        screen.contains("deletion protection: would be denied: delete-protection Always"),
        "{screen}"
    );
    assert!(
        screen.contains("enforced: the embedded cluster"),
        "{screen}"
    );
    let sent = live.sent().len();
    live.press(&["n"]).await;
    assert!(live.app.overlay().is_none());
    assert_eq!(live.sent().len(), sent, "n sends nothing");
    kubectl.ok(&["get", "cloneset", "web"]).await;

    // Confirmed anyway, the admission chain refuses it: the object stays.
    live.press(&["ctrl-d"]).await;
    live.confirm_dialog().await;
    let status = live.confirm().await;
    assert!(
        status.contains(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
        ),
        "{status}"
    );
    kubectl.ok(&["get", "cloneset", "web"]).await;
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cascading_is_denied_while_replicas_are_active_and_flips_at_zero() {
    if testbed::skip_on_existing_cluster(
        "shows deletion protection enforced, which the embedded admission chain gives",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], &cloneset("web", 3)).await;
    kubectl
        .ok(&[
            "label",
            "cloneset",
            "web",
            "policy.kruise.io/delete-protection=Always",
        ])
        .await;
    live.until("web protected in the store", 30, |app| {
        kruise_tui::app::keys::selection(app).is_some_and(|s| s.name == "web")
    })
    .await;
    live.settle(500).await;
    // Always → Cascading.
    live.press(&["x"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(
        preview.prepared.changes,
        vec!["delete-protection Always → Cascading".to_owned()]
    );
    live.confirm().await;
    live.press(&[":"]).await;
    live.type_text("protect").await;
    live.press(&["enter"]).await;
    live.until("web would be denied with its replicas", 30, |app| {
        protect_rows(app).iter().any(|(n, v, verdict)| {
            n == "web" && v == "Cascading" && verdict.text() == "would be denied: 3 active replicas"
        })
    })
    .await;
    let screen = live.screen();
    assert!(
        screen.contains("would be denied: 3 active replicas"),
        "{screen}"
    );
    assert!(
        screen.contains("Deletion protection is enforced"),
        "{screen}"
    );
    kubectl
        .ok(&["scale", "cloneset", "web", "--replicas=0"])
        .await;
    live.until("the verdict flips at 0 replicas", 30, |app| {
        protect_rows(app)
            .iter()
            .any(|(n, _, verdict)| n == "web" && matches!(verdict, Verdict::Allowed(_)))
    })
    .await;
    // And a delete now goes through.
    live.press(&["ctrl-d"]).await;
    let preview = live.confirm_dialog().await;
    assert!(
        preview
            .prepared
            .notes
            .iter()
            .any(|n| n.contains("allowed: Cascading, and 0 replicas")),
        "{:?}",
        preview.prepared.notes
    );
    let status = live.confirm().await;
    assert!(
        status.contains(&format!("sent: delete CloneSet {}/web", live.ns())),
        "{status}"
    );
    live.shutdown().await;
}
