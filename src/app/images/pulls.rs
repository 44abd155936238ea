//! What the image views and the rollout view derive from NodeImages, pure: the pull state of a
//! job's image on each node, the rows of one NodeImage, and whether a pod's next image is on its
//! node yet.
//!
//! Upstream (pkg/controller/imagepulljob `calculateStatus`): an ImagePullJob writes its image's
//! tag into the NodeImage of each node it selects, with itself among the tag's owner references
//! and a version; kruise-daemon pulls it and reports the tag's phase under the same version in
//! the NodeImage status. A tag with no status yet, or a status of an older version, is still
//! being pulled.

use std::sync::Arc;

use jiff::Timestamp;

use super::NodeImageCache;
use crate::{
    api::{
        NodeImage,
        nodeimage::{ImageTagSpec, ImageTagStatus, split_image},
    },
    app::{
        rollout::Summary,
        rows::{PodRow, same_revision},
    },
};

/// Where one image (tag) stands on one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Pull {
    /// The node (the NodeImage's name).
    pub node: String,
    /// `Waiting` (asked, not started), `Pulling`, `Succeeded`, `Failed`.
    pub phase: String,
    pub progress: Option<i32>,
    /// The version the status reports, and the one the spec asks for.
    pub version: Option<i64>,
    pub wanted: Option<i64>,
    pub message: String,
    pub completed: Option<Timestamp>,
}

/// The phase of a tag the spec asks for, from its status: none yet is `Waiting`, an older
/// version is a new round being pulled.
fn phase(spec: Option<&ImageTagSpec>, status: Option<&ImageTagStatus>) -> String {
    match (spec, status) {
        (_, None) => "Waiting".to_owned(),
        (Some(s), Some(t)) if s.version.unwrap_or(0) != t.version.unwrap_or(0) => {
            "Pulling".to_owned()
        }
        (_, Some(t)) => t.phase.clone(),
    }
}

fn tag_status<'a>(ni: &'a NodeImage, name: &str, tag: &str) -> Option<&'a ImageTagStatus> {
    ni.status
        .as_ref()?
        .image_statuses
        .get(name)?
        .tags
        .iter()
        .find(|t| t.tag == tag)
}

/// The job an owner reference names: by uid when the job has one, else by namespace and name.
#[derive(Debug, Clone, Copy)]
pub struct JobRef<'a> {
    pub uid: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

impl JobRef<'_> {
    fn owns(&self, tag: &ImageTagSpec) -> bool {
        tag.owner_references.iter().any(|r| {
            if !self.uid.is_empty() {
                r.uid.as_deref() == Some(self.uid)
            } else {
                r.name.as_deref() == Some(self.name)
                    && r.namespace.as_deref().unwrap_or_default() == self.namespace
            }
        })
    }
}

/// The pull state of `image` on every node whose NodeImage carries it for `job`, by node.
pub fn job_pulls(job: JobRef<'_>, image: &str, nodes: &[NodeImage]) -> Vec<Pull> {
    let (name, tag) = split_image(image);
    let mut pulls: Vec<Pull> = nodes
        .iter()
        .filter_map(|ni| {
            let spec = ni
                .spec
                .images
                .get(name)?
                .tags
                .iter()
                .find(|t| t.tag == tag && job.owns(t))?;
            let status = tag_status(ni, name, tag);
            Some(pull(ni, Some(spec), status))
        })
        .collect();
    pulls.sort_by(|a, b| crate::app::rollout::natural(&a.node, &b.node));
    pulls
}

fn pull(ni: &NodeImage, spec: Option<&ImageTagSpec>, status: Option<&ImageTagStatus>) -> Pull {
    Pull {
        node: ni.metadata.name.clone().unwrap_or_default(),
        phase: phase(spec, status),
        progress: status.and_then(|t| t.progress),
        version: status.and_then(|t| t.version),
        wanted: spec.and_then(|t| t.version),
        message: status.and_then(|t| t.message.clone()).unwrap_or_default(),
        completed: status.and_then(|t| t.completion_time.as_ref()).map(|t| t.0),
    }
}

/// One image tag of a NodeImage: asked for by its spec, reported by its status, or both.
#[derive(Debug, Clone, PartialEq)]
pub struct TagRow {
    pub image: String,
    pub tag: String,
    pub pull: Pull,
    /// The ImagePullJobs (`namespace/name`) that asked for it.
    pub jobs: Vec<String>,
}

/// Every image tag of `ni`, by image and tag.
pub fn node_tags(ni: &NodeImage) -> Vec<TagRow> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for (name, spec) in &ni.spec.images {
        keys.extend(spec.tags.iter().map(|t| (name.clone(), t.tag.clone())));
    }
    if let Some(status) = &ni.status {
        for (name, s) in &status.image_statuses {
            keys.extend(s.tags.iter().map(|t| (name.clone(), t.tag.clone())));
        }
    }
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|(image, tag)| {
            let spec = ni
                .spec
                .images
                .get(&image)
                .and_then(|s| s.tags.iter().find(|t| t.tag == tag));
            let status = tag_status(ni, &image, &tag);
            let jobs = spec
                .map(|s| {
                    s.owner_references
                        .iter()
                        .map(|r| {
                            format!(
                                "{}/{}",
                                r.namespace.as_deref().unwrap_or_default(),
                                r.name.as_deref().unwrap_or_default()
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            TagRow {
                pull: pull(ni, spec, status),
                image,
                tag,
                jobs,
            }
        })
        .collect()
}

/// Why a pod's next image is not on its node yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Missing {
    /// The node's NodeImage does not have it (nobody asked to pre-download it).
    Absent,
    /// Asked for, being pulled (or waiting to be).
    Pulling,
    /// The pull failed.
    Failed,
}

/// Whether the next image of `pod` (the update revision's container images, for a pod not on
/// the update revision yet) is missing from its node, according to its node's NodeImage; the
/// worst of its containers. `None` when nothing is missing, the pod is updated or unscheduled,
/// or nothing is known of its node (no NodeImages listed, or none for that node). An image a
/// pod of `pods` on the same node already runs is there (the kubelet pulled it).
pub fn next_image_missing(
    cache: &NodeImageCache,
    summary: &Summary,
    pod: &PodRow,
    pods: &[Arc<PodRow>],
) -> Option<Missing> {
    let images = cache.images.as_ref()?;
    if pod.node.is_empty()
        || summary.update_revision.is_empty()
        || same_revision(&pod.revision, &summary.update_revision)
    {
        return None;
    }
    let ni = images
        .iter()
        .find(|n| n.metadata.name.as_deref() == Some(pod.node.as_str()))?;
    let runs = |image: &str| {
        pods.iter()
            .filter(|p| p.node == pod.node)
            .any(|p| p.pod.spec.containers.iter().any(|c| c.image == image))
    };
    summary
        .containers
        .iter()
        .filter(|(_, image)| !image.is_empty() && !runs(image))
        .filter_map(|(_, image)| match ni.phase_of(image) {
            Some("Succeeded") => None,
            Some("Failed") => Some(Missing::Failed),
            Some(_) => Some(Missing::Pulling),
            None => Some(Missing::Absent),
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, v: serde_json::Value) -> NodeImage {
        let mut ni: NodeImage = serde_json::from_value(v).expect("node image");
        ni.metadata.name = Some(name.into());
        ni
    }

    fn owner(uid: &str) -> serde_json::Value {
        serde_json::json!([{"kind": "ImagePullJob", "namespace": "demo", "name": "warm", "uid": uid}])
    }

    #[test]
    fn a_jobs_image_is_followed_per_node_by_version() {
        let nodes = vec![
            node(
                "n-10",
                serde_json::json!({"spec": {"images": {"nginx": {"tags": [
                    {"tag": "1.26", "version": 1, "ownerReferences": owner("u1")}]}}}}),
            ),
            node(
                "n-2",
                serde_json::json!({
                    "spec": {"images": {"nginx": {"tags": [
                        {"tag": "1.26", "version": 2, "ownerReferences": owner("u1")}]}}},
                    "status": {"imageStatuses": {"nginx": {"tags": [
                        {"tag": "1.26", "phase": "Succeeded", "version": 1, "progress": 100}]}}}
                }),
            ),
            node(
                "n-1",
                serde_json::json!({
                    "spec": {"images": {"nginx": {"tags": [
                        {"tag": "1.26", "version": 0, "ownerReferences": owner("u1")}]}}},
                    "status": {"imageStatuses": {"nginx": {"tags": [
                        {"tag": "1.26", "phase": "Failed", "message": "not found"}]}}}
                }),
            ),
            // Another job's tag is not this job's.
            node(
                "n-3",
                serde_json::json!({"spec": {"images": {"nginx": {"tags": [
                    {"tag": "1.26", "ownerReferences": owner("other")}]}}}}),
            ),
        ];
        let job = JobRef {
            uid: "u1",
            namespace: "demo",
            name: "warm",
        };
        let pulls = job_pulls(job, "nginx:1.26", &nodes);
        let got: Vec<(&str, &str)> = pulls
            .iter()
            .map(|p| (p.node.as_str(), p.phase.as_str()))
            .collect();
        // No status yet: waiting; an older version: a new round, pulling.
        assert_eq!(
            got,
            [("n-1", "Failed"), ("n-2", "Pulling"), ("n-10", "Waiting")]
        );
        assert_eq!(pulls[0].message, "not found");
        // By name when the job has no uid (a job as a test builds it).
        let by_name = JobRef {
            uid: "",
            namespace: "demo",
            name: "warm",
        };
        assert_eq!(job_pulls(by_name, "nginx:1.26", &nodes).len(), 4);
        assert!(job_pulls(job, "nginx:1.27", &nodes).is_empty());
    }

    #[test]
    fn a_node_images_tags_come_from_spec_and_status() {
        let ni = node(
            "n-1",
            serde_json::json!({
                "spec": {"images": {"nginx": {"tags": [
                    {"tag": "1.26", "version": 1, "ownerReferences": owner("u1")}]}}},
                "status": {"imageStatuses": {
                    "nginx": {"tags": [{"tag": "1.26", "phase": "Pulling", "version": 1,
                                        "progress": 40}]},
                    "redis": {"tags": [{"tag": "7", "phase": "Succeeded"}]}}}
            }),
        );
        let rows = node_tags(&ni);
        let got: Vec<(&str, &str, &str, Option<i32>)> = rows
            .iter()
            .map(|r| {
                (
                    r.image.as_str(),
                    r.tag.as_str(),
                    r.pull.phase.as_str(),
                    r.pull.progress,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("nginx", "1.26", "Pulling", Some(40)),
                ("redis", "7", "Succeeded", None)
            ]
        );
        assert_eq!(rows[0].jobs, ["demo/warm"]);
        assert!(rows[1].jobs.is_empty());
    }
}
