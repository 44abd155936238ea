//! `SlimPod`: the projection of a Pod that the views and the Kruise logic need, and nothing more,
//! in a compact form: the console holds one per pod, up to 100,000 of them.
//!
//! It deserializes straight from a Pod's JSON (unknown fields, `managedFields` among them, are
//! skipped without being built). Strings that repeat across pods (namespaces, label and
//! annotation keys and short values, condition types and reasons, images, node names, owners)
//! are interned ([`intern`]: one shared allocation each, bounded); strings unique to a pod
//! (name, UID, resourceVersion, IP, container IDs) are read once, never copied again (rows and
//! the store share them). Labels and annotations are sorted slices ([`StrMap`]), lists are boxed
//! slices. Serializing writes the kept fields back as a Pod's JSON (`apiVersion`/`kind` first).
//!
//! The watch reads pods as [`WatchedPod`] (a kube resource: the `ObjectMeta` kube-runtime's
//! watcher needs, beside the `SlimPod`), and the store keeps only the `SlimPod`.
//!
//! Also the readiness every layer asks of a whole Pod: [`is_ready`] (Kubernetes'
//! `podutil.IsPodReady`), [`ready_condition`] (since when) and [`is_running_and_ready`] (Kruise's
//! `util.IsRunningAndReady`).

pub mod intern;
pub mod strmap;
mod watched;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use intern::{Str, intern};
pub use strmap::StrMap;
pub use watched::WatchedPod;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct SlimPod {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: SlimPodMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: SlimPodSpec,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub status: SlimPodStatus,
}

impl k8s_openapi::Resource for SlimPod {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl Serialize for SlimPod {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        SlimPod::serialize(
            self,
            crate::api::resource::WithTypeMeta::new(s, "v1", "Pod"),
        )
    }
}

impl<'de> Deserialize<'de> for SlimPod {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SlimPod::deserialize(d)
    }
}

impl SlimPod {
    /// The pod's key in the store: (namespace, name).
    pub fn key(&self) -> (&str, &str) {
        (
            self.metadata.namespace.as_deref().unwrap_or_default(),
            self.metadata.name.as_deref().unwrap_or_default(),
        )
    }
}

/// What the console keeps of a pod's metadata: every `ObjectMeta` field but `managedFields`,
/// `selfLink` and `labels`/`annotations` as maps of their own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodMeta {
    #[serde(
        default,
        deserialize_with = "intern::opt_fresh",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Str>,
    #[serde(
        default,
        deserialize_with = "intern::opt_fresh",
        skip_serializing_if = "Option::is_none"
    )]
    pub uid: Option<Str>,
    #[serde(
        default,
        deserialize_with = "intern::opt_fresh",
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_version: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "StrMap::is_empty")]
    pub labels: StrMap,
    #[serde(default, skip_serializing_if = "StrMap::is_empty")]
    pub annotations: StrMap,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "<[_]>::is_empty"
    )]
    pub owner_references: Box<[SlimOwnerReference]>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "<[_]>::is_empty"
    )]
    pub finalizers: Box<[Str]>,
}

impl SlimPodMeta {
    /// The controller ownerReference, if any.
    pub fn controller(&self) -> Option<&SlimOwnerReference> {
        self.owner_references
            .iter()
            .find(|r| r.controller == Some(true))
    }

    /// As k8s-openapi's `ObjectMeta` (a copy), for code written against whole objects.
    pub fn to_object_meta(&self) -> ObjectMeta {
        let s = |v: &Option<Str>| v.as_ref().map(|v| v.to_string());
        ObjectMeta {
            name: s(&self.name),
            namespace: s(&self.namespace),
            uid: s(&self.uid),
            resource_version: s(&self.resource_version),
            generate_name: s(&self.generate_name),
            generation: self.generation,
            creation_timestamp: self.creation_timestamp.clone(),
            deletion_timestamp: self.deletion_timestamp.clone(),
            deletion_grace_period_seconds: self.deletion_grace_period_seconds,
            labels: self.labels.to_btree_opt(),
            annotations: self.annotations.to_btree_opt(),
            owner_references: (!self.owner_references.is_empty()).then(|| {
                self.owner_references
                    .iter()
                    .map(SlimOwnerReference::to_owner_reference)
                    .collect()
            }),
            finalizers: (!self.finalizers.is_empty())
                .then(|| self.finalizers.iter().map(|f| f.to_string()).collect()),
            managed_fields: None,
            self_link: None,
        }
    }
}

/// From k8s-openapi's `ObjectMeta` (fixtures and tests build pods this way); `managedFields`
/// and `selfLink` are dropped.
impl From<ObjectMeta> for SlimPodMeta {
    fn from(m: ObjectMeta) -> Self {
        let s = |v: Option<String>| v.map(Str::from);
        let own = |v: Option<String>| v.map(|v| Str::new(&v));
        SlimPodMeta {
            name: own(m.name),
            namespace: s(m.namespace),
            uid: own(m.uid),
            resource_version: own(m.resource_version),
            generate_name: s(m.generate_name),
            generation: m.generation,
            creation_timestamp: m.creation_timestamp,
            deletion_timestamp: m.deletion_timestamp,
            deletion_grace_period_seconds: m.deletion_grace_period_seconds,
            labels: m.labels.into(),
            annotations: m.annotations.into(),
            owner_references: m
                .owner_references
                .unwrap_or_default()
                .into_iter()
                .map(|r| SlimOwnerReference {
                    api_version: r.api_version.into(),
                    kind: r.kind.into(),
                    name: r.name.into(),
                    uid: r.uid.into(),
                    controller: r.controller,
                    block_owner_deletion: r.block_owner_deletion,
                })
                .collect(),
            finalizers: m
                .finalizers
                .unwrap_or_default()
                .into_iter()
                .map(Str::from)
                .collect(),
        }
    }
}

/// An ownerReference, its strings shared by every pod of the owner.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimOwnerReference {
    pub api_version: Str,
    pub kind: Str,
    pub name: Str,
    pub uid: Str,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

impl SlimOwnerReference {
    pub fn to_owner_reference(&self) -> OwnerReference {
        OwnerReference {
            api_version: self.api_version.to_string(),
            kind: self.kind.to_string(),
            name: self.name.to_string(),
            uid: self.uid.to_string(),
            controller: self.controller,
            block_owner_deletion: self.block_owner_deletion,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<Str>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub containers: Box<[SlimContainer]>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "<[_]>::is_empty"
    )]
    pub init_containers: Box<[SlimContainer]>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "<[_]>::is_empty"
    )]
    pub readiness_gates: Box<[SlimReadinessGate]>,
    /// Default grace period for stopping containers (CRR falls back to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainer {
    pub name: Str,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub image: Str,
    /// The CPU and memory requests and limits, when any is set (the usage columns show them
    /// beside the usage); boxed so a container without them costs one pointer.
    #[serde(
        default,
        deserialize_with = "SlimResources::none_if_empty",
        skip_serializing_if = "Option::is_none"
    )]
    pub resources: Option<Box<SlimResources>>,
}

/// A container's `resources`, of which only CPU and memory are kept (quantity strings,
/// interned: they repeat across the pods of a workload).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimResources {
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "CpuMemory::is_empty"
    )]
    pub requests: CpuMemory,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "CpuMemory::is_empty"
    )]
    pub limits: CpuMemory,
}

impl SlimResources {
    fn none_if_empty<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Box<SlimResources>>, D::Error> {
        let r: Option<SlimResources> = Option::deserialize(d)?;
        Ok(r.filter(|r| !r.requests.is_empty() || !r.limits.is_empty())
            .map(Box::new))
    }
}

/// The `cpu` and `memory` entries of a resource list (a map of quantities in the Pod's schema,
/// of which the other keys are dropped).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuMemory {
    #[serde(
        default,
        deserialize_with = "quantity",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu: Option<Str>,
    #[serde(
        default,
        deserialize_with = "quantity",
        skip_serializing_if = "Option::is_none"
    )]
    pub memory: Option<Str>,
}

/// A quantity as a string, or as the number a quantity may also be written as (`cpu: 2`).
fn quantity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Str>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum IntOrString {
        Str(Str),
        Int(i64),
        Float(f64),
    }
    Ok(match Option::<IntOrString>::deserialize(d)? {
        None => None,
        Some(IntOrString::Str(s)) => Some(s),
        Some(IntOrString::Int(n)) => Some(crate::api::pod::intern(&n.to_string())),
        Some(IntOrString::Float(n)) => Some(crate::api::pod::intern(&n.to_string())),
    })
}

impl CpuMemory {
    pub fn is_empty(&self) -> bool {
        self.cpu.is_none() && self.memory.is_none()
    }
}

impl JsonSchema for CpuMemory {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CpuMemory".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <std::collections::BTreeMap<
            String,
            k8s_openapi::apimachinery::pkg::api::resource::Quantity,
        >>::json_schema(generator)
    }
    fn inline_schema() -> bool {
        true
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimReadinessGate {
    pub condition_type: Str,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Str>,
    /// Serialized as `podIP` (camelCase would give `podIp`, which Kubernetes does not use).
    #[serde(
        default,
        rename = "podIP",
        deserialize_with = "intern::opt_fresh",
        skip_serializing_if = "Option::is_none"
    )]
    pub pod_ip: Option<Str>,
    #[serde(default, rename = "hostIP", skip_serializing_if = "Option::is_none")]
    pub host_ip: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "<[_]>::is_empty"
    )]
    pub conditions: Box<[SlimPodCondition]>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "<[_]>::is_empty"
    )]
    pub container_statuses: Box<[SlimContainerStatus]>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimPodCondition {
    #[serde(rename = "type")]
    pub type_: Str,
    pub status: Str,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Str>,
    /// PodProbeMarker writes the probe output here; KruisePodReady holds its holders as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlimContainerStatus {
    pub name: Str,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub ready: bool,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub restart_count: i32,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub image: Str,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        rename = "imageID"
    )]
    pub image_id: Str,
    /// `<runtime>://<id>`; CRR records it to tell a recreated container from the old one.
    #[serde(
        default,
        rename = "containerID",
        deserialize_with = "intern::opt_fresh",
        skip_serializing_if = "Option::is_none"
    )]
    pub container_id: Option<Str>,
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
    pub reason: Option<Str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Str>,
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
mod tests;
