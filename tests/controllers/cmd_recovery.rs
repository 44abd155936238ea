//! `kruise-tui restart` and `kruise-tui protect` as a user runs them against the embedded
//! cluster with its controllers and simulated nodes, checked with kubectl: exit codes (0 ok, 1
//! refused or failed, 2 usage), the ContainerRecreateRequest and the restart count, the label,
//! the budget refusing a restart without --wait, and the journal. Not on an existing cluster:
//! both lean on the embedded Kruise webhooks (the CRR's labels, deletion protection).

use crate::cli;
use crate::kubectl;
use crate::testbed;

use cli::Cli;
use kubectl::Kubectl;
use testbed::Testbed;

const WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: "nginx:1.25"}, {name: side, image: "busybox:1.36"}]
"#;

const BUDGET: &str = r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: web-pub}
spec:
  selector: {matchLabels: {app: web}}
  maxUnavailable: 0
"#;

async fn ready_pods(kubectl: &Kubectl) -> Vec<String> {
    for _ in 0..240 {
        let out = kubectl
            .jsonpath(
                &["pods", "-l", "app=web"],
                "{range .items[*]}{.metadata.name}={.status.conditions[?(@.type==\"Ready\")].status} {end}",
            )
            .await;
        let pods: Vec<(String, String)> = out
            .split_whitespace()
            .filter_map(|p| p.split_once('='))
            .map(|(n, s)| (n.to_owned(), s.to_owned()))
            .collect();
        if pods.len() == 2 && pods.iter().all(|(_, s)| s == "True") {
            return pods.into_iter().map(|(n, _)| n).collect();
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    panic!("web's pods never became ready");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_waits_for_completion_and_a_budget_refuses_without_wait() {
    if testbed::skip_on_existing_cluster(
        "the restart's CRR needs the embedded Kruise CRR webhook (its pod-uid and node-name labels)",
    ) {
        return;
    }
    let tb = Testbed::start().await;
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    let ns = tb.ns();
    kubectl.apply(&[], WEB).await;
    let pods = ready_pods(&kubectl).await;
    let pod = pods[0].as_str();
    let before = restarts(&kubectl, pod, "main").await;

    let out = cli
        .ok(&[
            "restart",
            pod,
            "-c",
            "main",
            "--wait",
            "--timeout",
            "2m",
            "-n",
            ns,
        ])
        .await;
    assert!(out.contains(": Completed (main=Succeeded)"), "{out}");
    assert!(out.contains("ready again"), "{out}");
    assert!(
        out.ends_with("\n") && out.contains("restarted 1 pod(s) in place: "),
        "{out}"
    );
    assert_eq!(restarts(&kubectl, pod, "main").await, before + 1);
    let crr = kubectl
        .jsonpath(&["crr"], "{.items[0].metadata.name}")
        .await;
    assert!(crr.starts_with(&format!("{pod}-restart-")), "{crr}");
    kubectl
        .assert_jsonpath(&["crr", &crr], "{.status.phase}", "Completed")
        .await;
    kubectl
        .assert_jsonpath(
            &["crr", &crr],
            "{.spec.strategy.failurePolicy} {.spec.activeDeadlineSeconds} {.spec.ttlSecondsAfterFinished}",
            "Fail 300 1800",
        )
        .await;
    let journal = cli.journal();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0].request.verb, "POST");
    assert!(journal[0].result.ok && journal[0].inverse.is_none());

    // Usage errors: 2. Bad input: 1, nothing sent.
    cli.fails(&["restart"], 2, "POD").await;
    cli.fails(
        &["restart", pod, "--timeout", "soon", "-n", ns],
        2,
        "not a duration",
    )
    .await;
    cli.fails(
        &["restart", pod, "-c", "nope", "-n", ns],
        1,
        "has no container \"nope\"",
    )
    .await;
    cli.fails(&["restart", "ghost", "-n", ns], 1, "does not exist")
        .await;
    cli.fails(&["restart", pod, "-n", ns, "--readonly"], 1, "read-only")
        .await;
    assert_eq!(cli.journal().len(), 1, "nothing more was sent");

    // A budget with nothing to give: refused without --wait, nothing created.
    kubectl.apply(&[], BUDGET).await;
    let annotated = pods[1].clone();
    // The budget's status settles (desired 2, unavailable allowed 0).
    for _ in 0..120 {
        let s = kubectl
            .jsonpath(&["pub", "web-pub"], "{.status.desiredAvailable}")
            .await;
        if s == "2" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    cli.fails(
        &["restart", &annotated, "-n", ns],
        1,
        "PodUnavailableBudget web-pub has 0 unavailable allowed",
    )
    .await;
    assert_eq!(cli.journal().len(), 1, "a refused restart sends nothing");
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protect_sets_cycles_and_removes_the_label() {
    if testbed::skip_on_existing_cluster(
        "the delete refused is the embedded deletion-protection webhook's, and it says enforced",
    ) {
        return;
    }
    let tb = Testbed::start().await;
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    let ns = tb.ns();
    kubectl.apply(&[], WEB).await;
    let label = || async {
        kubectl
            .jsonpath(&["cloneset", "web"], "{.metadata.labels}")
            .await
    };
    let out = cli.ok(&["protect", "cs/web", "always", "-n", ns]).await;
    assert!(
        out.starts_with("cloneset.apps.kruise.io/web delete-protection off → Always\n"),
        "{out}"
    );
    assert!(
        out.contains("a delete now: would be denied: delete-protection Always"),
        "{out}"
    );
    assert!(out.contains("deletion protection is enforced"), "{out}");
    assert!(
        label()
            .await
            .contains(r#""policy.kruise.io/delete-protection":"Always""#)
    );
    let deleted = kubectl.run(&["delete", "cloneset", "web"]).await;
    let (code, err) = (deleted.code, deleted.stderr);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("forbidden by ResourcesProtectionDeletion"),
        "{err}"
    );

    let out = cli.ok(&["protect", "cs/web", "Cascading", "-n", ns]).await;
    assert!(
        out.contains("a delete now: would be denied: 2 active replicas"),
        "{out}"
    );
    // Same value again: nothing to do, exit 1.
    cli.fails(
        &["protect", "cs/web", "cascading", "-n", ns],
        1,
        "already Cascading",
    )
    .await;
    let out = cli.ok(&["protect", "cs/web", "off", "-n", ns]).await;
    assert!(out.contains("a delete now: not protected"), "{out}");
    assert!(!label().await.contains("delete-protection"));
    // Namespaces are cluster-scoped.
    let out = cli.ok(&["protect", &format!("ns/{ns}"), "cascading"]).await;
    assert!(
        out.starts_with(&format!("namespace/{ns} delete-protection off → Cascading")),
        "{out}"
    );
    assert!(
        out.contains("would be denied: Cascading, 2 active pods in the namespace"),
        "{out}"
    );

    // Usage: 2.
    cli.fails(
        &["protect", "cs/web", "sometimes"],
        2,
        "always, cascading or off",
    )
    .await;
    cli.fails(&["protect", "ads/agent", "always"], 2, "not guarded")
        .await;
    cli.fails(&["protect", "web", "always"], 2, "not KIND/NAME")
        .await;
    cli.fails(
        &["protect", "cs/ghost", "always", "-n", ns],
        1,
        "does not exist",
    )
    .await;
    // The journal holds the changes with their reverts.
    let journal = cli.journal();
    let reverts: Vec<_> = journal
        .iter()
        .filter(|e| e.result.ok)
        .map(|e| e.inverse.clone())
        .collect();
    assert_eq!(reverts.len(), 4);
    assert!(reverts.iter().all(Option::is_some));
    tb.shutdown().await;
}
