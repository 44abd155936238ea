//! SidecarSet defaulting as the mutating webhook applies it before hashing: the hash of a
//! real object covers these defaulted fields.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, HTTPGetAction, Probe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{
    SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, hash::sidecar_set_hashes,
};
use crate::api::sidecarset::{
    AFTER_APP_CONTAINER, BEFORE_APP_CONTAINER, COLD_UPGRADE, PATCH_RETAIN, ROLLING_UPDATE,
    SidecarContainer, SidecarSet,
};

/// Port of k8s pkg/apis/core/v1/defaults.go::SetDefaults_HTTPGetAction.
fn default_http_get(h: &mut HTTPGetAction) {
    if h.path.as_deref().is_none_or(str::is_empty) {
        h.path = Some("/".to_owned());
    }
    h.scheme.get_or_insert_with(|| "HTTP".to_owned());
}

/// Port of k8s pkg/apis/core/v1/defaults.go::SetDefaults_Probe (plus its HTTPGet).
fn default_probe(p: &mut Probe) {
    for (field, value) in [
        (&mut p.timeout_seconds, 1),
        (&mut p.period_seconds, 10),
        (&mut p.success_threshold, 1),
        (&mut p.failure_threshold, 3),
    ] {
        if field.is_none_or(|v| v == 0) {
            *field = Some(value);
        }
    }
    if let Some(h) = p.http_get.as_mut() {
        default_http_get(h);
    }
}

/// Port of apis/apps/defaults/v1alpha1.go::setDefaultContainer (v1.8.4), which applies
/// k8s SetDefaults_Container, _ContainerPort, _ObjectFieldSelector, _Probe and _HTTPGetAction.
fn default_container(k: &mut Container) {
    k.termination_message_path
        .get_or_insert_with(|| "/dev/termination-log".to_owned());
    k.termination_message_policy
        .get_or_insert_with(|| "File".to_owned());
    if k.image_pull_policy.is_none() {
        let image = k.image.as_deref().unwrap_or_default();
        let last = image.rsplit('/').next().unwrap_or_default();
        let tag = last
            .split('@')
            .next()
            .and_then(|l| l.split_once(':'))
            .map(|(_, t)| t);
        let latest = !image.contains('@') && tag.is_none_or(|t| t == "latest");
        k.image_pull_policy = Some(if latest { "Always" } else { "IfNotPresent" }.to_owned());
    }
    for port in k.ports.iter_mut().flatten() {
        port.protocol.get_or_insert_with(|| "TCP".to_owned());
    }
    for env in k.env.iter_mut().flatten() {
        if let Some(f) = env.value_from.as_mut().and_then(|v| v.field_ref.as_mut()) {
            f.api_version.get_or_insert_with(|| "v1".to_owned());
        }
    }
    for probe in [
        &mut k.liveness_probe,
        &mut k.readiness_probe,
        &mut k.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        default_probe(probe);
    }
    if let Some(l) = k.lifecycle.as_mut() {
        for h in [&mut l.post_start, &mut l.pre_stop].into_iter().flatten() {
            if let Some(g) = h.http_get.as_mut() {
                default_http_get(g);
            }
        }
    }
}

fn default_sidecar(c: &mut SidecarContainer, policy: &str) {
    if c.pod_inject_policy.is_empty() {
        c.pod_inject_policy = policy.to_owned();
    }
    if c.upgrade_strategy.upgrade_type.is_empty() {
        c.upgrade_strategy.upgrade_type = COLD_UPGRADE.to_owned();
    }
    if c.share_volume_policy.type_.is_empty() {
        c.share_volume_policy.type_ = "disabled".to_owned();
    }
    default_container(&mut c.container);
}

/// Applies the SidecarSet defaults and writes both hash annotations.
///
/// Port of apis/apps/defaults/v1alpha1.go::SetDefaultsSidecarSet and
/// pkg/webhook/sidecarset/mutating/sidecarset_create_update_handler.go::setHashSidecarSet (v1.8.4).
pub fn default_sidecar_set(set: &mut SidecarSet) {
    for c in &mut set.spec.containers {
        default_sidecar(c, BEFORE_APP_CONTAINER);
    }
    for c in &mut set.spec.init_containers {
        default_sidecar(c, AFTER_APP_CONTAINER);
    }
    let strategy = &mut set.spec.update_strategy;
    if strategy.type_.is_empty() {
        strategy.type_ = ROLLING_UPDATE.to_owned();
    }
    strategy.partition.get_or_insert(IntOrString::Int(0));
    strategy.max_unavailable.get_or_insert(IntOrString::Int(1));
    set.spec.revision_history_limit.get_or_insert(10);
    for patch in &mut set.spec.patch_pod_metadata {
        if patch.patch_policy.is_empty() {
            patch.patch_policy = PATCH_RETAIN.to_owned();
        }
    }
    if let Some(rev) = &mut set.spec.injection_strategy.revision
        && rev.policy.is_empty()
    {
        rev.policy = "Always".to_owned();
    }
    let (hash, without) = sidecar_set_hashes(&set.spec);
    let annotations = set.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(SIDECARSET_HASH_ANNOTATION.to_owned(), hash);
    annotations.insert(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION.to_owned(), without);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_cover_container_probe_and_policy_fields() {
        let mut set: SidecarSet = serde_json::from_value(json!({
            "metadata": {"name": "s"},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                "readinessProbe": {"httpGet": {"port": 80}},
                "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}],
                "initContainers": [{"name": "i", "image": "busybox:1.0"}]}
        }))
        .unwrap();
        default_sidecar_set(&mut set);
        let c = &set.spec.containers[0];
        assert_eq!(c.pod_inject_policy, BEFORE_APP_CONTAINER);
        assert_eq!(c.container.image_pull_policy.as_deref(), Some("Always"));
        let probe = c.container.readiness_probe.as_ref().unwrap();
        assert_eq!(
            (probe.period_seconds, probe.failure_threshold),
            (Some(10), Some(3))
        );
        assert_eq!(probe.http_get.as_ref().unwrap().path.as_deref(), Some("/"));
        let init = &set.spec.init_containers[0];
        assert_eq!(init.pod_inject_policy, AFTER_APP_CONTAINER);
        assert_eq!(
            init.container.image_pull_policy.as_deref(),
            Some("IfNotPresent")
        );
        let hash = set.annotation(SIDECARSET_HASH_ANNOTATION).to_owned();
        default_sidecar_set(&mut set);
        assert_eq!(
            set.annotation(SIDECARSET_HASH_ANNOTATION),
            hash,
            "defaulting is idempotent"
        );
    }
}
