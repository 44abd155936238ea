//! Issue 21's acceptance, end to end on the test bed, with objects created by kubectl and the
//! release walked with `kruise-tui`: a CloneSet of 10 and a Rollout of steps `1`, `50%` (pause
//! 60 s), `100%`. An image change is intercepted (no pod moves before the Rollout acts), step 1
//! updates exactly one pod and waits, `rollout approve` moves to step 2 (five pods, the pause
//! counting down), then 100 %; a direct `rollout partition` on the workload is refused naming the
//! Rollout; a rollback mid-way restores the stable template as upstream does; disabling the
//! Rollout mid-way promotes the new revision.
//!
//! The CloneSet recreates its pods: in place, a pod keeps the batch labels of the release before,
//! and upstream's label patcher then skips the new revision's pods as legacy ones (it maps a
//! revision to the first rollout-id its pods carry), so a second release of an in-place CloneSet
//! waits for batch labels it never writes — v0.6.2's behaviour, which the port keeps.
//!
//! On an existing cluster the interception needs Kruise Rollout's workload webhook (kruise-rollout
//! installed, which then also runs the Rollout controllers): without one the test says so and
//! stops.

use crate::cli;
use crate::kubectl;
use crate::testbed;

use std::time::Duration;

use cli::Cli;
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client, api::ListParams};
use kubectl::Kubectl;
use testbed::Testbed;

const CART: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: cart}
spec:
  replicas: 10
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart}}
    spec: {containers: [{name: main, image: "cart:1"}]}
  updateStrategy: {type: ReCreate, maxUnavailable: 5}
"#;

const ROLLOUT: &str = r#"
apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata: {name: cart}
spec:
  workloadRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: cart}
  strategy:
    canary:
      steps:
      - replicas: 1
      - replicas: "50%"
        pause: {duration: 60}
      - replicas: "100%"
"#;

const WAIT: Duration = Duration::from_secs(90);

/// Polls `probe` every 200 ms until it returns Some, or panics after `WAIT` naming `what` and
/// the last thing seen.
async fn until<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut last = String::new();
    while tokio::time::Instant::now() < deadline {
        match probe().await {
            Ok(v) => return v,
            Err(seen) => last = seen,
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{what}: not within {WAIT:?}; last seen: {last}");
}

async fn rollout(k: &Kubectl, path: &str) -> String {
    k.jsonpath(&["rollouts.rollouts.kruise.io", "cart"], path)
        .await
}

async fn cloneset(k: &Kubectl, path: &str) -> String {
    k.jsonpath(&["clonesets.apps.kruise.io", "cart"], path)
        .await
}

/// Step index, step state and phase of the Rollout.
async fn step(k: &Kubectl) -> (String, String, String) {
    let s = rollout(
        k,
        "{.status.canaryStatus.currentStepIndex} {.status.canaryStatus.currentStepState} {.status.phase}",
    )
    .await;
    let mut parts = s.split(' ').map(str::to_owned);
    (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    )
}

/// Active pods of cart by image: how many run `image`.
async fn on_image(client: &Client, image: &str) -> usize {
    Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels("app=cart"))
        .await
        .expect("pods")
        .items
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| {
            p.spec.as_ref().is_some_and(|s| {
                s.containers
                    .iter()
                    .any(|c| c.image.as_deref() == Some(image))
            })
        })
        .count()
}

/// Waits until the Rollout waits at `index` in StepPaused.
async fn paused_at(k: &Kubectl, index: &str) {
    until(&format!("the Rollout pauses at step {index}"), || async {
        let seen = step(k).await;
        if seen.0 == index && seen.1 == "StepPaused" && seen.2 == "Progressing" {
            Ok(())
        } else {
            let br = k
                .run(&[
                    "get",
                    "batchreleases.rollouts.kruise.io",
                    "cart",
                    "-o",
                    "json",
                ])
                .await;
            let cs = cloneset(k, "{.spec.updateStrategy} {.status}").await;
            Err(format!(
                "{seen:?}\nBatchRelease: {}\nCloneSet: {cs}",
                br.stdout
            ))
        }
    })
    .await
}

async fn healthy(k: &Kubectl) {
    until("the Rollout is Healthy", || async {
        let seen = step(k).await;
        (seen.2 == "Healthy")
            .then_some(())
            .ok_or(format!("{seen:?}"))
    })
    .await
}

async fn exactly(client: &Client, image: &str, n: usize) {
    until(&format!("{n} pods on {image}"), || async {
        let got = on_image(client, image).await;
        (got == n).then_some(()).ok_or(format!("{got}"))
    })
    .await
}

async fn set_image(k: &Kubectl, image: &str) {
    k.ok(&[
        "patch",
        "clonesets.apps.kruise.io",
        "cart",
        "--type",
        "merge",
        "-p",
        &format!(r#"{{"spec":{{"template":{{"spec":{{"containers":[{{"name":"main","image":"{image}"}}]}}}}}}}}"#),
    ])
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_walks_a_cloneset_step_by_step_and_refuses_direct_edits() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter("kruise_controllers=debug")
        .with_test_writer()
        .try_init();
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let k = Kubectl::at(tb.kubeconfig(), tb.ns());
    if !testbed::rollout_webhooks(&client, "the Rollout walk").await {
        return;
    }
    let cli = Cli::new(tb.kubeconfig_in_ns());
    k.apply(&[], CART).await;
    exactly(&client, "cart:1", 10).await;
    k.apply(&[], ROLLOUT).await;
    healthy(&k).await;
    until("the Rollout labels its workload", || async {
        let label = cloneset(
            &k,
            "{.metadata.labels.rollouts\\.kruise\\.io/workload-type}",
        )
        .await;
        (label == "cloneset").then_some(()).ok_or(label)
    })
    .await;

    // The image change is intercepted: the admitted CloneSet holds every pod.
    set_image(&k, "cart:2").await;
    assert_eq!(
        cloneset(&k, "{.spec.updateStrategy.partition}").await,
        "100%"
    );
    assert!(
        cloneset(&k, "{.metadata.annotations}")
            .await
            .contains(r#"{\"rolloutName\":\"cart\"}"#),
        "the in-progressing annotation names the Rollout"
    );
    assert_eq!(on_image(&client, "cart:2").await, 0, "no pod moves first");

    // Step 1: exactly one pod, then a wait for approval.
    paused_at(&k, "1").await;
    exactly(&client, "cart:2", 1).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        on_image(&client, "cart:2").await,
        1,
        "step 1 stays at one pod"
    );
    let status = cli.ok(&["rollout", "status", "rollout/cart"]).await;
    assert!(status.contains("1/3"), "{status}");

    // A direct partition edit is refused, naming the Rollout; nothing is sent.
    let refused = cli.run(&["rollout", "partition", "cs/cart", "0"]).await;
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("Rollout"), "{refused:?}");
    assert!(refused.stderr.contains("cart"), "{refused:?}");
    assert_eq!(cloneset(&k, "{.spec.updateStrategy.partition}").await, "9");

    // Approve: step 2 updates five and counts its 60 s pause down.
    // The prediction printed (step 2 at 50 %) is what the controllers then do: 5 of 10.
    let approved = cli.ok(&["rollout", "approve", "rollout/cart"]).await;
    assert!(
        approved.contains("step 1/3 (1 pod): StepPaused → StepReady")
            && approved.contains("starts step 2/3: 50% on the new revision"),
        "{approved}"
    );
    paused_at(&k, "2").await;
    exactly(&client, "cart:2", 5).await;
    let status = cli.ok(&["rollout", "status", "ro/cart"]).await;
    assert!(status.contains("2/3"), "{status}");
    assert!(
        status.contains("left"),
        "a timed pause shows its time left: {status}"
    );

    // Approve the timed pause too: 100 %, then Healthy with the partition released.
    cli.ok(&["rollout", "approve", "ro/cart"]).await;
    exactly(&client, "cart:2", 10).await;
    healthy(&k).await;
    until("the BatchRelease releases the partition", || async {
        let partition = cloneset(&k, "{.spec.updateStrategy.partition}").await;
        partition.is_empty().then_some(()).ok_or(partition)
    })
    .await;

    // A rollback mid-way: cart:3 to step 1, then undo: every pod back on cart:2.
    set_image(&k, "cart:3").await;
    paused_at(&k, "1").await;
    exactly(&client, "cart:3", 1).await;
    cli.ok(&["rollout", "undo", "rollout/cart"]).await;
    exactly(&client, "cart:2", 10).await;
    healthy(&k).await;
    assert_eq!(
        cloneset(&k, "{.spec.template.spec.containers[0].image}").await,
        "cart:2"
    );

    // Disabling mid-way promotes: cart:4 to step 1, disable, every pod on cart:4.
    set_image(&k, "cart:4").await;
    paused_at(&k, "1").await;
    k.ok(&[
        "patch",
        "rollouts.rollouts.kruise.io",
        "cart",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"disabled":true}}"#,
    ])
    .await;
    exactly(&client, "cart:4", 10).await;
    until("the Rollout is Disabled", || async {
        let seen = step(&k).await;
        (seen.2 == "Disabled")
            .then_some(())
            .ok_or(format!("{seen:?}"))
    })
    .await;
    tb.shutdown().await;
}
