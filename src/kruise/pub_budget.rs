//! PodUnavailableBudget (policy.kruise.io/v1alpha1), ported sans-IO from Kruise v1.8.4: the
//! controller's status arithmetic ([`status`]), the pod admission decision for DELETE, eviction
//! and UPDATE ([`admission`]), the PUB's own create/update validation ([`validation`]) and the
//! per-pod predicates ([`pod`]). The embedded API server calls [`admission::pod_admission`] and
//! [`validation::validate_pub`] as validating admission hooks.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, ObjectMeta},
    util::intstr::IntOrString,
};
use serde::{Deserialize, Serialize};

pub mod admission;
pub mod pod;
pub mod resolve;
pub mod status;
pub mod validation;

#[cfg(test)]
mod tests;

pub use admission::{PodAdmissionRequest, PubOperation, pod_admission, pod_admission_json};
pub use pod::{is_pod_ready, is_pod_state_consistent, is_pod_unavailable_changed};
pub use status::{PriorRecords, PubPod, PubStatusCalc, desired_available, pub_status};
pub use validation::{admit_pub, selector_loose_overlap, validate_pub};

/// Pod annotation naming the PUB that protects the pod.
pub const RELATED_PUB_ANNOTATION: &str = "kruise.io/related-pub";
/// Pod annotation exempting the pod from PUB checks (`"true"`).
pub const NO_PROTECT_ANNOTATION: &str = "pub.kruise.io/no-protect";
/// PUB annotation listing the protected operations (`DELETE,UPDATE,EVICT`).
pub const PROTECT_OPERATIONS_ANNOTATION: &str = "kruise.io/pub-protect-operations";
/// PUB annotation overriding the total replica count.
pub const PROTECT_TOTAL_REPLICAS_ANNOTATION: &str = "pub.kruise.io/protect-total-replicas";

/// `spec.targetRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetReference {
    /// API version of the workload (`apps/v1`).
    #[serde(default)]
    pub api_version: String,
    /// Kind of the workload.
    #[serde(default)]
    pub kind: String,
    /// Name of the workload.
    #[serde(default)]
    pub name: String,
}

/// `spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PubSpec {
    /// Pod selector (exclusive with `targetRef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Workload reference (exclusive with `selector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<TargetReference>,
    /// Max unavailable pods (exclusive with `minAvailable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Min available pods (exclusive with `maxUnavailable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
}

/// `status`. Times in the two maps are RFC3339 strings as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PubStatus {
    /// `metadata.generation` last acted on.
    #[serde(default)]
    pub observed_generation: i64,
    /// Pods admitted for deletion/eviction, by name, with the admission time.
    #[serde(default)]
    pub disrupted_pods: BTreeMap<String, String>,
    /// Pods admitted for an update, by name, with the admission time.
    #[serde(default)]
    pub unavailable_pods: BTreeMap<String, String>,
    /// How many more pods may become unavailable.
    #[serde(default)]
    pub unavailable_allowed: i32,
    /// Available pods counted.
    #[serde(default)]
    pub current_available: i32,
    /// Pods that must stay available.
    #[serde(default)]
    pub desired_available: i32,
    /// Replicas the budget is computed over.
    #[serde(default)]
    pub total_replicas: i32,
}

/// A PodUnavailableBudget object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudget {
    /// Object metadata (name, namespace, annotations).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: PubSpec,
    /// Status.
    #[serde(default)]
    pub status: PubStatus,
}

impl PodUnavailableBudget {
    /// The PUB's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// An annotation of the PUB.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata
            .annotations
            .as_ref()?
            .get(key)
            .map(String::as_str)
    }

    /// The total replicas: the `pub.kruise.io/protect-total-replicas` override when it parses as
    /// an int32, else `workload_total` (what the workload resolution found).
    pub fn total_replicas(&self, workload_total: i32) -> i32 {
        self.annotation(PROTECT_TOTAL_REPLICAS_ANNOTATION)
            .and_then(|v| v.parse::<i32>().ok())
            .unwrap_or(workload_total)
    }
}
