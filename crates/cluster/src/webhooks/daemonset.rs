//! `vdaemonset.kb.io`: the Advanced DaemonSet validating webhook, on the port in
//! `crate::kruise::daemonset::validate` (which applies the mutating webhook's defaults first,
//! as the real API server runs `mdaemonset.kb.io` before it). CREATE and UPDATE of the object
//! itself; a refused create is a 500 and a refused update a 422, as upstream answers them.

use std::sync::Arc;

use super::{Hook, op_str, verdict};
use crate::kruise::{KruiseVersion, daemonset::validate};
use crate::server::{AdmissionHook, Verdict};

/// The hook, deciding with `version`'s rules.
pub(super) fn hook(version: KruiseVersion) -> Arc<dyn AdmissionHook> {
    Hook::shared(
        "vdaemonset.kb.io",
        "apps.kruise.io",
        "daemonsets",
        move |req| {
            if !req.subresource.is_empty() {
                return Verdict::Allow;
            }
            let v = validate::admit(
                op_str(req.operation),
                &req.version,
                req.object.as_ref(),
                req.old_object.as_ref(),
                version,
            );
            verdict(v.allowed, v.code, v.message.as_deref())
        },
    )
}
