//! `l` in a live console on the embedded cluster with its controllers and simulated nodes: a
//! CloneSet on a crashing image (as the demo's checkout rollout), the crash-looping pod's log
//! read through the kube layer shows its failure lines, `p` the run before the last restart,
//! and `kubectl logs` (and `--previous`) against the same server prints exactly the same lines.

use crate::kubectl;
use crate::live;
use crate::testbed;

use kruise_tui::app::{
    App,
    logs::{LogView, StreamState},
    route::Route,
};
use kubectl::Kubectl;
use live::Live;

const CHECKOUT: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: checkout}
spec:
  replicas: 1
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: checkout, image: "demo/checkout:1.5.0-crash"}]}
"#;

fn log_view(app: &App) -> Option<&LogView> {
    match app.current() {
        Route::List(_) | Route::Pod(_) => None,
        Route::Log(v) => Some(v),
        _ => None,
    }
}

/// The view's stream has ended and it holds lines.
fn read(app: &App) -> bool {
    log_view(app).is_some_and(|v| v.state == StreamState::Ended && !v.lines.is_empty())
}

fn text(v: &LogView) -> Vec<String> {
    v.lines.iter().cloned().collect()
}

async fn restarts(kubectl: &Kubectl, pod: &str) -> String {
    kubectl
        .jsonpath(&["pod", pod], "{.status.containerStatuses[0].restartCount}")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_on_the_crashing_pod_shows_its_failure_and_previous_run_as_kubectl_does() {
    if testbed::skip_on_existing_cluster(
        "reads the simulated container logs, which only the embedded cluster serves",
    ) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], CHECKOUT).await;
    // The pod has crashed at least once (a previous run exists).
    let mut pod = String::new();
    for _ in 0..90 {
        live.settle(1000).await;
        pod = kubectl
            .jsonpath(&["pods", "-l", "app=checkout"], "{.items[*].metadata.name}")
            .await;
        if !pod.is_empty() && restarts(&kubectl, &pod).await.parse::<i32>().unwrap_or(0) >= 1 {
            break;
        }
    }
    assert!(!pod.is_empty(), "the checkout pod exists");
    live.press(&[":"]).await;
    live.type_text("pods").await;
    live.press(&["enter"]).await;
    live.until("the pod listed", 10, |app| {
        kruise_tui::app::keys::selection(app).is_some_and(|s| s.name == pod)
    })
    .await;

    // The current run (followed until the container stops), then the previous one. The pod
    // keeps crash-looping: compare with kubectl while the restart count holds still.
    let mut compared = 0;
    for _ in 0..5 {
        let before = restarts(&kubectl, &pod).await;
        live.press(&["l"]).await;
        live.until("the log read", 60, read).await;
        let current = log_view(&live.app).map(text).unwrap_or_default();
        live.press(&["p"]).await;
        live.until("the previous run read", 30, read).await;
        let view = log_view(&live.app).map(|v| (v.previous, text(v)));
        let kubectl_current = kubectl.ok(&["logs", &pod]).await;
        let kubectl_previous = kubectl.ok(&["logs", &pod, "--previous"]).await;
        let after = restarts(&kubectl, &pod).await;
        live.press(&["esc"]).await;
        if before != after {
            continue;
        }
        let Some((true, previous)) = view else {
            panic!("p shows the previous run: {view:?}");
        };
        assert!(
            previous.iter().any(|l| l.contains("level=error"))
                && previous.last().is_some_and(|l| l.contains("exited")),
            "the previous run ends with its failure: {previous:#?}"
        );
        assert!(
            current.iter().any(|l| l.contains("level=error")),
            "the crashed run's failure lines: {current:#?}"
        );
        assert_eq!(
            current,
            kubectl_current
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>(),
            "kubectl logs prints the same lines"
        );
        assert_eq!(
            previous,
            kubectl_previous
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>(),
            "kubectl logs --previous prints the same lines"
        );
        compared += 1;
        break;
    }
    assert_eq!(compared, 1, "the pod restarted during every comparison");
    // The screen says it.
    live.press(&["l", "p"]).await;
    live.until("the previous run read", 30, read).await;
    let screen = live.screen();
    assert!(screen.contains("previous run"), "{screen}");
    assert!(screen.contains("exited"), "{screen}");
}
