//! The Rollout validating webhook (`vrollout.kb.io`, kruise-rollout's
//! `/validate-rollouts-kruise-io-rollout`) on CREATE and UPDATE of v1beta1 `rollouts` (never
//! `rollouts/status`, so approve and jump are never refused): the port's rules in
//! `kruise::rollout::controller::validate`, with the namespace's other Rollouts (conflict) and
//! the stored one (immutability while Progressing or Terminating) read from the store. A
//! refusal is a 422, as upstream's `admission.Errored(http.StatusUnprocessableEntity, ...)`.

use std::sync::Arc;

use super::{Hook, decode, list_typed};
use crate::api::rollout::Rollout;
use crate::kruise::rollout::controller::validate;
use crate::server::{AdmissionHook, AdmissionRequest, Operation, Store, Verdict};

/// The hook.
pub(super) fn hook(store: &Arc<Store>) -> Arc<dyn AdmissionHook> {
    let store = store.clone();
    Hook::shared(
        "vrollout.kb.io",
        "rollouts.kruise.io",
        "rollouts",
        move |req| {
            let writes = matches!(req.operation, Operation::Create | Operation::Update);
            // v1alpha1 objects have their own rules upstream (validate_v1alphal_rollout.go);
            // only v1beta1 is checked here.
            if !writes || !req.subresource.is_empty() || req.version != "v1beta1" {
                return Verdict::Allow;
            }
            admit(&store, req)
        },
    )
}

fn admit(store: &Store, req: &AdmissionRequest) -> Verdict {
    let (new, old) = match (
        decode::<Rollout>(req.object.as_ref()),
        decode::<Rollout>(req.old_object.as_ref()),
    ) {
        (Ok(Some(new)), Ok(old)) => (new, old),
        (Ok(None), _) => return Verdict::Allow,
        (Err(denied), _) | (_, Err(denied)) => return denied,
    };
    let others: Vec<Rollout> = list_typed(
        store,
        "rollouts.kruise.io/v1beta1",
        "Rollout",
        Some(&req.namespace),
    );
    let live = others
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(req.name.as_str()));
    let old = if req.operation == Operation::Update {
        old
    } else {
        None
    };
    match validate::admit(&new, old.as_ref(), live, &others) {
        Ok(()) => Verdict::Allow,
        Err(message) => Verdict::Deny { code: 422, message },
    }
}
