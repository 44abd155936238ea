//! Scripted key sessions of the console on CloneSets against the test bed (the embedded
//! cluster, or an existing one under KRUISE_TUI_TEST_KUBECONFIG) with its controllers and
//! simulated nodes: a rollout walked to 100 % with `]` + `y`, each step's predicted pods
//! exactly the pods that then update, and `[` once on the way, the pod predicted to roll back
//! (with the cluster's feature gates) exactly the one that does; a concurrent `kubectl patch`
//! between the preview and the confirm is not clobbered; `p` refuses "150%" and keeps it; the
//! journal holds every mutation and reverting a partition entry restores it; `i` sets a
//! crashing image and `u` then restores the previous template and the pods recover;
//! Space-marked pods are exactly the ones a scale-down deletes; `--readonly` sends no mutating
//! request at all (counted on the server). The Advanced workloads' sessions are in
//! session_advanced.rs.

use crate::kubectl;
use crate::live;
use crate::testbed;

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::{
    actions::Action,
    app::{App, dialog::Overlay, route::Route},
    kruise::plan,
};
use kubectl::Kubectl;
use live::{Live, rollout, settled, updated};

/// Why a test that counts what the console sent does not run on an existing cluster.
const REQUEST_LOG: &str = "counts the console's requests in the embedded server's request log";

fn cloneset(name: &str, replicas: i32, image: &str) -> String {
    format!(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: main, image: "{image}"}}]}}
  updateStrategy: {{type: InPlaceIfPossible, partition: 0, maxUnavailable: 2}}
"#
    )
}

async fn partition_of(kubectl: &Kubectl, name: &str) -> String {
    kubectl
        .jsonpath(&["cloneset", name], "{.spec.updateStrategy.partition}")
        .await
}

/// The pods of CloneSet `name` on its update revision, as the server holds them, once its
/// controller has seen its latest spec (`status.observedGeneration == metadata.generation`);
/// None while it has not.
async fn server_updated(kubectl: &Kubectl, name: &str) -> Option<BTreeSet<String>> {
    let cs = kubectl
        .jsonpath(
            &["cloneset", name],
            "{.metadata.generation} {.status.observedGeneration} {.status.updateRevision}",
        )
        .await;
    let mut it = cs.split_whitespace();
    let (generation, observed, revision) = (it.next()?, it.next()?, it.next()?);
    if generation != observed {
        return None;
    }
    let label = format!("app={name}");
    let pods = kubectl
        .jsonpath(
            &["pods", "-l", &label],
            r#"{range .items[*]}{.metadata.name} {.metadata.labels.controller-revision-hash}{"\n"}{end}"#,
        )
        .await;
    Some(
        pods.lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(_, rev)| kruise_tui::app::rows::same_revision(rev, revision))
            .map(|(pod, _)| pod.to_owned())
            .collect(),
    )
}

/// Waits until the rollout view of CloneSet `name` settled at `partition` and agrees with the
/// server, after the controller has seen the latest spec. A view that settles before the controller acted on a
/// change (or before the console heard of what it did) is answered by a move that no
/// prediction made from it foresaw: someone else's partition, lowered and put back while a
/// dialog was open, can update a pod and roll it back meanwhile.
async fn settle_at(live: &mut Live, kubectl: &Kubectl, name: &str, what: &str, partition: i32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        live.until(what, 90, |app| {
            rollout(app)
                .and_then(|v| v.summary.as_ref())
                .is_some_and(|s| s.partition_pods == partition)
                && settled(app)
        })
        .await;
        if let Some(server) = server_updated(kubectl, name).await
            && server == updated(&live.app)
            && settled(&live.app)
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: the view never agreed with the server"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloneset_rollout_walked_to_100_percent_step_by_step() {
    if testbed::skip_on_existing_cluster(REQUEST_LOG) {
        return;
    }
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], &cloneset("web", 6, "nginx:1.25")).await;
    live.open_rollout("web").await;
    live.until("6 pods ready", 60, settled).await;
    // A new image held back by the partition: nothing moves yet.
    kubectl
        .ok(&[
            "patch",
            "cloneset",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"updateStrategy":{"partition":6},"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}}}}"#,
        ])
        .await;
    live.until("the new revision, nothing updated", 30, |app| {
        rollout(app)
            .and_then(|v| v.summary.as_ref())
            .is_some_and(|s| s.current_revision != s.update_revision && s.expected_updated == 0)
            && settled(app)
    })
    .await;

    // `p` refuses 150% inline, keeps the text and sends nothing.
    let sent = live.sent().len();
    live.press(&["p", "backspace"]).await;
    live.type_text("150%").await;
    live.press(&["enter"]).await;
    let screen = live.screen();
    assert!(
        screen.contains("partition \"150%\" is over 100%"),
        "{screen}"
    );
    assert!(screen.contains("partition: 150%"), "{screen}");
    live.press(&["esc"]).await;
    assert_eq!(live.sent().len(), sent, "nothing sent for a refused form");

    // Steps of 1, 10%, 25%, 50%, 100% of 6 pods: 1, 2, 3, 6 updated.
    let mut partitions = Vec::new();
    let mut conflict_checked = false;
    let mut rolled_back = false;
    while let Some(next) = rollout(&live.app)
        .and_then(|v| v.summary.as_ref())
        .and_then(|s| s.next_step(&Default::default()))
    {
        let before = updated(&live.app);
        live.press(&["]"]).await;
        let preview = live.confirm_dialog().await;
        assert_eq!(
            preview.prepared.action,
            Action::Partition {
                value: IntOrString::Int(next.partition)
            }
        );
        let predicted: BTreeSet<String> = match &preview.prediction {
            Some(Ok(p)) => p.plan.moves.iter().map(|m| m.name.clone()).collect(),
            other => panic!("a prediction: {other:?}"),
        };
        if !conflict_checked && partitions.len() == 1 {
            // Someone else moves the partition while the dialog is open: not clobbered.
            conflict_checked = true;
            let theirs = (next.partition - 1).max(0);
            kubectl
                .ok(&[
                    "patch",
                    "cloneset",
                    "web",
                    "--type",
                    "merge",
                    "-p",
                    &format!(r#"{{"spec":{{"updateStrategy":{{"partition":{theirs}}}}}}}"#),
                ])
                .await;
            let status = live.confirm().await;
            let current = partitions.last().copied().unwrap_or(6);
            assert!(
                status.contains(&format!(
                    "changed meanwhile: updateStrategy.partition changed from {current} to {theirs}"
                )),
                "{status}"
            );
            assert_eq!(partition_of(&kubectl, "web").await, theirs.to_string());
            // Put it back as it was and go on stepping from the console.
            kubectl
                .ok(&[
                    "patch",
                    "cloneset",
                    "web",
                    "--type",
                    "merge",
                    "-p",
                    &format!(r#"{{"spec":{{"updateStrategy":{{"partition":{current}}}}}}}"#),
                ])
                .await;
            settle_at(&mut live, &kubectl, "web", "the partition back", current).await;
            continue;
        }
        let status = live.confirm().await;
        assert!(status.contains(": sent: "), "{status}");
        partitions.push(next.partition);
        settle_at(
            &mut live,
            &kubectl,
            "web",
            "the step to settle",
            next.partition,
        )
        .await;
        let moved: BTreeSet<String> = updated(&live.app).difference(&before).cloned().collect();
        assert_eq!(
            moved, predicted,
            "step to partition {}: the pods that updated are the pods predicted",
            next.partition
        );
        if next.partition == 3 && !rolled_back {
            // `[` raises the partition one step (3 → 4); the demo's controllers roll pods back
            // (CloneSetPartitionRollback), the prediction uses their gates, and the dialog warns.
            rolled_back = true;
            let before = updated(&live.app);
            live.press(&["["]).await;
            let preview = live.confirm_dialog().await;
            assert_eq!(
                preview.prepared.action,
                Action::Partition {
                    value: IntOrString::Int(4)
                }
            );
            assert!(
                preview
                    .prepared
                    .notes
                    .iter()
                    .any(|n| n.contains("CloneSetPartitionRollback")),
                "{:?}",
                preview.prepared.notes
            );
            let back: BTreeSet<String> = match &preview.prediction {
                Some(Ok(p)) => {
                    assert_eq!(p.plan.direction, plan::Direction::Rollback);
                    assert!(
                            p.plan.notes.iter().any(|n| *n
                                == format!(
                                    "predicted with Kruise {} rules and the feature gates of the embedded controllers",
                                    crate::testbed::kruise_version().name()
                                )),
                            "{:?}",
                            p.plan.notes
                        );
                    p.plan.moves.iter().map(|m| m.name.clone()).collect()
                }
                other => panic!("a prediction: {other:?}"),
            };
            assert_eq!(back.len(), 1, "one step back: one pod");
            let status = live.confirm().await;
            assert!(status.contains("sent: partition 3 → 4"), "{status}");
            settle_at(&mut live, &kubectl, "web", "the step back to settle", 4).await;
            let moved_back: BTreeSet<String> =
                before.difference(&updated(&live.app)).cloned().collect();
            assert_eq!(moved_back, back, "the pod predicted to roll back did");
        }
    }
    assert_eq!(
        partitions,
        [5, 4, 3, 3, 0],
        "1, 2, 3 (back to 2 with `[`, 3 again), then all 6 pods updated"
    );
    assert_eq!(updated(&live.app).len(), 6);

    // The journal holds every mutation the console sent, with the same path.
    let patches: Vec<_> = live
        .sent()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .collect();
    let (entries, bad) = live.journal.read().expect("journal");
    assert_eq!(bad, 0);
    assert_eq!(entries.len(), patches.len(), "{entries:#?}\n{patches:#?}");
    for (entry, sent) in entries.iter().zip(&patches) {
        assert_eq!(entry.request.path, sent.path);
    }
    assert_eq!(entries.iter().filter(|e| e.result.ok).count(), 6);
    assert_eq!(
        entries.iter().filter(|e| !e.result.ok).count(),
        1,
        "the refused conflicting attempt"
    );

    // `:journal`, `u` on the newest entry (partition 3 → 0) reverts it.
    live.type_text(":journal").await;
    live.press(&["enter"]).await;
    live.until(
        "the journal read",
        10,
        |app| matches!(app.current(), Route::Journal(j) if j.len() == 7),
    )
    .await;
    live.press(&["u"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(
        preview.prepared.action,
        Action::Partition {
            value: IntOrString::Int(3)
        }
    );
    // The demo's controllers run with CloneSetPartitionRollback on, and the prediction uses
    // their gates; but the rollout finished (the current revision is the update revision now),
    // so there is nothing to roll back to: no pod moves, and none does.
    match &preview.prediction {
        Some(Ok(p)) => {
            assert!(p.plan.moves.is_empty(), "{:?}", p.plan.moves);
            assert!(
                p.plan
                    .notes
                    .iter()
                    .any(|n| *n
                        == format!(
                            "predicted with Kruise {} rules and the feature gates of the embedded controllers",
                            crate::testbed::kruise_version().name()
                        )),
                "{:?}",
                p.plan.notes
            );
        }
        other => panic!("a prediction: {other:?}"),
    }
    assert!(
        preview
            .prepared
            .notes
            .iter()
            .any(|n| n.contains("CloneSetPartitionRollback")),
        "the dialog warns about the gate: {:?}",
        preview.prepared.notes
    );
    let status = live.confirm().await;
    assert!(status.contains("sent: partition 0 → 3"), "{status}");
    assert_eq!(partition_of(&kubectl, "web").await, "3");
    live.settle(2000).await;
    assert_eq!(
        kubectl
            .jsonpath(&["cloneset", "web"], "{.status.updatedReplicas}")
            .await,
        "6",
        "no pod moved back"
    );
    live.until(
        "the journal shows the revert",
        10,
        |app| matches!(app.current(), Route::Journal(j) if j.len() == 8),
    )
    .await;
    assert!(matches!(
        live.app.overlay(),
        None | Some(Overlay::Busy { .. })
    ));
    live.shutdown().await;
}

fn crashing(app: &App) -> bool {
    rollout(app).is_some_and(|v| v.rows().iter().any(|r| r.status == "CrashLoopBackOff"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_after_a_crashing_image_restores_the_template_and_the_pods_recover() {
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    kubectl
        .apply(&[], &cloneset("checkout", 3, "example/checkout:1.0"))
        .await;
    live.open_rollout("checkout").await;
    live.until("3 pods ready", 60, settled).await;
    // The bad image, set from the console: `i`, edit the container's line (End keeps the
    // selected value to edit, as in a browser), confirm.
    live.press(&["i", "end"]).await;
    for _ in "1.0".chars() {
        live.press(&["backspace"]).await;
    }
    live.type_text("crash").await;
    live.press(&["enter"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(
        preview.prepared.action,
        Action::SetImage {
            images: vec![("main".into(), "example/checkout:crash".into())]
        }
    );
    match &preview.prediction {
        Some(Ok(p)) => assert_eq!(p.plan.moves.len(), 3, "every pod gets the new image"),
        other => panic!("a prediction: {other:?}"),
    }
    let status = live.confirm().await;
    assert!(
        status.contains("sent: main: example/checkout:1.0 → example/checkout:crash"),
        "{status}"
    );
    live.until("pods crash-looping on the new image", 60, crashing)
        .await;

    live.press(&["u"]).await;
    live.until("the revisions listed", 30, |app| {
        matches!(app.overlay(), Some(Overlay::Revisions(p))
            if matches!(p.revisions, kruise_tui::app::route::Fetch::Loaded(_)))
    })
    .await;
    let Some(Overlay::Revisions(picker)) = live.app.overlay() else {
        panic!("picker");
    };
    // The picker starts on the revision before the crashing one; its diff is the image.
    assert_eq!(
        picker.diff(),
        ["spec.containers[main].image: example/checkout:crash → example/checkout:1.0"]
    );
    live.press(&["enter"]).await;
    let preview = live.confirm_dialog().await;
    assert!(
        matches!(
            preview.prepared.action,
            Action::Undo {
                to_revision: Some(1)
            }
        ),
        "{:?}",
        preview.prepared.action
    );
    assert!(
        preview
            .prepared
            .changes
            .iter()
            .any(|c| c
                == "spec.containers[main].image: example/checkout:crash → example/checkout:1.0"),
        "{:?}",
        preview.prepared.changes
    );
    // The whole template is replaced, pinned to what was read.
    let ops = preview
        .prepared
        .request
        .body
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        ops.iter()
            .any(|op| op["op"] == "replace" && op["path"] == "/spec/template")
    );
    match &preview.prediction {
        Some(Ok(p)) => assert!(
            !p.plan.moves.is_empty(),
            "the crashing pods move back: {:?}",
            p.plan
        ),
        other => panic!("a prediction: {other:?}"),
    }
    let status = live.confirm().await;
    assert!(status.contains(": sent: "), "{status}");
    live.until("every pod ready on the good image", 90, |app| {
        settled(app) && !crashing(app)
    })
    .await;
    assert_eq!(
        kubectl
            .jsonpath(
                &["cloneset", "checkout"],
                "{.spec.template.spec.containers[0].image}"
            )
            .await,
        "example/checkout:1.0"
    );
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readonly_sends_no_mutating_request() {
    if testbed::skip_on_existing_cluster(REQUEST_LOG) {
        return;
    }
    let mut live = Live::start(true).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], &cloneset("web", 3, "nginx:1.25")).await;
    live.open_rollout("web").await;
    live.until("3 pods ready", 60, settled).await;
    let keys = ["]", "[", "p", "P", "u", "i", "s"];
    for key in keys {
        live.press(&[key]).await;
        assert!(
            live.status().starts_with("read-only:"),
            "{key}: {}",
            live.status()
        );
        assert!(live.app.overlay().is_none(), "{key} opened nothing");
    }
    live.press(&["space", "s", "esc"]).await;
    live.press(&["esc"]).await;
    for key in keys {
        live.press(&[key]).await;
        assert!(live.status().starts_with("read-only:"), "{key} in the list");
    }
    live.type_text(":journal").await;
    live.press(&["enter", "u"]).await;
    // Let anything spawned run, then count on the server.
    live.settle(1500).await;
    assert_eq!(
        live.sent(),
        [],
        "no mutating request from a --readonly console"
    );
    assert!(live.journal.read().expect("journal").0.is_empty());
    live.shutdown().await;
}

/// `viewer` may read workloads, pods, events and revisions in the test's namespace, but not
/// patch.
const VIEWER: &str = r#"
apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rollout-viewer}
rules:
- apiGroups: [apps.kruise.io]
  resources: [clonesets, statefulsets, daemonsets]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods, events]
  verbs: [get, list, watch]
- apiGroups: [apps]
  resources: [controllerrevisions]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer-views-rollouts}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rollout-viewer}
subjects:
- {kind: ServiceAccount, name: viewer}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_who_may_not_patch_hears_forbidden_before_any_dialog() {
    if testbed::skip_on_existing_cluster(REQUEST_LOG) {
        return;
    }
    let mut live = Live::start_with(false, Some(VIEWER)).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], &cloneset("web", 2, "nginx:1.25")).await;
    live.open_rollout("web").await;
    live.until("2 pods ready", 60, settled).await;
    live.press(&["P"]).await;
    live.until("the answer", 30, |app| app.overlay().is_none())
        .await;
    let status = live.status();
    assert!(
        status.starts_with(&format!(
            "forbidden: you may not patch clonesets in {}",
            live.ns()
        )),
        "{status}"
    );
    // The access review was asked; nothing was patched.
    let sent = live.sent();
    assert!(
        sent.iter()
            .all(|r| r.method == "POST" && r.path.ends_with("/selfsubjectaccessreviews")),
        "{sent:#?}"
    );
    assert!(!sent.is_empty(), "the RBAC pre-check asked the server");
    assert_eq!(
        kubectl
            .jsonpath(&["cloneset", "web"], "{.spec.updateStrategy.paused}")
            .await,
        ""
    );
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_down_with_marked_pods_deletes_exactly_those() {
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    kubectl.apply(&[], &cloneset("web", 5, "nginx:1.25")).await;
    live.open_rollout("web").await;
    live.until("5 pods ready", 60, settled).await;
    let names: Vec<String> = rollout(&live.app)
        .map(|v| v.rows().iter().map(|r| r.name.clone()).collect())
        .unwrap_or_default();
    // Mark the 2nd and the 4th pod of the grid.
    live.press(&["j", "space", "j", "space", "s"]).await;
    let marked = vec![names[1].clone(), names[3].clone()];
    live.press(&["enter"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(
        preview.prepared.action,
        Action::Scale {
            replicas: 3,
            pods: marked.clone()
        }
    );
    let status = live.confirm().await;
    assert!(status.contains("sent: podsToDelete += "), "{status}");
    live.until("3 pods left", 60, |app| {
        settled(app) && rollout(app).is_some_and(|v| v.rows().len() == 3)
    })
    .await;
    let left: BTreeSet<String> = rollout(&live.app)
        .map(|v| v.rows().iter().map(|r| r.name.clone()).collect())
        .unwrap_or_default();
    let expected: BTreeSet<String> = names
        .iter()
        .filter(|n| !marked.contains(n))
        .cloned()
        .collect();
    assert_eq!(left, expected, "exactly the marked pods went");
    live.shutdown().await;
}
