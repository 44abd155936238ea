//! Scripted key sessions of the console on the Advanced workloads against the test bed (the
//! embedded cluster, or an existing one under KRUISE_TUI_TEST_KUBECONFIG) with its controllers
//! and simulated nodes: `P` pauses an Advanced DaemonSet rollout and resumes it, and an Advanced
//! StatefulSet rollout walked to 100 % with `]` + `y` moves the highest ordinals first, each
//! step's predicted pods exactly the pods that then update.

use crate::live;

use std::collections::BTreeSet;

use kruise_tui::actions::Action;
use live::{Live, rollout, settled, updated};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_holds_an_advanced_daemonset_rollout_and_resume_lets_it_go() {
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    let agent = |image: &str| {
        format!(
            r#"
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec:
      terminationGracePeriodSeconds: 1
      nodeSelector: {{kruise-tui.io/simulated-node: "true"}}
      containers: [{{name: agent, image: "{image}"}}]
  updateStrategy: {{type: RollingUpdate, rollingUpdate: {{partition: 0}}}}
"#
        )
    };
    kubectl.apply(&[], &agent("example/agent:1")).await;
    live.open_rollout("agent").await;
    live.until("a daemon pod ready on every node", 90, |app| {
        settled(app) && rollout(app).is_some_and(|v| !v.rows().is_empty())
    })
    .await;
    let nodes = rollout(&live.app).map_or(0, |v| v.rows().len());

    // P pauses (after the confirm): the Advanced DaemonSet's rollingUpdate.paused.
    live.press(&["P"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(preview.prepared.action, Action::Pause);
    assert_eq!(preview.prepared.changes, ["paused false → true"]);
    let status = live.confirm().await;
    assert!(status.contains("sent: paused false → true"), "{status}");
    assert_eq!(
        kubectl
            .jsonpath(
                &["daemonset.apps.kruise.io", "agent"],
                "{.spec.updateStrategy.rollingUpdate.paused}"
            )
            .await,
        "true"
    );
    // A new image while paused: no pod moves.
    kubectl.apply(&[], &agent("example/agent:2")).await;
    live.until(
        "the console sees the pause and the new template",
        30,
        |app| {
            rollout(app)
                .and_then(|v| v.summary.as_ref())
                .is_some_and(|s| s.paused && s.updated == 0)
        },
    )
    .await;
    live.settle(3000).await;
    assert!(updated(&live.app).is_empty(), "paused: no pod updated");

    // P again resumes, and the pods update.
    live.press(&["P"]).await;
    let preview = live.confirm_dialog().await;
    assert_eq!(preview.prepared.action, Action::Resume);
    let status = live.confirm().await;
    assert!(status.contains("sent: paused true → false"), "{status}");
    live.until("every daemon pod on the new revision", 120, |app| {
        settled(app) && updated(app).len() == nodes
    })
    .await;
    live.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_advanced_statefulset_rollout_walked_to_100_percent_high_ordinals_first() {
    let mut live = Live::start(false).await;
    let kubectl = live.kubectl();
    let set = |image: &str, partition: i32| {
        format!(
            r#"
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: 4
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{{name: main, image: "{image}"}}]
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {{partition: {partition}}}
"#
        )
    };
    kubectl.apply(&[], &set("postgres:16.1", 0)).await;
    live.open_rollout("db").await;
    live.until("4 pods ready", 90, settled).await;
    kubectl.apply(&[], &set("postgres:16.2", 4)).await;
    live.until("the new revision, nothing updated", 60, |app| {
        rollout(app)
            .and_then(|v| v.summary.as_ref())
            .is_some_and(|s| s.current_revision != s.update_revision && s.expected_updated == 0)
            && settled(app)
    })
    .await;
    let ordinal = |name: &str| {
        name.rsplit('-')
            .next()
            .and_then(|n| n.parse::<i32>().ok())
            .unwrap_or(-1)
    };
    let mut partitions = Vec::new();
    while let Some(next) = rollout(&live.app)
        .and_then(|v| v.summary.as_ref())
        .and_then(|s| s.next_step(&Default::default()))
    {
        let before = updated(&live.app);
        live.press(&["]"]).await;
        let preview = live.confirm_dialog().await;
        let order: Vec<String> = match &preview.prediction {
            Some(Ok(p)) => p.plan.moves.iter().map(|m| m.name.clone()).collect(),
            other => panic!("a prediction: {other:?}"),
        };
        let ordinals: Vec<i32> = order.iter().map(|n| ordinal(n)).collect();
        assert!(
            ordinals.windows(2).all(|w| w[0] > w[1]),
            "highest ordinal first: {order:?}"
        );
        assert!(
            ordinals.iter().all(|o| *o >= next.partition),
            "only ordinals at or above the partition {}: {order:?}",
            next.partition
        );
        let status = live.confirm().await;
        assert!(status.contains(": sent: "), "{status}");
        partitions.push(next.partition);
        live.until("the step to settle", 120, |app| {
            rollout(app)
                .and_then(|v| v.summary.as_ref())
                .is_some_and(|s| s.partition_pods == next.partition)
                && settled(app)
        })
        .await;
        let moved: BTreeSet<String> = updated(&live.app).difference(&before).cloned().collect();
        let predicted: BTreeSet<String> = order.into_iter().collect();
        assert_eq!(moved, predicted, "step to partition {}", next.partition);
    }
    assert_eq!(partitions, [3, 2, 0], "1, 2, then all 4 pods updated");
    assert_eq!(
        updated(&live.app).into_iter().collect::<Vec<_>>(),
        ["db-0", "db-1", "db-2", "db-3"]
    );
    live.shutdown().await;
}
