//! PodUnavailableBudget on pods: validating hooks for pod DELETE (`vpod.kb.io`), eviction
//! (`vpodeviction.kb.io`) and UPDATE (when `PodUnavailableBudgetUpdateGate` is on). The adapter
//! finds the PUB guarding the pod (its `kruise.io/related-pub` annotation, else a PUB of the
//! namespace whose selector or targetRef covers it, as upstream's pod mutating webhook would have
//! annotated it; [`annotating`] is that mutating step at pod CREATE), runs the port's decision and, on an allowed non-dryRun request, writes the PUB
//! status the port returns (one fewer `unavailableAllowed`, the pod in `disruptedPods` or
//! `unavailablePods`) through the store, as upstream's webhook does. The PUB objects themselves
//! are validated by `vpodunavailablebudget.kb.io` (which accepts `RESIZE` in
//! `kruise.io/pub-protect-operations` from v1.9.0).

use std::{collections::BTreeMap, sync::Arc};

use serde_json::{Value, json};

use super::{Hook, op_str, verdict};
use crate::api::kinds;
use crate::kruise::{
    FeatureGates,
    pub_budget::{PodUnavailableBudget, admission::pod_admission_json, admit_pub},
    selector,
};
use crate::server::{AdmissionHook, AdmissionRequest, Operation, Store, Verdict, meta};

const RELATED_PUB: &str = "kruise.io/related-pub";

pub(super) fn hooks(store: &Arc<Store>, gates: &FeatureGates) -> Vec<Arc<dyn AdmissionHook>> {
    let hook = |name: &str, eviction: bool| {
        let store = store.clone();
        let gates = gates.clone();
        Hook::shared(name, "", "pods", move |req| {
            if (req.subresource == "eviction") != eviction {
                return Verdict::Allow;
            }
            admit(&store, &gates, req)
        })
    };
    let budgets = {
        let store = store.clone();
        let gates = gates.clone();
        Hook::shared(
            "vpodunavailablebudget.kb.io",
            "policy.kruise.io",
            "podunavailablebudgets",
            move |req| admit_budget(&store, &gates, req),
        )
    };
    vec![
        hook("vpod.kb.io", false),
        hook("vpodeviction.kb.io", true),
        budgets,
    ]
}

/// The PUB validating webhook (`vpodunavailablebudget.kb.io`) on CREATE/UPDATE of the object
/// itself: the port's field checks, against the other PUBs of its namespace.
fn admit_budget(store: &Store, gates: &FeatureGates, req: &AdmissionRequest) -> Verdict {
    if !matches!(req.operation, Operation::Create | Operation::Update)
        || !req.subresource.is_empty()
    {
        return Verdict::Allow;
    }
    let Some(object) = req.object.as_ref() else {
        return Verdict::Allow;
    };
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let others: Vec<PodUnavailableBudget> = super::list_typed::<PodUnavailableBudget>(
        store,
        "policy.kruise.io/v1alpha1",
        "PodUnavailableBudget",
        Some(&req.namespace),
    )
    .into_iter()
    .filter(|p| p.metadata.name.as_deref() != Some(name))
    .collect();
    let v = admit_pub(
        store.kruise_version(),
        gates,
        op_str(req.operation),
        object,
        req.old_object.as_ref(),
        &others,
    );
    verdict(v.allowed, v.code, v.message.as_deref())
}

/// The pod mutating webhook's PUB step at pod CREATE: annotate the pod with the PUB guarding it
/// (`kruise.io/related-pub`) when either PUB gate is on.
pub(super) fn annotating(store: &Arc<Store>, gates: &FeatureGates) -> Arc<dyn AdmissionHook> {
    let store = store.clone();
    let on = gates.enabled("PodUnavailableBudgetDeleteGate")
        || gates.enabled("PodUnavailableBudgetUpdateGate");
    Hook::shared("mpod.kb.io", "", "pods", move |req| {
        if !on || req.operation != Operation::Create || !req.subresource.is_empty() {
            return Verdict::Allow;
        }
        let Some(mut pod) = req.object.clone() else {
            return Verdict::Allow;
        };
        if !pod["metadata"]["annotations"][RELATED_PUB].is_null() {
            return Verdict::Allow;
        }
        if pod["metadata"]["namespace"]
            .as_str()
            .is_none_or(str::is_empty)
        {
            pod["metadata"]["namespace"] = json!(req.namespace);
        }
        let Some((_, budget)) = find_pub(&store, &pod) else {
            return Verdict::Allow;
        };
        let Some(m) = meta::meta_mut(&mut pod) else {
            return Verdict::Allow;
        };
        let annotations = m.entry("annotations").or_insert_with(|| json!({}));
        match annotations.as_object_mut() {
            Some(a) => {
                a.insert(RELATED_PUB.into(), json!(budget.name()));
                Verdict::Mutate(pod)
            }
            None => Verdict::Allow,
        }
    })
}

fn admit(store: &Store, gates: &FeatureGates, req: &AdmissionRequest) -> Verdict {
    let relevant = match req.operation {
        Operation::Delete => req.subresource.is_empty(),
        Operation::Create => req.subresource == "eviction",
        Operation::Update => req.subresource.is_empty(),
    };
    let Some(judged) = req.old_object.as_ref().filter(|_| relevant) else {
        return Verdict::Allow;
    };
    let Some((pub_value, mut budget)) = find_pub(store, judged) else {
        return Verdict::Allow;
    };
    let name = budget.name().to_string();
    let annotate = |v: Option<&Value>| {
        v.cloned().map(|mut v| {
            if let Some(m) = meta::meta_mut(&mut v) {
                let annotations = m.entry("annotations").or_insert_with(|| json!({}));
                if let Some(a) = annotations.as_object_mut() {
                    a.entry(RELATED_PUB).or_insert_with(|| json!(name));
                }
            }
            v
        })
    };
    let (old, new, evicted) = match req.operation {
        Operation::Create => (None, None, annotate(Some(judged))),
        Operation::Update => (annotate(Some(judged)), annotate(req.object.as_ref()), None),
        Operation::Delete => (annotate(Some(judged)), None, None),
    };
    let before = budget.status.clone();
    let now = meta::now();
    let v = pod_admission_json(
        store.kruise_version(),
        gates,
        op_str(req.operation),
        &req.subresource,
        req.dry_run,
        old.as_ref(),
        new.as_ref(),
        evicted.as_ref(),
        Some(&mut budget),
        &now,
    );
    if !v.allowed {
        return verdict(false, v.code, v.message.as_deref());
    }
    if !req.dry_run && budget.status != before {
        let mut updated = pub_value;
        match serde_json::to_value(&budget.status) {
            Ok(status) => updated["status"] = status,
            Err(e) => return deny_internal(format!("cannot encode the PUB status: {e}")),
        }
        if let Err(e) = store.update(updated) {
            return deny_internal(format!(
                "cannot update PodUnavailableBudget {name}: {}",
                e.message
            ));
        }
    }
    Verdict::Allow
}

fn deny_internal(message: String) -> Verdict {
    Verdict::Deny { code: 500, message }
}

/// The PUB guarding `pod`: the one its annotation names, else the first of its namespace whose
/// selector matches its labels or whose targetRef is its owning workload.
fn find_pub(store: &Store, pod: &Value) -> Option<(Value, PodUnavailableBudget)> {
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let decode = |v: Value| {
        let typed = serde_json::from_value::<PodUnavailableBudget>(v.clone()).ok()?;
        Some((v, typed))
    };
    let pubs = store.list_values(
        "policy.kruise.io/v1alpha1",
        "PodUnavailableBudget",
        Some(ns),
    );
    if let Some(named) = pod["metadata"]["annotations"][RELATED_PUB].as_str() {
        return pubs
            .into_iter()
            .find(|p| p["metadata"]["name"].as_str() == Some(named))
            .and_then(decode);
    }
    let labels: BTreeMap<String, String> =
        serde_json::from_value(pod["metadata"]["labels"].clone()).unwrap_or_default();
    let owner = workload_of(store, ns, pod);
    pubs.into_iter().filter_map(decode).find(|(_, p)| {
        if let Some(target) = &p.spec.target_ref {
            let group = kinds::group_of(&target.api_version);
            return owner
                .as_ref()
                .is_some_and(|(g, k, n)| g == group && *k == target.kind && *n == target.name);
        }
        p.spec.selector.as_ref().is_some_and(|s| {
            !selector::is_empty(s) && selector::matches(s, &labels).unwrap_or(false)
        })
    })
}

/// The workload owning `pod` as (group, kind, name): its controller, or the Deployment above
/// its ReplicaSet.
fn workload_of(store: &Store, ns: &str, pod: &Value) -> Option<(String, String, String)> {
    let controller = |v: &Value| {
        v["metadata"]["ownerReferences"]
            .as_array()?
            .iter()
            .find(|o| o["controller"].as_bool() == Some(true))
            .map(|o| {
                let api = o["apiVersion"].as_str().unwrap_or_default();
                let group = kinds::group_of(api).to_string();
                let kind = o["kind"].as_str().unwrap_or_default().to_string();
                let name = o["name"].as_str().unwrap_or_default().to_string();
                (group, kind, name)
            })
    };
    let owner = controller(pod)?;
    if kinds::find(&owner.0, &owner.1) == Some(&kinds::REPLICASET) {
        let rs = store.get_value("apps/v1", "ReplicaSet", ns, &owner.2);
        if let Some(deployment) = rs.as_ref().and_then(controller) {
            return Some(deployment);
        }
    }
    Some(owner)
}
