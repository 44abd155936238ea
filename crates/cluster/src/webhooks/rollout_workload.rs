//! Kruise Rollout's workload mutating webhook (`mutate-apps-kruise-io-v1alpha1-cloneset`,
//! `…-daemonset`, `mutate-apps-v1-statefulset`, `mutate-unified-workload` in
//! `config/webhook/manifests.yaml`): on UPDATE (never a subresource) of a CloneSet, Advanced
//! StatefulSet, native StatefulSet or Advanced DaemonSet carrying the label
//! `rollouts.kruise.io/workload-type` (the objectSelector), the port
//! (`kruise::rollout::batchrelease::intercept`) decides with the namespace's Rollouts whether
//! the Rollout takes the release over, and returns the object to admit.

use std::sync::Arc;

use serde_json::Value;

use super::{Hook, list_typed};
use crate::api::keys::ROLLOUT_WORKLOAD_TYPE;
use crate::api::rollout::Rollout;
use crate::kruise::rollout::batchrelease::intercept;
use crate::kruise::rollout::workload::TargetKind;
use crate::server::{AdmissionHook, AdmissionRequest, Operation, Store, Verdict};

/// The four hooks, one per workload resource, named like upstream's.
pub(super) fn hooks(store: &Arc<Store>) -> Vec<Arc<dyn AdmissionHook>> {
    [
        (
            "mcloneset.rollouts.kruise.io",
            "apps.kruise.io",
            "clonesets",
            TargetKind::CloneSet,
        ),
        (
            "mdaemonset.rollouts.kruise.io",
            "apps.kruise.io",
            "daemonsets",
            TargetKind::AdvancedDaemonSet,
        ),
        (
            "mstatefulset.rollouts.kruise.io",
            "apps",
            "statefulsets",
            TargetKind::StatefulSet,
        ),
        (
            "munifiedworklod.rollouts.kruise.io",
            "apps.kruise.io",
            "statefulsets",
            TargetKind::AdvancedStatefulSet,
        ),
    ]
    .into_iter()
    .map(|(name, group, resource, kind)| {
        let store = store.clone();
        Hook::shared(name, group, resource, move |req| admit(&store, kind, req))
    })
    .collect()
}

fn labelled(obj: Option<&Value>) -> bool {
    obj.and_then(|o| o.pointer("/metadata/labels"))
        .and_then(|l| l.get(ROLLOUT_WORKLOAD_TYPE))
        .is_some()
}

fn admit(store: &Store, kind: TargetKind, req: &AdmissionRequest) -> Verdict {
    if req.operation != Operation::Update || !req.subresource.is_empty() {
        return Verdict::Allow;
    }
    // The objectSelector: an UPDATE matches when the old or the new object has the label.
    if !labelled(req.object.as_ref()) && !labelled(req.old_object.as_ref()) {
        return Verdict::Allow;
    }
    let (Some(new), Some(old)) = (req.object.as_ref(), req.old_object.as_ref()) else {
        return Verdict::Allow;
    };
    let rollouts: Vec<Rollout> = list_typed(
        store,
        "rollouts.kruise.io/v1beta1",
        "Rollout",
        Some(req.namespace.as_str()),
    );
    match intercept(kind, old, new, &rollouts) {
        Some(mutated) if &mutated != new => Verdict::Mutate(mutated),
        _ => Verdict::Allow,
    }
}
