//! The PUB pod admission decision (`pkg/webhook/pod/validating/pod_unavailable_budget.go` and
//! `pkg/control/pubcontrol/pub_control_utils.go`, v1.8.4 and v1.9.0).

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::{
    NO_PROTECT_ANNOTATION, PROTECT_OPERATIONS_ANNOTATION, PodUnavailableBudget,
    RELATED_PUB_ANNOTATION,
    pod::{is_pod_ready, is_pod_state_consistent, is_pod_unavailable_changed},
    resize::can_resize_inplace,
};
use crate::kruise::{FeatureGates, KruiseVersion, admission::Verdict};

/// Max entries of `disruptedPods` + `unavailablePods` (`MaxUnavailablePodSize`).
pub const MAX_UNAVAILABLE_POD_SIZE: usize = 2000;

/// The operation a PUB guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PubOperation {
    /// Pod update (spec change or unavailable label added).
    Update,
    /// Pod deletion.
    Delete,
    /// Pod eviction (CREATE on `pods/eviction`).
    Evict,
    /// v1.9.0: a pod update that only resizes container resources in place
    /// ([`super::resize::can_resize_inplace`]).
    Resize,
}

impl PubOperation {
    /// The name used in `kruise.io/pub-protect-operations`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
            Self::Evict => "EVICT",
            Self::Resize => "RESIZE",
        }
    }
}

/// A pod admission request, as plain data.
#[derive(Debug, Clone, Copy)]
pub struct PodAdmissionRequest<'a> {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'a str,
    /// `""` or a subresource such as `eviction`.
    pub sub_resource: &'a str,
    /// The request (or the eviction's delete options) is a dry run.
    pub dry_run: bool,
    /// UPDATE: the pod before; DELETE: the pod being deleted.
    pub old_pod: Option<&'a Pod>,
    /// UPDATE: the pod after.
    pub new_pod: Option<&'a Pod>,
    /// Eviction: the pod read from the cluster.
    pub pod: Option<&'a Pod>,
}

fn pod_annotation<'a>(pod: &'a Pod, key: &str) -> &'a str {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map_or("", String::as_str)
}

/// The protected operations are those of `kruise.io/pub-protect-operations`, or DELETE, UPDATE
/// and EVICT when it is absent or empty. Unless the gate `InPlacePodVerticalScaling` is on, a
/// protected UPDATE also protects RESIZE (v1.9.0; for the v1.8.4 operations the answer is the
/// same as v1.8.4's).
///
/// Port of pkg/control/pubcontrol/pub_control_utils.go::isNeedPubProtection (v1.9.0).
pub fn is_need_pub_protection(
    gates: &FeatureGates,
    pub_: &PodUnavailableBudget,
    operation: PubOperation,
) -> bool {
    let mut ops: Vec<&str> = match pub_.annotation(PROTECT_OPERATIONS_ANNOTATION) {
        None | Some("") => vec!["DELETE", "UPDATE", "EVICT"],
        Some(ops) => ops.split(',').collect(),
    };
    if !gates.enabled("InPlacePodVerticalScaling") && ops.contains(&"UPDATE") {
        ops.push("RESIZE");
    }
    ops.contains(&operation.as_str())
}

/// Port of pkg/control/pubcontrol/pub_control_utils.go::checkAndDecrement (v1.8.4).
fn check_and_decrement(
    pod_name: &str,
    pub_: &mut PodUnavailableBudget,
    operation: PubOperation,
    now: &str,
) -> Result<(), String> {
    let forbidden = |why: &str| {
        format!(
            "podunavailablebudget.policy.kruise.io \"{}\" is forbidden: {why}",
            pub_.name()
        )
    };
    if pub_.status.unavailable_allowed <= 0 {
        return Err(forbidden("pub unavailable allowed is negative"));
    }
    if pub_.status.disrupted_pods.len() + pub_.status.unavailable_pods.len()
        > MAX_UNAVAILABLE_POD_SIZE
    {
        return Err(forbidden(
            "DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller",
        ));
    }
    pub_.status.unavailable_allowed -= 1;
    // upstream records only UPDATE as unavailable; RESIZE, like DELETE and EVICT, as disrupted
    let map = match operation {
        PubOperation::Update => &mut pub_.status.unavailable_pods,
        PubOperation::Delete | PubOperation::Evict | PubOperation::Resize => {
            &mut pub_.status.disrupted_pods
        }
    };
    map.insert(pod_name.to_owned(), now.to_owned());
    Ok(())
}

/// Port of pkg/control/pubcontrol/pub_control_utils.go::PodUnavailableBudgetValidatePod
/// (v1.8.4).
///
/// `pub_` is the PUB the pod's `kruise.io/related-pub` annotation names in the pod's namespace
/// (None when not found; a PUB of another name or namespace is treated as not found).
/// On an allowed, non-dry-run request the PUB's status is updated in place (one fewer
/// unavailable allowed, the pod recorded with time `now`); a denial or a dry run leaves it
/// untouched.
pub fn validate_pod(
    pod: &Pod,
    operation: PubOperation,
    dry_run: bool,
    pub_: Option<&mut PodUnavailableBudget>,
    now: &str,
) -> Verdict {
    validate_pod_gated(&FeatureGates::new(), pod, operation, dry_run, pub_, now)
}

/// [`validate_pod`] with the feature gates that decide whether RESIZE is protected.
pub fn validate_pod_gated(
    gates: &FeatureGates,
    pod: &Pod,
    operation: PubOperation,
    dry_run: bool,
    pub_: Option<&mut PodUnavailableBudget>,
    now: &str,
) -> Verdict {
    if pod_annotation(pod, NO_PROTECT_ANNOTATION) == "true" {
        return Verdict::allow();
    }
    if !is_pod_ready(pod) || !is_pod_state_consistent(pod) {
        return Verdict::allow();
    }
    // GetPubForPod: the PUB the annotation names, in the pod's namespace.
    let related = pod_annotation(pod, RELATED_PUB_ANNOTATION);
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let Some(pub_) = pub_.filter(|p| {
        p.name() == related && p.metadata.namespace.as_deref().unwrap_or_default() == namespace
    }) else {
        return Verdict::allow();
    };
    if pub_.status.desired_available == 0 {
        return Verdict::allow();
    }
    if !is_need_pub_protection(gates, pub_, operation) {
        return Verdict::allow();
    }
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    if pub_.status.unavailable_pods.contains_key(name)
        || pub_.status.disrupted_pods.contains_key(name)
    {
        return Verdict::allow();
    }
    let mut clone = pub_.clone();
    if let Err(message) = check_and_decrement(name, &mut clone, operation, now) {
        return Verdict::deny(403, message);
    }
    if !dry_run {
        *pub_ = clone;
    }
    Verdict::allow()
}

/// Port of pkg/webhook/pod/validating/pod_unavailable_budget.go::podUnavailableBudgetValidatingPod
/// (v1.8.4), gated as the pod webhook gates it.
///
/// * DELETE (no subresource) and CREATE on `eviction` need `PodUnavailableBudgetDeleteGate`;
///   UPDATE needs `PodUnavailableBudgetUpdateGate` and is only checked when the new pod names a
///   PUB and the change may cause unavailability. The old pod is the one judged.
/// * Other requests are allowed.
///
/// v1.9.0: an UPDATE that only resizes in place ([`can_resize_inplace`]) is checked as RESIZE.
///
/// Denials are 403 with upstream's message; see [`validate_pod`] for the status bookkeeping.
pub fn pod_admission(
    version: KruiseVersion,
    gates: &FeatureGates,
    request: &PodAdmissionRequest<'_>,
    pub_: Option<&mut PodUnavailableBudget>,
    now: &str,
) -> Verdict {
    let (check_pod, operation) = match request.operation {
        "UPDATE" => {
            if !gates.enabled("PodUnavailableBudgetUpdateGate") {
                return Verdict::allow();
            }
            let Some(new_pod) = request.new_pod else {
                return Verdict::allow();
            };
            if pod_annotation(new_pod, RELATED_PUB_ANNOTATION).is_empty() {
                return Verdict::allow();
            }
            let resize = version == KruiseVersion::V1_9
                && request
                    .old_pod
                    .is_some_and(|old| can_resize_inplace(old, new_pod));
            if !is_pod_unavailable_changed(request.old_pod, Some(new_pod)) {
                return Verdict::allow();
            }
            let op = if resize {
                PubOperation::Resize
            } else {
                PubOperation::Update
            };
            (request.old_pod, op)
        }
        "DELETE" => {
            if !gates.enabled("PodUnavailableBudgetDeleteGate") || !request.sub_resource.is_empty()
            {
                return Verdict::allow();
            }
            (request.old_pod, PubOperation::Delete)
        }
        "CREATE" => {
            if request.sub_resource != "eviction"
                || !gates.enabled("PodUnavailableBudgetDeleteGate")
            {
                return Verdict::allow();
            }
            (request.pod, PubOperation::Evict)
        }
        _ => return Verdict::allow(),
    };
    let Some(check_pod) = check_pod else {
        return Verdict::deny(400, "the request carries no pod to check");
    };
    if pod_annotation(check_pod, RELATED_PUB_ANNOTATION).is_empty() {
        return Verdict::allow();
    }
    validate_pod_gated(gates, check_pod, operation, request.dry_run, pub_, now)
}

/// [`pod_admission`] on raw admission objects, for the embedded API server.
///
/// `old_object`/`object` are the request's objects (DELETE carries the pod in `old_object`,
/// UPDATE both); `evicted_pod` is the pod an eviction names, read from the store. A pod that does
/// not decode is a 400.
#[allow(clippy::too_many_arguments)]
pub fn pod_admission_json(
    version: KruiseVersion,
    gates: &FeatureGates,
    operation: &str,
    sub_resource: &str,
    dry_run: bool,
    old_object: Option<&Value>,
    object: Option<&Value>,
    evicted_pod: Option<&Value>,
    pub_: Option<&mut PodUnavailableBudget>,
    now: &str,
) -> Verdict {
    let decode = |v: Option<&Value>| -> Result<Option<Pod>, String> {
        v.filter(|v| !v.is_null())
            .map(|v| serde_json::from_value::<Pod>(v.clone()).map_err(|e| e.to_string()))
            .transpose()
    };
    let pods = (decode(old_object), decode(object), decode(evicted_pod));
    let (old_pod, new_pod, pod) = match pods {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Verdict::deny(400, e),
    };
    let request = PodAdmissionRequest {
        operation,
        sub_resource,
        dry_run,
        old_pod: old_pod.as_ref(),
        new_pod: new_pod.as_ref(),
        pod: pod.as_ref(),
    };
    pod_admission(version, gates, &request, pub_, now)
}
