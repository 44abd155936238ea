//! U1 (v1.9.0): whether a pod update only resizes container resources in place, so that the PUB
//! webhook classifies it as `RESIZE` instead of `UPDATE` (`pkg/control/pubcontrol/pub_control.go`
//! `CanResizeInplace`, v1.9.0), and the pod QoS class it depends on.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use sha2::{Digest, Sha256};

use super::pod::has_unavailable_label;
use crate::kruise::sidecarset::quantity::nanos;

/// The QoS class of a pod (`v1qos.ComputePodQOS`, without pod-level resources).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QosClass {
    Guaranteed,
    Burstable,
    BestEffort,
}

fn value(q: &Quantity) -> i128 {
    nanos(&q.0).unwrap_or(0)
}

/// Port of k8s.io/kubernetes/pkg/apis/core/v1/helper/qos.go::ComputePodQOS (k8s 1.32, the
/// container path): requests and limits of cpu and memory over containers and init containers.
pub fn compute_pod_qos(pod: &Pod) -> QosClass {
    let spec = pod.spec.clone().unwrap_or_default();
    let all = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    let mut requests: BTreeMap<&str, i128> = BTreeMap::new();
    let mut limits: BTreeMap<&str, i128> = BTreeMap::new();
    let mut guaranteed = true;
    for c in all {
        let res = c.resources.clone().unwrap_or_default();
        for (name, q) in res.requests.iter().flatten() {
            if let Some(n) = ["cpu", "memory"].into_iter().find(|n| n == name)
                && value(q) > 0
            {
                *requests.entry(n).or_default() += value(q);
            }
        }
        let mut found = BTreeSet::new();
        for (name, q) in res.limits.iter().flatten() {
            if let Some(n) = ["cpu", "memory"].into_iter().find(|n| n == name)
                && value(q) > 0
            {
                found.insert(n);
                *limits.entry(n).or_default() += value(q);
            }
        }
        if found.len() != 2 {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return QosClass::BestEffort;
    }
    if guaranteed
        && requests.iter().all(|(n, r)| limits.get(n) == Some(r))
        && requests.len() == limits.len()
    {
        return QosClass::Guaranteed;
    }
    QosClass::Burstable
}

/// `types.IsStaticPod`: the `kubernetes.io/config.source` annotation names a source other than
/// the API server.
fn is_static_pod(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("kubernetes.io/config.source"))
        .is_some_and(|s| s != "api")
}

/// The sha256 of the pod spec's JSON with every container's resources cleared (init containers
/// are kept as they are).
fn spec_without_resources_hash(pod: &Pod) -> String {
    let mut spec = pod.spec.clone().unwrap_or_default();
    for c in &mut spec.containers {
        c.resources = Some(ResourceRequirements::default());
    }
    let json = serde_json::to_string(&spec).unwrap_or_default();
    format!("{:x}", Sha256::digest(json.as_bytes()))
}

fn resource_changed(
    a: Option<&BTreeMap<String, Quantity>>,
    b: Option<&BTreeMap<String, Quantity>>,
    name: &str,
) -> bool {
    match (a.and_then(|m| m.get(name)), b.and_then(|m| m.get(name))) {
        (None, None) => false,
        (Some(x), Some(y)) => value(x) != value(y),
        _ => true,
    }
}

fn can_inplace_update_resources(old: &[Container], new: &[Container]) -> bool {
    if old.len() != new.len() {
        return false;
    }
    for c in new {
        let Some(o) = old.iter().find(|o| o.name == c.name) else {
            return false;
        };
        let (or, nr) = (
            o.resources.clone().unwrap_or_default(),
            c.resources.clone().unwrap_or_default(),
        );
        let names: BTreeSet<&String> = [&or.requests, &nr.requests, &or.limits, &nr.limits]
            .into_iter()
            .flatten()
            .flat_map(BTreeMap::keys)
            .collect();
        for name in names {
            let changed = resource_changed(or.requests.as_ref(), nr.requests.as_ref(), name)
                || resource_changed(or.limits.as_ref(), nr.limits.as_ref(), name);
            if !changed {
                continue;
            }
            if name != "cpu" && name != "memory" {
                return false;
            }
            let policy = c
                .resize_policy
                .iter()
                .flatten()
                .find(|p| &p.resource_name == name)
                .map(|p| p.restart_policy.as_str());
            if !matches!(policy, None | Some("") | Some("NotRequired")) {
                return false;
            }
        }
    }
    true
}

/// Whether the update from `old` to `new` only resizes cpu/memory of containers in place,
/// without a restart, a QoS change or an unavailable label.
///
/// Port of pkg/control/pubcontrol/pub_control.go::CanResizeInplace (v1.9.0).
pub fn can_resize_inplace(old: &Pod, new: &Pod) -> bool {
    if !has_unavailable_label(old.metadata.labels.as_ref())
        && has_unavailable_label(new.metadata.labels.as_ref())
    {
        return false;
    }
    if spec_without_resources_hash(old) != spec_without_resources_hash(new) {
        return false;
    }
    if is_static_pod(new) || is_static_pod(old) {
        return false;
    }
    if compute_pod_qos(old) != compute_pod_qos(new) {
        return false;
    }
    let containers = |p: &Pod| {
        p.spec
            .as_ref()
            .map(|s| s.containers.clone())
            .unwrap_or_default()
    };
    can_inplace_update_resources(&containers(old), &containers(new))
}
