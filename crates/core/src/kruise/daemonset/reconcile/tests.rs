//! The Advanced DaemonSet reconcile on hand-built nodes and pods: one pod per eligible node,
//! taints and selectors, the partitioned rolling update (recreate, in place, surge), pause and
//! the status.

use serde_json::{Value, json};

use super::*;

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

fn ds(extra: Value) -> DaemonSet {
    let mut v = json!({
        "metadata": {"name": "agent", "namespace": "ns", "uid": "u-agent", "generation": 3},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                         "spec": {"containers": [{"name": "c", "image": "a:1"}]}}
        }
    });
    merge(&mut v, extra);
    serde_json::from_value(v).unwrap_or_default()
}

fn node(name: &str, extra: Value) -> Node {
    let mut v = json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}});
    merge(&mut v, extra);
    serde_json::from_value(v).unwrap_or_default()
}

/// A Running, Ready pod of `d` on `node` at `rev`'s hash, created at `created`.
fn pod(d: &DaemonSet, rev: &ControllerRevision, node: &str, created: i64) -> Pod {
    let gated = d
        .spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.rolling_update.as_ref())
        .and_then(|r| r.rolling_update_type.as_deref())
        == Some("InPlaceIfPossible");
    let mut p = pods::new_pod(d, history::hash_of(rev), None, gated, node);
    let name = format!("agent-{node}-{}", history::hash_of(rev));
    p.metadata.name = Some(name.clone());
    p.metadata.uid = Some(format!("uid-{name}"));
    p.metadata.resource_version = Some("1".to_owned());
    p.metadata.creation_timestamp = Timestamp::from_second(created)
        .ok()
        .map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time);
    if let Some(spec) = p.spec.as_mut() {
        spec.node_name = Some(node.to_owned());
    }
    let image = crate::kruise::cloneset::reconcile::revisions::template_of(rev)
        .and_then(|t| t.spec)
        .and_then(|s| s.containers.first().and_then(|c| c.image.clone()))
        .unwrap_or_default();
    if let Some(spec) = p.spec.as_mut() {
        spec.containers[0].image = Some(image.clone());
    }
    p.status = serde_json::from_value(json!({
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "1970-01-01T00:00:00Z"},
                       {"type": "InPlaceUpdateReady", "status": "True", "lastTransitionTime": "1970-01-01T00:00:00Z"}],
        "containerStatuses": [{"name": "c", "image": image, "imageID": format!("id-{image}"),
                               "ready": true, "restartCount": 0}]
    }))
    .ok();
    p
}

struct World {
    ds: DaemonSet,
    nodes: Vec<Node>,
    pods: Vec<Pod>,
    cur: ControllerRevision,
    old: Vec<ControllerRevision>,
}

impl World {
    fn run(&self) -> Outcome {
        self.run_at(KruiseVersion::V1_8)
    }

    fn run_at(&self, version: KruiseVersion) -> Outcome {
        reconcile(&Input {
            ds: &self.ds,
            pods: &self.pods,
            nodes: &self.nodes,
            cur: &self.cur,
            old: &self.old,
            now: 100,
            version,
        })
    }
}

/// Nodes a, b, c; `d`'s pods on `with_pods` at its current revision.
fn world(extra: Value, with_pods: &[&str]) -> World {
    let d = ds(extra);
    let cur = history::snapshot(&d, 1);
    let pods = with_pods.iter().map(|n| pod(&d, &cur, n, 0)).collect();
    World {
        nodes: ["node-a", "node-b", "node-c"]
            .iter()
            .map(|n| node(n, json!({})))
            .collect(),
        ds: d,
        pods,
        cur,
        old: Vec::new(),
    }
}

/// The same world after an image change.
fn rolled(mut w: World, image: &str) -> World {
    if let Some(spec) = w.ds.spec.template.spec.as_mut() {
        spec.containers[0].image = Some(image.to_owned());
    }
    w.old.push(w.cur.clone());
    w.cur = history::snapshot(&w.ds, 2);
    w
}

fn created_on(out: &Outcome) -> Vec<String> {
    out.pods
        .iter()
        .filter_map(|w| match &w.op {
            Op::Create { node, .. } => Some(node.clone()),
            _ => None,
        })
        .collect()
}

fn with_why(out: &Outcome, pred: impl Fn(&Why) -> bool) -> Vec<String> {
    out.pods
        .iter()
        .filter(|w| pred(&w.why))
        .map(|w| w.name.clone())
        .collect()
}

#[test]
fn one_pod_per_eligible_node_pinned_to_it() {
    let mut w = world(json!({}), &[]);
    w.nodes[1] = node(
        "node-b",
        json!({"spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}),
    );
    let out = w.run();
    assert_eq!(created_on(&out), ["node-a", "node-c"]);
    let Op::Create { pod, .. } = &out.pods[0].op else {
        panic!("a create");
    };
    assert_eq!(pods::target_node(pod).as_deref(), Some("node-a"));
    assert_eq!(
        pod.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("controller-revision-hash"))
            .map(String::as_str),
        Some(history::hash_of(&w.cur))
    );
    assert_eq!(
        out.pods[0].success_event("agent-x").map(|e| e.message),
        Some("Created pod: agent-x".into())
    );
    // Manage wrote: the status keeps the old observedGeneration.
    assert_eq!(
        out.status
            .as_ref()
            .map(|s| (s.desired_number_scheduled, s.observed_generation)),
        Some((2, 0))
    );
}

#[test]
fn pods_leave_nodes_that_should_no_longer_run_them() {
    let mut w = world(
        json!({"spec": {"template": {"spec": {"nodeSelector": {"pool": "a"}}}}}),
        &["node-a", "node-b"],
    );
    w.nodes[0] = node("node-a", json!({"metadata": {"labels": {"pool": "a"}}}));
    // node-b no longer matches the selector: its pod goes; node-a keeps its own.
    let out = w.run();
    assert_eq!(
        with_why(&out, |y| *y == Why::Delete),
        [format!("agent-node-b-{}", history::hash_of(&w.cur))]
    );
    assert!(created_on(&out).is_empty());
    // A NoSchedule taint lets a running pod stay; NoExecute evicts it.
    let mut w = world(json!({}), &["node-a", "node-b", "node-c"]);
    w.nodes[0] = node(
        "node-a",
        json!({"spec": {"taints": [{"key": "x", "effect": "NoSchedule"}]}}),
    );
    assert!(w.run().pods.is_empty());
    w.nodes[0] = node(
        "node-a",
        json!({"spec": {"taints": [{"key": "x", "effect": "NoExecute"}]}}),
    );
    assert_eq!(with_why(&w.run(), |y| *y == Why::Delete).len(), 1);
}

#[test]
fn partition_holds_back_the_alphabetically_first_nodes() {
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1, "maxUnavailable": 1}}}});
    let w = rolled(world(extra, &["node-a", "node-b", "node-c"]), "a:2");
    let out = w.run();
    // Reverse name order: node-c's old pod goes first, one at a time.
    assert_eq!(
        with_why(&out, |y| *y == Why::Delete),
        [format!("agent-node-c-{}", history::hash_of(&w.old[0]))]
    );
    assert_eq!(out.status.as_ref().map(|s| s.observed_generation), Some(3));
    // maxUnavailable 2: node-c and node-b; node-a is held by the partition.
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1, "maxUnavailable": 2}}}});
    let w = rolled(world(extra, &["node-a", "node-b", "node-c"]), "a:2");
    let deleted = with_why(&w.run(), |y| *y == Why::Delete);
    assert_eq!(deleted.len(), 2);
    assert!(deleted.iter().all(|n| !n.contains("node-a")));
}

#[test]
fn percent_partition_floors_over_the_last_desired_count_at_v1_9_only() {
    // 34% of the 3 nodes the last status counted is 1.02: one node (node-a) stays old.
    let extra = json!({
        "spec": {"updateStrategy": {"rollingUpdate": {"partition": "34%", "maxUnavailable": 3}}},
        "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3,
                   "numberMisscheduled": 0, "numberReady": 3, "updatedNumberScheduled": 3},
    });
    let w = rolled(world(extra, &["node-a", "node-b", "node-c"]), "a:2");
    let out = w.run_at(KruiseVersion::V1_9);
    let deleted = with_why(&out, |y| *y == Why::Delete);
    assert_eq!(deleted.len(), 2, "{out:?}");
    assert!(deleted.iter().all(|n| !n.contains("node-a")));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    // v1.8.4 cannot read a string partition: the rolling update fails, nothing is replaced.
    let out = w.run_at(KruiseVersion::V1_8);
    assert!(with_why(&out, |y| *y == Why::Delete).is_empty());
    assert!(
        out.errors.iter().any(|e| e.contains("partition")),
        "{:?}",
        out.errors
    );
}

#[test]
fn percent_partition_against_a_status_never_written_keeps_nothing_back() {
    // No status yet: desiredNumberScheduled 0, so 50% is 0 nodes and every node updates.
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": "50%", "maxUnavailable": 3}}}});
    let w = rolled(world(extra, &["node-a", "node-b", "node-c"]), "a:2");
    let out = w.run_at(KruiseVersion::V1_9);
    assert_eq!(with_why(&out, |y| *y == Why::Delete).len(), 3);
}

#[test]
fn partitioned_scaling_creates_up_to_a_percent_partition() {
    // 67% of 3 is 2 (floor): only 3 - 0 - 2 = 1 pod is created, on the first node by name.
    let extra = json!({
        "metadata": {"annotations": {PROGRESSIVE_CREATE_POD: "true"}},
        "spec": {"updateStrategy": {"rollingUpdate": {"partition": "67%"}}},
        "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 0,
                   "numberMisscheduled": 0, "numberReady": 0, "updatedNumberScheduled": 0},
    });
    let w = world(extra.clone(), &[]);
    assert_eq!(created_on(&w.run_at(KruiseVersion::V1_9)), ["node-a"]);
    // v1.8.4: the string does not resolve, the partition is ignored and every node gets a pod.
    assert_eq!(created_on(&w.run_at(KruiseVersion::V1_8)).len(), 3);
    // Without partitionedScaling the partition does not limit creation.
    let mut plain = extra;
    plain["metadata"] = json!({});
    let w = world(plain, &[]);
    assert_eq!(created_on(&w.run_at(KruiseVersion::V1_9)).len(), 3);
}

#[test]
fn in_place_if_possible_patches_the_image() {
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible"}}}});
    let w = rolled(world(extra, &["node-a", "node-b", "node-c"]), "a:2");
    let out = w.run();
    let updated = with_why(&out, |y| matches!(y, Why::InPlaceUpdate { .. }));
    assert_eq!(
        updated,
        [format!("agent-node-c-{}", history::hash_of(&w.old[0]))]
    );
    let Op::Update {
        pod: Some(pod),
        status: Some(_),
    } = &out.pods[0].op
    else {
        panic!("an in-place update: {:?}", out.pods[0]);
    };
    assert_eq!(
        pod.spec.as_ref().map(|s| s.containers[0].image.clone()),
        Some(Some("a:2".into()))
    );
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get("controller-revision-hash").map(String::as_str),
        Some(history::hash_of(&w.cur))
    );
    assert!(!labels.contains_key("pod-template-hash"));
    assert!(!labels.contains_key("lifecycle.apps.kruise.io/state"));
}

#[test]
fn surge_creates_the_new_pod_before_the_old_goes() {
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}});
    let w = rolled(world(extra, &["node-a", "node-b", "node-c"]), "a:2");
    let out = w.run();
    assert_eq!(created_on(&out), ["node-c"]);
    assert!(with_why(&out, |y| *y == Why::Delete).is_empty());
}

#[test]
fn paused_replaces_nothing_but_still_creates() {
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"paused": true}}}});
    let w = rolled(world(extra, &["node-a", "node-b"]), "a:2");
    let out = w.run();
    assert_eq!(
        created_on(&out),
        ["node-c"],
        "a new node gets the new revision"
    );
    assert!(with_why(&out, |y| *y == Why::Delete).is_empty());
}

#[test]
fn status_counts_per_node() {
    let extra = json!({"spec": {"updateStrategy": {"rollingUpdate": {"paused": true}}}});
    let mut w = rolled(world(extra, &["node-a", "node-b", "node-c"]), "a:2");
    w.nodes.push(node(
        "node-d",
        json!({"spec": {"taints": [{"key": "x", "effect": "NoSchedule"}]}}),
    ));
    let st = w.run().status.expect("a status to write");
    assert_eq!(
        (
            st.desired_number_scheduled,
            st.current_number_scheduled,
            st.number_ready,
            st.number_available,
            st.updated_number_scheduled,
            st.number_unavailable,
            st.number_misscheduled,
        ),
        (3, 3, 3, 3, 0, 0, 0)
    );
    assert_eq!(st.daemon_set_hash, history::hash_of(&w.cur));
    assert_eq!(st.observed_generation, 3);
}

#[test]
fn a_settled_set_gets_no_writes() {
    let mut w = world(json!({}), &["node-a", "node-b", "node-c"]);
    let first = w.run();
    assert!(first.pods.is_empty(), "{:?}", first.pods);
    w.ds.status = first.status.clone();
    let again = w.run();
    assert!(again.pods.is_empty());
    assert!(again.status.is_none(), "nothing to write");
}
