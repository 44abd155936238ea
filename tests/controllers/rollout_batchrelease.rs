//! Kruise Rollout's BatchRelease controller and workload webhook end to end on the test bed: a
//! CloneSet of 10 driven batch by batch by a BatchRelease written by hand as the Rollout
//! controller would write it (research §3.12: batches `[1, "50%", "100%"]`, `batchPartition`
//! moved by a kubectl patch, then null to finalize), and an image change intercepted for a
//! Rollout object. The Rollout controller itself is not needed: nothing here waits on a
//! Rollout's status.

use crate::kubectl;
use crate::served;
use crate::testbed;
use crate::workloads::wait_for;

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::api::{CloneSet, IntOrString, keys, rollout::BatchRelease};
use kube::{Api, Client, api::ListParams};
use kubectl::Kubectl;
use serde_json::Value;
use testbed::Testbed;

const WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
spec:
  replicas: 10
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.25
  updateStrategy:
    maxUnavailable: "50%"
"#;

const RELEASE: &str = r#"
apiVersion: rollouts.kruise.io/v1beta1
kind: BatchRelease
metadata:
  name: web
spec:
  workloadRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  releasePlan:
    batches:
    - canaryReplicas: 1
    - canaryReplicas: "50%"
    - canaryReplicas: "100%"
    batchPartition: 0
    rolloutID: r1
    rollingStyle: Partition
    enableExtraWorkloadForCanary: false
"#;

async fn cloneset(client: &Client, name: &str) -> CloneSet {
    let api: Api<CloneSet> = Api::default_namespaced(client.clone());
    api.get(name).await.expect("get cloneset")
}

async fn release(client: &Client) -> Option<BatchRelease> {
    let api: Api<BatchRelease> = Api::default_namespaced(client.clone());
    api.get_opt("web").await.expect("get batchrelease")
}

fn partition(cs: &CloneSet) -> Option<IntOrString> {
    cs.spec.update_strategy.partition.clone()
}

fn control_info(cs: &CloneSet) -> Option<String> {
    cs.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::BATCH_RELEASE_CONTROL_INFO).cloned())
}

/// (updated replicas, updated ready) once the CloneSet's status is current.
fn updated(cs: &CloneSet) -> Option<(i32, i32)> {
    let s = cs.status.as_ref()?;
    (s.observed_generation == cs.metadata.generation.unwrap_or(0))
        .then_some((s.updated_replicas, s.updated_ready_replicas))
}

/// The BatchRelease's (phase, current batch, batch state).
fn state(br: &BatchRelease) -> (String, i32, String) {
    let s = br.status.clone().unwrap_or_default();
    let c = s.canary_status.unwrap_or_default();
    (
        s.phase.unwrap_or_default(),
        c.current_batch,
        c.batch_state.unwrap_or_default(),
    )
}

async fn pods(client: &Client) -> Vec<Pod> {
    let api: Api<Pod> = Api::default_namespaced(client.clone());
    api.list(&ListParams::default().labels("app=web"))
        .await
        .expect("list pods")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect()
}

/// How many pods carry rollout-id `r1` and each batch id 1..=3.
fn batch_labels(pods: &[Pod]) -> [usize; 3] {
    let mut out = [0; 3];
    for p in pods {
        let labels = p.metadata.labels.clone().unwrap_or_default();
        if labels.get(keys::ROLLOUT_ID).map(String::as_str) != Some("r1") {
            continue;
        }
        if let Some(b) = labels
            .get(keys::ROLLOUT_BATCH_ID)
            .and_then(|b| b.parse::<usize>().ok())
            .filter(|b| (1..=3).contains(b))
        {
            out[b - 1] += 1;
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_release_moves_a_cloneset_batch_by_batch_and_hands_it_back() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());

    kubectl.apply(&[], WEB).await;
    wait_for(90, "10 ready pods", || async {
        (updated(&cloneset(&client, "web").await) == Some((10, 10))).then_some(())
    })
    .await;
    // The new image held back as the webhook would hold it for a Rollout.
    kubectl
        .ok(&[
            "patch", "cloneset", "web", "--type", "merge", "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}},"updateStrategy":{"partition":"100%"}}}"#,
        ])
        .await;
    wait_for(60, "the new revision, nothing updated", || async {
        (updated(&cloneset(&client, "web").await) == Some((0, 0))).then_some(())
    })
    .await;

    // Batch 0: Initialize (control-info, partition "100%"), then 1 pod: partition 9 (an int,
    // as the batch is an int), one pod labelled batch 1, the BatchRelease Ready.
    kubectl.apply(&[], RELEASE).await;
    let cs = wait_for(90, "batch 0 ready with 1 updated pod", || async {
        let br = release(&client).await?;
        let cs = cloneset(&client, "web").await;
        (state(&br) == ("Progressing".into(), 0, "Ready".into()) && updated(&cs) == Some((1, 1)))
            .then_some(cs)
    })
    .await;
    assert_eq!(partition(&cs), Some(IntOrString::Int(9)));
    let info: Value =
        serde_json::from_str(&control_info(&cs).expect("control-info on the CloneSet"))
            .expect("control-info is JSON");
    assert_eq!(info["kind"], "BatchRelease");
    assert_eq!(info["name"], "web");
    let br = release(&client).await.expect("the BatchRelease");
    assert_eq!(info["uid"].as_str(), br.metadata.uid.as_deref());
    assert!(
        br.metadata
            .finalizers
            .unwrap_or_default()
            .contains(&keys::BATCH_RELEASE_FINALIZER.to_owned()),
        "the finalizer is added"
    );
    let labelled = wait_for(30, "one pod labelled batch 1", || async {
        let l = batch_labels(&pods(&client).await);
        (l == [1, 0, 0]).then_some(l)
    })
    .await;
    assert_eq!(labelled, [1, 0, 0]);

    // Step 2, driven with kubectl as the Rollout would: batchPartition 1 → "50%", 5 updated,
    // the four new ones labelled batch 2.
    kubectl
        .ok(&[
            "patch",
            "batchrelease",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"releasePlan":{"batchPartition":1}}}"#,
        ])
        .await;
    let cs = wait_for(90, "batch 1 ready with 5 updated pods", || async {
        let br = release(&client).await?;
        let cs = cloneset(&client, "web").await;
        (state(&br) == ("Progressing".into(), 1, "Ready".into())
            && updated(&cs) == Some((5, 5))
            && batch_labels(&pods(&client).await) == [1, 4, 0])
        .then_some(cs)
    })
    .await;
    assert_eq!(partition(&cs), Some(IntOrString::String("50%".into())));

    // Finalize: batchPartition null → Finalizing → Completed; the partition and control-info
    // go, and the CloneSet finishes on its own.
    kubectl
        .ok(&[
            "patch",
            "batchrelease",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"releasePlan":{"batchPartition":null}}}"#,
        ])
        .await;
    let cs = wait_for(90, "the release completed and handed back", || async {
        let br = release(&client).await?;
        let cs = cloneset(&client, "web").await;
        (state(&br).0 == "Completed" && control_info(&cs).is_none()).then_some(cs)
    })
    .await;
    assert_eq!(partition(&cs), None);
    assert!(!cs.spec.update_strategy.paused);
    wait_for(90, "all 10 on the new revision", || async {
        (updated(&cloneset(&client, "web").await) == Some((10, 10))).then_some(())
    })
    .await;

    // Deleted once Completed: the finalizer comes off and the object goes.
    kubectl
        .ok(&["delete", "batchrelease", "web", "--wait=false"])
        .await;
    wait_for(30, "the BatchRelease gone", || async {
        release(&client).await.is_none().then_some(())
    })
    .await;
    tb.shutdown().await;
}

const ECHO: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: echo
  labels: {rollouts.kruise.io/workload-type: cloneset}
spec:
  replicas: 3
  selector:
    matchLabels: {app: echo}
  template:
    metadata:
      labels: {app: echo}
    spec:
      containers:
      - name: main
        image: nginx:1.25
"#;

const ROLLOUT: &str = r#"
apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata:
  name: rollout-echo
spec:
  workloadRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: echo}
  strategy:
    canary:
      steps:
      - replicas: 1
      - replicas: "100%"
"#;

fn image_patch(image: &str) -> String {
    format!(
        r#"{{"spec":{{"template":{{"spec":{{"containers":[{{"name":"main","image":"{image}"}}]}}}}}}}}"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_change_is_intercepted_only_for_a_labelled_workload_a_rollout_names() {
    let tb = Testbed::start().await;
    if !testbed::rollout_webhooks(&tb.client, "the workload webhook").await {
        return;
    }
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    kubectl.apply(&[], ECHO).await;

    // No Rollout yet: the change goes through untouched.
    let out = kubectl
        .ok(&[
            "patch",
            "cloneset",
            "echo",
            "--type",
            "merge",
            "-p",
            &image_patch("nginx:1.26"),
            "-o",
            "json",
        ])
        .await;
    let admitted: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(admitted["spec"]["updateStrategy"]["partition"], Value::Null);
    assert_eq!(
        admitted["metadata"]["annotations"][keys::ROLLOUT_IN_PROGRESSING],
        Value::Null
    );

    // With a Rollout naming it: the admitted object holds the release back for the Rollout.
    kubectl.apply(&[], ROLLOUT).await;
    let out = kubectl
        .ok(&[
            "patch",
            "cloneset",
            "echo",
            "--type",
            "merge",
            "-p",
            &image_patch("nginx:1.27"),
            "-o",
            "json",
        ])
        .await;
    let admitted: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(admitted["spec"]["updateStrategy"]["partition"], "100%");
    assert_eq!(
        admitted["metadata"]["annotations"][keys::ROLLOUT_IN_PROGRESSING],
        r#"{"rolloutName":"rollout-echo"}"#
    );

    tb.shutdown().await;
}

fn daemon(image: &str) -> Value {
    serde_json::json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"terminationGracePeriodSeconds": 1,
                         "nodeSelector": {kruise_tui::cluster::sim::nodes::SIM_NODE_LABEL: "true"},
                         "containers": [{"name": "app", "image": image}]}
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}}
        }
    })
}

/// An Advanced DaemonSet (read and patched at the version the cluster stores it): R is the
/// desired number scheduled, the partition an int, readiness counted from the pods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_release_moves_an_advanced_daemonset_one_node_then_hands_it_back() {
    if testbed::skip_on_existing_cluster("the simulated nodes decide R") {
        return;
    }
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    kubectl.apply(&[], &daemon("agent:1").to_string()).await;
    let desired = wait_for(90, "the daemon ready on every node", || async {
        let ds = served::daemonset(&client, "agent").await?;
        let st = ds.status.clone()?;
        (st.desired_number_scheduled > 1
            && st.number_ready == st.desired_number_scheduled
            && st.updated_number_scheduled == st.desired_number_scheduled)
            .then_some(st.desired_number_scheduled)
    })
    .await;
    // The new image held back, as the webhook holds it for a Rollout (32767).
    kubectl
        .ok(&[
            "patch", "daemonset.apps.kruise.io", "agent", "--type", "merge", "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"agent:2"}]}},"updateStrategy":{"rollingUpdate":{"partition":32767}}}}"#,
        ])
        .await;
    let release = RELEASE
        .replace("name: web\nspec", "name: agent\nspec")
        .replace("kind: CloneSet, name: web", "kind: DaemonSet, name: agent");
    kubectl.apply(&[], &release).await;
    let api: Api<BatchRelease> = Api::default_namespaced(client.clone());
    let ds = wait_for(90, "batch 0 ready: one node updated", || async {
        let br = api.get_opt("agent").await.ok()??;
        let ds = served::daemonset(&client, "agent").await?;
        let st = ds.status.clone()?;
        (state(&br) == ("Progressing".into(), 0, "Ready".into())
            && st.updated_number_scheduled == 1
            && st.observed_generation == ds.metadata.generation.unwrap_or(0))
        .then_some(ds)
    })
    .await;
    let rolling = ds
        .spec
        .update_strategy
        .clone()
        .and_then(|u| u.rolling_update);
    assert_eq!(
        rolling.and_then(|r| r.partition),
        Some(IntOrString::Int(desired - 1)),
        "the partition keeps R - 1 nodes"
    );
    kubectl
        .ok(&[
            "patch",
            "batchrelease",
            "agent",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"releasePlan":{"batchPartition":null}}}"#,
        ])
        .await;
    wait_for(90, "completed, partition and control-info gone", || async {
        let br = api.get_opt("agent").await.ok()??;
        let ds = served::daemonset(&client, "agent").await?;
        let rolling = ds
            .spec
            .update_strategy
            .clone()
            .and_then(|u| u.rolling_update);
        let annotated = ds
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(keys::BATCH_RELEASE_CONTROL_INFO));
        (state(&br).0 == "Completed" && !annotated && rolling.and_then(|r| r.partition).is_none())
            .then_some(())
    })
    .await;
    tb.shutdown().await;
}
