//! The CloneSet validating webhook (`vcloneset.kb.io`) on CREATE and UPDATE of `clonesets`
//! (not its subresources): the object as upstream's mutating webhook would default it, checked
//! by the port in `kruise::cloneset::validate` for the cluster's Kruise version. Pods named in
//! `podsToDelete` are looked up in the store. Deletion protection (DELETE) is the hook of the
//! same name in `protection.rs`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::{Hook, decode};
use crate::api::CloneSet;
use crate::kruise::{
    KruiseVersion,
    cloneset::validate::{Request, admit, defaulted},
};
use crate::server::{AdmissionHook, AdmissionRequest, Operation, Store, Verdict};

/// The hook, deciding with `version`'s rules.
pub(super) fn hook(store: &Arc<Store>, version: KruiseVersion) -> Arc<dyn AdmissionHook> {
    let store = store.clone();
    Hook::shared(
        "vcloneset.kb.io",
        "apps.kruise.io",
        "clonesets",
        move |req| {
            let writes = matches!(req.operation, Operation::Create | Operation::Update);
            // Upstream's webhook serves v1alpha1 only (v1beta1 is main's, not a tag's).
            if !writes || !req.subresource.is_empty() || req.version != "v1alpha1" {
                return Verdict::Allow;
            }
            validate(&store, version, req)
        },
    )
}

fn selector_set(object: Option<&Value>) -> bool {
    object
        .and_then(|o| o.pointer("/spec/selector"))
        .is_some_and(|s| !s.is_null())
}

fn validate(store: &Store, version: KruiseVersion, req: &AdmissionRequest) -> Verdict {
    let (cs, old) = match (
        decode::<CloneSet>(req.object.as_ref()),
        decode::<CloneSet>(req.old_object.as_ref()),
    ) {
        (Ok(Some(cs)), Ok(old)) => (defaulted(&cs), old.as_ref().map(defaulted)),
        (Ok(None), _) => return Verdict::Allow,
        (Err(denied), _) | (_, Err(denied)) => return denied,
    };
    if req.operation == Operation::Update && old.is_none() {
        return Verdict::Allow;
    }
    let ns = req.namespace.clone();
    let pods = |name: &str| -> Option<Pod> {
        store
            .get_value("v1", "Pod", &ns, name)
            .and_then(|v| serde_json::from_value(v).ok())
    };
    let request = Request {
        cs: &cs,
        old: old.as_ref(),
        selector_set: selector_set(req.object.as_ref()),
        version,
        pods: &pods,
    };
    let (verdict, _) = admit(&request);
    super::verdict(verdict.allowed, verdict.code, verdict.message.as_deref())
}
