//! CloneSet status (`cloneset_status.go::calculateStatus` and `inconsistentStatus`, v1.8.4).

use k8s_openapi::api::core::v1::Pod;

use super::pods::pod_info;
use crate::{
    api::{CloneSet, cloneset::CloneSetStatus},
    kruise::{KruiseVersion, cloneset::progress, intstr, revision},
};

/// The status the CloneSet's active `pods` give, with the revisions and selector decided by this
/// reconcile.
pub fn calculate(
    cs: &CloneSet,
    pods: &[Pod],
    current_revision: &str,
    update_revision: &str,
    collision_count: i32,
    label_selector: String,
    now: i64,
) -> CloneSetStatus {
    let min_ready = cs.spec.min_ready_seconds.unwrap_or(0);
    let replicas = cs.spec.replicas.unwrap_or(1);
    let mut status = CloneSetStatus {
        observed_generation: cs.metadata.generation.unwrap_or(0),
        current_revision: current_revision.to_owned(),
        update_revision: update_revision.to_owned(),
        collision_count: Some(collision_count),
        label_selector: Some(label_selector),
        ..CloneSetStatus::default()
    };
    for pod in pods {
        let info = pod_info(pod);
        let ready = info.is_update_ready(0, now);
        let available = info.is_available(min_ready, now);
        let updated = revision::equal_to_revision_hash(&info.revision, update_revision);
        status.replicas += 1;
        status.ready_replicas += i32::from(ready);
        status.available_replicas += i32::from(available);
        status.updated_replicas += i32::from(updated);
        status.updated_ready_replicas += i32::from(updated && ready);
        status.updated_available_replicas += i32::from(updated && available);
    }
    if status.updated_replicas == status.replicas && status.replicas == replicas {
        status.current_revision = status.update_revision.clone();
    }
    let partition = cs.spec.update_strategy.partition.as_ref();
    if let Ok(p) = intstr::calculate_partition_replicas(partition, Some(replicas)) {
        status.expected_updated_replicas = Some(replicas - p);
    }
    status
}

/// Port of `inconsistentStatus` (v1.8.4 as this port writes it): whether `new` is worth writing
/// over `old`, any change of the conditions included.
pub fn inconsistent(old: Option<&CloneSetStatus>, new: &CloneSetStatus) -> bool {
    inconsistent_counts(old, new) || new.conditions != old.map_or(&[][..], |o| &o.conditions)
}

/// The fields of `inconsistentStatus` besides the conditions (v1.9.0 adds only the Progressing
/// condition's status and reason to these: `progress::progressing_changed`).
pub fn inconsistent_counts(old: Option<&CloneSetStatus>, new: &CloneSetStatus) -> bool {
    let default = CloneSetStatus::default();
    let old = old.unwrap_or(&default);
    new.observed_generation > old.observed_generation
        || new.replicas != old.replicas
        || new.ready_replicas != old.ready_replicas
        || new.available_replicas != old.available_replicas
        || new.updated_ready_replicas != old.updated_ready_replicas
        || new.updated_replicas != old.updated_replicas
        || new.updated_available_replicas != old.updated_available_replicas
        || new.expected_updated_replicas.unwrap_or(0) != old.expected_updated_replicas.unwrap_or(0)
        || new.update_revision != old.update_revision
        || new.current_revision != old.current_revision
        || new.label_selector != old.label_selector
}

/// What [`finish`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// The status differs from the stored one in a way upstream writes.
    pub changed: bool,
    /// The Progressing deadline's requeue, seconds (v1.9 only; ≤ 0 means none).
    pub requeue_after: Option<i64>,
}

/// The conditions of a reconcile's new `status` and whether to write it, after Scale/Update
/// ran: `failure` is the pass's error (`FailedScale` or `FailedUpdate`, message).
///
/// * v1.8.4: the status starts without conditions and the failure is appended for this pass
///   only; any change of the conditions is written.
/// * v1.9.0: the stored conditions carry over; the failure is set with `SetCloneSetCondition`
///   (so the first one is kept: same status, empty reason); then the Progressing condition is
///   computed; only the counters and Progressing's status/reason trigger a write.
pub fn finish(
    cs: &CloneSet,
    status: &mut CloneSetStatus,
    failure: Option<(&str, &str)>,
    version: KruiseVersion,
    now: i64,
) -> Finished {
    let stored = cs.status.as_ref();
    match version {
        KruiseVersion::V1_8 => {
            status.conditions = failure
                .map(|(kind, message)| progress::failure_condition(kind, message, now))
                .into_iter()
                .collect();
            Finished {
                changed: inconsistent(stored, status),
                requeue_after: None,
            }
        }
        KruiseVersion::V1_9 => {
            status.conditions = stored.map(|s| s.conditions.clone()).unwrap_or_default();
            if let Some((kind, message)) = failure {
                progress::set_condition(status, progress::failure_condition(kind, message, now));
            }
            let requeue_after = progress::calculate(cs, status, now).filter(|s| *s > 0);
            Finished {
                changed: inconsistent_counts(stored, status)
                    || progress::progressing_changed(stored, status),
                requeue_after,
            }
        }
    }
}
