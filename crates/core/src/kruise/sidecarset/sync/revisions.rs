//! A SidecarSet's ControllerRevisions as the controller keeps them: the set's own revisions,
//! the registration of its current spec (reuse, bump = rollback, or create), the custom
//! version label of the latest revision and the history to prune.
//!
//! Port of pkg/controller/sidecarset/sidecarset_processor.go::registerLatestRevision,
//! updateCustomVersionLabel and truncateHistory, and
//! pkg/control/sidecarcontrol/history_control.go::NewRevision (v1.8.4).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, OwnerReference},
        runtime::RawExtension,
    },
};
use serde_json::Value;

use super::super::{
    SIDECARSET_CUSTOM_VERSION_LABEL, SIDECARSET_HASH_ANNOTATION, SIDECARSET_NAME_LABEL,
    history::{RevisionRef, Truncation, truncate_history},
    pod_state::pod_sidecar_set_controller_revision,
    restore::REVISION_NAMESPACE,
    revision::{RevisionPlan, StoredRevision, plan_latest_revision, revision_name},
};
use crate::api::sidecarset::SidecarSet;

fn label<'a>(rev: &'a ControllerRevision, key: &str) -> Option<&'a str> {
    rev.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

/// Kubernetes' revision order: by `revision`, then creation time, then name.
///
/// Port of k8s pkg/controller/history/controller_history.go::SortControllerRevisions.
pub fn sort_revisions(revisions: &mut [ControllerRevision]) {
    revisions.sort_by(|a, b| {
        a.revision
            .cmp(&b.revision)
            .then_with(|| {
                let t = |r: &ControllerRevision| r.metadata.creation_timestamp.clone().map(|t| t.0);
                t(a).cmp(&t(b))
            })
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
}

/// The set's revisions among `all`: in [`REVISION_NAMESPACE`], labelled with the set's name and
/// controlled by the set or by nothing, sorted.
///
/// Port of k8s history.ListControllerRevisions with hc.GetRevisionSelector (v1.8.4).
pub fn owned_revisions(set: &SidecarSet, all: &[ControllerRevision]) -> Vec<ControllerRevision> {
    let uid = set.metadata.uid.as_deref().unwrap_or_default();
    let mut owned: Vec<ControllerRevision> = all
        .iter()
        .filter(|r| r.metadata.namespace.as_deref() == Some(REVISION_NAMESPACE))
        .filter(|r| label(r, SIDECARSET_NAME_LABEL) == Some(set.name()))
        .filter(|r| {
            r.metadata
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.controller == Some(true))
                .is_none_or(|o| o.uid == uid)
        })
        .cloned()
        .collect();
    sort_revisions(&mut owned);
    owned
}

/// What truncation and the pods' `controllerRevision` need of a stored revision.
pub fn revision_ref(rev: &ControllerRevision) -> RevisionRef {
    RevisionRef {
        name: rev.metadata.name.clone().unwrap_or_default(),
        revision: rev.revision,
        custom_version: label(rev, SIDECARSET_CUSTOM_VERSION_LABEL).map(str::to_owned),
        hash: rev
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(SIDECARSET_HASH_ANNOTATION))
            .cloned()
            .unwrap_or_default(),
    }
}

fn stored(rev: &ControllerRevision) -> StoredRevision {
    StoredRevision {
        reference: revision_ref(rev),
        data: rev.data.as_ref().map_or(Value::Null, |d| d.0.clone()),
    }
}

/// The ControllerRevision that records the set's current spec as `data`, named for
/// `collision_count`: the set's labels plus its name label (and custom version), all its
/// annotations, controlled by the set.
///
/// Port of history_control.go::NewRevision (v1.8.4).
pub fn new_revision(
    set: &SidecarSet,
    data: &Value,
    revision: i64,
    collision_count: i32,
) -> ControllerRevision {
    let mut labels = set.metadata.labels.clone().unwrap_or_default();
    labels.insert(SIDECARSET_NAME_LABEL.to_owned(), set.name().to_owned());
    let annotations: BTreeMap<String, String> =
        set.metadata.annotations.clone().unwrap_or_default();
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(set.name(), data, collision_count)),
            namespace: Some(REVISION_NAMESPACE.to_owned()),
            labels: Some(labels),
            annotations: (!annotations.is_empty()).then_some(annotations),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps.kruise.io/v1alpha1".to_owned(),
                kind: "SidecarSet".to_owned(),
                name: set.name().to_owned(),
                uid: set.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(data.clone())),
        revision,
    }
}

/// How the set's current spec is registered.
#[derive(Debug, Clone, PartialEq)]
pub enum Registration {
    /// The newest revision already records it.
    Reuse(ControllerRevision),
    /// An older revision records it: write it back with this higher `revision` (a rollback).
    Bump(ControllerRevision),
    /// Create this revision.
    Create(ControllerRevision),
}

impl Registration {
    /// The revision as it is (or will be) stored.
    pub fn revision(&self) -> &ControllerRevision {
        match self {
            Self::Reuse(r) | Self::Bump(r) | Self::Create(r) => r,
        }
    }
}

/// Registers the set's current spec against its revisions (sorted, see [`owned_revisions`]);
/// returns the step and the collision count to keep in status.
///
/// Port of sidecarset_processor.go::registerLatestRevision (v1.8.4), without the IO.
pub fn register(set: &SidecarSet, owned: &[ControllerRevision]) -> (Registration, i32) {
    let stored: Vec<StoredRevision> = owned.iter().map(stored).collect();
    let collisions = set
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    let (plan, collisions) = plan_latest_revision(set, &stored, collisions);
    let find = |name: &str| {
        owned
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name))
            .cloned()
            .unwrap_or_default()
    };
    let step = match plan {
        RevisionPlan::Reuse { name } => Registration::Reuse(find(&name)),
        RevisionPlan::Bump { name, revision } => {
            let mut rev = find(&name);
            rev.revision = revision;
            Registration::Bump(rev)
        }
        RevisionPlan::Create { revision, data, .. } => {
            Registration::Create(new_revision(set, &data, revision, collisions))
        }
    };
    (step, collisions)
}

/// Whether `existing` (found under the name a new revision wanted) records the same spec as
/// the set: then it is reused; else the name collided.
pub fn records_set(set: &SidecarSet, existing: &ControllerRevision) -> bool {
    matches!(
        plan_latest_revision(set, &[stored(existing)], 0).0,
        RevisionPlan::Reuse { .. }
    )
}

/// The custom version label the latest revision must get, when the set carries one the
/// revision lacks.
///
/// Port of sidecarset_processor.go::updateCustomVersionLabel (v1.8.4).
pub fn custom_version_to_label(set: &SidecarSet, latest: &ControllerRevision) -> Option<String> {
    let wanted = set
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(SIDECARSET_CUSTOM_VERSION_LABEL))
        .filter(|v| !v.is_empty())?;
    (label(latest, SIDECARSET_CUSTOM_VERSION_LABEL) != Some(wanted.as_str()))
        .then(|| wanted.clone())
}

/// The revisions to delete so at most `revisionHistoryLimit` remain, keeping those the matched
/// pods or the injection strategy use. `revisions` is the set's history after registration.
///
/// Port of sidecarset_processor.go::truncateHistory and filterActiveRevisions (v1.8.4).
pub fn truncate(
    set: &SidecarSet,
    revisions: &[ControllerRevision],
    matched: &[&Pod],
) -> Truncation {
    let mut sorted = revisions.to_vec();
    sort_revisions(&mut sorted);
    let refs: Vec<RevisionRef> = sorted.iter().map(revision_ref).collect();
    let used: BTreeSet<String> = matched
        .iter()
        .map(|p| pod_sidecar_set_controller_revision(set.name(), p))
        .filter(|r| !r.is_empty())
        .collect();
    truncate_history(set, &refs, &used)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(image: &str, custom: Option<&str>) -> SidecarSet {
        let mut labels = json!({});
        if let Some(c) = custom {
            labels[SIDECARSET_CUSTOM_VERSION_LABEL] = json!(c);
        }
        serde_json::from_value(json!({
            "metadata": {"name": "log", "uid": "u-log", "labels": labels,
                "annotations": {SIDECARSET_HASH_ANNOTATION: format!("h-{image}")}},
            "spec": {"containers": [{"name": "agent", "image": image}], "revisionHistoryLimit": 2},
        }))
        .unwrap()
    }

    fn registered(s: &SidecarSet, history: &mut Vec<ControllerRevision>) -> String {
        let owned = owned_revisions(s, history);
        let (step, _) = register(s, &owned);
        let rev = step.revision().clone();
        let name = rev.metadata.name.clone().unwrap();
        history.retain(|r| r.metadata.name != rev.metadata.name);
        history.push(rev);
        name
    }

    #[test]
    fn create_reuse_rollback_and_prune() {
        let mut history = Vec::new();
        let v1 = set("agent:1", Some("v1"));
        let (step, collisions) = register(&v1, &[]);
        let Registration::Create(first) = &step else {
            panic!("a new set creates its first revision: {step:?}");
        };
        assert_eq!(collisions, 0);
        assert_eq!(first.revision, 1);
        assert_eq!(
            first.metadata.namespace.as_deref(),
            Some(REVISION_NAMESPACE)
        );
        assert_eq!(label(first, SIDECARSET_NAME_LABEL), Some("log"));
        assert_eq!(label(first, SIDECARSET_CUSTOM_VERSION_LABEL), Some("v1"));
        assert_eq!(
            first.metadata.annotations.as_ref().unwrap()[SIDECARSET_HASH_ANNOTATION],
            "h-agent:1"
        );
        assert!(records_set(&v1, first));
        let n1 = registered(&v1, &mut history);
        assert!(matches!(
            register(&v1, &owned_revisions(&v1, &history)).0,
            Registration::Reuse(_)
        ));
        let v2 = set("agent:2", None);
        assert!(!records_set(&v2, &history[0]));
        let n2 = registered(&v2, &mut history);
        assert_ne!(n1, n2);
        // Back to v1: its revision is bumped past v2's.
        let (step, _) = register(&v1, &owned_revisions(&v1, &history));
        let Registration::Bump(bumped) = step else {
            panic!("a rollback bumps the old revision");
        };
        assert_eq!(
            (bumped.metadata.name.as_deref(), bumped.revision),
            (Some(n1.as_str()), 3)
        );
        let n3 = registered(&set("agent:3", None), &mut history);
        // Three revisions, limit 2: the oldest unused one goes.
        let t = truncate(&v1, &history, &[]);
        assert_eq!(t.delete, vec![n1.clone()]);
        assert!(t.error.is_none());
        // A revision a pod still records is kept; the next oldest goes instead.
        let mut pod = Pod::default();
        pod.metadata.annotations = Some(BTreeMap::from([(
            SIDECARSET_HASH_ANNOTATION.to_owned(),
            json!({"log": {"hash": "h", "controllerRevision": n1}}).to_string(),
        )]));
        let t = truncate(&v1, &history, &[&pod]);
        assert_eq!(t.delete, vec![n2]);
        assert_ne!(t.delete, vec![n3]);
    }

    #[test]
    fn revisions_of_other_sets_or_owners_are_not_the_sets() {
        let s = set("agent:1", None);
        let (Registration::Create(mut mine), _) = register(&s, &[]) else {
            panic!("create");
        };
        let mut foreign = mine.clone();
        foreign.metadata.owner_references.as_mut().unwrap()[0].uid = "someone-else".into();
        let mut other_ns = mine.clone();
        other_ns.metadata.namespace = Some("default".into());
        mine.metadata.name = Some("mine".into());
        let owned = owned_revisions(&s, &[foreign, other_ns, mine]);
        assert_eq!(owned.len(), 1);
        assert_eq!(owned[0].metadata.name.as_deref(), Some("mine"));
        assert_eq!(
            custom_version_to_label(&set("agent:1", Some("v7")), &owned[0]),
            Some("v7".into())
        );
        assert_eq!(custom_version_to_label(&s, &owned[0]), None);
    }
}
