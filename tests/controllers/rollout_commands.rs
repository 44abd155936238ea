//! `kruise-tui rollout status|approve|pause|resume rollout/NAME` and the Rollout guard of the
//! workload verbs, as a user runs them, on the embedded server without controllers: a Rollout
//! and its CloneSet created with kubectl, the Rollout's status written by hand with a kube-rs
//! status patch (as its controller would), so each command is checked against exactly what it
//! reads and writes.

use crate::cli;
use crate::kubectl;
use crate::testbed;

use cli::Cli;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::{
    actions::{Action, Target, guard::RolloutGuard},
    api::{kinds, rollout::Rollout},
    kube::{act::Actor, guard::rollout_guard},
};
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use kubectl::Kubectl;
use serde_json::{Value, json};
use testbed::{Testbed, skip_on_existing_cluster};

const WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
  labels: {rollouts.kruise.io/workload-type: cloneset}
spec:
  replicas: 10
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: "nginx:1.25"}]}
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 2}
"#;

const ROLLOUT: &str = r#"
apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata: {name: web-rollout}
spec:
  workloadRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  strategy:
    canary:
      steps:
      - replicas: 1
      - replicas: 50%
        pause: {duration: 60}
      - replicas: 100%
"#;

/// Writes the Rollout's status as its controller would: Progressing, InRolling, at `step` in
/// `state`, the step's timer started `ago` seconds ago.
async fn set_status(api: &Api<Rollout>, step: i32, state: &str, ago: i64) {
    let since = Timestamp::now() - jiff::SignedDuration::from_secs(ago);
    let status = json!({"status": {
        "observedGeneration": 1,
        "phase": "Progressing",
        "message": format!("Rollout is in step({step}/3)"),
        "conditions": [{"type": "Progressing", "status": "True", "reason": "InRolling",
                        "message": "Rollout is in Progressing"}],
        "currentStepIndex": step,
        "currentStepState": state,
        "canaryStatus": {"currentStepIndex": step, "nextStepIndex": step + 1,
                         "currentStepState": state, "stableRevision": "5d8f6c",
                         "canaryRevision": "7b9c4d", "podTemplateHash": "7b9c4d",
                         "finalisingStep": "", "canaryReplicas": 5, "canaryReadyReplicas": 5,
                         "lastUpdateTime": since.to_string()},
    }});
    api.patch_status(
        "web-rollout",
        &PatchParams::default(),
        &Patch::Merge(&status),
    )
    .await
    .expect("the Rollout's status is written");
}

async fn rollout_json(api: &Api<Rollout>) -> Value {
    serde_json::to_value(api.get("web-rollout").await.expect("the Rollout")).expect("json")
}

async fn setup() -> Option<(Testbed, Kubectl, Cli, Api<Rollout>)> {
    if skip_on_existing_cluster("a Rollout's status written by hand needs no Rollout controller") {
        return None;
    }
    let tb = Testbed::start_bare().await;
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cli = Cli::new(tb.kubeconfig_in_ns());
    kubectl.apply(&[], WEB).await;
    kubectl.apply(&[], ROLLOUT).await;
    let api: Api<Rollout> = Api::namespaced(tb.client.clone(), tb.ns());
    Some((tb, kubectl, cli, api))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_writes_step_ready_only_where_the_step_waits_and_pause_flips_the_strategy() {
    let Some((tb, _kubectl, cli, api)) = setup().await else {
        return;
    };
    let ns = tb.ns().to_owned();
    set_status(&api, 2, "StepPaused", 10).await;

    // Status: the step, its state, each step resolved against the 10 replicas, the time left.
    let out = cli.ok(&["rollout", "status", "rollout/web-rollout"]).await;
    assert!(
        out.starts_with(&format!("rollout.rollouts.kruise.io/{ns}/web-rollout\n")),
        "{out}"
    );
    assert!(
        out.contains("  workload   CloneSet web (10 replicas)\n"),
        "{out}"
    );
    assert!(
        out.contains("  phase      Progressing (InRolling)\n"),
        "{out}"
    );
    assert!(out.contains("  step       2/3 StepPaused\n"), "{out}");
    let left: i64 = out
        .lines()
        .find_map(|l| l.strip_prefix("  time left  "))
        .and_then(|l| l.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no time-left line: {out}"));
    assert!(
        (45..=50).contains(&left),
        "60 s pause started 10 s ago: {left}s left\n{out}"
    );
    assert!(out.contains("of the 60s pause"), "{out}");
    assert!(
        out.contains("            1  1         1     manual\n"),
        "{out}"
    );
    assert!(
        out.contains("           > 2  50%       5     60s\n"),
        "{out}"
    );
    assert!(
        out.contains("            3  100%      10    auto\n"),
        "{out}"
    );

    // The workload's own status points at the Rollout.
    let out = cli.ok(&["rollout", "status", "cs/web"]).await;
    assert!(
        out.contains(&format!(
            "released by Rollout {ns}/web-rollout: step 2/3 StepPaused (kruise-tui rollout \
             status rollout/web-rollout)"
        )),
        "{out}"
    );

    // Not the step the user saw; not a step that waits: refused, nothing sent.
    cli.fails(
        &["rollout", "approve", "ro/web-rollout", "--step", "1"],
        1,
        "at step 2/3 (StepPaused) now, not at step 1 you saw",
    )
    .await;
    set_status(&api, 2, "StepUpgrade", 10).await;
    cli.fails(
        &["rollout", "approve", "ro/web-rollout"],
        1,
        "step 2/3 is StepUpgrade, not StepPaused",
    )
    .await;
    assert!(cli.journal().is_empty(), "a refusal sends nothing");
    assert_eq!(
        rollout_json(&api).await["status"]["canaryStatus"]["currentStepState"],
        "StepUpgrade"
    );

    // Waiting for approval: exactly kubectl-kruise's write, and it holds.
    set_status(&api, 2, "StepPaused", 10).await;
    let out = cli.ok(&["rollout", "approve", "ro/web-rollout"]).await;
    assert!(
        out.starts_with(
            "rollout.rollouts.kruise.io/web-rollout approved\n  step 2/3 (50%): StepPaused → \
             StepReady\n"
        ),
        "{out}"
    );
    let stored = rollout_json(&api).await;
    assert_eq!(
        stored["status"]["canaryStatus"]["currentStepState"],
        "StepReady"
    );
    assert_eq!(stored["status"]["canaryStatus"]["currentStepIndex"], 2);
    let journal = cli.journal();
    assert_eq!(journal.len(), 1, "one write: {journal:?}");
    let request = &journal[0].request;
    assert_eq!(
        (
            request.verb.as_str(),
            request.path.as_str(),
            request.content_type.as_str()
        ),
        (
            "PATCH",
            format!("/apis/rollouts.kruise.io/v1beta1/namespaces/{ns}/rollouts/web-rollout/status")
                .as_str(),
            "application/merge-patch+json"
        )
    );
    assert_eq!(
        request.body["status"],
        json!({"canaryStatus": {"currentStepState": "StepReady"}})
    );
    assert!(request.body["metadata"]["resourceVersion"].is_string());
    assert!(journal[0].result.ok);

    // Pause and resume: spec.strategy.paused, refused when already so.
    let out = cli.ok(&["rollout", "pause", "rollout/web-rollout"]).await;
    assert!(
        out.starts_with("rollout.rollouts.kruise.io/web-rollout paused\n"),
        "{out}"
    );
    assert_eq!(rollout_json(&api).await["spec"]["strategy"]["paused"], true);
    cli.fails(
        &["rollout", "pause", "ro/web-rollout"],
        1,
        "is already paused",
    )
    .await;
    let out = cli.ok(&["rollout", "resume", "ro/web-rollout"]).await;
    assert!(
        out.starts_with("rollout.rollouts.kruise.io/web-rollout resumed\n"),
        "{out}"
    );
    // Read typed: the type leaves a false `paused` out.
    let stored = api.get("web-rollout").await.expect("the Rollout");
    assert!(!stored.spec.strategy.paused);
    assert_eq!(cli.journal().len(), 3, "approve, pause, resume");
    cli.fails(&["rollout", "resume", "ro/web-rollout"], 1, "is not paused")
        .await;
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_partition_on_a_workload_a_rollout_releases_is_refused_unless_forced() {
    let Some((tb, kubectl, cli, api)) = setup().await else {
        return;
    };
    let ns = tb.ns().to_owned();
    set_status(&api, 1, "StepPaused", 0).await;
    kubectl
        .ok(&[
            "annotate",
            "cloneset",
            "web",
            r#"rollouts.kruise.io/in-progressing={"rolloutName":"web-rollout"}"#,
        ])
        .await;
    let line = cli
        .fails(
            &["rollout", "partition", "cloneset/web", "0"],
            1,
            "refused: ",
        )
        .await;
    assert!(
        line.contains(&format!(
            "refused: CloneSet {ns}/web is released by Rollout {ns}/web-rollout (step 1/3, \
             StepPaused); approve, pause or undo the Rollout instead (kruise-tui rollout approve \
             rollout/web-rollout)"
        )),
        "{line}"
    );
    cli.fails(
        &["rollout", "pause", "cs/web"],
        1,
        "(kruise-tui rollout pause rollout/web-rollout)",
    )
    .await;
    cli.fails(&["rollout", "undo", "cs/web"], 1, "kruise-tui rollout undo")
        .await;
    assert!(cli.journal().is_empty(), "a refusal sends nothing");
    // The console's executor asks the same guard of the same objects.
    let target = Target::new(&kinds::CLONESET, Some(&ns), "web");
    let actor = Actor::new(tb.client.clone(), false, None, String::new(), None);
    let state = actor.read(&target, false).await.expect("the CloneSet");
    let partition = Action::Partition {
        value: IntOrString::Int(0),
    };
    assert!(matches!(
        rollout_guard(&tb.client, &target, &state, &partition).await,
        RolloutGuard::Refused(l) if l.contains("(kruise-tui rollout approve rollout/web-rollout)")
    ));
    let image = Action::SetImage {
        images: vec![("main".into(), "nginx:1.26".into())],
    };
    assert!(matches!(
        rollout_guard(&tb.client, &target, &state, &image).await,
        RolloutGuard::Note(l) if l.contains("is mid-release (step 1/3, StepPaused)")
    ));
    assert_eq!(
        kubectl
            .jsonpath(&["cloneset", "web"], "{.spec.updateStrategy.partition}")
            .await,
        ""
    );
    // --force: sent, with the Rollout named.
    let out = cli
        .ok(&["rollout", "partition", "cloneset/web", "0", "--force"])
        .await;
    assert!(
        out.contains(&format!(
            "--force: CloneSet {ns}/web is released by Rollout"
        )),
        "{out}"
    );
    assert_eq!(
        kubectl
            .jsonpath(&["cloneset", "web"], "{.spec.updateStrategy.partition}")
            .await,
        "0"
    );
    tb.shutdown().await;
}

/// A ControllerRevision of demo/web holding the template with `image`.
fn revision(name: &str, number: i64, image: &str, uid: &str) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": name, "labels": {"app": "web"},
                     "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1",
                         "kind": "CloneSet", "name": "web", "uid": uid, "controller": true}]},
        "revision": number,
        "data": {"spec": {"template": {"$patch": "replace",
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": image}]}}}},
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_through_a_paused_rollout_reverts_the_template_then_resumes_it() {
    let Some((tb, kubectl, cli, api)) = setup().await else {
        return;
    };
    let ns = tb.ns().to_owned();
    // Mid-release: v1 (nginx:1.25) stable, v2 (nginx:1.26) being released, the Rollout paused.
    kubectl
        .ok(&[
            "patch",
            "cloneset",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}}}}"#,
        ])
        .await;
    kubectl
        .ok(&[
            "annotate",
            "cloneset",
            "web",
            "rollouts.kruise.io/rollout-id=v2",
        ])
        .await;
    let uid = kubectl
        .jsonpath(&["cloneset", "web"], "{.metadata.uid}")
        .await;
    kubectl
        .ok_stdin(
            &["apply", "-f", "-"],
            &revision("web-5d8f6c", 1, "nginx:1.25", &uid),
        )
        .await;
    kubectl
        .ok_stdin(
            &["apply", "-f", "-"],
            &revision("web-7b9c4d", 2, "nginx:1.26", &uid),
        )
        .await;
    let cs: Api<kube::api::DynamicObject> = Api::namespaced_with(
        tb.client.clone(),
        &ns,
        &kube::core::ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk("apps.kruise.io", "v1alpha1", "CloneSet"),
            "clonesets",
        ),
    );
    let status = json!({"status": {"observedGeneration": 2, "replicas": 10, "readyReplicas": 10,
        "availableReplicas": 10, "updatedReplicas": 5, "updatedReadyReplicas": 5,
        "currentRevision": "web-5d8f6c", "updateRevision": "web-7b9c4d"}});
    cs.patch_status("web", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("the CloneSet's status is written");
    set_status(&api, 2, "StepPaused", 10).await;
    kubectl
        .ok(&[
            "patch",
            "rollout",
            "web-rollout",
            "--type=merge",
            "-p",
            r#"{"spec":{"strategy":{"paused":true}}}"#,
        ])
        .await;

    let out = cli.ok(&["rollout", "undo", "rollout/web-rollout"]).await;
    assert!(
        out.starts_with(&format!(
            "rollout.rollouts.kruise.io/web-rollout rolled back: CloneSet {ns}/web template of \
             web-5d8f6c (revision 1, the stable one)\n"
        )),
        "{out}"
    );
    assert!(
        out.contains("main.image: nginx:1.26 → nginx:1.25")
            || out.contains("nginx:1.26 → nginx:1.25"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "then Rollout {ns}/web-rollout: strategy.paused true → false"
        )),
        "{out}"
    );
    assert!(
        out.contains("note: fast rollback: the Rollout cancels"),
        "{out}"
    );
    assert!(out.contains("rollout-id v2 → "), "{out}");
    assert_eq!(
        kubectl
            .jsonpath(
                &["cloneset", "web"],
                "{.spec.template.spec.containers[0].image}"
            )
            .await,
        "nginx:1.25"
    );
    let id = kubectl
        .jsonpath(
            &["cloneset", "web"],
            r"{.metadata.annotations.rollouts\.kruise\.io/rollout-id}",
        )
        .await;
    assert!(!id.is_empty() && id != "v2", "a new rollout-id: {id:?}");
    let stored = api.get("web-rollout").await.expect("the Rollout");
    assert!(
        !stored.spec.strategy.paused,
        "resumed after the template write"
    );
    // Two writes, in that order: the workload's template, then the Rollout's resume.
    let journal = cli.journal();
    let paths: Vec<&str> = journal.iter().map(|e| e.request.path.as_str()).collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    // The CloneSet at the version the server serves newest (v1beta1 from Kruise 1.9).
    assert!(
        paths[0].starts_with("/apis/apps.kruise.io/v1")
            && paths[0].ends_with(&format!("/namespaces/{ns}/clonesets/web")),
        "{paths:?}"
    );
    assert_eq!(
        paths[1],
        format!("/apis/rollouts.kruise.io/v1beta1/namespaces/{ns}/rollouts/web-rollout")
    );
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_the_controller_overwrites_is_sent_again_until_it_holds() {
    let Some((tb, _kubectl, cli, api)) = setup().await else {
        return;
    };
    set_status(&api, 1, "StepPaused", 0).await;
    // A reconcile that started before the approval writes its whole status over it, once.
    let wiper = {
        let api = api.clone();
        tokio::spawn(async move {
            loop {
                let r = rollout_json(&api).await;
                if r["status"]["canaryStatus"]["currentStepState"] == "StepReady" {
                    set_status(&api, 1, "StepPaused", 0).await;
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
    };
    let out = cli
        .ok(&["rollout", "approve", "ro/web-rollout", "--step", "1"])
        .await;
    wiper.await.expect("the wiper ran");
    assert!(
        out.contains(
            "note: sent 2 times: the Rollout controller wrote its status over the approval"
        ),
        "{out}"
    );
    let journal = cli.journal();
    assert_eq!(
        journal.len(),
        2,
        "the approval, then once more after the wipe"
    );
    assert!(
        journal
            .iter()
            .all(|e| e.result.ok && e.request.path.ends_with("/status"))
    );
    assert_eq!(
        rollout_json(&api).await["status"]["canaryStatus"]["currentStepState"],
        "StepReady"
    );
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_watch_prints_each_change_until_the_rollout_is_healthy() {
    let Some((tb, _kubectl, cli, api)) = setup().await else {
        return;
    };
    set_status(&api, 3, "StepUpgrade", 0).await;
    let finisher = {
        let api = api.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            let healthy = json!({"status": {"phase": "Healthy", "message": "rollout is healthy",
                "conditions": [{"type": "Progressing", "status": "False", "reason": "Completed",
                                "message": "Rollout progressing has been completed"}],
                "canaryStatus": {"currentStepState": "Completed", "finalisingStep": "END"}}});
            api.patch_status(
                "web-rollout",
                &PatchParams::default(),
                &Patch::Merge(&healthy),
            )
            .await
            .expect("Healthy");
        })
    };
    let out = cli
        .ok(&[
            "rollout",
            "status",
            "ro/web-rollout",
            "--watch",
            "--timeout",
            "30s",
        ])
        .await;
    finisher.await.expect("the finisher ran");
    assert!(out.contains("  step       3/3 StepUpgrade\n"), "{out}");
    assert!(out.contains("  phase      Healthy (Completed)\n"), "{out}");
    assert!(out.contains("  message    rollout is healthy\n"), "{out}");
    // Still progressing at the deadline: the status, then exit 1.
    set_status(&api, 3, "StepUpgrade", 0).await;
    let run = cli
        .run(&[
            "rollout",
            "status",
            "ro/web-rollout",
            "--watch",
            "--timeout",
            "1s",
        ])
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("  step       3/3 StepUpgrade\n"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(
            "timed out after 1s waiting for rollout.rollouts.kruise.io/web-rollout to be Healthy"
        ),
        "{run:?}"
    );
    tb.shutdown().await;
}
