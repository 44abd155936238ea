//! `rollout pause|resume|partition`, `set image` and `scale` on an Advanced StatefulSet, an
//! Advanced DaemonSet and a CloneSet, as a user runs them against the test bed (the embedded
//! cluster, or an existing one under KRUISE_TUI_TEST_KUBECONFIG) with its controllers and
//! simulated nodes, in the test's namespace: a paused rollout holds its pods until resumed,
//! `scale --pods` deletes exactly the pods named, and `--readonly` sends nothing.

use crate::cli;
use crate::kubectl;
use crate::testbed;

use std::{collections::BTreeMap, time::Duration};

use cli::{Cli, predicted};
use k8s_openapi::api::core::v1::Pod;
use kruise_tui::kruise::KruiseVersion;
use kube::{Api, Client, api::ListParams};
use kubectl::Kubectl;
use testbed::Testbed;

const DB: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: "nginx:1.25"}]
  updateStrategy:
    rollingUpdate: {podUpdatePolicy: InPlaceIfPossible, maxUnavailable: 3}
"#;

const AGENT: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      nodeSelector: {kruise-tui.io/simulated-node: "true"}
      containers: [{name: agent, image: "agent:1"}]
"#;

const WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: "nginx:1.25"}]}
"#;

/// Active pods of `app` in the test's namespace: name → (uid, revision label).
async fn pods(client: &Client, app: &str) -> BTreeMap<String, (String, String)> {
    Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .expect("pods")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(|p| {
            let revision = p
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("controller-revision-hash").cloned())
                .unwrap_or_default();
            (
                p.metadata.name.clone().unwrap_or_default(),
                (p.metadata.uid.clone().unwrap_or_default(), revision),
            )
        })
        .collect()
}

fn revisions(pods: &BTreeMap<String, (String, String)>) -> Vec<&str> {
    let mut r: Vec<&str> = pods.values().map(|(_, r)| r.as_str()).collect();
    r.sort_unstable();
    r.dedup();
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_holds_an_advanced_statefulset_and_daemonset_until_resumed() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    kubectl.apply(&[], DB).await;
    kubectl.apply(&[], AGENT).await;
    for target in ["asts/db", "ads/agent"] {
        let out = cli
            .ok(&["rollout", "status", target, "-w", "--timeout", "60s"])
            .await;
        assert!(out.ends_with("successfully rolled out\n"), "{out}");
    }

    // Advanced StatefulSet: paused, a new image moves no pod.
    assert_eq!(
        cli.ok(&["rollout", "pause", "asts/db"]).await,
        "statefulset.apps.kruise.io/db paused\n"
    );
    assert_eq!(
        kubectl
            .jsonpath(
                &["asts", "db"],
                "{.spec.updateStrategy.rollingUpdate.paused}"
            )
            .await,
        "true"
    );
    let out = cli
        .ok(&["set", "image", "asts/db", "main=nginx:1.26"])
        .await;
    assert!(
        out.starts_with(
            "statefulset.apps.kruise.io/db image updated\n  main: nginx:1.25 → nginx:1.26\n"
        ),
        "{out}"
    );
    assert_eq!(out.matches("blocked: rollout paused").count(), 3, "{out}");
    let run = cli
        .run(&["rollout", "status", "asts/db", "-w", "--timeout", "3s"])
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("paused yes"), "{run:?}");
    assert_eq!(
        revisions(&pods(&client, "db").await).len(),
        1,
        "no pod moved"
    );

    // Resumed: the pods predicted (ordinals, high first) move and the rollout completes.
    let out = cli.ok(&["rollout", "resume", "asts/db"]).await;
    let (revision, names) = predicted(&out);
    assert_eq!(names, ["db-2", "db-1", "db-0"], "{out}");
    let out = cli
        .ok(&["rollout", "status", "asts/db", "-w", "--timeout", "60s"])
        .await;
    assert!(out.ends_with("successfully rolled out\n"), "{out}");
    assert_eq!(revisions(&pods(&client, "db").await), [revision.as_str()]);

    // Advanced DaemonSet: pause and resume, with a partition on nodes.
    assert_eq!(
        cli.ok(&["rollout", "pause", "ads/agent"]).await,
        "daemonset.apps.kruise.io/agent paused\n"
    );
    // Two of the three nodes held: from Kruise v1.9.0 as a percent (67% of 3, rounded down),
    // which v1.8.4's schema refuses.
    let partition = if tb.kruise_version() == KruiseVersion::V1_9 {
        "67%"
    } else {
        cli.fails(
            &["rollout", "partition", "ads/agent", "67%"],
            1,
            "partition",
        )
        .await;
        "2"
    };
    let out = cli
        .ok(&["rollout", "partition", "ads/agent", partition])
        .await;
    assert!(
        out.starts_with(&format!(
            "daemonset.apps.kruise.io/agent partitioned: 0 → {partition}\n"
        )),
        "{out}"
    );
    cli.ok(&["set", "image", "ads/agent", "agent=agent:2"])
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(revisions(&pods(&client, "agent").await).len(), 1, "paused");
    let out = cli.ok(&["rollout", "resume", "ads/agent"]).await;
    let (_, names) = predicted(&out);
    assert_eq!(names.len(), 1, "partition 2 of 3 nodes lets one go: {out}");
    let out = cli
        .ok(&["rollout", "status", "ads/agent", "-w", "--timeout", "60s"])
        .await;
    assert!(
        out.contains("partitioned roll out complete: 1 new pods have been updated"),
        "{out}"
    );
    // A daemon's prediction names the node: its pod is the one on the new hash.
    let hash = kubectl
        // v1alpha1's name for it, or v1beta1's (what kubectl reads on Kruise v1.9).
        .jsonpath(
            &["ads", "agent"],
            "{.status.daemonSetHash}{.status.updateRevision}",
        )
        .await;
    let updated: Vec<String> = Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels(&format!("app=agent,controller-revision-hash={hash}")))
        .await
        .expect("pods")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.spec?.node_name)
        .collect();
    assert_eq!(updated, names, "{out}");
    let out = cli.ok(&["rollout", "history", "ads/agent"]).await;
    assert!(out.lines().any(|l| l.ends_with("update")), "{out}");
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_deletes_exactly_the_named_pods_and_readonly_sends_nothing() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    kubectl.apply(&[], WEB).await;
    cli.ok(&["rollout", "status", "cs/web", "-w", "--timeout", "60s"])
        .await;
    let before = pods(&client, "web").await;
    let names: Vec<&String> = before.keys().collect();
    let (a, b) = (names[1].clone(), names[3].clone());

    // A pod that is not web's is refused before anything is sent.
    cli.fails(
        &[
            "scale",
            "cs/web",
            "--replicas",
            "3",
            "--pods",
            &format!("{a},nope"),
        ],
        1,
        "pod \"nope\" is not a running pod of cloneset.apps.kruise.io/web",
    )
    .await;
    let out = cli
        .ok(&[
            "scale",
            "cs/web",
            "--replicas",
            "3",
            "--pods",
            &format!("{a},{b}"),
        ])
        .await;
    assert_eq!(
        out,
        format!(
            "cloneset.apps.kruise.io/web scaled\n  podsToDelete += {a}, {b}\n  replicas 5 → 3\n"
        )
    );
    let out = cli
        .ok(&["rollout", "status", "cs/web", "-w", "--timeout", "60s"])
        .await;
    assert!(out.ends_with("successfully rolled out\n"), "{out}");
    let after = pods(&client, "web").await;
    let mut kept = before.clone();
    kept.remove(&a);
    kept.remove(&b);
    assert_eq!(after, kept, "exactly {a} and {b} went");

    // Usage and refusals.
    cli.fails(
        &["scale", "ads/x", "--replicas", "1"],
        2,
        "no replica count",
    )
    .await;
    cli.fails(
        &["scale", "cs/web", "--replicas", "3"],
        1,
        "replicas are already 3",
    )
    .await;

    // Read-only: the object is unchanged and the journal holds only the scale that was sent.
    let stderr = cli
        .fails(
            &["scale", "cs/web", "--replicas", "1", "--readonly"],
            1,
            "read-only",
        )
        .await;
    assert_eq!(stderr, "kruise-tui: read-only: scale → 1 not sent\n");
    cli.fails(
        &["--readonly", "set", "image", "cs/web", "main=nginx:1.27"],
        1,
        "read-only: image main=nginx:1.27 not sent",
    )
    .await;
    assert_eq!(
        kubectl
            .jsonpath(
                &["cloneset", "web"],
                "{.spec.replicas} {.spec.template.spec.containers[0].image}"
            )
            .await,
        "3 nginx:1.25"
    );
    let journal = cli.journal();
    assert_eq!(journal.len(), 1, "{journal:#?}");
    assert_eq!(
        journal[0].action.describe(),
        format!("scale → 3, deleting {a}, {b}")
    );
    tb.shutdown().await;
}

/// A ServiceAccount that may read CloneSets and pods in the test's namespace, but not watch or
/// patch them.
const VIEWER: &str = r#"
apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader}
rules:
- apiGroups: [apps.kruise.io]
  resources: [clonesets]
  verbs: [get, list]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer-reads}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {kind: ServiceAccount, name: viewer, namespace: NAMESPACE}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_without_the_rights_is_told_so_in_one_line_and_nothing_is_sent() {
    let tb = Testbed::start().await;
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let admin = Cli::new(tb.kubeconfig_in_ns());
    kubectl.apply(&[], WEB).await;
    kubectl
        .apply(&[], &VIEWER.replace("NAMESPACE", tb.ns()))
        .await;
    admin
        .ok(&["rollout", "status", "cs/web", "-w", "--timeout", "60s"])
        .await;
    // Held mid-rollout, so a watch has something to wait for.
    admin.ok(&["rollout", "pause", "cs/web"]).await;
    admin
        .ok(&["set", "image", "cs/web", "main=nginx:1.26"])
        .await;

    let token = kubectl
        .ok(&["create", "token", "viewer"])
        .await
        .trim()
        .to_owned();
    let viewer = Cli::new(&tb.kubeconfig_with_token("viewer.kubeconfig", &token));

    let out = viewer.ok(&["rollout", "status", "cs/web"]).await;
    assert!(out.contains("paused yes"), "{out}");
    let stderr = viewer
        .fails(&["rollout", "resume", "cs/web"], 1, "forbidden: ")
        .await;
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains(&format!("patch clonesets in {}", tb.ns())),
        "{stderr}"
    );
    assert!(!stderr.contains("Status {"), "no Debug form: {stderr}");
    // A watch the server refuses ends at once (no retry loop until the timeout).
    let run = viewer
        .run(&["rollout", "status", "cs/web", "--watch", "--timeout", "60s"])
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("forbidden"), "{run:?}");
    assert!(!run.stderr.contains("timed out"), "{run:?}");
    assert!(viewer.journal().is_empty(), "nothing was sent");
    assert_eq!(
        kubectl
            .jsonpath(&["cloneset", "web"], "{.spec.updateStrategy.paused}")
            .await,
        "true"
    );
    tb.shutdown().await;
}
