//! Image pre-download in the demo: an ImagePullJob pre-pulling the image web's half-walked
//! rollout moves to, an ImageListPullJob pre-pulling the next images of db and log-agent (with
//! the ImagePullJob per image it runs), and a NodeImage per simulated node.
//!
//! The embedded cluster runs neither kruise-daemon nor the image pull job controllers, so the
//! story writes their status as upstream would (pkg/controller/imagepulljob `calculateStatus`,
//! pkg/controller/imagelistpulljob `calculateStatus`), consistent with the pods: once the
//! rollouts have settled, an image a pod on a node runs is pulled there; where no pod runs it
//! yet, web's and log-agent's next images are still being pulled and db's failed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{Context as _, Result};
use jiff::Timestamp;
use k8s_openapi::{
    api::core::v1::{Node, Pod},
    apimachinery::pkg::util::intstr::IntOrString,
};
use kube::{
    Api, Client,
    api::{DynamicObject, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use super::resource;
use kruise_client::errors::Plain as _;

use crate::api::nodeimage::split_image;
use crate::kruise::{
    KruiseVersion, daemonset::resolve_partition, intstr::calculate_partition_replicas,
};

/// The workloads whose next image is pre-pulled, and how a node that has none of their pods on
/// it yet stands: (plural, name, the pre-pull job, a failed pull where the image is missing).
const TARGETS: [(&str, &str, &str, bool); 3] = [
    ("clonesets", "web", "web-next-image", false),
    ("statefulsets", "db", "rollout-images-postgres", true),
    (
        "daemonsets",
        "log-agent",
        "rollout-images-fluent-bit",
        false,
    ),
];

const LIST_JOB: &str = "rollout-images";

/// How long the story waits for the rollouts to settle before it writes what it sees.
const SETTLE: Duration = Duration::from_secs(60);

fn version(plural: &str) -> &'static str {
    if plural == "statefulsets" {
        "v1beta1"
    } else {
        "v1alpha1"
    }
}

fn kind(plural: &str) -> &'static str {
    match plural {
        "clonesets" => "CloneSet",
        "statefulsets" => "StatefulSet",
        _ => "DaemonSet",
    }
}

fn kruise(client: &Client, ns: Option<&str>, kind: &str, plural: &str) -> Api<DynamicObject> {
    let ar = resource("apps.kruise.io", version(plural), kind, plural);
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

/// A workload's next image (its template's first container) and how many of its pods the
/// partition lets run it.
async fn next_image(client: &Client, ns: &str, plural: &str, name: &str) -> Option<(String, i64)> {
    let o = kruise(client, Some(ns), kind(plural), plural)
        .get(name)
        .await
        .ok()?;
    let spec = &o.data["spec"];
    let image = spec["template"]["spec"]["containers"][0]["image"]
        .as_str()?
        .to_owned();
    let replicas = match plural {
        "daemonsets" => o.data["status"]["desiredNumberScheduled"].as_i64()?,
        _ => spec["replicas"].as_i64().unwrap_or(1),
    };
    let written = [
        &spec["updateStrategy"]["partition"],
        &spec["updateStrategy"]["rollingUpdate"]["partition"],
    ]
    .into_iter()
    .find_map(|v| serde_json::from_value::<IntOrString>(v.clone()).ok());
    let total = i32::try_from(replicas).unwrap_or(i32::MAX);
    // A percent: of the replicas rounded up for a CloneSet, of the last desired node count
    // rounded down for an Advanced DaemonSet (Kruise v1.9.0).
    let partition = match (&written, plural) {
        (None, _) => 0,
        (Some(p), "daemonsets") => resolve_partition(p, total, KruiseVersion::V1_9).unwrap_or(0),
        (Some(p), _) => calculate_partition_replicas(Some(p), Some(total)).unwrap_or(0),
    };
    Some((image, (replicas - i64::from(partition)).max(0)))
}

/// Node -> the images its pods run.
async fn images_per_node(client: &Client) -> BTreeMap<String, BTreeSet<String>> {
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let pods = Api::<Pod>::all(client.clone())
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    for p in pods {
        let Some(spec) = p.spec else { continue };
        let Some(node) = spec.node_name else { continue };
        map.entry(node)
            .or_default()
            .extend(spec.containers.into_iter().filter_map(|c| c.image));
    }
    map
}

/// Waits (bounded) until the pods of each target run its next image as far as the partition
/// lets them; returns each target's next image.
async fn settled(client: &Client, ns: &str) -> Vec<Option<String>> {
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let mut next = Vec::new();
        for (plural, name, _, _) in TARGETS {
            next.push(next_image(client, ns, plural, name).await);
        }
        let pods = Api::<Pod>::namespaced(client.clone(), ns)
            .list(&ListParams::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        let count = |image: &str| {
            pods.iter()
                .filter(|p| {
                    p.spec.as_ref().is_some_and(|s| {
                        s.node_name.is_some()
                            && s.containers
                                .iter()
                                .any(|c| c.image.as_deref() == Some(image))
                    })
                })
                .count() as i64
        };
        let done = next.iter().all(|n| {
            n.as_ref()
                .is_some_and(|(image, want)| count(image) >= *want)
        });
        // Some pod of the story bound to a node (not a list of every pod in the cluster each
        // half second: with 100,000 pods being created that was a tenth of the server's time).
        let placed = pods
            .iter()
            .any(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_some()));
        if (done && placed) || tokio::time::Instant::now() >= deadline {
            if !done {
                tracing::warn!(
                    "demo: the rollouts did not settle in {SETTLE:?}; images as they are"
                );
            }
            return next.into_iter().map(|n| n.map(|(i, _)| i)).collect();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Tells the image pre-download part of the story (in the background, after the rollouts).
pub(crate) async fn tell(client: &Client, ns: &str) {
    if let Err(err) = play(client, ns).await {
        tracing::warn!("demo: image pre-download left out: {err:#}");
    }
}

fn owner_ref(job: &DynamicObject) -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "namespace": job.metadata.namespace,
        "name": job.metadata.name,
        "uid": job.metadata.uid,
    })
}

async fn create(api: &Api<DynamicObject>, body: Value) -> Result<DynamicObject> {
    let name = body["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let obj: DynamicObject = serde_json::from_value(body).context("demo image object")?;
    match api.create(&PostParams::default(), &obj).await {
        Ok(o) => Ok(o),
        Err(kube::Error::Api(s)) if s.code == 409 => api.get(&name).await.plain(),
        Err(e) => Err(e)
            .plain()
            .with_context(|| format!("cannot create {name}")),
    }
}

async fn status(api: &Api<DynamicObject>, name: &str, status: Value) -> Result<()> {
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": status })),
    )
    .await
    .plain()
    .with_context(|| format!("cannot write the status of {name}"))?;
    Ok(())
}

/// One pre-pull job of the story and where its image stands on each node.
struct Job {
    obj: DynamicObject,
    image: String,
    /// Node -> (phase, progress, message).
    nodes: BTreeMap<String, (&'static str, i32, String)>,
}

async fn play(client: &Client, ns: &str) -> Result<()> {
    let next = settled(client, ns).await;
    let mut nodes: Vec<String> = Api::<Node>::all(client.clone())
        .list(&ListParams::default())
        .await
        .plain()?
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    if nodes.is_empty() {
        return Ok(());
    }
    nodes.sort();
    let running = images_per_node(client).await;
    let now = Timestamp::now();
    let at = |secs: i64| (now - jiff::SignedDuration::from_secs(secs)).to_string();
    let jobs_api = kruise(client, Some(ns), "ImagePullJob", "imagepulljobs");
    let lists_api = kruise(client, Some(ns), "ImageListPullJob", "imagelistpulljobs");
    let policy = json!({"type": "Always", "activeDeadlineSeconds": 1800,
                        "ttlSecondsAfterFinished": 86400});
    let pull_policy = json!({"backoffLimit": 3, "timeoutSeconds": 600});

    let list_images: Vec<String> = next[1..].iter().flatten().cloned().collect();
    let list_job = create(
        &lists_api,
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImageListPullJob",
            "metadata": {"name": LIST_JOB, "namespace": ns},
            "spec": {"images": list_images, "parallelism": 2, "completionPolicy": policy,
                     "pullPolicy": pull_policy},
        }),
    )
    .await?;
    let mut jobs = Vec::new();
    for ((_, _, job_name, fails), image) in TARGETS.iter().zip(&next) {
        let Some(image) = image else { continue };
        let mut body = json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob",
            "metadata": {"name": job_name, "namespace": ns},
            "spec": {"image": image, "parallelism": 2, "completionPolicy": policy,
                     "pullPolicy": pull_policy},
        });
        if job_name.starts_with(LIST_JOB) {
            body["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImageListPullJob",
                "name": LIST_JOB, "uid": list_job.metadata.uid, "controller": true,
                "blockOwnerDeletion": true,
            }]);
        }
        let obj = create(&jobs_api, body).await?;
        let mut missing = 0;
        let per_node = nodes
            .iter()
            .map(|node| {
                let here = running.get(node).is_some_and(|s| s.contains(image));
                let state = if here {
                    ("Succeeded", 100, String::new())
                } else if *fails {
                    (
                        "Failed",
                        20,
                        format!(
                            "Back-off pulling image \"{image}\": rpc error: code = Unknown \
                             desc = failed to pull and unpack image: i/o timeout"
                        ),
                    )
                } else {
                    missing += 1;
                    ("Pulling", 60 - 20 * (missing - 1).min(2), String::new())
                };
                (node.clone(), state)
            })
            .collect();
        jobs.push(Job {
            obj,
            image: image.clone(),
            nodes: per_node,
        });
    }

    // kruise-daemon's NodeImage per node: the tags the jobs asked for, and where each stands.
    let nodes_api = kruise(client, None, "NodeImage", "nodeimages");
    for node in &nodes {
        let mut spec: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut status: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let (mut pulling, mut succeeded, mut failed) = (0, 0, 0);
        for job in &jobs {
            let (name, tag) = split_image(&job.image);
            let Some((phase, progress, message)) = job.nodes.get(node) else {
                continue;
            };
            spec.entry(name.to_owned()).or_default().push(json!({
                "tag": tag, "version": 0, "createdAt": at(0),
                "pullPolicy": {"backoffLimit": 3, "timeoutSeconds": 600,
                               "activeDeadlineSeconds": 1800, "ttlSecondsAfterFinished": 86400},
                "ownerReferences": [owner_ref(&job.obj)],
            }));
            let mut s = json!({"tag": tag, "phase": phase, "progress": progress, "version": 0,
                               "startTime": at(0)});
            match *phase {
                "Succeeded" => {
                    succeeded += 1;
                    s["completionTime"] = json!(at(0));
                    s["imageID"] = json!(format!("{name}@sha256:{:064x}", tag.len() * 7919));
                }
                "Failed" => {
                    failed += 1;
                    s["completionTime"] = json!(at(0));
                    s["message"] = json!(message);
                }
                _ => pulling += 1,
            }
            status.entry(name.to_owned()).or_default().push(s);
        }
        let images: BTreeMap<&String, Value> = spec
            .iter()
            .map(|(k, tags)| (k, json!({"tags": tags})))
            .collect();
        create(
            &nodes_api,
            json!({
                "apiVersion": "apps.kruise.io/v1alpha1", "kind": "NodeImage",
                "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
                "spec": {"images": images},
            }),
        )
        .await?;
        let statuses: BTreeMap<&String, Value> = status
            .iter()
            .map(|(k, tags)| (k, json!({"tags": tags})))
            .collect();
        self::status(
            &nodes_api,
            node,
            json!({
                "desired": pulling + succeeded + failed, "pulling": pulling,
                "succeeded": succeeded, "failed": failed,
                "firstSyncStatus": {"status": "Succeeded", "syncAt": at(0)},
                "imageStatuses": statuses,
            }),
        )
        .await?;
    }

    // Each job's status as upstream's controller computes it from the NodeImages.
    let mut children = Vec::new();
    for job in &jobs {
        let count = |p: &str| job.nodes.values().filter(|(ph, _, _)| *ph == p).count() as i64;
        let (active, succeeded, failed) = (count("Pulling"), count("Succeeded"), count("Failed"));
        let desired = job.nodes.len() as i64;
        let failed_nodes: Vec<&String> = job
            .nodes
            .iter()
            .filter(|(_, (p, _, _))| *p == "Failed")
            .map(|(n, _)| n)
            .collect();
        let done = desired == succeeded + failed;
        let mut s = json!({
            "desired": desired, "active": active, "succeeded": succeeded, "failed": failed,
            "failedNodes": failed_nodes, "startTime": at(0),
            "message": if done {
                "job has completed".to_owned()
            } else {
                format!("job is running, progress {:.1}%",
                        100.0 * (succeeded + failed) as f64 / desired as f64)
            },
        });
        if done {
            s["completionTime"] = json!(at(0));
        }
        let name = job.obj.metadata.name.clone().unwrap_or_default();
        status(&jobs_api, &name, s).await?;
        if name.starts_with(LIST_JOB) {
            children.push((name, job.image.clone(), desired, succeeded, failed, active));
        }
    }
    let failed_images: Vec<Value> = children
        .iter()
        .filter(|c| c.4 > 0)
        .map(|(name, image, ..)| {
            json!({"imagePullJob": name, "name": image, "message": format!(
                "Please check for details which nodes failed by 'kubectl get ImagePullJob {name}'."
            )})
        })
        .collect();
    let completed = children.iter().filter(|c| c.2 == c.3 + c.4).count();
    let mut s = json!({
        "desired": children.len(),
        "active": children.iter().filter(|c| c.5 > 0).count(),
        "completed": completed,
        "succeeded": children.iter().filter(|c| c.2 == c.3).count(),
        "failedImageStatuses": failed_images,
        "startTime": at(0),
    });
    if completed == children.len() {
        s["completionTime"] = json!(at(0));
    }
    status(&lists_api, LIST_JOB, s).await
}
