//! The incident record as on-call leaves it: a bad image rolls out, then `rollout undo`,
//! `restart`, `protect` through the binary; `kruise-tui report --since 10m` holds those
//! actions with their results and the CloneSet's Events, in time order, and `kruise-tui
//! journal -o json` prints the same actions as JSON lines. On the test bed (the embedded
//! cluster or an existing one under KRUISE_TUI_TEST_KUBECONFIG), in the test's namespace.

use crate::cli::Cli;
use crate::kubectl::Kubectl;
use crate::testbed::Testbed;

use std::time::{Duration, Instant};

const CHECKOUT: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: checkout}
spec:
  replicas: 2
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: "checkout:1"}]
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_holds_the_incidents_actions_results_and_events_in_time_order() {
    let tb = Testbed::start().await;
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    kubectl.apply(&[], CHECKOUT).await;
    cli.ok(&["rollout", "status", "cs/checkout", "-w", "--timeout", "60s"])
        .await;
    // The incident: a crashing image, then the fix.
    cli.ok(&["set", "image", "cs/checkout", "main=checkout:2-crash"])
        .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    cli.ok(&["rollout", "undo", "cs/checkout"]).await;
    cli.ok(&["rollout", "status", "cs/checkout", "-w", "--timeout", "60s"])
        .await;
    let pod = kubectl
        .jsonpath(&["pods", "-l", "app=checkout"], "{.items[0].metadata.name}")
        .await;
    cli.ok(&["restart", &pod, "--wait", "--timeout", "60s"])
        .await;
    cli.ok(&["protect", "cs/checkout", "always"]).await;

    // The CloneSet's Events reach the server a little after the actions.
    let deadline = Instant::now() + Duration::from_secs(30);
    let report = loop {
        let report = cli.ok(&["report", "--since", "10m"]).await;
        if report.contains("event Normal SuccessfulUpdatePodInPlace") {
            break report;
        }
        assert!(
            Instant::now() < deadline,
            "no in-place update event:\n{report}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    let ns = tb.ns();
    let timeline: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("| UTC"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let at = |needle: &str| {
        timeline
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not in the timeline:\n{report}"))
    };
    let set = at(&format!(
        "**action** image main=checkout:2-crash | CloneSet {ns}/checkout"
    ));
    let undo = at(&format!(
        "**action** undo to the previous revision | CloneSet {ns}/checkout"
    ));
    let restart = at(&format!("| Pod {ns}/{pod} — `POST"));
    let protect = at(&format!(
        "**action** delete-protection → Always | CloneSet {ns}/checkout"
    ));
    assert!(
        set < undo && undo < restart && restart < protect,
        "{report}"
    );
    // Each with its result.
    assert!(timeline[undo].ends_with("→ 200 OK |"), "{}", timeline[undo]);
    assert!(
        timeline[restart].ends_with("→ 201 OK |"),
        "{}",
        timeline[restart]
    );
    // The rollout's Events, after the undo that caused them, in time order.
    let event = at(&format!("{ns}/CloneSet/checkout: successfully update pod"));
    assert!(event > set, "{report}");
    let times: Vec<&str> = timeline
        .iter()
        .map(|l| l.split('|').nth(1).unwrap_or_default().trim())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_unstable();
    assert_eq!(times, sorted, "time order:\n{report}");
    assert!(
        report.contains("- 4 actions sent (0 refused or failed)"),
        "{report}"
    );

    // The journal as JSON lines: the same four actions, each parseable.
    let json = cli.ok(&["journal", "-o", "json"]).await;
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 4, "{json}");
    // By whom: each action names the user the server authenticated (SelfSubjectReview), and
    // the report says it.
    for v in &lines {
        let user = v["user"].as_str().unwrap_or_default();
        assert!(!user.is_empty(), "no user in {v}");
        assert!(report.contains(&format!("- by: {user}\n")), "{report}");
    }
    // Narrowed to another namespace: nothing.
    let other = cli
        .ok(&["report", "--since", "10m", "-n", "elsewhere"])
        .await;
    assert!(
        other.contains("Nothing recorded in this window."),
        "{other}"
    );

    // A report that cannot be written fails (exit 1) with the reason.
    let unwritable = cli
        .run(&[
            "report",
            "--since",
            "10m",
            "-o",
            "/nonexistent-dir/report.md",
        ])
        .await;
    assert_eq!(unwritable.code, 1, "{unwritable:?}");
    assert!(
        unwritable
            .stderr
            .contains("cannot write /nonexistent-dir/report.md"),
        "{unwritable:?}"
    );

    cli.ok(&["protect", "cs/checkout", "off"]).await;
    tb.shutdown().await;
}
