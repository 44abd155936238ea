//! Advanced StatefulSet ControllerRevisions (`stateful_set_utils.go::newRevision`/`getPatch`,
//! `stateful_set_control.go::getStatefulSetRevisions`/`truncateHistory`, v1.8.4): the revision
//! of the current template, reuse of an equal older revision on rollback (re-numbered), the
//! current revision, and pruning to `revisionHistoryLimit`.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::apps::v1::ControllerRevision,
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension},
};

use super::owner_reference;
pub use crate::kruise::cloneset::reconcile::revisions::ActiveRevisions;
use crate::{
    api::StatefulSet,
    kruise::{
        cloneset::reconcile::revisions::{
            HASH_LABEL, beyond_limit, data_raw, revision_data, settle, sort,
        },
        revision,
    },
};

/// Port of stateful_set_utils.go::newRevision (v1.8.4): the revision of `set`'s template,
/// numbered `number`, hashed with `collision_count`; it carries the template's labels plus the
/// hash, and all of the set's annotations.
pub fn new_revision(set: &StatefulSet, number: i64, collision_count: i32) -> ControllerRevision {
    let data = revision_data(&set.spec.template);
    let hash =
        revision::hash_controller_revision(data_raw(&data).as_bytes(), Some(collision_count));
    let name =
        revision::controller_revision_name(set.metadata.name.as_deref().unwrap_or_default(), &hash);
    let mut labels: BTreeMap<String, String> = set
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(HASH_LABEL.to_owned(), hash);
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(set.metadata.annotations.clone().unwrap_or_default()),
            owner_references: owner_reference(set).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(data)),
        revision: number,
    }
}

/// Port of stateful_set_control.go::getStatefulSetRevisions (v1.8.4) over the set's revisions.
pub fn active_revisions(set: &StatefulSet, revisions: &[ControllerRevision]) -> ActiveRevisions {
    let status = set.status.as_ref();
    settle(
        revisions,
        status.and_then(|s| s.collision_count).unwrap_or(0),
        status
            .map(|s| s.current_revision.as_str())
            .unwrap_or_default(),
        |next, collisions| new_revision(set, next, collisions),
    )
}

/// Port of stateful_set_control.go::truncateHistory (v1.8.4): the names of the non-live
/// revisions to delete, oldest first, so at most `revisionHistoryLimit` (default 10) remain.
/// Live: the current and update revisions and the revision label of any of the set's pods
/// (compared exactly, as `getPodRevision`).
pub fn truncate_history(
    set: &StatefulSet,
    revisions: &[ControllerRevision],
    pod_revisions: &[&str],
    current: &str,
    update: &str,
) -> Vec<String> {
    let mut revisions = revisions.to_vec();
    sort(&mut revisions);
    let history: Vec<String> = revisions
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .filter(|name| name != current && name != update && !pod_revisions.contains(&name.as_str()))
        .collect();
    beyond_limit(history, set.spec.revision_history_limit)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(image: &str, current: &str) -> StatefulSet {
        serde_json::from_value(json!({
            "metadata": {"name": "db", "namespace": "ns", "uid": "u1",
                         "annotations": {"kubernetes.io/change-cause": "v"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}},
            "status": {"currentRevision": current}
        }))
        .unwrap_or_default()
    }

    #[test]
    fn new_then_reused_then_renumbered_on_rollback() {
        let v1 = set("db:1", "");
        let first = active_revisions(&v1, &[]);
        assert!(first.create && !first.renumber);
        assert_eq!(first.update.revision, 1);
        let name1 = first.update.metadata.name.clone().unwrap_or_default();
        assert!(name1.starts_with("db-"));
        let labels = first.update.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.get("app").map(String::as_str), Some("db"));
        let annotations = first
            .update
            .metadata
            .annotations
            .clone()
            .unwrap_or_default();
        assert!(annotations.contains_key("kubernetes.io/change-cause"));

        let again = active_revisions(&v1, std::slice::from_ref(&first.update));
        assert!(!again.create && !again.renumber);

        let v2 = set("db:2", &name1);
        let second = active_revisions(&v2, std::slice::from_ref(&first.update));
        assert!(second.create);
        assert_eq!(second.update.revision, 2);
        assert_eq!(
            second.current.metadata.name.as_deref(),
            Some(name1.as_str())
        );

        // Back to db:1: the first revision is reused with the next number.
        let back = active_revisions(&v1, &[first.update.clone(), second.update.clone()]);
        assert!(back.renumber && !back.create);
        assert_eq!(back.update.metadata.name.as_deref(), Some(name1.as_str()));
        assert_eq!(back.update.revision, 3);
    }

    #[test]
    fn history_keeps_the_limit_and_live_revisions() {
        let mut s = set("db:1", "db-a");
        s.spec.revision_history_limit = Some(1);
        let rev = |name: &str, n: i64| ControllerRevision {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            data: None,
            revision: n,
        };
        let revs = [
            rev("db-a", 1),
            rev("db-b", 2),
            rev("db-c", 3),
            rev("db-d", 4),
            rev("db-e", 5),
        ];
        // a current, e update, c on a pod: b and d are history; one is kept (the newer).
        assert_eq!(
            truncate_history(&s, &revs, &["db-c"], "db-a", "db-e"),
            vec!["db-b"]
        );
    }
}
