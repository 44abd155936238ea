//! The WorkloadSpread part of Kruise's pod webhook (`mpod.kb.io`): a pod created for a
//! WorkloadSpread's target workload (its controller owner) is put in the first subset with room
//! and gets that subset's node terms, tolerations and patch, and the
//! `apps.kruise.io/matched-workloadspread` annotation (`crate::kruise::workloadspread`).
//!
//! Upstream counts a subset's room from the spread's status (`missingReplicas`, kept by its
//! controller, with `creatingPods` for pods admitted but not yet seen). Here the room is counted
//! from the store's pods that carry the annotation, plus the pods this hook admitted that the
//! store does not hold yet, so a burst of creates cannot overfill a subset.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::{Hook, decode, list_typed};
use crate::api::{WorkloadSpread, keys::MATCHED_WORKLOADSPREAD};
use crate::kruise::workloadspread::{choose_subset, inject};
use crate::server::{AdmissionHook, AdmissionRequest, Operation, Store, Verdict, patch};

/// How long an admitted pod counts as being created before the store must hold it.
const CREATING_FOR: Duration = Duration::from_secs(30);

/// A pod this hook put in a subset: `(namespace, spread, subset, pod name, when)`.
type Admitted = (String, String, String, String, Instant);

pub(super) fn hook(store: &Arc<Store>) -> Arc<dyn AdmissionHook> {
    let store = store.clone();
    let admitted: Arc<Mutex<Vec<Admitted>>> = Arc::default();
    Hook::shared("mpod.kb.io", "", "pods", move |req| {
        if req.operation != Operation::Create || !req.subresource.is_empty() {
            return Verdict::Allow;
        }
        admit(&store, &admitted, req)
    })
}

fn admit(store: &Store, admitted: &Mutex<Vec<Admitted>>, req: &AdmissionRequest) -> Verdict {
    let Some(raw) = req.object.as_ref() else {
        return Verdict::Allow;
    };
    let mut pod: Pod = match decode(Some(raw)) {
        Ok(Some(p)) => p,
        Ok(None) => return Verdict::Allow,
        Err(denied) => return denied,
    };
    let annotations = pod.metadata.annotations.as_ref();
    if annotations.is_some_and(|a| a.contains_key(MATCHED_WORKLOADSPREAD)) {
        return Verdict::Allow;
    }
    let Some(owner) = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .cloned()
    else {
        return Verdict::Allow;
    };
    let ns = req.namespace.as_str();
    let spreads: Vec<WorkloadSpread> =
        list_typed(store, "apps.kruise.io/v1alpha1", "WorkloadSpread", Some(ns));
    let Some(spread) = spreads.into_iter().find(|s| {
        s.metadata.deletion_timestamp.is_none()
            && s.spec
                .target_ref
                .as_ref()
                .is_some_and(|t| t.kind == owner.kind && t.name == owner.name)
    }) else {
        return Verdict::Allow;
    };
    let spread_name = spread.metadata.name.clone().unwrap_or_default();
    let workload_replicas = store
        .list_values(&owner.api_version, &owner.kind, Some(ns))
        .into_iter()
        .find(|w| w["metadata"]["name"].as_str() == Some(owner.name.as_str()))
        .and_then(|w| w["spec"]["replicas"].as_i64())
        .map_or(1, |r| r as i32);
    let Ok(mut admitted) = admitted.lock() else {
        return Verdict::Allow;
    };
    let active = active_pods(store, ns, &spread_name, &mut admitted);
    let Some(subset) = choose_subset(&spread, &active, workload_replicas) else {
        return Verdict::Allow;
    };
    inject(&mut pod, &spread_name, subset);
    let mut merged = raw.clone();
    let spec = pod.spec.as_ref();
    set(
        &mut merged,
        "spec",
        "tolerations",
        spec.and_then(|s| s.tolerations.as_ref())
            .and_then(|t| serde_json::to_value(t).ok()),
    );
    set(
        &mut merged,
        "spec",
        "affinity",
        spec.and_then(|s| s.affinity.as_ref())
            .and_then(|a| serde_json::to_value(a).ok()),
    );
    set(
        &mut merged,
        "metadata",
        "annotations",
        pod.metadata
            .annotations
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok()),
    );
    if let Some(p) = &subset.patch {
        patch::strategic_merge(&mut merged, p);
    }
    if !req.dry_run {
        let name = pod.metadata.name.clone().unwrap_or_default();
        admitted.push((
            ns.to_owned(),
            spread_name,
            subset.name.clone(),
            name,
            Instant::now(),
        ));
    }
    Verdict::Mutate(merged)
}

fn set(obj: &mut Value, section: &str, field: &str, value: Option<Value>) {
    if let Some(v) = value
        && let Some(m) = obj.as_object_mut()
    {
        let section = m
            .entry(section)
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(s) = section.as_object_mut() {
            s.insert(field.to_owned(), v);
        }
    }
}

/// Pods per subset of `spread`: the store's live pods matched to it, and those this hook
/// admitted that the store does not hold yet (forgotten once it does, or after a while).
fn active_pods(
    store: &Store,
    ns: &str,
    spread: &str,
    admitted: &mut Vec<Admitted>,
) -> BTreeMap<String, i32> {
    let mut active = BTreeMap::new();
    let mut stored = std::collections::HashSet::new();
    for p in store.list_values("v1", "Pod", Some(ns)) {
        let name = p["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        stored.insert(name);
        let finished = matches!(
            p["status"]["phase"].as_str(),
            Some("Succeeded") | Some("Failed")
        );
        if finished || !p["metadata"]["deletionTimestamp"].is_null() {
            continue;
        }
        let Some(m) = p["metadata"]["annotations"][MATCHED_WORKLOADSPREAD]
            .as_str()
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
        else {
            continue;
        };
        if m["name"].as_str() == Some(spread)
            && let Some(subset) = m["subset"].as_str()
        {
            *active.entry(subset.to_owned()).or_insert(0) += 1;
        }
    }
    admitted.retain(|(_, _, _, name, at)| {
        at.elapsed() < CREATING_FOR && (name.is_empty() || !stored.contains(name.as_str()))
    });
    for (a_ns, a_spread, subset, _, _) in admitted.iter() {
        if a_ns == ns && a_spread == spread {
            *active.entry(subset.clone()).or_insert(0) += 1;
        }
    }
    active
}
