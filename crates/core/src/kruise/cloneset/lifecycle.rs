//! Lifecycle hooks (`apis/apps/pub/lifecycle.go`, `pkg/util/lifecycle`) and the CloneSet
//! lifecycle state transitions of `refreshPodState` (v1.8.4).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::state;
use crate::kruise::KruiseVersion;

/// One lifecycle hook: the labels and finalizers that hold a pod in a Preparing* state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHook {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub labels_handler: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub finalizers_handler: Vec<String>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub mark_pod_not_ready: bool,
}

/// `spec.lifecycle`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    #[serde(default)]
    pub pre_delete: Option<LifecycleHook>,
    #[serde(default)]
    pub in_place_update: Option<LifecycleHook>,
    #[serde(default)]
    pub pre_normal: Option<LifecycleHook>,
}

impl Lifecycle {
    /// Port of lifecycle_utils.go::IsLifecycleMarkPodNotReady (v1.8.4): the PreDelete or the
    /// InPlaceUpdate hook asks to mark the pod not ready (PreNormal's flag is not read).
    pub fn any_marks_not_ready(&self) -> bool {
        [&self.pre_delete, &self.in_place_update]
            .into_iter()
            .flatten()
            .any(|h| h.mark_pod_not_ready)
    }
}

/// `pod.Labels[k]` as Go reads it: a missing key is `""`.
fn label<'a>(labels: &'a BTreeMap<String, String>, key: &str) -> &'a str {
    labels.get(key).map_or("", String::as_str)
}

/// Port of pkg/util/lifecycle/lifecycle_utils.go::IsPodHooked (v1.8.4): any finalizer or any
/// label pair of the hook is on the pod (a missing label reads as `""`, so a handler label with
/// an empty value matches a pod without it). A nil hook never hooks.
pub fn is_pod_hooked(
    hook: Option<&LifecycleHook>,
    labels: &BTreeMap<String, String>,
    finalizers: &[String],
) -> bool {
    hook.is_some_and(|h| {
        h.finalizers_handler.iter().any(|f| finalizers.contains(f))
            || h.labels_handler.iter().any(|(k, v)| label(labels, k) == v)
    })
}

/// Port of pkg/util/lifecycle/lifecycle_utils.go::IsPodAllHooked (v1.8.4): every finalizer and
/// label pair of the hook is on the pod (a missing label reads as `""`). A nil hook is never
/// all-hooked.
pub fn is_pod_all_hooked(
    hook: Option<&LifecycleHook>,
    labels: &BTreeMap<String, String>,
    finalizers: &[String],
) -> bool {
    hook.is_some_and(|h| {
        h.finalizers_handler.iter().all(|f| finalizers.contains(f))
            && h.labels_handler.iter().all(|(k, v)| label(labels, k) == v)
    })
}

/// What `refreshPodState` looks at on one pod.
#[derive(Debug, Clone, Copy)]
pub struct RefreshFacts<'a> {
    pub state: &'a str,
    pub labels: &'a BTreeMap<String, String>,
    pub finalizers: &'a [String],
    /// The pod's revision equals the update revision.
    pub on_update_revision: bool,
    /// The in-place update check reports completion.
    pub update_completed: bool,
    /// `spec.nodeName` is set (`util.HasPodScheduled`; read only by v1.9).
    pub scheduled: bool,
}

/// Port of sync/cloneset_update.go::refreshPodState's state choice (v1.8.4; the v1.9
/// scheduling requirement, `spec.nodeName != ""`, behind `version`). Returns the state to move to.
pub fn refresh_state(
    lifecycle: Option<&Lifecycle>,
    facts: RefreshFacts<'_>,
    version: KruiseVersion,
) -> Option<&'static str> {
    let in_place = lifecycle.and_then(|l| l.in_place_update.as_ref());
    let all_hooked_in_place = is_pod_all_hooked(in_place, facts.labels, facts.finalizers);
    match facts.state {
        state::PREPARING_NORMAL => {
            let pre_normal = lifecycle.and_then(|l| l.pre_normal.as_ref());
            let ready_to_go = match pre_normal {
                None => version == KruiseVersion::V1_8 || facts.scheduled,
                Some(_) => is_pod_all_hooked(pre_normal, facts.labels, facts.finalizers),
            };
            ready_to_go.then_some(state::NORMAL)
        }
        state::PREPARING_UPDATE if facts.on_update_revision => {
            Some(if lifecycle.is_some() && !all_hooked_in_place {
                state::UPDATED
            } else {
                state::NORMAL
            })
        }
        state::UPDATING if facts.update_completed => {
            Some(if lifecycle.is_some() && !all_hooked_in_place {
                state::UPDATED
            } else {
                state::NORMAL
            })
        }
        state::UPDATED if in_place.is_none() || all_hooked_in_place => Some(state::NORMAL),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(label: (&str, &str), fin: &str) -> LifecycleHook {
        LifecycleHook {
            labels_handler: [(label.0.to_owned(), label.1.to_owned())].into(),
            finalizers_handler: vec![fin.to_owned()],
            mark_pod_not_ready: false,
        }
    }

    #[test]
    fn hooked_vs_all_hooked() {
        let h = hook(("a", "1"), "f");
        let labels: BTreeMap<String, String> = [("a".to_owned(), "1".to_owned())].into();
        assert!(is_pod_hooked(Some(&h), &labels, &[]));
        assert!(!is_pod_all_hooked(Some(&h), &labels, &[]));
        assert!(is_pod_all_hooked(Some(&h), &labels, &["f".to_owned()]));
        assert!(!is_pod_hooked(None, &labels, &[]));
        assert!(!is_pod_all_hooked(None, &labels, &[]));
    }

    #[test]
    fn preparing_normal_needs_scheduling_only_on_head() {
        let labels = BTreeMap::new();
        let facts = RefreshFacts {
            state: state::PREPARING_NORMAL,
            labels: &labels,
            finalizers: &[],
            on_update_revision: true,
            update_completed: true,
            scheduled: false,
        };
        assert_eq!(
            refresh_state(None, facts, KruiseVersion::V1_8),
            Some(state::NORMAL)
        );
        assert_eq!(refresh_state(None, facts, KruiseVersion::V1_9), None);
        let lc = Lifecycle::default();
        let updating = RefreshFacts {
            state: state::UPDATING,
            ..facts
        };
        assert_eq!(
            refresh_state(Some(&lc), updating, KruiseVersion::V1_8),
            Some(state::UPDATED)
        );
        assert_eq!(
            refresh_state(None, updating, KruiseVersion::V1_8),
            Some(state::NORMAL)
        );
    }
}
