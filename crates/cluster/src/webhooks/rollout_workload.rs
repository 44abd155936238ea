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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kruise::KruiseVersion;

    fn cloneset(image: &str, labelled: bool) -> Value {
        let mut cs = json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "main", "image": image}]}}}
        });
        if labelled {
            cs["metadata"]["labels"] = json!({ROLLOUT_WORKLOAD_TYPE: "cloneset"});
        }
        cs
    }

    fn request(old: Value, new: Value, subresource: &str) -> AdmissionRequest {
        AdmissionRequest {
            operation: Operation::Update,
            group: "apps.kruise.io".into(),
            version: "v1alpha1".into(),
            kind: "CloneSet".into(),
            resource: "clonesets".into(),
            subresource: subresource.into(),
            namespace: "default".into(),
            name: "web".into(),
            dry_run: false,
            object: Some(new),
            old_object: Some(old),
        }
    }

    #[test]
    fn only_a_labelled_workload_updated_outside_subresources_is_intercepted() {
        let store = Store::new(KruiseVersion::V1_9).unwrap();
        store
            .create(json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                "metadata": {"name": "rollout-web", "namespace": "default"},
                "spec": {"workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
                         "strategy": {"canary": {"steps": [{"replicas": 1}]}}}
            }))
            .unwrap();
        let hit = admit(
            &store,
            TargetKind::CloneSet,
            &request(cloneset("v1", true), cloneset("v2", true), ""),
        );
        let Verdict::Mutate(obj) = hit else {
            panic!("expected a mutation, got {hit:?}")
        };
        assert_eq!(obj["spec"]["updateStrategy"]["partition"], "100%");
        assert_eq!(
            admit(
                &store,
                TargetKind::CloneSet,
                &request(cloneset("v1", false), cloneset("v2", false), "")
            ),
            Verdict::Allow,
            "outside the objectSelector"
        );
        assert_eq!(
            admit(
                &store,
                TargetKind::CloneSet,
                &request(cloneset("v1", true), cloneset("v2", true), "scale")
            ),
            Verdict::Allow,
            "a subresource is never intercepted"
        );
    }
}
