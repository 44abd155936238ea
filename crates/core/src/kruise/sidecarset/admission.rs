//! The SidecarSet admission hooks as the embedded API server calls them: SidecarSet
//! CREATE/UPDATE (mutating defaults + hashes, then validation) and pod CREATE (injection).

use k8s_openapi::api::core::v1::Pod;

use crate::kruise::admission::{Verdict, json_patch};

use super::{
    defaults::default_sidecar_set,
    inject::{InjectContext, inject_pod_create},
    validate::{ValidationContext, validate_sidecar_set},
};
use crate::api::sidecarset::SidecarSet;

/// The mutating step: the defaulted object with both hash annotations, and the JSON patch
/// from the request object to it.
///
/// Port of pkg/webhook/sidecarset/mutating/sidecarset_create_update_handler.go::Handle (v1.8.4).
pub fn mutate_sidecar_set(set: &SidecarSet) -> (SidecarSet, json_patch::Patch) {
    let mut out = set.clone();
    default_sidecar_set(&mut out);
    let patch = json_patch(set, &out);
    (out, patch)
}

/// The validating step: allowed, or the aggregated field errors. Upstream's handler turns the
/// error list into an error and answers `admission.Errored(500, ...)`, so a refused SidecarSet
/// is a 500 whose message is Go's aggregate (one error alone, several as `[e1, e2]`).
///
/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::Handle (v1.8.4).
pub fn admit_sidecar_set(set: &SidecarSet, ctx: &ValidationContext<'_>) -> Verdict {
    let errs = validate_sidecar_set(set, ctx);
    let joined: Vec<String> = errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    match joined.as_slice() {
        [] => Verdict::allow(),
        [one] => Verdict::deny(500, one.clone()),
        _ => Verdict::deny(500, format!("[{}]", joined.join(", "))),
    }
}

/// Pod CREATE: the verdict and, when some set was injected, the JSON patch to the pod.
///
/// Port of pkg/webhook/pod/mutating/sidecarset.go::sidecarsetMutatingPod as the pod webhook
/// answers it (v1.8.4).
pub fn admit_pod_create(
    pod: &Pod,
    ctx: &InjectContext<'_>,
) -> (Verdict, Option<json_patch::Patch>) {
    match inject_pod_create(pod, ctx) {
        Ok(Some(after)) => (Verdict::allow(), Some(json_patch(pod, &after))),
        Ok(None) => (Verdict::allow(), None),
        Err(e) => (Verdict::deny(500, e.to_string()), None),
    }
}
