//! New Advanced StatefulSet pods and their claims (`stateful_set_utils.go::newStatefulSetPod`,
//! `initIdentity`, `updateStorage`, `getPersistentVolumeClaims`, `identityMatches`, v1.8.4): a
//! pod `<set>-<ordinal>` from a revision's template, owned by the set, with its identity labels,
//! hostname and subdomain, the revision label (the full revision name), its lifecycle state, and
//! one volume per volumeClaimTemplate bound to the claim `<vct>-<set>-<ordinal>`.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{
        PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodTemplateSpec, Volume,
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};

use super::owner_reference;
use crate::{
    api::StatefulSet,
    kruise::{
        FeatureGates, KruiseVersion,
        cloneset::{inplace::rfc3339, reconcile::create::LIFECYCLE_TIMESTAMP},
        statefulset::{LIFECYCLE_STATE_LABEL, REVISION_LABEL},
    },
};

/// The pod label naming the pod (`apps.StatefulSetPodNameLabel`).
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The pod label holding the ordinal (`apps.PodIndexLabel`, behind the `PodIndexLabel` gate).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

fn set_name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or_default()
}

/// `getPodName`.
pub fn pod_name(set: &StatefulSet, ordinal: i32) -> String {
    format!("{}-{ordinal}", set_name(set))
}

/// `getPersistentVolumeClaimName`.
pub fn claim_name(set: &StatefulSet, vct: &PersistentVolumeClaim, ordinal: i32) -> String {
    format!(
        "{}-{}-{ordinal}",
        vct.metadata.name.as_deref().unwrap_or_default(),
        set_name(set)
    )
}

/// Port of `getPersistentVolumeClaims`: the claims of the pod at `ordinal`, by template name.
/// v1.8.4 labels them with the set's `matchLabels` only; v1.9.0 (#2257) keeps the template's
/// labels and merges `matchLabels` over them (the selector wins on equal keys), or takes
/// `matchLabels` when the template has no labels.
pub fn claims(
    set: &StatefulSet,
    ordinal: i32,
    version: KruiseVersion,
) -> BTreeMap<String, PersistentVolumeClaim> {
    let selector = set.spec.selector.match_labels.clone();
    set.spec
        .volume_claim_templates
        .iter()
        .map(|vct| {
            let mut claim = vct.clone();
            let labels = match (version, vct.metadata.labels.clone()) {
                (KruiseVersion::V1_9, Some(mut labels)) => {
                    labels.extend(selector.clone().unwrap_or_default());
                    Some(labels)
                }
                _ => selector.clone(),
            };
            claim.metadata = ObjectMeta {
                name: Some(claim_name(set, vct, ordinal)),
                namespace: set.metadata.namespace.clone(),
                labels,
                annotations: vct.metadata.annotations.clone(),
                ..ObjectMeta::default()
            };
            claim.status = None;
            (vct.metadata.name.clone().unwrap_or_default(), claim)
        })
        .collect()
}

/// Port of `identityMatches`: the pod's name, namespace and pod-name label fit the set.
pub fn identity_matches(set: &StatefulSet, pod: &Pod, ordinal: i32) -> bool {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    ordinal >= 0
        && name == pod_name(set, ordinal)
        && pod.metadata.namespace == set.metadata.namespace
        && pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(POD_NAME_LABEL))
            .map(String::as_str)
            == Some(name)
}

/// The identity labels `updateIdentity` writes.
pub fn identity_labels(
    labels: &mut BTreeMap<String, String>,
    name: &str,
    ordinal: i32,
    gates: &FeatureGates,
) {
    labels.insert(POD_NAME_LABEL.to_owned(), name.to_owned());
    if gates.enabled("PodIndexLabel") {
        labels.insert(POD_INDEX_LABEL.to_owned(), ordinal.to_string());
    }
}

/// Port of `newVersionedStatefulSetPod` for one ordinal: the pod from `template` (the template
/// of `revision`), in lifecycle state `state` at `now`.
pub fn new_pod(
    set: &StatefulSet,
    template: &PodTemplateSpec,
    revision: &str,
    ordinal: i32,
    state: &str,
    gates: &FeatureGates,
    now: i64,
) -> Pod {
    let tmeta = template.metadata.clone().unwrap_or_default();
    let name = pod_name(set, ordinal);
    let mut labels = tmeta.labels.unwrap_or_default();
    identity_labels(&mut labels, &name, ordinal, gates);
    labels.insert(REVISION_LABEL.to_owned(), revision.to_owned());
    labels.insert(LIFECYCLE_STATE_LABEL.to_owned(), state.to_owned());
    let mut annotations = tmeta.annotations.unwrap_or_default();
    annotations.insert(LIFECYCLE_TIMESTAMP.to_owned(), rfc3339(now));
    let mut spec = template.spec.clone().unwrap_or_default();
    spec.hostname = Some(name.clone());
    spec.subdomain = set.spec.service_name.clone().filter(|s| !s.is_empty());
    // Only the claims' names are read here, which no version changes.
    let claims = claims(set, ordinal, KruiseVersion::V1_9);
    if !claims.is_empty() {
        // updateStorage: the claim volumes, then the template's other volumes.
        let others: Vec<Volume> = spec
            .volumes
            .take()
            .unwrap_or_default()
            .into_iter()
            .filter(|v| !claims.contains_key(&v.name))
            .collect();
        let mut volumes: Vec<Volume> = claims
            .iter()
            .map(|(volume, claim)| Volume {
                name: volume.clone(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim.metadata.name.clone().unwrap_or_default(),
                    read_only: Some(false),
                }),
                ..Volume::default()
            })
            .collect();
        volumes.extend(others);
        spec.volumes = Some(volumes);
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(name),
            generate_name: Some(format!("{}-", set_name(set))),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            finalizers: tmeta.finalizers,
            owner_references: owner_reference(set).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_new_pod_has_its_identity_revision_state_and_claims() {
        let set: StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "db", "namespace": "ns", "uid": "u1"},
            "spec": {
                "serviceName": "db-headless",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}},
                             "spec": {"containers": [{"name": "c", "image": "db:1"}],
                                      "volumes": [{"name": "tmp", "emptyDir": {}}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                          "spec": {"accessModes": ["ReadWriteOnce"]}}]
            }
        }))
        .unwrap_or_default();
        let template = set.spec.template.clone();
        let pod = new_pod(
            &set,
            &template,
            "db-abc",
            3,
            "Normal",
            &FeatureGates::new(),
            0,
        );
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        assert_eq!(pod.metadata.name.as_deref(), Some("db-3"));
        assert_eq!(
            labels.get(REVISION_LABEL).map(String::as_str),
            Some("db-abc")
        );
        assert_eq!(labels.get(POD_NAME_LABEL).map(String::as_str), Some("db-3"));
        assert_eq!(labels.get(POD_INDEX_LABEL).map(String::as_str), Some("3"));
        assert_eq!(
            labels.get(LIFECYCLE_STATE_LABEL).map(String::as_str),
            Some("Normal")
        );
        let spec = pod.spec.clone().unwrap_or_default();
        assert_eq!(spec.hostname.as_deref(), Some("db-3"));
        assert_eq!(spec.subdomain.as_deref(), Some("db-headless"));
        let volumes = spec.volumes.unwrap_or_default();
        assert_eq!(volumes.len(), 2);
        assert_eq!(
            volumes[0]
                .persistent_volume_claim
                .as_ref()
                .map(|c| c.claim_name.as_str()),
            Some("data-db-3")
        );
        assert_eq!(
            pod.metadata.owner_references.as_ref().map(Vec::len),
            Some(1)
        );
        assert!(identity_matches(&set, &pod, 3));
        let claim = &claims(&set, 3, KruiseVersion::V1_8)["data"];
        assert_eq!(claim.metadata.name.as_deref(), Some("data-db-3"));
        assert_eq!(
            claim
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("app"))
                .map(String::as_str),
            Some("db")
        );
    }

    #[test]
    fn claim_labels_merge_the_template_under_the_selector_from_v1_9() {
        let set: StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "db", "namespace": "ns"},
            "spec": {
                "selector": {"matchLabels": {"app": "db", "tier": "data"}},
                "volumeClaimTemplates": [
                    {"metadata": {"name": "data", "labels": {"backup": "daily", "tier": "x"}}},
                    {"metadata": {"name": "logs"}}
                ]
            }
        }))
        .unwrap_or_default();
        let labels = |version, vct: &str| {
            claims(&set, 0, version)[vct]
                .metadata
                .labels
                .clone()
                .unwrap_or_default()
        };
        let selector: BTreeMap<String, String> = [("app", "db"), ("tier", "data")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into();
        // v1.8.4: the selector's labels replace the template's.
        assert_eq!(labels(KruiseVersion::V1_8, "data"), selector);
        // v1.9.0: merged, the selector winning on `tier`.
        let mut merged = selector.clone();
        merged.insert("backup".to_owned(), "daily".to_owned());
        assert_eq!(labels(KruiseVersion::V1_9, "data"), merged);
        // No template labels: the selector's at both versions.
        assert_eq!(labels(KruiseVersion::V1_9, "logs"), selector);
        assert_eq!(labels(KruiseVersion::V1_8, "logs"), selector);
    }
}
