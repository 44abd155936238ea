//! The scenario's Advanced StatefulSet (`db`, partition 1 of 3, updated in place, a restart
//! running) and Advanced DaemonSet (`log-agent`, one pod per node, partition 1).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    Ctx, SeedObject, SeedStatus,
    ops::{self, Crr},
    owned,
    pods::{PodChange, PodPlan, condition, seeded_ready},
    resource, rfc3339,
    workloads::{containers_of, revision, revision_seed, template},
};
use crate::cluster::sim::{ids, nodes};

/// `db`: an Advanced StatefulSet (v1beta1) of 3, partition 1: db-1 and db-2 were updated in
/// place, db-0 waits; protected with `Always`; a container restart of db-1 is running.
pub(crate) fn database(ctx: &Ctx, out: &mut Vec<SeedObject>) {
    let res = resource("apps.kruise.io", "v1beta1", "StatefulSet", "statefulsets");
    let ns = ctx.ns.as_str();
    let name = "db";
    let current = revision(ns, name, template(name, &[("postgres", "postgres:16.2")]));
    let update = revision(ns, name, template(name, &[("postgres", "postgres:16.3")]));
    let created = ctx.ago(3 * 86_400);
    let updated_at = ctx.ago(10 * 60);
    let crr_at = ctx.ago(1);
    let replicas = 3usize;
    let partition = 1usize;
    let mut pods = Vec::new();
    for ordinal in 0..replicas {
        let updated = ordinal >= partition;
        let rev = if updated { &update } else { &current };
        let pod_name = format!("{name}-{ordinal}");
        let mut p = PodPlan {
            namespace: ns.to_owned(),
            name: pod_name.clone(),
            labels: vec![
                ("app".into(), name.into()),
                ("controller-revision-hash".into(), rev.name.clone()),
                (
                    "statefulset.kubernetes.io/pod-name".into(),
                    pod_name.clone(),
                ),
                ("apps.kubernetes.io/pod-index".into(), ordinal.to_string()),
            ],
            annotations: Vec::new(),
            containers: containers_of(rev)
                .into_iter()
                .map(|(n, i)| (n, i, false))
                .collect(),
            readiness_gates: vec!["InPlaceUpdateReady"],
            node: ctx.node_for(ordinal),
            owner: (&res, name),
            started: created,
            initial_images: BTreeMap::new(),
            changes: Vec::new(),
            conditions: vec![condition("InPlaceUpdateReady", true, None, created)],
            spec_extra: json!({"hostname": pod_name, "subdomain": name}),
        };
        if updated {
            p.initial_images
                .insert("postgres".into(), "postgres:16.2".into());
            p.changes.push((
                updated_at,
                PodChange::Image {
                    container: "postgres".into(),
                    image: "postgres:16.3".into(),
                },
            ));
            let state = json!({
                "revision": rev.name,
                "updateTimestamp": rfc3339(updated_at),
                "lastContainerStatuses": {"postgres": {"imageID": ids::image_id("postgres:16.2")}},
                "updateImages": true,
                "containerBatchesRecord": [{"timestamp": rfc3339(updated_at), "containers": ["postgres"]}],
            });
            p.annotations.push((
                "apps.kruise.io/inplace-update-state".into(),
                state.to_string(),
            ));
        }
        if ordinal == 1 {
            p.changes.push((
                crr_at,
                PodChange::Restart {
                    container: "postgres".into(),
                },
            ));
        }
        pods.push(p.build());
    }
    let ready = pods.iter().filter(|p| seeded_ready(p, ctx.now)).count();
    let updated = &pods[partition..];
    let updated_ready = updated.iter().filter(|p| seeded_ready(p, ctx.now)).count();
    let status = json!({
        "observedGeneration": 1,
        "replicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
        "currentReplicas": partition,
        "updatedReplicas": updated.len(),
        "updatedReadyReplicas": updated_ready,
        "updatedAvailableReplicas": updated_ready,
        "currentRevision": current.name,
        "updateRevision": update.name,
        "collisionCount": 0,
        "labelSelector": "app=db",
    });
    out.push(owned(
        res.clone(),
        json!({
            "apiVersion": res.api_version,
            "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"app": name, "policy.kruise.io/delete-protection": "Always"}},
            "spec": {
                "replicas": replicas,
                "serviceName": name,
                "podManagementPolicy": "OrderedReady",
                "selector": {"matchLabels": {"app": name}},
                "template": update.template,
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {
                        "partition": partition,
                        "maxUnavailable": 1,
                        "podUpdatePolicy": "InPlaceIfPossible",
                    },
                },
                "revisionHistoryLimit": 10,
            },
        }),
        None,
        SeedStatus::Fixed(status),
    ));
    out.push(revision_seed(
        ns,
        &res,
        name,
        &current,
        1,
        "controller.kubernetes.io/hash",
    ));
    out.push(revision_seed(
        ns,
        &res,
        name,
        &update,
        2,
        "controller.kubernetes.io/hash",
    ));
    out.extend(pods);
    out.push(ops::crr(
        ctx,
        Crr {
            name: "db-1-restart-postgres".into(),
            pod: "db-1".into(),
            node: nodes::node_name(ctx.node_for(1)),
            container: "postgres",
            restart_count_before: 1,
            at: crr_at,
            completed: false,
        },
    ));
}

/// `log-agent`: an Advanced DaemonSet with one pod per node, rolling to a new image with
/// partition 1 (one node keeps the old pod).
pub(crate) fn log_agent(ctx: &Ctx, out: &mut Vec<SeedObject>) {
    let res = resource("apps.kruise.io", "v1alpha1", "DaemonSet", "daemonsets");
    let ns = ctx.ns.as_str();
    let name = "log-agent";
    let current = revision(
        ns,
        name,
        template(name, &[("fluent-bit", "fluent/fluent-bit:2.2.2")]),
    );
    let update = revision(
        ns,
        name,
        template(name, &[("fluent-bit", "fluent/fluent-bit:3.0.4")]),
    );
    let partition = 1usize;
    let created = ctx.ago(7 * 86_400);
    let updated_at = ctx.ago(15 * 60);
    let mut pods = Vec::new();
    for node in 0..ctx.nodes {
        let updated = node >= partition;
        let rev = if updated { &update } else { &current };
        let node_name = nodes::node_name(node);
        let id = super::safe_hash(&[ns, name, &node_name], 5);
        let p = PodPlan {
            namespace: ns.to_owned(),
            name: format!("{name}-{id}"),
            labels: vec![
                ("app".into(), name.into()),
                ("controller-revision-hash".into(), rev.hash.clone()),
            ],
            annotations: Vec::new(),
            containers: containers_of(rev)
                .into_iter()
                .map(|(n, i)| (n, i, false))
                .collect(),
            readiness_gates: Vec::new(),
            node,
            owner: (&res, name),
            started: if updated { updated_at } else { created },
            initial_images: BTreeMap::new(),
            changes: Vec::new(),
            conditions: Vec::new(),
            spec_extra: daemon_pod_extras(&node_name),
        };
        pods.push(p.build());
    }
    let ready = pods.iter().filter(|p| seeded_ready(p, ctx.now)).count();
    let desired = ctx.nodes;
    let status = json!({
        "observedGeneration": 1,
        "desiredNumberScheduled": desired,
        "currentNumberScheduled": desired,
        "numberReady": ready,
        "numberAvailable": ready,
        "numberUnavailable": desired - ready,
        "numberMisscheduled": 0,
        "updatedNumberScheduled": desired.saturating_sub(partition),
        "daemonSetHash": update.hash,
        "collisionCount": 0,
    });
    out.push(owned(
        res.clone(),
        json!({
            "apiVersion": res.api_version,
            "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": update.template,
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"type": "Standard", "partition": partition, "maxUnavailable": 1, "maxSurge": 0},
                },
                "revisionHistoryLimit": 10,
            },
        }),
        None,
        SeedStatus::Fixed(status),
    ));
    out.push(revision_seed(
        ns,
        &res,
        name,
        &current,
        1,
        "controller-revision-hash",
    ));
    out.push(revision_seed(
        ns,
        &res,
        name,
        &update,
        2,
        "controller-revision-hash",
    ));
    out.extend(pods);
}

/// What the DaemonSet controller pins a daemon pod with: node affinity on its node's name and
/// the standard tolerations.
fn daemon_pod_extras(node: &str) -> Value {
    let toleration =
        |key: &str, effect: &str| json!({"key": key, "operator": "Exists", "effect": effect});
    json!({
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}
            ]}]
        }}},
        "tolerations": [
            toleration("node.kubernetes.io/not-ready", "NoExecute"),
            toleration("node.kubernetes.io/unreachable", "NoExecute"),
            toleration("node.kubernetes.io/disk-pressure", "NoSchedule"),
            toleration("node.kubernetes.io/unschedulable", "NoSchedule"),
        ],
    })
}
