//! The demo's BroadcastJob, PersistentPodState and ResourceDistribution. The embedded cluster
//! runs none of their controllers, so what upstream's controllers would write (the job's pods
//! and status, the kept pod states, the distributed copies and status) is written here, from
//! the cluster as it is, the way those controllers write it (Kruise v1.8.4).
//!
//! [`play`] creates what a user makes (the three objects, the namespaces the distribution
//! targets, and a Secret a team made by hand) and the distribution's copies and status;
//! [`epilogue`] waits for the nodes and db's pods, then writes the job's pods and status and
//! the kept pod states.

use std::{collections::BTreeMap, time::Duration};

use anyhow::{Context as _, Result};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use super::{
    Obj, StoryOptions, api, create,
    objects::{kruise, namespace},
    resource,
};
use crate::kruise::{distribution, persistent_pod_state};
use kruise_client::errors::Plain as _;

/// The distribution's name, and the Secret it copies.
const CREDS: &str = "registry-creds";
/// The BroadcastJob: one pod per node that keeps running (completionPolicy Never).
const JOB: &str = "node-probe";
/// Labels the distribution's selector picks namespaces by.
const REGISTRY_LABEL: &str = "kruise-tui.io/registry";

fn secret_source() -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
           "metadata": {"name": CREDS},
           "data": {"token": "ZGVtby1yZWdpc3RyeS10b2tlbg=="}})
}

fn job(ns: &str) -> Obj {
    kruise(
        "BroadcastJob",
        "broadcastjobs",
        "v1alpha1",
        Some(ns),
        json!({
            "metadata": {"name": JOB},
            "spec": {
                "completionPolicy": {"type": "Never"},
                "template": {
                    "metadata": {"labels": {"app": JOB}},
                    "spec": {"restartPolicy": "Never",
                             "containers": [{"name": "probe", "image": "demo/node-probe:1.0"}]},
                },
            },
        }),
    )
}

fn pod_state(ns: &str) -> Obj {
    kruise(
        "PersistentPodState",
        "persistentpodstates",
        "v1alpha1",
        Some(ns),
        json!({
            "metadata": {"name": "db"},
            "spec": {
                "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
                              "name": "db"},
                "requiredPersistentTopology": {
                    "nodeTopologyKeys": ["topology.kubernetes.io/zone"]},
                "preferredPersistentTopology": [{"weight": 100, "preference": {
                    "nodeTopologyKeys": ["kubernetes.io/hostname"]}}],
            },
        }),
    )
}

/// Creates the objects and the distribution's copies and status; returns how many objects it
/// created.
pub(crate) async fn play(client: &Client, opts: &StoryOptions) -> Result<usize> {
    let ns = opts.namespace.as_str();
    let private = json!({REGISTRY_LABEL: "private"});
    let mut made = 0;
    for obj in [
        namespace("team-a", json!({})),
        namespace("team-b", private.clone()),
        namespace("team-c", private),
    ] {
        made += usize::from(create(client, &obj).await?);
    }
    // team-c made its own registry-creds before the distribution existed.
    let mut hand = secret_source();
    hand["metadata"]["namespace"] = json!("team-c");
    hand["data"]["token"] = json!("dGVhbS1jLW93bi10b2tlbg==");
    made += usize::from(create(client, &core("Secret", "secrets", "team-c", hand)).await?);
    for obj in [job(ns), pod_state(ns)] {
        made += usize::from(create(client, &obj).await?);
    }
    made += distribute(client).await?;
    Ok(made)
}

fn core(kind: &str, plural: &str, ns: &str, body: Value) -> Obj {
    Obj {
        ar: resource("", "v1", kind, plural),
        namespace: Some(ns.to_owned()),
        body,
    }
}

/// The distribution, then what its controller does: a copy in each matched namespace that has
/// none, a conflict where an object of that name is someone else's, and the status.
async fn distribute(client: &Client) -> Result<usize> {
    let rd = kruise(
        "ResourceDistribution",
        "resourcedistributions",
        "v1alpha1",
        None,
        json!({
            "metadata": {"name": CREDS},
            "spec": {
                "resource": secret_source(),
                "targets": {
                    "includedNamespaces": {"list": [{"name": "team-a"}]},
                    "namespaceLabelSelector": {"matchLabels": {REGISTRY_LABEL: "private"}},
                },
            },
        }),
    );
    let created = create(client, &rd).await?;
    let stored = api(client, &rd.ar, None)
        .get(CREDS)
        .await
        .plain()
        .context("cannot read the demo's ResourceDistribution")?;
    let uid = stored.metadata.uid.clone().unwrap_or_default();
    let generation = stored.metadata.generation.unwrap_or(1);
    let source = secret_source();
    let mut conflicts = Vec::new();
    let mut succeeded = 0;
    let matched = ["team-a", "team-b", "team-c"];
    for ns in matched {
        let copy = distribution::make_copy(CREDS, &uid, &source, ns);
        let obj = core("Secret", "secrets", ns, copy);
        let existing = api(client, &obj.ar, Some(ns))
            .get_opt(CREDS)
            .await
            .plain()?;
        match existing {
            None => {
                create(client, &obj).await?;
                succeeded += 1;
            }
            Some(o) if distribution::controlled_by(&serde_json::to_value(&o)?, CREDS) => {
                succeeded += 1
            }
            Some(_) => conflicts.push(ns),
        }
    }
    let now = jiff::Timestamp::now().to_string();
    let condition = |type_: &str, failed: &[&str], reason: &str| {
        if failed.is_empty() {
            json!({"type": type_, "status": "False", "reason": "Succeeded",
                   "lastTransitionTime": now})
        } else {
            json!({"type": type_, "status": "True", "reason": reason,
                   "lastTransitionTime": now, "failedNamespace": failed})
        }
    };
    // handleErrors: the six condition types in upstream's order.
    let status = json!({"status": {
        "desired": matched.len(),
        "succeeded": succeeded,
        "failed": matched.len() - succeeded,
        "observedGeneration": generation,
        "conditions": [
            condition("GetResourceFailed", &[], ""),
            condition("CreateResourceFailed", &[], ""),
            condition("UpdateResourceFailed", &[], ""),
            condition("DeleteResourceFailed", &[], ""),
            condition("ConflictOccurred", &conflicts,
                "conflict with existing resources because of the same namespace, group, \
                 version, kind and name"),
            condition("NamespaceNotExists", &[], ""),
        ],
    }});
    write_status(client, &rd, &status).await?;
    Ok(usize::from(created) + succeeded)
}

async fn write_status(client: &Client, obj: &Obj, status: &Value) -> Result<()> {
    api(client, &obj.ar, obj.namespace.as_deref())
        .patch_status(
            obj.body["metadata"]["name"].as_str().unwrap_or_default(),
            &PatchParams::default(),
            &Patch::Merge(status),
        )
        .await
        .plain()
        .with_context(|| format!("cannot write the status of the demo's {}", obj.ar.kind))?;
    Ok(())
}

/// Waits (bounded) until `f` gives something, polling every half second.
async fn wait_for<T, F, Fut>(secs: u64, mut f: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < deadline {
        if let Some(v) = f().await {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    None
}

async fn node_labels(client: &Client) -> BTreeMap<String, BTreeMap<String, String>> {
    let nodes: Api<Node> = Api::all(client.clone());
    nodes
        .list(&ListParams::default())
        .await
        .map(|l| {
            l.items
                .into_iter()
                .map(|n| {
                    (
                        n.metadata.name.unwrap_or_default(),
                        n.metadata.labels.unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The job's pods and status, then db's kept pod states; each gives up quietly when the nodes or
/// pods do not come.
pub(crate) async fn epilogue(client: &Client, opts: &StoryOptions) {
    let expected = super::node_count(opts.pods);
    let nodes = wait_for(30, || async {
        let n = node_labels(client).await;
        (n.len() >= expected).then_some(n)
    })
    .await;
    let Some(nodes) = nodes else {
        tracing::warn!("demo: no nodes; the BroadcastJob and PersistentPodState stay empty");
        return;
    };
    if let Err(err) = broadcast(client, &opts.namespace, &nodes).await {
        tracing::warn!("demo: {err:#}");
    }
    if let Err(err) = keep_db_states(client, &opts.namespace, &nodes).await {
        tracing::warn!("demo: {err:#}");
    }
}

/// What upstream's BroadcastJob controller does for a new job: a pod per node (generateName
/// `<job>-`, the job's labels, a controller reference, node affinity pinning it to its node)
/// and the status (desired = the nodes, every pod active, phase running).
async fn broadcast(
    client: &Client,
    ns: &str,
    nodes: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<()> {
    let obj = job(ns);
    let stored = api(client, &obj.ar, Some(ns)).get(JOB).await.plain()?;
    let uid = stored.metadata.uid.clone().unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mine = format!("broadcastjob-name={JOB}");
    let existing = pods
        .list(&ListParams::default().labels(&mine))
        .await
        .plain()?;
    if existing.items.is_empty() {
        for node in nodes.keys() {
            let pod: Pod = serde_json::from_value(json!({
                "metadata": {
                    "generateName": format!("{JOB}-"),
                    "labels": {"app": JOB, "broadcastjob-name": JOB,
                               "broadcastjob-controller-uid": uid},
                    "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1",
                        "kind": "BroadcastJob", "name": JOB, "uid": uid,
                        "controller": true, "blockOwnerDeletion": true}],
                },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "probe", "image": "demo/node-probe:1.0"}],
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name",
                            "operator": "In", "values": [node]}]}]}}},
                },
            }))?;
            pods.create(&PostParams::default(), &pod).await.plain()?;
        }
    }
    let now = jiff::Timestamp::now().to_string();
    let status = json!({"status": {"desired": nodes.len(), "active": nodes.len(),
        "succeeded": 0, "failed": 0, "phase": "running", "startTime": now}});
    write_status(client, &obj, &status).await
}

/// What upstream's PersistentPodState controller records once db's pods are Ready: each pod's
/// node and that node's values for the spec's keys.
async fn keep_db_states(
    client: &Client,
    ns: &str,
    nodes: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<()> {
    let obj = pod_state(ns);
    let spec: crate::api::persistentpodstate::PersistentPodStateSpec =
        serde_json::from_value(obj.body["spec"].clone())?;
    let keys = persistent_pod_state::topology_keys(&spec);
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let ready = |p: &Pod| {
        let node = p.spec.as_ref().and_then(|s| s.node_name.clone())?;
        crate::api::pod::is_ready(p).then(|| (p.metadata.name.clone().unwrap_or_default(), node))
    };
    let placed = wait_for(120, || async {
        let list = pods
            .list(&ListParams::default().labels("app=db"))
            .await
            .ok()?;
        let placed: Vec<(String, String)> = list.items.iter().filter_map(ready).collect();
        (placed.len() >= 3).then_some(placed)
    })
    .await
    .context("db's pods did not become Ready: no pod state kept")?;
    let mut states = serde_json::Map::new();
    for (pod, node) in placed {
        let Some(labels) = nodes.get(&node) else {
            continue;
        };
        let state = persistent_pod_state::recorded_state(
            &node,
            labels,
            &keys,
            &BTreeMap::new(),
            &Default::default(),
        );
        states.insert(pod, serde_json::to_value(state)?);
    }
    let generation = api(client, &obj.ar, Some(ns))
        .get("db")
        .await
        .plain()?
        .metadata
        .generation
        .unwrap_or(1);
    let status = json!({"status": {"observedGeneration": generation, "podStates": states}});
    write_status(client, &obj, &status).await
}
