//! `kruise-tui rollout …` and `set image` as a user runs them, against the test bed (the embedded
//! cluster, or an existing one under KRUISE_TUI_TEST_KUBECONFIG) with its controllers and
//! simulated nodes, in the test's namespace: each prediction printed is checked against the pods
//! that then move, `rollout status --watch` waits for the controllers (or times out, exit 1),
//! undo after a crashing image brings the pods back, bad input and read-only send nothing, an
//! unknown kind is a usage error, and the kubeconfig flags work on either side.

use crate::cli;
use crate::kubectl;
use crate::testbed;

use std::collections::BTreeMap;

use cli::{Cli, predicted, set};
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client, api::ListParams};
use kubectl::Kubectl;
use testbed::Testbed;

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
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 2}
"#;

const WEB_NAME: &str = "cloneset.apps.kruise.io/web";

/// A pod as the tests compare them: uid, revision, ready.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    uid: String,
    revision: String,
    ready: bool,
}

/// The active pods of `app` in the test's namespace, by name.
async fn pods(client: &Client, app: &str) -> BTreeMap<String, Seen> {
    Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .expect("pods")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(|p| {
            let ready = p
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
            let label = |k: &str| {
                p.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(k).cloned())
                    .unwrap_or_default()
            };
            (
                p.metadata.name.clone().unwrap_or_default(),
                Seen {
                    uid: p.metadata.uid.clone().unwrap_or_default(),
                    revision: label("controller-revision-hash"),
                    ready,
                },
            )
        })
        .collect()
}

fn on(pods: &BTreeMap<String, Seen>, revision: &str) -> Vec<String> {
    pods.iter()
        .filter(|(_, p)| p.revision == revision)
        .map(|(n, _)| n.clone())
        .collect()
}

async fn field(kubectl: &Kubectl, path: &str) -> String {
    kubectl.jsonpath(&["cloneset", "web"], path).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_rollout_walked_from_the_command_line_moves_the_predicted_pods() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    kubectl.apply(&[], WEB).await;

    // The context's namespace (the test's) by default; status --watch waits for the controllers.
    let out = cli
        .ok(&["rollout", "status", "cs/web", "--watch", "--timeout", "60s"])
        .await;
    assert!(
        out.ends_with(&format!("{WEB_NAME} successfully rolled out\n")),
        "{out}"
    );
    let first = pods(&client, "web").await;
    assert_eq!(first.len(), 6);
    assert!(first.values().all(|p| p.ready));

    // Hold every pod, then a new image: it is a new revision, and nothing moves yet.
    let out = cli.ok(&["rollout", "partition", "cs/web", "100%"]).await;
    assert!(
        out.starts_with(&format!("{WEB_NAME} partitioned: 0 → 100%\n")),
        "{out}"
    );
    let out = cli.ok(&["set", "image", "cs/web", "main=nginx:1.26"]).await;
    assert!(
        out.starts_with(&format!(
            "{WEB_NAME} image updated\n  main: nginx:1.25 → nginx:1.26\n"
        )),
        "{out}"
    );
    assert!(out.contains("No pod moves."), "{out}");
    let out = cli
        .ok(&["rollout", "status", "cs/web", "-w", "--timeout", "60s"])
        .await;
    assert!(
        out.contains(
            "partitioned roll out complete: 0 new pods have been updated (6 held back by partition 100%)"
        ),
        "{out}"
    );
    let old_revision = field(&kubectl, "{.status.currentRevision}").await;

    // 50%: the prediction names three pods; status waits until they moved, in place.
    let out = cli.ok(&["rollout", "partition", "cs/web", "50%"]).await;
    assert!(
        out.starts_with(&format!("{WEB_NAME} partitioned: 100% → 50%\n")),
        "{out}"
    );
    let (revision, names) = predicted(&out);
    assert_eq!(names.len(), 3, "{out}");
    assert_eq!(
        out.matches("next step").count(),
        2,
        "maxUnavailable 2 lets two go first: {out}"
    );
    let out = cli
        .ok(&["rollout", "status", "cs/web", "--watch", "--timeout", "60s"])
        .await;
    assert!(
        out.contains(
            "partitioned roll out complete: 3 new pods have been updated (3 held back by partition 50%)"
        ),
        "{out}"
    );
    assert_eq!(field(&kubectl, "{.status.updateRevision}").await, revision);
    let now = pods(&client, "web").await;
    assert_eq!(
        set(&on(&now, &revision)),
        set(&names),
        "the pods that moved are the ones predicted"
    );
    assert!(now.iter().all(|(n, p)| p.ready && p.uid == first[n].uid));

    // Bad partitions: refused with the reason, nothing sent. A malformed one is a usage error
    // (2); one the workload refuses, a refusal (1).
    for (value, code, reason) in [
        ("abc", 2, "partition \"abc\" is not a number of pods"),
        ("150%", 2, "partition \"150%\" is over 100%"),
        ("-1", 2, "partition \"-1\" is negative"),
        ("7", 1, "partition 7 is more than the 6 replicas"),
    ] {
        cli.fails(&["rollout", "partition", "cs/web", value], code, reason)
            .await;
    }
    assert_eq!(
        field(&kubectl, "{.spec.updateStrategy.partition}").await,
        "50%"
    );

    // An unknown or rollout-less kind is a usage error.
    cli.fails(
        &["rollout", "partition", "deploy/web", "3"],
        2,
        "has no rollout",
    )
    .await;
    cli.fails(
        &["plan", "foo/web", "--partition", "3"],
        2,
        "unknown kind \"foo\"",
    )
    .await;
    cli.fails(
        &["rollout", "status", "clonest/web"],
        2,
        "cloneset|clone|cs",
    )
    .await;

    // The kubeconfig flags before or after the subcommand; another namespace has no web.
    // (The kubeconfig whose context's namespace is not the test's.)
    let k = tb.kubeconfig().to_str().expect("a UTF-8 path").to_owned();
    let ns = tb.ns();
    for args in [
        vec!["-n", ns, "--kubeconfig", &k, "rollout", "status", "cs/web"],
        vec!["rollout", "status", "cs/web", "--kubeconfig", &k, "-n", ns],
        vec!["rollout", "-n", ns, "status", "cs/web", "--kubeconfig", &k],
    ] {
        let run = cli
            .run_raw(args.iter().map(|a| (*a).to_owned()).collect())
            .await;
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        assert!(
            run.stdout.starts_with(&format!("{WEB_NAME} in {ns}\n")),
            "{run:?}"
        );
    }
    cli.fails(
        &["-n", "default", "rollout", "history", "cs/web"],
        1,
        "CloneSet default/web not found",
    )
    .await;

    // Read-only: refused before anything is sent; the journal holds only what was sent.
    let journaled = cli.journal();
    let stderr = cli
        .fails(
            &["--readonly", "rollout", "partition", "cs/web", "0"],
            1,
            "read-only",
        )
        .await;
    assert_eq!(stderr, "kruise-tui: read-only: partition → 0 not sent\n");
    assert_eq!(
        field(&kubectl, "{.spec.updateStrategy.partition}").await,
        "50%"
    );
    assert_eq!(cli.journal(), journaled, "read-only journals nothing");
    let sent: Vec<String> = journaled.iter().map(|e| e.action.describe()).collect();
    assert_eq!(
        sent,
        [
            "partition → 100%",
            "image main=nginx:1.26",
            "partition → 50%"
        ]
    );
    assert!(journaled.iter().all(|e| e.result.ok && e.inverse.is_some()));

    // Paused, the rest holds: a watch that cannot complete times out with exit 1.
    assert_eq!(
        cli.ok(&["rollout", "pause", "cs/web"]).await,
        format!("{WEB_NAME} paused\n")
    );
    cli.fails(&["rollout", "pause", "cs/web"], 1, "already paused")
        .await;
    let out = cli.ok(&["rollout", "partition", "cs/web", "0"]).await;
    assert_eq!(out.matches("blocked: rollout paused").count(), 3, "{out}");
    let run = cli
        .run(&["rollout", "status", "cs/web", "--watch", "--timeout", "3s"])
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("(paused)..."), "{run:?}");
    assert_eq!(
        run.stderr,
        format!("kruise-tui: timed out after 3s waiting for {WEB_NAME} to roll out\n")
    );
    assert_eq!(on(&pods(&client, "web").await, &revision).len(), 3);
    let out = cli.ok(&["rollout", "resume", "cs/web"]).await;
    let (_, rest) = predicted(&out);
    assert!(out.starts_with(&format!("{WEB_NAME} resumed\n")), "{out}");
    assert_eq!(rest.len(), 3, "{out}");
    let out = cli
        .ok(&["rollout", "status", "cs/web", "--watch", "--timeout", "60s"])
        .await;
    assert!(out.ends_with("successfully rolled out\n"), "{out}");
    let done = pods(&client, "web").await;
    assert_eq!(on(&done, &revision).len(), 6);
    assert!(done.values().all(|p| p.ready));

    // History: the old revision has no pod left; the new one is current and update.
    let out = cli.ok(&["rollout", "history", "clonesets/web"]).await;
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec!["1", old_revision.as_str(), "0", "<none>"],
            vec!["2", revision.as_str(), "6", "<none>", "current,", "update"],
        ],
        "{out}"
    );
    let out = cli
        .ok(&["rollout", "history", "cs/web", "--revision", "1"])
        .await;
    assert!(out.contains("image: nginx:1.25"), "{out}");
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_after_a_crashing_image_restores_the_template_and_the_pods_recover() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    kubectl.apply(&[], WEB).await;
    cli.ok(&["rollout", "status", "cs/web", "-w", "--timeout", "60s"])
        .await;
    let good = field(&kubectl, "{.status.updateRevision}").await;
    let first = pods(&client, "web").await;

    // A crashing image: two pods (maxUnavailable 2) take it and never become ready.
    let out = cli
        .ok(&["set", "image", "cs/web", "main=nginx:1.26-crash"])
        .await;
    let (bad, names) = predicted(&out);
    assert_eq!(names.len(), 6, "every pod is to move: {out}");
    let run = cli
        .run(&["rollout", "status", "cs/web", "--watch", "--timeout", "8s"])
        .await;
    assert_eq!(run.code, 1, "a crashing rollout does not complete: {run:?}");
    assert!(run.stderr.contains("timed out after 8s"), "{run:?}");
    let crashing = on(&pods(&client, "web").await, &bad);
    assert_eq!(crashing.len(), 2, "{run:?}");
    assert_eq!(
        set(&crashing),
        set(&names[..2]),
        "the first two predicted took it"
    );

    // Undo: the previous template back, the crashed pods predicted to move back, and they do.
    let out = cli.ok(&["rollout", "undo", "cs/web"]).await;
    assert!(
        out.starts_with(&format!(
            "{WEB_NAME} rolled back to revision 1 ({good})\n  \
             spec.containers[main].image: nginx:1.26-crash → nginx:1.25\n"
        )),
        "{out}"
    );
    let (to, moving) = predicted(&out);
    assert_eq!(to, good, "{out}");
    assert_eq!(set(&moving), set(&crashing), "{out}");
    let out = cli
        .ok(&["rollout", "status", "cs/web", "--watch", "--timeout", "60s"])
        .await;
    assert!(out.ends_with("successfully rolled out\n"), "{out}");
    assert_eq!(
        field(&kubectl, "{.spec.template.spec.containers[0].image}").await,
        "nginx:1.25"
    );
    let after = pods(&client, "web").await;
    assert_eq!(on(&after, &good).len(), 6);
    assert!(
        after.iter().all(|(n, p)| p.ready && p.uid == first[n].uid),
        "recovered in place: {after:?}"
    );
    let out = cli.ok(&["rollout", "status", "cs/web"]).await;
    assert!(
        out.contains("  pods       6 desired  6 current  6 ready  6 available\n"),
        "{out}"
    );

    // The good revision was renumbered; there is no revision 9 to go to.
    cli.fails(
        &["rollout", "undo", "cs/web", "--to-revision", "9"],
        1,
        "has no revision 9 (revisions: 2, 3)",
    )
    .await;
    let entries = cli.journal();
    assert_eq!(entries.len(), 2, "{entries:#?}");
    tb.shutdown().await;
}
