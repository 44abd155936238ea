//! CloneSet ControllerRevisions (`pkg/controller/cloneset/revision`, `getActiveRevisions`,
//! `truncateHistory`, v1.8.4): the revision built from the current spec, reuse of an equal older
//! revision on rollback (re-numbered), the current revision, and pruning.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension},
};
use serde_json::{Value, json};

use crate::{
    api::CloneSet,
    kruise::{cloneset::inplace::RevisionTemplate, revision, sidecarset::gojson},
};

/// ControllerRevision label holding the hash.
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// `{"spec":{"template":{...,"$patch":"replace"}}}` for `template`, as `getPatch` builds it.
pub fn revision_data(template: &PodTemplateSpec) -> Value {
    let mut template = serde_json::to_value(template).unwrap_or(Value::Null);
    if let Some(obj) = template.as_object_mut() {
        obj.insert("$patch".to_owned(), json!("replace"));
    }
    json!({ "spec": { "template": template } })
}

/// The data bytes as Go marshals them (keys sorted): what the hash is taken over.
pub fn data_raw(data: &Value) -> String {
    gojson::encode_any(data)
}

/// The pod template a revision holds.
pub fn template_of(rev: &ControllerRevision) -> Option<PodTemplateSpec> {
    let mut template = rev.data.as_ref()?.0.pointer("/spec/template")?.clone();
    if let Some(obj) = template.as_object_mut() {
        obj.remove("$patch");
    }
    serde_json::from_value(template).ok()
}

/// Port of revision.NewRevision (v1.8.4): the revision of `cs`'s current template, numbered
/// `number`, hashed with `collision_count`.
pub fn new_revision(cs: &CloneSet, number: i64, collision_count: i32) -> ControllerRevision {
    let data = revision_data(&cs.spec.template);
    let hash =
        revision::hash_controller_revision(data_raw(&data).as_bytes(), Some(collision_count));
    let name =
        revision::controller_revision_name(cs.metadata.name.as_deref().unwrap_or_default(), &hash);
    let mut labels: BTreeMap<String, String> = cs
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(HASH_LABEL.to_owned(), hash);
    let annotations = cs.metadata.annotations.clone().filter(|a| !a.is_empty());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: cs.metadata.namespace.clone(),
            labels: Some(labels),
            annotations,
            owner_references: super::owner_reference(cs).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(data)),
        revision: number,
    }
}

/// Whether two revisions hold the same template (`history.EqualRevision`).
pub fn equal_revision(a: &ControllerRevision, b: &ControllerRevision) -> bool {
    let hash = |r: &ControllerRevision| {
        r.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(HASH_LABEL).cloned())
    };
    let raw = |r: &ControllerRevision| r.data.as_ref().map(|d| data_raw(&d.0));
    hash(a) == hash(b) && raw(a) == raw(b)
}

/// Sorts revisions by number, then creation time, then name (`history.SortControllerRevisions`).
pub fn sort(revisions: &mut [ControllerRevision]) {
    revisions.sort_by(|a, b| {
        a.revision
            .cmp(&b.revision)
            .then_with(|| {
                let t = |r: &ControllerRevision| {
                    r.metadata
                        .creation_timestamp
                        .as_ref()
                        .map(|t| t.0.as_second())
                };
                t(a).cmp(&t(b))
            })
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
}

/// What `getActiveRevisions` (CloneSet) and `getStatefulSetRevisions` (Advanced StatefulSet)
/// decide.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveRevisions {
    pub current: ControllerRevision,
    pub update: ControllerRevision,
    /// The update revision is new: create it (then use what the server returns).
    pub create: bool,
    /// An older equal revision becomes the update revision again: write its new number.
    pub renumber: bool,
    pub collision_count: i32,
}

/// Port of cloneset_controller.go::getActiveRevisions (v1.8.4) over the CloneSet's revisions.
pub fn active_revisions(cs: &CloneSet, revisions: &[ControllerRevision]) -> ActiveRevisions {
    let status = cs.status.as_ref();
    settle(
        revisions,
        status.and_then(|s| s.collision_count).unwrap_or(0),
        status
            .map(|s| s.current_revision.as_str())
            .unwrap_or_default(),
        |next, collisions| new_revision(cs, next, collisions),
    )
}

/// The decision `getActiveRevisions` and `getStatefulSetRevisions` share (v1.8.4): the revision
/// `new_revision` builds for the next number, unless an equal one exists (the newest: reused;
/// an older one: re-numbered to the next number, a rollback), and the revision named
/// `current_name` (the update revision when there is none).
pub fn settle(
    revisions: &[ControllerRevision],
    collision_count: i32,
    current_name: &str,
    new_revision: impl FnOnce(i64, i32) -> ControllerRevision,
) -> ActiveRevisions {
    let mut revisions = revisions.to_vec();
    sort(&mut revisions);
    let next = revisions.last().map_or(1, |r| r.revision + 1);
    let mut update = new_revision(next, collision_count);
    let equal: Vec<&ControllerRevision> = revisions
        .iter()
        .filter(|r| equal_revision(r, &update))
        .collect();
    let (mut create, mut renumber) = (false, false);
    match (equal.last(), revisions.last()) {
        (Some(eq), Some(last)) if equal_revision(last, eq) => update = last.clone(),
        (Some(eq), _) => {
            let mut bumped = (*eq).clone();
            bumped.revision = next;
            update = bumped;
            renumber = true;
        }
        (None, _) => create = true,
    }
    let current = revisions
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(current_name))
        .cloned()
        .unwrap_or_else(|| update.clone());
    ActiveRevisions {
        current,
        update,
        create,
        renumber,
        collision_count,
    }
}

/// The oldest of `not_live` (sorted oldest first) beyond `limit` (`revisionHistoryLimit`,
/// default 10): what `truncateHistory` deletes.
pub fn beyond_limit(not_live: Vec<String>, limit: Option<i32>) -> Vec<String> {
    let limit = usize::try_from(limit.unwrap_or(10)).unwrap_or(0);
    if not_live.len() <= limit {
        return Vec::new();
    }
    not_live[..not_live.len() - limit].to_vec()
}

/// Port of cloneset_controller.go::truncateHistory (v1.8.4): the names of non-live revisions to
/// delete so at most `revisionHistoryLimit` (default 10) remain, oldest first. Live: the current
/// and update revisions and any revision an active pod is on.
pub fn truncate_history(
    cs: &CloneSet,
    revisions: &[ControllerRevision],
    pod_revisions: &[&str],
    current: &str,
    update: &str,
) -> Vec<String> {
    let mut revisions = revisions.to_vec();
    sort(&mut revisions);
    let not_live: Vec<String> = revisions
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .filter(|name| name != current && name != update)
        .filter(|name| {
            !pod_revisions
                .iter()
                .any(|p| revision::equal_to_revision_hash(p, name))
        })
        .collect();
    beyond_limit(not_live, cs.spec.revision_history_limit)
}

/// Every revision as the in-place decision sees it against `target`: its container images when
/// its template differs from `target`'s in container images only, else `None` (recreate).
pub fn revision_templates(
    revisions: &[ControllerRevision],
    target: &ControllerRevision,
) -> Vec<RevisionTemplate> {
    let target_spec = template_of(target).and_then(|t| t.spec);
    revisions
        .iter()
        .chain(std::iter::once(target))
        .map(|r| {
            let spec = template_of(r).and_then(|t| t.spec);
            let comparable = match (&spec, &target_spec) {
                (Some(a), Some(b)) => without_images(a) == without_images(b),
                _ => false,
            };
            RevisionTemplate {
                name: r.metadata.name.clone().unwrap_or_default(),
                containers: comparable.then(|| {
                    spec.map(|s| {
                        s.containers
                            .iter()
                            .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
                            .collect()
                    })
                    .unwrap_or_default()
                }),
            }
        })
        .collect()
}

fn without_images(
    spec: &k8s_openapi::api::core::v1::PodSpec,
) -> k8s_openapi::api::core::v1::PodSpec {
    let mut spec = spec.clone();
    for c in &mut spec.containers {
        c.image = None;
    }
    spec
}
