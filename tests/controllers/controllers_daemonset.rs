//! The embedded Advanced DaemonSet controller end to end on the simulated nodes (three by
//! default): one pod per eligible node following nodes as they come, get tainted and are
//! untainted (kubectl), a partitioned rollout holding back that many nodes within
//! maxUnavailable (and, on Kruise v1.9.0, a percent partition holding back its floor of the
//! nodes, which v1.8.4 refuses), an in-place rollout, the status numbers, upstream's events, and
//! the plan's prediction against what the controller then does.

use crate::kubectl;
use crate::served;
use crate::testbed;
use crate::workloads;

use std::{collections::BTreeSet, time::Duration};

use k8s_openapi::api::core::v1::Node;
use kruise_tui::{
    actions::preview::ads::ads_plan_input_from_objects,
    api::DaemonSet,
    cluster::sim::nodes::{SIM_NODE_LABEL, node_object},
    kruise::{KruiseVersion, plan},
};
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};
use workloads::{
    Cluster, UnavailableSampler, image, is_ready, label, name, node, restarts, uid, wait_for,
};

const HASH: &str = "controller-revision-hash";

/// A daemon on the simulated nodes (all the nodes of the embedded cluster; an existing
/// cluster's own nodes are left alone).
fn ads(name: &str, strategy: Value) -> DaemonSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": 1,
                         "nodeSelector": {SIM_NODE_LABEL: "true"},
                         "containers": [{"name": "app", "image": "agent:1"}]}
            },
            "updateStrategy": strategy
        }
    }))
    .expect("a valid Advanced DaemonSet")
}

/// Writes go through v1alpha1 (what a user's manifest says); reads go through
/// `served::daemonset`, at the version the cluster stores (v1beta1 on Kruise v1.9, whose
/// `updateRevision` a v1alpha1 read without kruise-manager's conversion webhook would prune).
fn sets(c: &Cluster) -> Api<DaemonSet> {
    Api::default_namespaced(c.client.clone())
}

async fn create(c: &Cluster, ds: &DaemonSet) {
    sets(c)
        .create(&PostParams::default(), ds)
        .await
        .expect("the set is created");
}

/// Waits until `ds_name` runs one ready pod on each of `nodes` (and nowhere else), and its
/// status says so for its generation.
async fn wait_on_nodes(c: &Cluster, ds_name: &str, nodes: &[&str]) -> DaemonSet {
    let want: BTreeSet<String> = nodes.iter().map(|n| (*n).to_owned()).collect();
    let desired = i32::try_from(nodes.len()).unwrap_or(i32::MAX);
    wait_for(90, &format!("{ds_name} ready on {nodes:?}"), || async {
        let ds = crate::served::daemonset(&c.client, ds_name).await?;
        let st = ds.status.clone()?;
        let pods = c.pods_of(ds_name).await;
        let on: BTreeSet<String> = pods.iter().map(|p| node(p).to_owned()).collect();
        (pods.len() == nodes.len()
            && pods.iter().all(is_ready)
            && on == want
            && st.desired_number_scheduled == desired
            && st.number_ready == desired
            && st.observed_generation == ds.metadata.generation.unwrap_or(0))
        .then_some(ds)
    })
    .await
}

async fn set_image(c: &Cluster, ds_name: &str, image: &str) {
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}});
    sets(c)
        .patch(ds_name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("image patched");
}

async fn set_partition(c: &Cluster, ds_name: &str, partition: i32) {
    let patch = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}}});
    sets(c)
        .patch(ds_name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("partition patched");
}

/// The nodes whose daemon pod carries `hash`.
async fn nodes_on(c: &Cluster, ds_name: &str, hash: &str) -> BTreeSet<String> {
    c.pods_of(ds_name)
        .await
        .iter()
        .filter(|p| label(p, HASH) == Some(hash))
        .map(|p| node(p).to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_pod_per_eligible_node_following_new_and_tainted_nodes() {
    if testbed::skip_on_existing_cluster(
        "adds and taints nodes, which the other tests on a shared cluster would see",
    ) {
        return;
    }
    let c = Cluster::start().await;
    create(&c, &ads("agent", json!({}))).await;
    let ds = wait_on_nodes(&c, "agent", &["sim-node-0", "sim-node-1", "sim-node-2"]).await;
    let st = ds.status.clone().expect("status");
    assert_eq!(
        (
            st.desired_number_scheduled,
            st.current_number_scheduled,
            st.number_ready,
            st.number_available,
            st.updated_number_scheduled,
            st.number_unavailable,
            st.number_misscheduled
        ),
        (3, 3, 3, 3, 3, 0, 0)
    );
    for p in c.pods_of("agent").await {
        assert_eq!(label(&p, HASH), Some(st.daemon_set_hash.as_str()));
    }
    let events = c.events_of("agent").await;
    assert!(
        events
            .iter()
            .any(|(r, m)| r == "SuccessfulCreate" && m.starts_with("Created pod: agent-")),
        "{events:?}"
    );

    // A fourth node joins: it gets its pod.
    let nodes: Api<Node> = Api::all(c.client.clone());
    nodes
        .create(
            &PostParams::default(),
            &node_object(3, jiff::Timestamp::now()),
        )
        .await
        .expect("node added");
    wait_on_nodes(
        &c,
        "agent",
        &["sim-node-0", "sim-node-1", "sim-node-2", "sim-node-3"],
    )
    .await;

    // A NoExecute taint (kubectl, as an operator would) sends the pod away; removing it brings
    // one back.
    let k = kubectl::Kubectl::at(c.tb.kubeconfig(), c.ns());
    k.ok(&["taint", "nodes", "sim-node-1", "dedicated=db:NoExecute"])
        .await;
    let ds = wait_on_nodes(&c, "agent", &["sim-node-0", "sim-node-2", "sim-node-3"]).await;
    assert_eq!(ds.status.map(|s| s.current_number_scheduled), Some(3));
    let events = c.events_of("agent").await;
    assert!(
        events
            .iter()
            .any(|(r, m)| r == "SuccessfulDelete" && m.starts_with("Deleted pod: agent-"))
    );
    k.ok(&["taint", "nodes", "sim-node-1", "dedicated-"]).await;
    wait_on_nodes(
        &c,
        "agent",
        &["sim-node-0", "sim-node-1", "sim-node-2", "sim-node-3"],
    )
    .await;
    k.assert_jsonpath(
        &["daemonsets.apps.kruise.io", "agent"],
        "{.status.desiredNumberScheduled}",
        "4",
    )
    .await;
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_holds_back_that_many_nodes_within_max_unavailable() {
    let c = Cluster::start().await;
    create(&c, &ads("logs", json!({"rollingUpdate": {"partition": 1}}))).await;
    let ds = wait_on_nodes(&c, "logs", &["sim-node-0", "sim-node-1", "sim-node-2"]).await;
    let old_hash = ds.status.expect("status").daemon_set_hash;

    let sampler = UnavailableSampler::start(c.pods(), "logs", 3);
    let k = kubectl::Kubectl::at(c.tb.kubeconfig(), c.ns());
    k.ok(&[
        "patch",
        "daemonsets.apps.kruise.io",
        "logs",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"agent:2"}]}}}}"#,
    ])
    .await;
    let ds = wait_for(90, "two nodes updated", || async {
        let ds = crate::served::daemonset(&c.client, "logs").await?;
        let st = ds.status.clone()?;
        let ready = c
            .pods_of("logs")
            .await
            .iter()
            .filter(|p| is_ready(p))
            .count();
        (st.updated_number_scheduled == 2 && st.number_ready == 3 && ready == 3).then_some(ds)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let worst = sampler.finish().await;
    assert!(
        worst <= 1,
        "maxUnavailable 1 exceeded: {worst} unavailable at once"
    );
    let new_hash = ds.status.clone().expect("status").daemon_set_hash;
    assert_ne!(new_hash, old_hash);
    // Partition 1 keeps one node, the alphabetically first, on the old revision.
    assert_eq!(
        nodes_on(&c, "logs", &new_hash).await,
        BTreeSet::from(["sim-node-1".to_owned(), "sim-node-2".to_owned()])
    );
    let pods = c.pods_of("logs").await;
    for p in &pods {
        let held = node(p) == "sim-node-0";
        assert_eq!(image(p), if held { "agent:1" } else { "agent:2" });
        assert_eq!(
            label(p, HASH),
            Some(if held {
                old_hash.as_str()
            } else {
                new_hash.as_str()
            })
        );
    }

    // Partition 0: the last node follows.
    set_partition(&c, "logs", 0).await;
    wait_for(60, "every node updated", || async {
        let st = crate::served::daemonset(&c.client, "logs").await?.status?;
        (st.updated_number_scheduled == 3 && st.number_available == 3).then_some(())
    })
    .await;
    assert_eq!(nodes_on(&c, "logs", &new_hash).await.len(), 3);
    c.shutdown().await;
}

/// The nodes whose daemon pod runs `image` (read from the pods, which look the same at every
/// served version of the set).
async fn nodes_running(c: &Cluster, ds_name: &str, image_name: &str) -> BTreeSet<String> {
    c.pods_of(ds_name)
        .await
        .iter()
        .filter(|p| image(p) == image_name)
        .map(|p| node(p).to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_percent_partition_holds_back_its_floor_of_the_nodes_on_v1_9() {
    let Some(tb) = testbed::Testbed::start_at(KruiseVersion::V1_9).await else {
        return;
    };
    let c = Cluster {
        client: tb.client.clone(),
        tb,
    };
    // Four simulated nodes on the embedded cluster: 25% of 4 is 1. An existing cluster's three
    // shared nodes stay as they are (other tests see them): 34% of 3 is 1 as well.
    let (nodes, partition) = if testbed::existing_kubeconfig().is_none() {
        Api::<Node>::all(c.client.clone())
            .create(
                &PostParams::default(),
                &node_object(3, jiff::Timestamp::now()),
            )
            .await
            .expect("node added");
        (
            vec!["sim-node-0", "sim-node-1", "sim-node-2", "sim-node-3"],
            "25%",
        )
    } else {
        (vec!["sim-node-0", "sim-node-1", "sim-node-2"], "34%")
    };
    let n = i32::try_from(nodes.len()).expect("a few nodes");
    create(
        &c,
        &ads(
            "pct",
            json!({"rollingUpdate": {"partition": partition, "maxUnavailable": 2}}),
        ),
    )
    .await;
    wait_on_nodes(&c, "pct", &nodes).await;
    let k = kubectl::Kubectl::at(c.tb.kubeconfig(), c.ns());
    k.assert_jsonpath(
        &["daemonsets.apps.kruise.io", "pct"],
        "{.spec.updateStrategy.rollingUpdate.partition}",
        partition,
    )
    .await;

    set_image(&c, "pct", "agent:2").await;
    wait_for(90, "all but one node updated", || async {
        let st = served::daemonset(&c.client, "pct").await?.status?;
        let pods = c.pods_of("pct").await;
        (st.updated_number_scheduled == n - 1
            && st.number_ready == n
            && pods.len() == nodes.len()
            && pods.iter().all(is_ready))
        .then_some(())
    })
    .await;
    // It stays so: the partition holds the first node by name on the old template.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let st = served::daemonset(&c.client, "pct")
        .await
        .and_then(|d| d.status)
        .expect("status");
    assert_eq!(
        (st.desired_number_scheduled, st.updated_number_scheduled),
        (n, n - 1)
    );
    assert_eq!(
        nodes_running(&c, "pct", "agent:1").await,
        BTreeSet::from(["sim-node-0".to_owned()])
    );
    let updated: BTreeSet<String> = nodes[1..].iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(nodes_running(&c, "pct", "agent:2").await, updated);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_8_cluster_refuses_a_percent_partition() {
    let Some(tb) = testbed::Testbed::start_at(KruiseVersion::V1_8).await else {
        return;
    };
    let c = Cluster {
        client: tb.client.clone(),
        tb,
    };
    // v1.8.4's schema has the partition as an int32.
    let err = sets(&c)
        .create(
            &PostParams::default(),
            &ads("pct", json!({"rollingUpdate": {"partition": "25%"}})),
        )
        .await
        .expect_err("a string partition is refused");
    let kube::Error::Api(status) = err else {
        panic!("an API error: {err:?}");
    };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status
            .message
            .contains("spec.updateStrategy.rollingUpdate.partition"),
        "{status:?}"
    );
    // An int partition is taken and holds back that many nodes.
    create(&c, &ads("int", json!({"rollingUpdate": {"partition": 1}}))).await;
    wait_on_nodes(&c, "int", &["sim-node-0", "sim-node-1", "sim-node-2"]).await;
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_if_possible_keeps_the_pods_and_restarts_their_containers() {
    let c = Cluster::start().await;
    create(
        &c,
        &ads("probe", json!({"rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 2}})),
    )
    .await;
    wait_on_nodes(&c, "probe", &["sim-node-0", "sim-node-1", "sim-node-2"]).await;
    let before = c.pods_of("probe").await;
    let sampler = UnavailableSampler::start(c.pods(), "probe", 3);
    set_image(&c, "probe", "agent:2").await;
    let ds = wait_for(90, "every node updated in place", || async {
        let ds = crate::served::daemonset(&c.client, "probe").await?;
        let st = ds.status.clone()?;
        let pods = c.pods_of("probe").await;
        (st.updated_number_scheduled == 3
            && st.number_available == 3
            && pods.iter().all(|p| is_ready(p) && image(p) == "agent:2"))
        .then_some(ds)
    })
    .await;
    let worst = sampler.finish().await;
    assert!(worst <= 2, "maxUnavailable 2 exceeded: {worst}");
    let hash = ds.status.expect("status").daemon_set_hash;
    let after = c.pods_of("probe").await;
    assert_eq!(after.len(), 3);
    for a in &after {
        let b = before
            .iter()
            .find(|b| uid(b) == uid(a))
            .expect("the same pod, updated in place");
        assert_eq!(restarts(a), restarts(b) + 1, "{}", name(a));
        assert_eq!(label(a, HASH), Some(hash.as_str()));
    }
    let events = c.events_of("probe").await;
    assert!(
        events
            .iter()
            .any(|(r, _)| r == "SuccessfulUpdatePodInPlace"),
        "{events:?}"
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_predicts_which_nodes_the_controller_updates() {
    let c = Cluster::start().await;
    create(&c, &ads("edge", json!({"rollingUpdate": {"partition": 3}}))).await;
    wait_on_nodes(&c, "edge", &["sim-node-0", "sim-node-1", "sim-node-2"]).await;
    set_image(&c, "edge", "agent:2").await;
    let held = wait_for(30, "the new hash in the status", || async {
        let ds = crate::served::daemonset(&c.client, "edge").await?;
        let st = ds.status.clone()?;
        (st.observed_generation == ds.metadata.generation.unwrap_or(0)).then_some(ds)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let new_hash = held.status.clone().expect("status").daemon_set_hash;
    assert!(
        nodes_on(&c, "edge", &new_hash).await.is_empty(),
        "partition 3 holds every node"
    );

    // The plan for partition 1, from the objects as `kruise-tui plan ads/edge` reads them.
    let json = serde_json::to_value(
        crate::served::daemonset(&c.client, "edge")
            .await
            .expect("ds"),
    )
    .expect("json");
    let nodes: Vec<Node> = Api::<Node>::all(c.client.clone())
        .list(&ListParams::default())
        .await
        .expect("nodes")
        .items;
    let pods = c.pods_of("edge").await;
    let input =
        ads_plan_input_from_objects(json, &nodes, &pods, "1", jiff::Timestamp::now().as_second())
            .expect("plan input");
    let planned = plan::plan(&input).expect("a plan");
    let predicted: BTreeSet<String> = planned
        .moves
        .iter()
        .filter_map(|m| pods.iter().find(|p| name(p) == m.name))
        .map(|p| node(p).to_owned())
        .collect();
    assert_eq!(planned.moves.len(), 2);
    assert_eq!(planned.status.updated_at_convergence, 2);

    set_partition(&c, "edge", 1).await;
    wait_for(90, "the partition applied", || async {
        let st = crate::served::daemonset(&c.client, "edge").await?.status?;
        (st.updated_number_scheduled == 2 && st.number_available == 3).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(nodes_on(&c, "edge", &new_hash).await, predicted);
    assert_eq!(
        predicted,
        BTreeSet::from(["sim-node-1".to_owned(), "sim-node-2".to_owned()])
    );
    c.shutdown().await;
}
