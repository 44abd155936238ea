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

use super::{Input, Outcome, PodOp, PodWrite, Why, name_of, revisions};
use crate::{
    api::CloneSet,
    kruise::cloneset::{
        inplace::rfc3339,
        scale::{self, CreationInput, INSTANCE_ID_LABEL, NewPod},
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

/// Creates `total` pods (`from_current` of them from the current revision) and the claims they
/// need, as Scale decided.
pub(super) fn create_pods(
    input: &Input<'_>,
    total: i32,
    from_current: i32,
    rng: &mut dyn FnMut() -> u64,
    out: &mut Outcome,
) {
    let cs = input.cs;
    let cs_name = cs.metadata.name.as_deref().unwrap_or_default();
    let instance_id = |labels: Option<&BTreeMap<String, String>>| {
        labels.and_then(|l| l.get(INSTANCE_ID_LABEL).cloned())
    };
    let pod_ids: Vec<String> = input
        .all_pod_names
        .iter()
        .filter_map(|n| n.strip_prefix(&format!("{cs_name}-")).map(str::to_owned))
        .collect();
    let pvc_ids: Vec<String> = input
        .pvcs
        .iter()
        .filter_map(|c| instance_id(c.metadata.labels.as_ref()))
        .collect();
    let total = usize::try_from(total).unwrap_or(0);
    let ids = scale::available_ids(total, &pod_ids, &pvc_ids, rng);
    let vct_names: Vec<String> = cs
        .spec
        .volume_claim_templates
        .iter()
        .filter_map(|v| v.metadata.name.clone())
        .collect();
    let existing_pvcs: Vec<String> = input
        .pvcs
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    let template_gates: Vec<String> = cs
        .spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .into_iter()
        .flatten()
        .map(|g| g.condition_type.clone())
        .collect();
    let plan = scale::plan_pod_creations(&CreationInput {
        cloneset_name: cs_name,
        expected_creations: total,
        expected_current_creations: usize::try_from(from_current).unwrap_or(0),
        current_revision: name_of(input.current),
        update_revision: name_of(input.update),
        available_ids: &ids,
        volume_claim_templates: &vct_names,
        existing_pvcs: &existing_pvcs,
        template_readiness_gates: &template_gates,
        gates: input.gates,
    });
    let current_template = revisions::template_of(input.current);
    let update_template = revisions::template_of(input.update);
    for new in &plan.pods {
        let template = if new.from_current {
            current_template.as_ref()
        } else {
            update_template.as_ref()
        };
        let Some(template) = template else {
            out.errors.push(format!(
                "revision {} holds no pod template",
                if new.from_current {
                    name_of(input.current)
                } else {
                    name_of(input.update)
                }
            ));
            return;
        };
        let id = new
            .labels
            .get(INSTANCE_ID_LABEL)
            .cloned()
            .unwrap_or_default();
        for (vct, claim) in &new.claim_names {
            if plan.pvcs_to_create.contains(claim)
                && let Some(t) = cs
                    .spec
                    .volume_claim_templates
                    .iter()
                    .find(|t| t.metadata.name.as_deref() == Some(vct.as_str()))
            {
                out.pvcs.push(new_claim(cs, t, claim, &id));
            }
        }
        out.pods.push(PodWrite {
            name: new.name.clone(),
            op: PodOp::Create(Box::new(new_pod(cs, template, new, input.now))),
            why: Why::Create,
        });
    }
}
