//! New CloneSet pods and claims (`newVersionedPods`, `UpdateStorage`, `createPods`, v1.8.4): a
//! pod from a revision's template, named `<cs>-<id>`, owned by the CloneSet, with the revision
//! labels, the instance id, the `InPlaceUpdateReady` readiness gate, PreparingNormal, and its
//! volumeClaimTemplates bound to `<vct>-<cs>-<id>`.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{
        PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodReadinessGate,
        PodTemplateSpec, Volume,
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};

use crate::{
    api::CloneSet,
    kruise::cloneset::{
        inplace::rfc3339,
        scale::{INSTANCE_ID_LABEL, NewPod},
    },
};

/// The lifecycle timestamp annotation.
pub const LIFECYCLE_TIMESTAMP: &str = "lifecycle.apps.kruise.io/timestamp";

/// The pod `new` describes, from `template` (the template of its revision).
pub fn new_pod(cs: &CloneSet, template: &PodTemplateSpec, new: &NewPod, now: i64) -> Pod {
    let tmeta = template.metadata.clone().unwrap_or_default();
    let mut labels: BTreeMap<String, String> = tmeta.labels.unwrap_or_default();
    labels.extend(new.labels.clone());
    let mut annotations = tmeta.annotations.unwrap_or_default();
    annotations.insert(LIFECYCLE_TIMESTAMP.to_owned(), rfc3339(now));
    let mut spec = template.spec.clone().unwrap_or_default();
    // The readiness gates the port planned: the template's plus InPlaceUpdateReady.
    spec.readiness_gates = Some(
        new.readiness_gates
            .iter()
            .map(|g| PodReadinessGate {
                condition_type: g.clone(),
            })
            .collect(),
    );
    if !new.claim_names.is_empty() {
        let volumes = spec.volumes.get_or_insert_with(Vec::new);
        volumes.retain(|v| !new.claim_names.contains_key(&v.name));
        for (volume, claim) in &new.claim_names {
            volumes.push(Volume {
                name: volume.clone(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim.clone(),
                    read_only: None,
                }),
                ..Volume::default()
            });
        }
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(new.name.clone()),
            generate_name: Some(format!(
                "{}-",
                cs.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: cs.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            finalizers: tmeta.finalizers,
            owner_references: super::owner_reference(cs).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// The claim `name` for instance `id` from the volumeClaimTemplate `vct`.
pub fn new_claim(
    cs: &CloneSet,
    vct: &PersistentVolumeClaim,
    name: &str,
    id: &str,
) -> PersistentVolumeClaim {
    let mut claim = vct.clone();
    let mut meta = claim.metadata.clone();
    let mut labels = cs.spec.selector.match_labels.clone().unwrap_or_default();
    labels.extend(meta.labels.take().unwrap_or_default());
    labels.insert(INSTANCE_ID_LABEL.to_owned(), id.to_owned());
    meta.name = Some(name.to_owned());
    meta.namespace = cs.metadata.namespace.clone();
    meta.labels = Some(labels);
    meta.owner_references = super::owner_reference(cs).map(|r| vec![r]);
    meta.resource_version = None;
    meta.uid = None;
    claim.metadata = meta;
    claim.status = None;
    claim
}
