//! The embedded PodUnavailableBudget controller end to end, on the test bed (the embedded
//! cluster, or an existing one under KRUISE_TUI_TEST_KUBECONFIG) with simulated nodes: a PUB over a CloneSet created as a user would, its status, the webhook
//! letting one pod go and denying the next (kubectl shows the message), the budget coming back
//! once the replacement is ready, a replica change followed, and `NoPods`.

use crate::kubectl as support_kubectl;
use crate::testbed;
use crate::workloads;

use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Pod};
use kruise_tui::api::{CloneSet, PodUnavailableBudget};
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;
use support_kubectl::Kubectl;
use testbed::Testbed;

/// Guard against a hung test; what is asserted is the state reached, not the time.
const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `probe` until it returns Some, panicking with `what` after [`PATIENCE`].
async fn wait_for<T, F, Fut>(what: &str, probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    workloads::wait_for(PATIENCE.as_secs(), what, probe).await
}

fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The CloneSet's pods that are not terminating.
async fn live_pods(client: &Client) -> Vec<Pod> {
    Api::<Pod>::default_namespaced(client.clone())
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect()
}

async fn ready_pods(client: &Client, n: usize) -> Vec<Pod> {
    wait_for(&format!("{n} ready pods"), || async {
        let pods = live_pods(client).await;
        (pods.len() == n && pods.iter().all(ready)).then_some(pods)
    })
    .await
}

/// `(unavailableAllowed, currentAvailable, desiredAvailable, totalReplicas)` once the
/// controller observed the PUB's generation and holds no records.
async fn budget_is(
    client: &Client,
    name: &str,
    want: (i32, i32, i32, i32),
) -> PodUnavailableBudget {
    let api: Api<PodUnavailableBudget> = Api::default_namespaced(client.clone());
    wait_for(&format!("PUB {name} status {want:?}"), || async {
        let p = api.get(name).await.ok()?;
        let s = &p.status;
        let got = (
            s.unavailable_allowed,
            s.current_available,
            s.desired_available,
            s.total_replicas,
        );
        (got == want
            && Some(s.observed_generation) == p.metadata.generation
            && s.disrupted_pods.is_empty()
            && s.unavailable_pods.is_empty())
        .then_some(p)
    })
    .await
}

const PUB: &str = r#"
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata:
  name: web-pub
spec:
  targetRef:
    apiVersion: apps.kruise.io/v1alpha1
    kind: CloneSet
    name: web
  maxUnavailable: 1
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pub_lets_one_pod_go_denies_the_next_and_recovers_with_the_replacement() {
    if testbed::skip_on_existing_cluster(
        "the embedded PUB admission webhook is what denies the second delete",
    ) {
        return;
    }
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let cs: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "app:1"}]},
            },
        },
    }))
    .unwrap();
    let clonesets: Api<CloneSet> = Api::default_namespaced(client.clone());
    clonesets.create(&PostParams::default(), &cs).await.unwrap();
    let pods = ready_pods(&client, 3).await;

    kubectl.apply(&[], PUB).await;
    budget_is(&client, "web-pub", (1, 3, 2, 3)).await;
    kubectl
        .assert_jsonpath(
            &["pub", "web-pub"],
            "{.status.unavailableAllowed}/{.status.desiredAvailable}/{.status.totalReplicas}",
            "1/2/3",
        )
        .await;
    // Pods that existed before the PUB are annotated with it.
    wait_for("related-pub annotations", || async {
        let pods = live_pods(&client).await;
        pods.iter()
            .all(|p| {
                p.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("kruise.io/related-pub"))
                    .is_some_and(|v| v == "web-pub")
            })
            .then_some(())
    })
    .await;

    // One pod may go; the next, right after, may not.
    let names: Vec<String> = pods
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let first = kubectl
        .run(&["delete", "pod", &names[0], "--wait=false"])
        .await;
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    let second = kubectl
        .run(&["delete", "pod", &names[1], "--wait=false"])
        .await;
    assert_eq!(second.code, 1, "{}{}", second.stdout, second.stderr);
    assert!(
        second.stderr.contains(
            "admission webhook \"vpod.kb.io\" denied the request: podunavailablebudget.policy.kruise.io \"web-pub\" is forbidden: pub unavailable allowed is negative"
        ),
        "{}",
        second.stderr
    );
    let still = Api::<Pod>::default_namespaced(client.clone())
        .get(&names[1])
        .await
        .unwrap();
    assert!(
        still.metadata.deletion_timestamp.is_none(),
        "the denied pod stays"
    );

    // The CloneSet replaces the deleted pod; once it is ready the budget is back.
    let after = ready_pods(&client, 3).await;
    assert!(
        after
            .iter()
            .all(|p| p.metadata.name.as_ref() != Some(&names[0]))
    );
    budget_is(&client, "web-pub", (1, 3, 2, 3)).await;

    // A replica change is followed: 4 replicas, maxUnavailable 1 → 3 desired.
    clonesets
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .unwrap();
    ready_pods(&client, 4).await;
    budget_is(&client, "web-pub", (1, 4, 3, 4)).await;
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pub_without_pods_says_so() {
    let tb = Testbed::start().await;
    let client = tb.client.clone();
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    kubectl
        .apply(
            &[],
            "apiVersion: policy.kruise.io/v1alpha1\nkind: PodUnavailableBudget\nmetadata:\n  name: idle\n\
             spec:\n  selector:\n    matchLabels:\n      app: nothing\n  minAvailable: 1\n",
        )
        .await;
    budget_is(&client, "idle", (0, 0, 1, 0)).await;
    let events: Api<Event> = Api::default_namespaced(client.clone());
    wait_for("the NoPods event", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items
            .iter()
            .any(|e| {
                e.reason.as_deref() == Some("NoPods")
                    && e.message.as_deref() == Some("No matching pods found")
                    && e.involved_object.name.as_deref() == Some("idle")
                    && e.source.as_ref().and_then(|s| s.component.as_deref())
                        == Some("podunavailablebudget-controller")
            })
            .then_some(())
    })
    .await;
    tb.shutdown().await;
}
