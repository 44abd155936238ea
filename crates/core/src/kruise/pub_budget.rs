//! PodUnavailableBudget (policy.kruise.io/v1alpha1), ported sans-IO from Kruise v1.8.4: the
//! controller's status arithmetic ([`status`]), the pod admission decision for DELETE, eviction
//! and UPDATE ([`admission`]), the PUB's own create/update validation ([`validation`]) and the
//! per-pod predicates ([`pod`]); [`sync`] is the pass the embedded controller runs. The
//! embedded API server calls [`admission::pod_admission`] and [`validation::validate_pub`] as
//! validating admission hooks.

pub mod admission;
pub mod pod;
pub mod resize;
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

    /// The total replicas: the `pub.kruise.io/protect-total-replicas` override when it is set
    /// and not empty, else `workload_total` (what the workload resolution found).
    ///
    /// As GetPodsForPub reads it with `strconv.ParseInt(value, 10, 32)` and ignores the error, a
    /// value that is not a number counts as 0 and one out of range as the int32 limit of its
    /// sign (the webhook refuses such values, but a PUB stored before can carry one).
    pub fn total_replicas(&self, workload_total: i32) -> i32 {
        match self.annotation(PROTECT_TOTAL_REPLICAS_ANNOTATION) {
            Some(v) if !v.is_empty() => go_parse_int32(v),
            _ => workload_total,
        }
    }
}

/// Go's `strconv.ParseInt(s, 10, 32)` with the error dropped: an optional sign then decimal
/// digits; a syntax error gives 0, a range error the int32 limit of the sign. As Go does, an
/// overflow found before a bad character is a range error.
fn go_parse_int32(s: &str) -> i32 {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return 0;
    }
    let limit = if negative { i32::MIN } else { i32::MAX };
    // ParseUint(digits, 10, 32) stops with a range error past u32::MAX.
    let mut n: u64 = 0;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            return 0;
        }
        n = n * 10 + u64::from(c - b'0');
        if n > u64::from(u32::MAX) {
            return limit;
        }
    }
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    i32::try_from(if negative { -n } else { n }).unwrap_or(limit)
}
