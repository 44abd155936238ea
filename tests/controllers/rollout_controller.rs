//! The embedded Rollout controller (Kruise Rollout v0.6.2) and its validating webhook end to
//! end, objects made with kubectl as a user would: a Rollout on a CloneSet goes Healthy with the
//! synthesized completed status, labels the workload and holds its finalizer; `"50"` replicas
//! are refused by `vrollout.kb.io`; `spec.disabled` makes it Disabled; deleting it lets the
//! finalizer go; a release walks its steps with approval and a timed pause, with the BatchRelease
//! controller of the same process.

use crate::kubectl::Kubectl;
use crate::workloads::{Cluster, wait_for};

const RO: &str = "rollouts.rollouts.kruise.io";

fn cloneset_yaml(name: &str, replicas: i32, image: &str) -> String {
    format!(
        r#"apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: {image}
  updateStrategy:
    maxUnavailable: 100%
"#
    )
}

fn rollout_yaml(name: &str, workload: &str, steps: &str) -> String {
    format!(
        r#"apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata:
  name: {name}
spec:
  workloadRef:
    apiVersion: apps.kruise.io/v1alpha1
    kind: CloneSet
    name: {workload}
  strategy:
    canary:
      steps:
{steps}
"#
    )
}

const STEPS: &str = r#"      - replicas: 1
      - replicas: 50%
        pause: {duration: 60}
      - replicas: 100%"#;

async fn jsonpath(k: &Kubectl, what: &[&str], path: &str) -> String {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    let p = format!("jsonpath={path}");
    args.extend_from_slice(&["-o", &p]);
    let out = k.run(&args).await;
    if out.code == 0 {
        out.stdout
    } else {
        String::new()
    }
}

async fn wait_jsonpath(k: &Kubectl, what: &[&str], path: &str, want: &str, secs: u64) {
    wait_for(secs, &format!("{what:?} {path} == {want:?}"), || async {
        (jsonpath(k, what, path).await == want).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_on_a_cloneset_goes_healthy_disabled_and_lets_go_when_deleted() {
    let c = Cluster::start().await;
    let k = Kubectl::at(c.tb.kubeconfig(), c.ns());
    k.apply(&[], &cloneset_yaml("echo", 3, "echo:1")).await;
    k.apply(&[], &rollout_yaml("echo-ro", "echo", STEPS)).await;
    // First Healthy, then the synthesized completed status (3/3 Completed).
    wait_jsonpath(
        &k,
        &[RO, "echo-ro"],
        "{.status.phase}/{.status.canaryStatus.currentStepState}/{.status.currentStepIndex}",
        "Healthy/Completed/3",
        60,
    )
    .await;
    k.assert_jsonpath(
        &[RO, "echo-ro"],
        "{.status.message}",
        "workload deployment is completed",
    )
    .await;
    k.assert_jsonpath(
        &[RO, "echo-ro"],
        "{.status.canaryStatus.nextStepIndex}",
        "-1",
    )
    .await;
    k.assert_jsonpath(
        &[RO, "echo-ro"],
        "{.metadata.finalizers[0]}",
        "rollouts.kruise.io/rollout",
    )
    .await;
    let hash = jsonpath(
        &k,
        &[RO, "echo-ro"],
        "{.metadata.annotations.rollouts\\.kruise\\.io/hash}",
    )
    .await;
    assert_eq!(hash.len(), 64, "the plan hash annotation: {hash:?}");
    assert_eq!(
        jsonpath(&k, &[RO, "echo-ro"], "{.status.canaryStatus.rolloutHash}").await,
        hash
    );
    k.assert_jsonpath(
        &["clonesets.apps.kruise.io", "echo"],
        "{.metadata.labels.rollouts\\.kruise\\.io/workload-type}",
        "cloneset",
    )
    .await;

    // Disabled, then back to Healthy.
    k.ok(&[
        "patch",
        RO,
        "echo-ro",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"disabled":true}}"#,
    ])
    .await;
    wait_jsonpath(&k, &[RO, "echo-ro"], "{.status.phase}", "Disabled", 30).await;
    k.assert_jsonpath(&[RO, "echo-ro"], "{.status.message}", "Rollout is disabled")
        .await;
    k.ok(&[
        "patch",
        RO,
        "echo-ro",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"disabled":false}}"#,
    ])
    .await;
    wait_jsonpath(&k, &[RO, "echo-ro"], "{.status.phase}", "Healthy", 30).await;

    // Deleted: Terminating finalises (nothing to release) and the finalizer goes.
    k.ok(&["delete", RO, "echo-ro", "--wait=false"]).await;
    wait_for(60, "the Rollout is gone", || async {
        let out = k.run(&["get", RO, "echo-ro"]).await;
        (out.code != 0 && out.stderr.contains("NotFound")).then_some(())
    })
    .await;
    // The label is never removed (upstream keeps it).
    k.assert_jsonpath(
        &["clonesets.apps.kruise.io", "echo"],
        "{.metadata.labels.rollouts\\.kruise\\.io/workload-type}",
        "cloneset",
    )
    .await;
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_webhook_refuses_bad_steps_and_a_second_rollout_on_the_same_workload() {
    let c = Cluster::start().await;
    if !crate::testbed::rollout_webhooks(&c.client, "vrollout.kb.io").await {
        return;
    }
    let k = Kubectl::at(c.tb.kubeconfig(), c.ns());
    let bad = rollout_yaml("bad", "echo", "      - replicas: \"50\"");
    let out = k.run_stdin(&["apply", "-f", "-"], &bad).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(r#"admission webhook "vrollout.kb.io" denied the request"#)
            && out.stderr.contains(
                r#"replicas must be positive number, or a percentage with "0%" < canaryReplicas <= "100%""#
            ),
        "{}",
        out.stderr
    );
    k.apply(&[], &rollout_yaml("first", "echo", STEPS)).await;
    let out = k
        .run_stdin(
            &["apply", "-f", "-"],
            &rollout_yaml("second", "echo", STEPS),
        )
        .await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("This rollout conflict with Rollout(")
            && out.stderr.contains("/first)"),
        "{}",
        out.stderr
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_walks_the_steps_with_approval_and_a_timed_pause() {
    let c = Cluster::start().await;
    if !crate::testbed::rollout_webhooks(&c.client, "the interception of a template change").await {
        return;
    }
    let k = Kubectl::at(c.tb.kubeconfig(), c.ns());
    k.apply(&[], &cloneset_yaml("web", 10, "web:1")).await;
    k.apply(&[], &rollout_yaml("web-ro", "web", STEPS)).await;
    wait_jsonpath(
        &k,
        &[RO, "web-ro"],
        "{.status.phase}/{.status.currentStepState}",
        "Healthy/Completed",
        60,
    )
    .await;
    wait_for(60, "all 10 pods ready", || async {
        let pods = c.pods_of("web").await;
        (pods.len() == 10 && pods.iter().all(crate::workloads::is_ready)).then_some(())
    })
    .await;
    // The image change is intercepted; step 1 updates exactly one pod and waits for approval.
    k.ok(&[
        "patch",
        "clonesets.apps.kruise.io",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"web:2"}]}}}}"#,
    ])
    .await;
    wait_jsonpath(
        &k,
        &[RO, "web-ro"],
        "{.status.canaryStatus.currentStepIndex}/{.status.canaryStatus.currentStepState}",
        "1/StepPaused",
        90,
    )
    .await;
    k.assert_jsonpath(
        &[RO, "web-ro"],
        "{.status.message}",
        "Rollout is in step(1/3), and you need manually confirm to enter the next step",
    )
    .await;
    k.assert_jsonpath(
        &["batchreleases.rollouts.kruise.io", "web-ro"],
        "{.spec.releasePlan.batchPartition}",
        "0",
    )
    .await;
    let updated = |n: usize| {
        let c = &c;
        async move {
            wait_for(90, &format!("{n} pods on web:2"), || async {
                let pods = c.pods_of("web").await;
                (pods
                    .iter()
                    .filter(|p| crate::workloads::image(p) == "web:2")
                    .count()
                    == n)
                    .then_some(())
            })
            .await;
        }
    };
    updated(1).await;
    // Approve (the exact write kubectl-kruise makes) → step 2: 5 pods, a 60 s pause.
    k.ok(&[
        "patch",
        RO,
        "web-ro",
        "--subresource=status",
        "--type",
        "merge",
        "-p",
        r#"{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}"#,
    ])
    .await;
    wait_jsonpath(
        &k,
        &[RO, "web-ro"],
        "{.status.canaryStatus.currentStepIndex}/{.status.canaryStatus.currentStepState}",
        "2/StepPaused",
        90,
    )
    .await;
    updated(5).await;
    k.assert_jsonpath(
        &[RO, "web-ro"],
        "{.status.message}",
        "Rollout is in step(2/3), and wait duration(60 seconds) to enter the next step",
    )
    .await;
    // After the pause: 100%, finalising, Healthy; the BatchRelease is gone.
    wait_jsonpath(
        &k,
        &[RO, "web-ro"],
        "{.status.phase}/{.status.canaryStatus.finalisingStep}",
        "Healthy/END",
        180,
    )
    .await;
    updated(10).await;
    k.assert_jsonpath(
        &[RO, "web-ro"],
        "{.status.message}",
        "Rollout progressing has been completed",
    )
    .await;
    let out = k
        .run(&["get", "batchreleases.rollouts.kruise.io", "web-ro"])
        .await;
    assert_ne!(out.code, 0, "the BatchRelease is deleted");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_refuse_a_cluster_with_a_kruise_rollout_manager() {
    use kruise_tui::cluster::demo::{DemoCluster, DemoOptions};
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let demo = DemoCluster::start(DemoOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        kubeconfig_out: kubeconfig.clone(),
        pods: None,
        seed: false,
        nodes: false,
        controllers: false,
        kruise_webhooks: true,
        remove_kubeconfig: false,
        kruise_version: kruise_tui::kruise::KruiseVersion::V1_9,
        kruise_rollout: true,
        streaming_lists: true,
        metrics: true,
    })
    .await
    .expect("starts");
    Kubectl::at(&kubeconfig, "default")
        .ok(&["create", "namespace", "kruise-rollout"])
        .await;
    let k = Kubectl::at(&kubeconfig, "kruise-rollout");
    k.apply(
        &[],
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: kruise-rollout-controller-manager, namespace: kruise-rollout}
spec:
  replicas: 1
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec: {containers: [{name: manager, image: "openkruise/kruise-rollout:v0.6.2"}]}
"#,
    )
    .await;
    let refused = tokio::process::Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
        .args(["controllers", "--kubeconfig"])
        .arg(&kubeconfig)
        .env_remove("KUBECONFIG")
        .kill_on_drop(true)
        .output()
        .await
        .expect("runs");
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("a kruise-rollout manager appears to be running")
            && stderr
                .contains("the Deployment kruise-rollout/kruise-rollout-controller-manager exists")
            && stderr.contains("--force"),
        "{stderr}"
    );
    demo.shutdown().await;
}
