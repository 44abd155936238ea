//! `SlimPod`: the projection of a Pod that the views and the Kruise logic need, and nothing more.
//!
//! It deserializes straight from a Pod's JSON (unknown fields are skipped), so the pod store never
//! holds whole Pods. `managedFields` is skipped while reading (never built).
//!
//! Also the readiness every layer asks of a whole Pod: [`is_ready`] (Kubernetes'
//! `podutil.IsPodReady`), [`ready_condition`] (since when) and [`is_running_and_ready`] (Kruise's
//! `util.IsRunningAndReady`).

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct SlimPod {
    #[serde(default, deserialize_with = "meta_without_managed_fields")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: SlimPodSpec,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub status: SlimPodStatus,
}
crate::impl_resource!(
    SlimPod,
    group = "",
    version = "v1",
    kind = "Pod",
    plural = "pods",
    scope = NamespaceResourceScope
);

/// A pod's metadata as read into the store: every field of `ObjectMeta` but `managedFields`
/// (and the long-gone `selfLink`), which serde skips without building it — often 40 % of a
/// pod's JSON, and nothing reads it.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetaIn {
    annotations: Option<std::collections::BTreeMap<String, String>>,
    creation_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
    generate_name: Option<String>,
    generation: Option<i64>,
    labels: Option<std::collections::BTreeMap<String, String>>,
    name: Option<String>,
    namespace: Option<String>,
    owner_references: Option<Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>>,
    resource_version: Option<String>,
    uid: Option<String>,
}

fn meta_without_managed_fields<'de, D>(deserializer: D) -> Result<ObjectMeta, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let m = Option::<MetaIn>::deserialize(deserializer)?.unwrap_or_default();
    Ok(ObjectMeta {
        annotations: m.annotations,
        creation_timestamp: m.creation_timestamp,
        deletion_grace_period_seconds: m.deletion_grace_period_seconds,
        deletion_timestamp: m.deletion_timestamp,
        finalizers: m.finalizers,
        generate_name: m.generate_name,
        generation: m.generation,
        labels: m.labels,
        managed_fields: None,
        name: m.name,
        namespace: m.namespace,
        owner_references: m.owner_references,
        resource_version: m.resource_version,
        self_link: None,
        uid: m.uid,
    })
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub containers: Vec<SlimContainer>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub init_containers: Vec<SlimContainer>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub readiness_gates: Vec<SlimReadinessGate>,
    /// Default grace period for stopping containers (CRR falls back to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainer {
    pub name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub image: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimReadinessGate {
    pub condition_type: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Serialized as `podIP` (camelCase would give `podIp`, which Kubernetes does not use).
    #[serde(default, rename = "podIP", skip_serializing_if = "Option::is_none")]
    pub pod_ip: Option<String>,
    #[serde(default, rename = "hostIP", skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<SlimPodCondition>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub container_statuses: Vec<SlimContainerStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// PodProbeMarker writes the probe output here; KruisePodReady holds its holders as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainerStatus {
    pub name: String,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub ready: bool,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub restart_count: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub image: String,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "imageID"
    )]
    pub image_id: String,
    /// `<runtime>://<id>`; CRR records it to tell a recreated container from the old one.
    #[serde(
        default,
        rename = "containerID",
        skip_serializing_if = "Option::is_none"
    )]
    pub container_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<SlimContainerState>,
    /// The previous run's state (e.g. why it last terminated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_state: Option<SlimContainerState>,
}

/// The container's state summarised: which of running/waiting/terminated, with reason and time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainerState {
    // Boxed: a pod holds up to six of these and at most two are set (a 100,000-pod store
    // otherwise carries ~0.6 KB of empty detail per container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<Box<SlimStateDetail>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Box<SlimStateDetail>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<Box<SlimStateDetail>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimStateDetail {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The pod's `Ready` condition when its status is `True` (its lastTransitionTime says since when
/// the pod is ready); None when the pod is not ready or has no such condition.
///
/// Port of k8s pkg/api/v1/pod/util.go::GetPodReadyCondition + IsPodReadyConditionTrue: the first
/// condition of type Ready decides.
pub fn ready_condition(pod: &Pod) -> Option<&PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")
        .filter(|c| c.status == "True")
}

/// Whether the pod's `Ready` condition is `True`.
///
/// Port of k8s pkg/api/v1/pod/util.go::IsPodReady.
pub fn is_ready(pod: &Pod) -> bool {
    ready_condition(pod).is_some()
}

/// Whether the pod is Running, Ready and not being deleted.
///
/// Port of Kruise pkg/util/pods.go::IsRunningAndReady (v1.8.4).
pub fn is_running_and_ready(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
        && is_ready(pod)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod_json() -> serde_json::Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-abc", "namespace": "default", "uid": "u-1",
                         "labels": {"controller-revision-hash": "web-7d9"}},
            "spec": {
                "nodeName": "node-1",
                "terminationGracePeriodSeconds": 30,
                "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                "containers": [{"name": "main", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]
            },
            "status": {
                "phase": "Running", "podIP": "10.0.0.5", "hostIP": "192.168.0.2",
                "startTime": "2024-05-06T07:08:09Z",
                "conditions": [{"type": "game.io/idle", "status": "True", "message": "idle",
                                "lastProbeTime": "2024-05-06T07:09:00Z",
                                "lastTransitionTime": "2024-05-06T07:09:00Z"}],
                "containerStatuses": [{
                    "name": "main", "ready": true, "restartCount": 3, "started": true,
                    "image": "nginx:1.25", "imageID": "docker.io/nginx@sha256:1",
                    "containerID": "containerd://abc",
                    "state": {"running": {"startedAt": "2024-05-06T07:08:30Z"}},
                    "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "message": "boom",
                                  "startedAt": "2024-05-06T07:08:10Z", "finishedAt": "2024-05-06T07:08:20Z"}}
                }]
            }
        })
    }

    #[test]
    fn metadata_is_read_whole_except_managed_fields() {
        let meta = json!({
            "name": "web-abc", "namespace": "default", "uid": "u-1", "generateName": "web-",
            "resourceVersion": "42", "generation": 2, "creationTimestamp": "2024-05-06T07:08:09Z",
            "deletionTimestamp": "2024-05-06T08:00:00Z", "deletionGracePeriodSeconds": 30,
            "finalizers": ["a/b"], "labels": {"app": "web"}, "annotations": {"k": "v"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                                 "name": "web", "uid": "u-0", "controller": true}],
            "managedFields": [{"manager": "kubelet", "operation": "Update",
                               "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}]
        });
        let mut full: ObjectMeta = serde_json::from_value(meta.clone()).unwrap();
        assert!(full.managed_fields.is_some());
        full.managed_fields = None;
        let pod: SlimPod = serde_json::from_value(json!({"metadata": meta})).unwrap();
        assert_eq!(pod.metadata, full);
        // null and absent metadata read as empty.
        let pod: SlimPod = serde_json::from_value(json!({"metadata": null})).unwrap();
        assert_eq!(pod.metadata, ObjectMeta::default());
    }

    #[test]
    fn reads_what_the_views_and_logic_need_from_a_pod() {
        let pod: SlimPod = serde_json::from_value(pod_json()).unwrap();
        assert_eq!(pod.spec.node_name.as_deref(), Some("node-1"));
        assert_eq!(pod.spec.termination_grace_period_seconds, Some(30));
        assert_eq!(
            pod.spec.readiness_gates[0].condition_type,
            "InPlaceUpdateReady"
        );
        let cond = &pod.status.conditions[0];
        assert_eq!(cond.message.as_deref(), Some("idle"));
        assert!(cond.last_probe_time.is_some());
        let cs = &pod.status.container_statuses[0];
        assert_eq!(cs.container_id.as_deref(), Some("containerd://abc"));
        assert_eq!(cs.restart_count, 3);
        let last = cs
            .last_state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .unwrap();
        assert_eq!(
            (last.exit_code, last.message.as_deref()),
            (Some(1), Some("boom"))
        );
        assert!(last.finished_at.is_some());
        assert_eq!(pod.status.host_ip.as_deref(), Some("192.168.0.2"));
        assert_eq!(pod.status.pod_ip.as_deref(), Some("10.0.0.5"));
    }

    #[test]
    fn slim_pod_is_a_lossless_projection_of_a_full_pod() {
        // Every field SlimPod keeps reads back identically through k8s-openapi's Pod.
        let slim: SlimPod = serde_json::from_value(pod_json()).unwrap();
        let full: Pod = serde_json::from_value(serde_json::to_value(&slim).unwrap()).unwrap();
        let again: SlimPod = serde_json::from_value(serde_json::to_value(&full).unwrap()).unwrap();
        assert_eq!(again, slim);
    }

    #[test]
    fn ready_is_the_first_ready_condition_and_running_and_ready_adds_phase_and_deletion() {
        let pod = |phase: &str, conditions: serde_json::Value| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": "p"},
                "status": {"phase": phase, "conditions": conditions}}))
            .unwrap()
        };
        let ready = pod(
            "Running",
            json!([{"type": "PodScheduled", "status": "True"},
                   {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}]),
        );
        assert!(is_ready(&ready) && is_running_and_ready(&ready));
        let since = ready_condition(&ready).and_then(|c| c.last_transition_time.as_ref());
        assert_eq!(since.map(|t| t.0.as_second()), Some(1_735_689_600));
        assert!(!is_ready(&pod(
            "Running",
            json!([{"type": "Ready", "status": "False"}])
        )));
        assert!(!is_ready(&pod("Running", json!([]))));
        assert!(!is_ready(&Pod::default()));
        let pending = pod("Pending", json!([{"type": "Ready", "status": "True"}]));
        assert!(is_ready(&pending) && !is_running_and_ready(&pending));
        let mut deleting = ready.clone();
        deleting.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        assert!(is_ready(&deleting) && !is_running_and_ready(&deleting));
    }
}
