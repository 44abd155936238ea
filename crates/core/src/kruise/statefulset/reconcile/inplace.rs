//! What an Advanced StatefulSet does to a pod in place (`stateful_set_control.go::
//! refreshPodState`, `inPlaceUpdatePod`, `deletePod`, v1.8.4) on the in-place update model shared
//! with CloneSet: refreshing the `InPlaceUpdateReady` condition, a grace period and the lifecycle
//! state; updating a pod in place (or parking it in `PreparingUpdate` for its hook); and the
//! PreDelete hook that parks a pod in `PreparingDelete` instead of deleting it.
//!
//! The set's in-place update differs from CloneSet's in two ways: the revision label is the only
//! revision label written (no `pod-template-hash`), and `Updating` is written only when the pod
//! already had a lifecycle state.

use crate::kruise::{
    FeatureGates, KruiseVersion,
    cloneset::{
        inplace::{self, Condition, PodModel, RevisionTemplate, UpdateSpec},
        lifecycle::{self, Lifecycle, RefreshFacts},
        reconcile::create::LIFECYCLE_TIMESTAMP,
        state,
        update_pass::KRUISE_POD_READY,
    },
    revision,
};

/// Sets `KruisePodReady` to `status` when the pod's spec lists that readiness gate (upstream's
/// `executePodNotReadyPolicy`, one not-ready key per pod).
fn set_kruise_ready(pod: &mut PodModel, status: &str, now: i64) {
    if !pod.readiness_gates.iter().any(|g| g == KRUISE_POD_READY) {
        return;
    }
    if pod
        .condition(KRUISE_POD_READY)
        .is_some_and(|c| c.status == status)
    {
        return;
    }
    if status == "True" && pod.condition(KRUISE_POD_READY).is_none() {
        return;
    }
    pod.conditions.retain(|c| c.type_ != KRUISE_POD_READY);
    pod.conditions.push(Condition {
        type_: KRUISE_POD_READY.to_owned(),
        status: status.to_owned(),
        reason: String::new(),
        last_transition: Some(now),
    });
}

/// Port of lifecycle.UpdatePodLifecycle: moves the pod to `to` (and applies the not-ready
/// policy when `mark_not_ready`). Returns whether the state changed.
pub fn set_lifecycle(pod: &mut PodModel, to: &str, mark_not_ready: bool, now: i64) -> bool {
    if mark_not_ready {
        match to {
            state::PREPARING_DELETE | state::PREPARING_UPDATE => {
                set_kruise_ready(pod, "False", now);
            }
            state::UPDATED => set_kruise_ready(pod, "True", now),
            _ => {}
        }
    }
    if pod.lifecycle_state() == to {
        return false;
    }
    pod.set_lifecycle_state(to, now);
    true
}

/// Port of `refreshPodState`: the in-place refresh (InPlaceUpdateReady, grace period), then the
/// lifecycle state the pod moves to. Returns the requeue delay in seconds.
pub fn refresh(
    pod: &mut PodModel,
    lifecycle: Option<&Lifecycle>,
    update_revision: &str,
    now: i64,
) -> Result<Option<i64>, String> {
    let delay = inplace::refresh(pod, now)?;
    let pod_revision = pod
        .labels
        .get(revision::CONTROLLER_REVISION_HASH_LABEL)
        .cloned()
        .unwrap_or_default();
    let next = lifecycle::refresh_state(
        lifecycle,
        RefreshFacts {
            state: pod.lifecycle_state(),
            labels: &pod.labels,
            finalizers: &pod.finalizers,
            // getPodRevision compares exactly.
            on_update_revision: pod_revision == update_revision,
            update_completed: inplace::check_update_completed(pod).is_ok(),
            scheduled: !pod.node_name.is_empty(),
        },
        // The Advanced StatefulSet moves PreparingNormal on without waiting for scheduling.
        KruiseVersion::V1_8,
    );
    if let Some(next) = next {
        let mark = lifecycle
            .and_then(|l| l.in_place_update.as_ref())
            .is_some_and(|h| h.mark_pod_not_ready);
        set_lifecycle(pod, next, mark, now);
    }
    Ok(delay)
}

/// What [`update_in_place`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InPlace {
    /// The revision diff allows no in-place update: delete and recreate the pod.
    NotPossible,
    /// The pod waits for (or was moved into) `PreparingUpdate` by its hook.
    Hooked,
    /// The pod was updated in place; the requeue delay of a grace period, if any.
    Updated(Option<i64>),
}

/// Port of `inPlaceUpdatePod` for a pod whose revision is `old` (None when pruned), towards
/// `update`, with `gracePeriodSeconds` `grace` and the set's lifecycle hooks.
pub fn update_in_place(
    pod: &mut PodModel,
    old: Option<&RevisionTemplate>,
    update: &RevisionTemplate,
    grace: i32,
    lifecycle: Option<&Lifecycle>,
    now: i64,
) -> Result<InPlace, String> {
    let Some(spec) = inplace::calculate_spec(old, update, grace) else {
        return Ok(InPlace::NotPossible);
    };
    let hook = lifecycle.and_then(|l| l.in_place_update.as_ref());
    let hooked =
        lifecycle.is_some() && lifecycle::is_pod_hooked(hook, &pod.labels, &pod.finalizers);
    let before = pod.lifecycle_state().to_owned();
    match before.as_str() {
        "" | state::PREPARING_NORMAL | state::NORMAL => {
            if hooked {
                let mark = hook.is_some_and(|h| h.mark_pod_not_ready);
                set_lifecycle(pod, state::PREPARING_UPDATE, mark, now);
                return Ok(InPlace::Hooked);
            }
        }
        state::UPDATED => {
            // UpdatePodLifecycleWithHandler: the controller re-arms the hook itself.
            if let Some(h) = hook {
                if h.mark_pod_not_ready {
                    set_kruise_ready(pod, "False", now);
                }
                if pod.lifecycle_state() != state::PREPARING_UPDATE {
                    pod.labels.extend(h.labels_handler.clone());
                    pod.finalizers.extend(h.finalizers_handler.iter().cloned());
                    pod.set_lifecycle_state(state::PREPARING_UPDATE, now);
                }
            }
            return Ok(InPlace::Hooked);
        }
        state::PREPARING_UPDATE => {
            if hooked {
                return Ok(InPlace::Hooked);
            }
        }
        state::UPDATING => {}
        other => {
            return Err(format!(
                "not allowed to in-place update pod {} in state {other}",
                pod.name
            ));
        }
    }
    let delay = start_update(pod, &spec, !before.is_empty(), now);
    Ok(InPlace::Updated(delay))
}

/// The shared in-place mechanics (`inplaceupdate.Update`) as the Advanced StatefulSet and
/// Advanced DaemonSet run them: the revision label is `spec.revision` as is (no
/// `pod-template-hash`), and the lifecycle state moves to `Updating` only when `to_updating`.
/// Returns the requeue delay of a grace period.
pub fn start_update(
    pod: &mut PodModel,
    spec: &UpdateSpec,
    to_updating: bool,
    now: i64,
) -> Option<i64> {
    let template_hash = pod.labels.get(revision::POD_TEMPLATE_HASH_LABEL).cloned();
    let state_label = pod.labels.get(revision::LIFECYCLE_STATE_LABEL).cloned();
    let stamp = pod.annotations.get(LIFECYCLE_TIMESTAMP).cloned();
    // No short-hash gate applies: the label is the revision as given.
    let delay = inplace::start_update(pod, spec, &FeatureGates::new(), now);
    restore(
        &mut pod.labels,
        revision::POD_TEMPLATE_HASH_LABEL,
        template_hash,
    );
    if !to_updating {
        restore(
            &mut pod.labels,
            revision::LIFECYCLE_STATE_LABEL,
            state_label,
        );
        restore(&mut pod.annotations, LIFECYCLE_TIMESTAMP, stamp);
    }
    delay
}

/// [`start_update`] for an Advanced DaemonSet pod: its lifecycle state is left as it is.
pub fn start_update_keeping_lifecycle(
    pod: &mut PodModel,
    spec: &UpdateSpec,
    now: i64,
) -> Option<i64> {
    start_update(pod, spec, false, now)
}

fn restore(map: &mut std::collections::BTreeMap<String, String>, key: &str, value: Option<String>) {
    match value {
        Some(v) => {
            map.insert(key.to_owned(), v);
        }
        None => {
            map.remove(key);
        }
    }
}

/// Port of `deletePod`'s hook check: with a PreDelete hook on the pod, it moves to
/// `PreparingDelete` (Some(changed)) instead of being deleted (None).
pub fn pre_delete(pod: &mut PodModel, lifecycle: Option<&Lifecycle>, now: i64) -> Option<bool> {
    let hook = lifecycle.and_then(|l| l.pre_delete.as_ref());
    if !lifecycle::is_pod_hooked(hook, &pod.labels, &pod.finalizers) {
        return None;
    }
    let mark = hook.is_some_and(|h| h.mark_pod_not_ready);
    Some(set_lifecycle(pod, state::PREPARING_DELETE, mark, now))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::kruise::cloneset::{inplace::Container, lifecycle::LifecycleHook};

    fn pod(state: Option<&str>) -> PodModel {
        let mut labels: BTreeMap<String, String> =
            [("controller-revision-hash".to_owned(), "db-1".to_owned())].into();
        if let Some(s) = state {
            labels.insert(revision::LIFECYCLE_STATE_LABEL.to_owned(), s.to_owned());
        }
        PodModel {
            name: "db-0".to_owned(),
            labels,
            readiness_gates: vec![inplace::IN_PLACE_UPDATE_READY.to_owned()],
            containers: vec![Container {
                name: "c".to_owned(),
                image: "db:1".to_owned(),
                status_image: "db:1".to_owned(),
                image_id: "id-1".to_owned(),
            }],
            ..PodModel::default()
        }
    }

    fn rev(name: &str, image: &str) -> RevisionTemplate {
        RevisionTemplate {
            name: name.to_owned(),
            containers: Some(vec![("c".to_owned(), image.to_owned())]),
        }
    }

    #[test]
    fn in_place_update_writes_the_full_revision_and_keeps_an_absent_state_absent() {
        let mut p = pod(None);
        let done = update_in_place(
            &mut p,
            Some(&rev("db-1", "db:1")),
            &rev("db-2", "db:2"),
            0,
            None,
            10,
        );
        assert_eq!(done, Ok(InPlace::Updated(None)));
        assert_eq!(p.containers[0].image, "db:2");
        assert_eq!(
            p.labels.get("controller-revision-hash").map(String::as_str),
            Some("db-2")
        );
        assert!(!p.labels.contains_key(revision::POD_TEMPLATE_HASH_LABEL));
        assert!(!p.labels.contains_key(revision::LIFECYCLE_STATE_LABEL));
        assert!(p.annotations.contains_key(inplace::STATE_KEY));
        assert_eq!(
            p.condition(inplace::IN_PLACE_UPDATE_READY)
                .map(|c| c.status.as_str()),
            Some("False")
        );

        let mut p = pod(Some(state::NORMAL));
        let _ = update_in_place(
            &mut p,
            Some(&rev("db-1", "db:1")),
            &rev("db-2", "db:2"),
            0,
            None,
            10,
        );
        assert_eq!(p.lifecycle_state(), state::UPDATING);
        // The kubelet restarted the container: the refresh completes the update.
        p.containers[0].image_id = "id-2".to_owned();
        p.containers[0].status_image = "db:2".to_owned();
        assert_eq!(refresh(&mut p, None, "db-2", 20), Ok(None));
        assert_eq!(p.lifecycle_state(), state::NORMAL);
        assert_eq!(
            p.condition(inplace::IN_PLACE_UPDATE_READY)
                .map(|c| c.status.as_str()),
            Some("True")
        );
    }

    #[test]
    fn hooks_park_updates_and_deletes() {
        let hook = LifecycleHook {
            labels_handler: [("hold".to_owned(), "true".to_owned())].into(),
            ..LifecycleHook::default()
        };
        let lc = Lifecycle {
            in_place_update: Some(hook.clone()),
            pre_delete: Some(hook),
            ..Lifecycle::default()
        };
        let mut p = pod(Some(state::NORMAL));
        p.labels.insert("hold".to_owned(), "true".to_owned());
        let done = update_in_place(
            &mut p,
            Some(&rev("db-1", "db:1")),
            &rev("db-2", "db:2"),
            0,
            Some(&lc),
            10,
        );
        assert_eq!(done, Ok(InPlace::Hooked));
        assert_eq!(p.lifecycle_state(), state::PREPARING_UPDATE);
        assert_eq!(p.containers[0].image, "db:1");
        let mut q = pod(Some(state::NORMAL));
        q.labels.insert("hold".to_owned(), "true".to_owned());
        assert_eq!(pre_delete(&mut q, Some(&lc), 10), Some(true));
        assert_eq!(q.lifecycle_state(), state::PREPARING_DELETE);
        assert_eq!(pre_delete(&mut pod(None), Some(&lc), 10), None);
        // A changed container list cannot go in place.
        let other = RevisionTemplate {
            name: "db-3".to_owned(),
            containers: Some(vec![("d".to_owned(), "x".to_owned())]),
        };
        assert_eq!(
            update_in_place(
                &mut pod(None),
                Some(&rev("db-1", "db:1")),
                &other,
                0,
                None,
                1
            ),
            Ok(InPlace::NotPossible)
        );
    }
}
