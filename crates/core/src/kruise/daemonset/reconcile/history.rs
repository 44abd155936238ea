//! Advanced DaemonSet ControllerRevisions (`daemonset_history.go::constructHistory`, `snapshot`,
//! `dedupCurHistories`, `cleanupHistory`, v1.8.4).
//!
//! The revision holding the current template (compared by its data bytes, as `Match`) is "cur",
//! every other one "old". Its name is `<ds>-<hash>` and its `controller-revision-hash` label the
//! bare hash the pods carry. Upstream hashes a spew dump of the template (`ComputeHash`), which
//! only Go reproduces; this port hashes the revision data as CloneSet and Advanced StatefulSet
//! do (FNV over the sorted JSON, collisionCount appended): stable for a template, which is what
//! the pods' labels need.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension},
};

use super::owner_reference;
use crate::{
    api::DaemonSet,
    kruise::{
        cloneset::reconcile::revisions::{data_raw, revision_data},
        daemonset::HASH_LABEL,
        revision,
    },
};

/// The hash of `ds`'s template with `collision_count`.
pub fn template_hash(ds: &DaemonSet, collision_count: Option<i32>) -> String {
    let data = revision_data(&ds.spec.template);
    revision::hash_controller_revision(data_raw(&data).as_bytes(), collision_count)
}

/// The bare hash a revision stands for (its `controller-revision-hash` label).
pub fn hash_of(rev: &ControllerRevision) -> &str {
    rev.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(HASH_LABEL))
        .map_or("", String::as_str)
}

/// Port of `snapshot`'s revision: `<ds>-<hash>` numbered `number`, labelled with the template's
/// labels and the hash, carrying the set's annotations.
pub fn snapshot(ds: &DaemonSet, number: i64) -> ControllerRevision {
    let collision = ds.status.as_ref().and_then(|s| s.collision_count);
    let hash = template_hash(ds, collision);
    let mut labels: BTreeMap<String, String> = ds
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(HASH_LABEL.to_owned(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(format!(
                "{}-{hash}",
                ds.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: ds.metadata.annotations.clone(),
            owner_references: owner_reference(ds).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(revision_data(&ds.spec.template))),
        revision: number,
    }
}

/// Port of `Match`: the revision holds `ds`'s current template.
pub fn matches(ds: &DaemonSet, rev: &ControllerRevision) -> bool {
    let ours = data_raw(&revision_data(&ds.spec.template));
    rev.data.as_ref().is_some_and(|d| data_raw(&d.0) == ours)
}

/// What `constructHistory` decides; the shell writes it, then reconciles with `cur` and `old`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// Revisions lacking the hash label: written back with the label set to their name.
    pub relabel: Vec<ControllerRevision>,
    /// The current revision, when one exists.
    pub cur: Option<ControllerRevision>,
    /// The current revision to create (none exists).
    pub create: Option<ControllerRevision>,
    /// `cur` with a new (higher) number, to write.
    pub renumber: bool,
    /// Duplicate current revisions to delete (`dedupCurHistories`).
    pub dedup: Vec<String>,
    /// Pods labelled with a deleted duplicate's hash, to relabel with `cur`'s: (pod, hash).
    pub relabel_pods: Vec<(String, String)>,
    pub old: Vec<ControllerRevision>,
}

/// Port of `constructHistory` over the set's revisions and pods.
pub fn construct_history(
    ds: &DaemonSet,
    revisions: &[ControllerRevision],
    pods: &[Pod],
) -> History {
    let mut out = History::default();
    let mut current = Vec::new();
    for rev in revisions {
        let mut rev = rev.clone();
        if !rev
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(HASH_LABEL))
        {
            let name = rev.metadata.name.clone().unwrap_or_default();
            rev.metadata
                .labels
                .get_or_insert_with(BTreeMap::new)
                .insert(HASH_LABEL.to_owned(), name);
            out.relabel.push(rev.clone());
        }
        if matches(ds, &rev) {
            current.push(rev);
        } else {
            out.old.push(rev);
        }
    }
    let next = out.old.iter().map(|r| r.revision).max().unwrap_or(0) + 1;
    if current.is_empty() {
        out.create = Some(snapshot(ds, next));
        return out;
    }
    // dedupCurHistories: keep the highest-numbered one.
    let keep_at = current.iter().enumerate().fold(0, |best, (i, r)| {
        if r.revision >= current[best].revision {
            i
        } else {
            best
        }
    });
    let mut keep = current.swap_remove(keep_at);
    let keep_hash = hash_of(&keep).to_owned();
    let dup_hashes: BTreeSet<String> = current.iter().map(|r| hash_of(r).to_owned()).collect();
    for pod in pods {
        let label = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(HASH_LABEL))
            .cloned()
            .unwrap_or_default();
        if label != keep_hash && dup_hashes.contains(&label) {
            out.relabel_pods.push((
                pod.metadata.name.clone().unwrap_or_default(),
                keep_hash.clone(),
            ));
        }
    }
    out.dedup = current
        .into_iter()
        .filter_map(|r| r.metadata.name)
        .collect();
    if keep.revision < next {
        keep.revision = next;
        out.renumber = true;
    }
    out.cur = Some(keep);
    out
}

/// Port of `cleanupHistory`: the old revisions to delete, lowest number first, so at most
/// `revisionHistoryLimit` (default 10) old ones remain; a revision a pod still carries stays.
pub fn cleanup_history(ds: &DaemonSet, old: &[ControllerRevision], pods: &[Pod]) -> Vec<String> {
    let keep = usize::try_from(ds.spec.revision_history_limit.unwrap_or(10)).unwrap_or(0);
    let mut to_kill = old.len().saturating_sub(keep);
    if to_kill == 0 {
        return Vec::new();
    }
    let live: BTreeSet<&str> = pods
        .iter()
        .filter_map(|p| p.metadata.labels.as_ref()?.get(HASH_LABEL))
        .map(String::as_str)
        .filter(|h| !h.is_empty())
        .collect();
    let mut old: Vec<&ControllerRevision> = old.iter().collect();
    old.sort_by_key(|r| r.revision);
    let mut out = Vec::new();
    for rev in old {
        if to_kill == 0 {
            break;
        }
        if live.contains(hash_of(rev)) {
            continue;
        }
        out.extend(rev.metadata.name.clone());
        to_kill -= 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ds(image: &str) -> DaemonSet {
        serde_json::from_value(json!({
            "metadata": {"name": "agent", "namespace": "ns", "uid": "u1"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}}
        }))
        .unwrap_or_default()
    }

    #[test]
    fn snapshot_then_reuse_then_renumber_back() {
        let v1 = ds("a:1");
        let h = construct_history(&v1, &[], &[]);
        let r1 = h.create.clone().expect("created");
        assert_eq!(r1.revision, 1);
        let hash = hash_of(&r1).to_owned();
        assert_eq!(r1.metadata.name, Some(format!("agent-{hash}")));
        assert_eq!(template_hash(&v1, None), hash, "stable");
        let h = construct_history(&v1, std::slice::from_ref(&r1), &[]);
        assert_eq!(h.cur.as_ref().map(|r| r.revision), Some(1));
        assert!(!h.renumber && h.create.is_none());

        let v2 = ds("a:2");
        let h = construct_history(&v2, std::slice::from_ref(&r1), &[]);
        let r2 = h.create.clone().expect("a new revision");
        assert_eq!(r2.revision, 2);
        assert_ne!(hash_of(&r2), hash);
        // Back to a:1: r1 becomes cur again, numbered 3.
        let h = construct_history(&v1, &[r1.clone(), r2.clone()], &[]);
        assert!(h.renumber);
        assert_eq!(h.cur.as_ref().map(|r| r.revision), Some(3));
        assert_eq!(h.old.len(), 1);
    }

    #[test]
    fn cleanup_keeps_the_limit_and_live_hashes() {
        let mut d = ds("a:1");
        d.spec.revision_history_limit = Some(1);
        let old: Vec<ControllerRevision> = (1..=3)
            .map(|n| ControllerRevision {
                metadata: ObjectMeta {
                    name: Some(format!("agent-h{n}")),
                    labels: Some([(HASH_LABEL.to_owned(), format!("h{n}"))].into()),
                    ..ObjectMeta::default()
                },
                data: None,
                revision: n,
            })
            .collect();
        let pod: Pod = serde_json::from_value(
            json!({"metadata": {"name": "p", "labels": {HASH_LABEL: "h1"}}}),
        )
        .unwrap_or_default();
        // Two of three must go; h1 is live, so h2 and h3 go.
        assert_eq!(
            cleanup_history(&d, &old, &[pod]),
            vec!["agent-h2".to_owned(), "agent-h3".to_owned()]
        );
        d.spec.revision_history_limit = Some(2);
        assert_eq!(cleanup_history(&d, &old, &[]), vec!["agent-h1".to_owned()]);
    }
}
