//! PodUnavailableBudget (policy.kruise.io/v1alpha1), ported sans-IO from Kruise v1.8.4: the
//! controller's status arithmetic ([`status`]), the pod admission decision for DELETE, eviction
//! and UPDATE ([`admission`]), the PUB's own create/update validation ([`validation`]) and the
//! per-pod predicates ([`pod`]); [`sync`] is the pass the embedded controller runs. The
//! embedded API server calls [`admission::pod_admission`] and [`validation::validate_pub`] as
//! validating admission hooks.

pub mod admission;
pub mod pod;
pub mod resolve;
pub mod status;
pub mod sync;
pub mod validation;

#[cfg(test)]
mod tests;

pub use crate::api::common::TargetReference;
pub use crate::api::podunavailablebudget::{
    PodUnavailableBudget, PodUnavailableBudgetSpec, PodUnavailableBudgetStatus,
};
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
