//! Seeded pods: the pod object a controller would have created, and its status computed by
//! running the simulated kubelet through the pod's history (started, images changed in place,
//! containers restarted by a ContainerRecreateRequest).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::{
    api::core::v1::{ContainerState, ContainerStateTerminated, Pod, PodCondition, PodStatus},
    apimachinery::pkg::apis::meta::v1::Time,
};
use serde_json::{Value, json};

use super::{ApiResource, SeedObject, SeedStatus, owned, resource};
use crate::cluster::sim::{
    ids,
    kubelet::{self, Timing},
    nodes,
};

/// What happened to one container of a seeded pod, and when.
#[derive(Debug, Clone, PartialEq)]
pub enum PodChange {
    /// Its image was changed in place to `image` (the spec already holds the new image).
    Image { container: String, image: String },
    /// It was restarted (a ContainerRecreateRequest).
    Restart { container: String },
}

/// How to compute a seeded pod's status.
#[derive(Debug, Clone, PartialEq)]
pub struct PodSeed {
    pub host_ip: String,
    pub started: Timestamp,
    /// The images the containers started with, where they differ from the spec.
    pub initial_images: BTreeMap<String, String>,
    pub changes: Vec<(Timestamp, PodChange)>,
    /// Conditions other controllers own (readiness gates, probe results).
    pub conditions: Vec<PodCondition>,
}

/// The status `pod` (as created, with its UID) has at `now` under `seed`.
pub fn seeded_pod_status(pod: &Pod, seed: &PodSeed, now: Timestamp) -> PodStatus {
    let timing = Timing::default();
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let mut pod = pod.clone();
    let final_spec = pod.spec.clone();
    if let Some(spec) = pod.spec.as_mut() {
        for c in &mut spec.containers {
            if let Some(image) = seed.initial_images.get(&c.name) {
                c.image = Some(image.clone());
            }
        }
    }
    pod.status = Some(PodStatus {
        start_time: Some(Time(seed.started)),
        conditions: Some(seed.conditions.clone()),
        ..Default::default()
    });
    for (at, change) in &seed.changes {
        pod.status = Some(kubelet::settle(&pod, &seed.host_ip, *at, &timing));
        match change {
            PodChange::Image { container, image } => {
                if let Some(c) = pod
                    .spec
                    .as_mut()
                    .and_then(|s| s.containers.iter_mut().find(|c| &c.name == container))
                {
                    c.image = Some(image.clone());
                }
                // The kubelet notices at once: the container restarts at `at`.
                pod.status = Some(kubelet::settle(&pod, &seed.host_ip, *at, &timing));
            }
            PodChange::Restart { container } => {
                if let Some(status) = pod.status.as_mut() {
                    restart(status, container, &uid, *at);
                }
            }
        }
    }
    pod.spec = final_spec;
    kubelet::settle(&pod, &seed.host_ip, now, &timing)
}

/// Kills and restarts one container at `at` (what the kruise-daemon does for a CRR).
fn restart(status: &mut PodStatus, container: &str, uid: &str, at: Timestamp) {
    let Some(c) = status
        .container_statuses
        .iter_mut()
        .flatten()
        .find(|c| c.name == container)
    else {
        return;
    };
    let started_at = c
        .state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.clone());
    c.last_state = Some(ContainerState {
        terminated: Some(ContainerStateTerminated {
            container_id: c.container_id.clone(),
            exit_code: 137,
            reason: Some("Error".to_owned()),
            started_at,
            finished_at: Some(Time(at)),
            ..Default::default()
        }),
        ..Default::default()
    });
    c.restart_count += 1;
    c.container_id = Some(ids::container_id(uid, container, c.restart_count));
    c.ready = false;
    c.state = Some(ContainerState {
        running: Some(k8s_openapi::api::core::v1::ContainerStateRunning {
            started_at: Some(Time(at)),
        }),
        ..Default::default()
    });
}

/// A pod condition set by another controller.
pub(crate) fn condition(
    type_: &str,
    ok: bool,
    message: Option<&str>,
    at: Timestamp,
) -> PodCondition {
    PodCondition {
        type_: type_.to_owned(),
        status: if ok { "True" } else { "False" }.to_owned(),
        message: message.map(str::to_owned),
        last_probe_time: None,
        last_transition_time: Some(Time(at)),
        ..Default::default()
    }
}

/// A pod to create: name, labels, annotations, containers `(name, image, injected)`, the node
/// index it runs on, its owner, and its history.
pub(crate) struct PodPlan<'a> {
    pub namespace: String,
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub annotations: Vec<(String, String)>,
    pub containers: Vec<(String, String, bool)>,
    pub readiness_gates: Vec<&'a str>,
    pub node: usize,
    pub owner: (&'a ApiResource, &'a str),
    pub started: Timestamp,
    pub initial_images: BTreeMap<String, String>,
    pub changes: Vec<(Timestamp, PodChange)>,
    pub conditions: Vec<PodCondition>,
    /// Extra `spec` fields (affinity, tolerations, hostname, ...).
    pub spec_extra: Value,
}

impl PodPlan<'_> {
    pub fn build(self) -> SeedObject {
        let labels: serde_json::Map<String, Value> = self
            .labels
            .into_iter()
            .map(|(k, v)| (k, json!(v)))
            .collect();
        let annotations: serde_json::Map<String, Value> = self
            .annotations
            .into_iter()
            .map(|(k, v)| (k, json!(v)))
            .collect();
        let containers: Vec<Value> = self
            .containers
            .iter()
            .map(|(name, image, injected)| {
                let mut c = json!({
                    "name": name,
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                });
                if *injected {
                    c["env"] = json!([{"name": "IS_INJECTED", "value": "true"}]);
                }
                c
            })
            .collect();
        let gates: Vec<Value> = self
            .readiness_gates
            .iter()
            .map(|g| json!({"conditionType": g}))
            .collect();
        let node_name = nodes::node_name(self.node);
        let mut spec = json!({
            "containers": containers,
            "nodeName": node_name,
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
        });
        if !gates.is_empty() {
            spec["readinessGates"] = json!(gates);
        }
        if let (Some(spec), Value::Object(extra)) = (spec.as_object_mut(), self.spec_extra) {
            spec.extend(extra);
        }
        let object = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": labels,
                "annotations": annotations,
            },
            "spec": spec,
        });
        let seed = PodSeed {
            host_ip: nodes::node_ip(self.node),
            started: self.started,
            initial_images: self.initial_images,
            changes: self.changes,
            conditions: self.conditions,
        };
        let (owner_res, owner_name) = self.owner;
        owned(
            resource("", "v1", "Pod", "pods"),
            object,
            Some((owner_res, &self.namespace, owner_name)),
            SeedStatus::Pod(Box::new(seed)),
        )
    }
}

/// Whether the seeded pod `object` is Ready at `now` (for the workload status counts).
pub(crate) fn seeded_ready(object: &SeedObject, now: Timestamp) -> bool {
    let SeedStatus::Pod(seed) = &object.status else {
        return false;
    };
    let Ok(mut pod) = serde_json::from_value::<Pod>(object.object.clone()) else {
        return false;
    };
    pod.metadata.uid = Some(format!("seed-{}", object.name()));
    let status = seeded_pod_status(&pod, seed, now);
    status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}
