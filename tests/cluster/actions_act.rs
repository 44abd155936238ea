//! The action layer against the embedded cluster: a prepared partition change is sent as a pinned
//! JSON patch; a concurrent change to the same field is never clobbered (the action stops and
//! says what changed); a concurrent change elsewhere is retried; read-only sends nothing; every
//! attempt is journaled with its inverse.

use crate::kubectl;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::{
    actions::{Action, Target},
    api::kinds::parse_kind,
    cluster::server::{EmbeddedCluster, ServerOptions},
    journal::Journal,
    kube::act::{ActError, Actor},
};
use kubectl::Kubectl;

const WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.25"}]}
  updateStrategy: {partition: 5}
"#;

fn web() -> Target {
    Target::new(parse_kind("cs").expect("kind"), Some("default"), "web")
}

async fn partition(kubectl: &Kubectl) -> String {
    kubectl
        .jsonpath(&["cloneset", "web"], "{.spec.updateStrategy.partition}")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_change_is_never_clobbered_and_the_journal_keeps_everything() {
    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .expect("starts");
    let kubectl = Kubectl::new(&cluster);
    kubectl.apply(&[], WEB).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let journal = Journal::new(dir.path().join("journal.jsonl"));
    let actor = Actor::new(
        cluster.client().await.expect("client"),
        false,
        Some("embedded".into()),
        cluster.https_url(),
        Some(journal.clone()),
    );
    let three = Action::Partition {
        value: IntOrString::Int(3),
    };

    // Prepared on partition 5; someone sets 4 before it is sent: not clobbered.
    let (prepared, state) = actor.prepare(&web(), &three).await.expect("prepared");
    kubectl
        .ok(&[
            "patch",
            "cloneset",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"updateStrategy":{"partition":4}}}"#,
        ])
        .await;
    let err = actor
        .perform(prepared, state)
        .await
        .expect_err("refused after the concurrent change");
    assert_eq!(
        err,
        ActError::Conflict(
            "CloneSet default/web changed meanwhile: updateStrategy.partition changed from 5 to 4"
                .into()
        ),
        "{err}"
    );
    assert_eq!(partition(&kubectl).await, "4", "the other change stands");

    // Prepared, then someone changes another field: the action is re-prepared and goes through.
    let (prepared, state) = actor.prepare(&web(), &three).await.expect("prepared");
    kubectl
        .ok(&["label", "cloneset", "web", "team=checkout"])
        .await;
    let done = actor.perform(prepared, state).await.expect("sent");
    assert_eq!(partition(&kubectl).await, "3");
    assert_eq!(
        done.retries, 0,
        "a pin on the partition alone is not touched by a label"
    );
    assert_eq!(
        kubectl
            .jsonpath(&["cloneset", "web"], "{.metadata.labels.team}")
            .await,
        "checkout"
    );

    // Read-only: nothing is sent, nothing journaled.
    let readonly = Actor::new(
        cluster.client().await.expect("client"),
        true,
        None,
        cluster.https_url(),
        Some(journal.clone()),
    );
    let err = readonly
        .run(&web(), &Action::Pause)
        .await
        .expect_err("read-only");
    assert!(matches!(err, ActError::ReadOnly(_)), "{err}");
    assert_eq!(
        kubectl
            .jsonpath(&["cloneset", "web"], "{.spec.updateStrategy.paused}")
            .await,
        ""
    );

    // The journal: the refused attempt (with the server's answer) and the success with its
    // inverse; reverting the success restores the partition it replaced.
    let (entries, bad) = journal.read().expect("journal");
    assert_eq!(bad, 0);
    assert_eq!(entries.len(), 2, "{entries:#?}");
    assert!(!entries[0].result.ok);
    assert_eq!(entries[0].result.code, Some(422));
    assert!(
        entries[0].inverse.is_none(),
        "a failed request has nothing to revert"
    );
    assert!(entries[1].result.ok);
    assert_eq!(entries[1].request.verb, "PATCH");
    let inverse = entries[1].inverse.clone().expect("an inverse");
    assert_eq!(
        inverse,
        Action::Partition {
            value: IntOrString::Int(4)
        }
    );
    actor
        .run(&entries[1].target, &inverse)
        .await
        .expect("reverted");
    assert_eq!(partition(&kubectl).await, "4");

    // Bad input and unknown objects: one clear line each.
    let err = actor
        .run(
            &web(),
            &Action::Partition {
                value: IntOrString::String("150%".into()),
            },
        )
        .await
        .expect_err("refused");
    assert_eq!(err.to_string(), "partition \"150%\" is over 100%");
    let missing = Target::new(parse_kind("cs").expect("kind"), Some("default"), "nope");
    let err = actor
        .run(&missing, &Action::Pause)
        .await
        .expect_err("missing");
    assert_eq!(
        err.to_string(),
        "not found: CloneSet default/nope does not exist"
    );
    cluster.shutdown().await;
}
