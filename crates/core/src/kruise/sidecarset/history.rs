//! SidecarSet ControllerRevision history: which stored revisions to delete.

use std::collections::BTreeSet;

use crate::api::sidecarset::SidecarSet;

/// A stored ControllerRevision of a set, as far as truncation cares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RevisionRef {
    pub name: String,
    pub revision: i64,
    /// The `apps.kruise.io/sidecarset-custom-version` label, if any.
    pub custom_version: Option<String>,
    /// The revision's `kruise.io/sidecarset-hash` annotation ("" when absent).
    pub hash: String,
}

/// The result of [`truncate_history`]: revisions to delete (oldest first) and, when the
/// limit cannot be met because pods still use too many, upstream's error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Truncation {
    pub delete: Vec<String>,
    pub error: Option<String>,
}

/// Revisions that must be kept: those named by pods, the injection revision name, and the
/// newest revision carrying the injection custom version.
///
/// Port of pkg/controller/sidecarset/sidecarset_processor.go::filterActiveRevisions (v1.8.4).
pub fn active_revisions(
    set: &SidecarSet,
    revisions: &[RevisionRef],
    referenced_by_pods: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut active = referenced_by_pods.clone();
    if let Some(r) = &set.spec.injection_strategy.revision {
        if let Some(name) = r.revision_name.as_deref().filter(|n| !n.is_empty()) {
            active.insert(name.to_owned());
        }
        if let Some(cv) = r.custom_version.as_deref().filter(|v| !v.is_empty())
            && let Some(newest) = revisions
                .iter()
                .filter(|rev| rev.custom_version.as_deref() == Some(cv))
                .max_by_key(|rev| rev.revision)
        {
            active.insert(newest.name.clone());
        }
    }
    active
}

/// Keeps at most `max(1, revisionHistoryLimit)` (default 10) revisions, deleting the oldest
/// inactive ones and never the newest. `revisions` must be sorted by revision ascending.
///
/// Port of pkg/controller/sidecarset/sidecarset_processor.go::truncateHistory (v1.8.4).
pub fn truncate_history(
    set: &SidecarSet,
    revisions: &[RevisionRef],
    referenced_by_pods: &BTreeSet<String>,
) -> Truncation {
    let limit = set
        .spec
        .revision_history_limit
        .map_or(10, |l| l.max(1) as usize);
    if revisions.len() <= limit {
        return Truncation::default();
    }
    let mut to_delete = revisions.len() - limit;
    let active = active_revisions(set, revisions, referenced_by_pods);
    let mut delete = Vec::new();
    for rev in &revisions[..revisions.len() - 1] {
        if to_delete == 0 {
            break;
        }
        if !active.contains(&rev.name) {
            delete.push(rev.name.clone());
            to_delete -= 1;
        }
    }
    let error = (to_delete > 0).then(|| {
        format!(
            "failed to limit the number of stored revisions, limited: {limit}, actual: {}, name: {}",
            limit + to_delete,
            set.name()
        )
    });
    Truncation { delete, error }
}
