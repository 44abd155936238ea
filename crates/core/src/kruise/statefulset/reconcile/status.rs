//! Advanced StatefulSet status (`updateStatus`/`computeReplicaStatus`, `completeRollingUpdate`,
//! `SetStatefulsetCondition`, v1.8.4) from the set's pods, and whether it is worth writing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::{
    api::{common::WorkloadCondition, statefulset::StatefulSetStatus},
    kruise::statefulset::{AstsPod, UpdateStrategyType, compute_status},
};

/// Condition type set when a pod could not be created.
pub const FAILED_CREATE_POD: &str = "FailedCreatePod";
/// Condition type set when a pod could not be updated.
pub const FAILED_UPDATE_POD: &str = "FailedUpdatePod";

/// The revision-independent part of the status.
#[derive(Debug, Clone, Default)]
pub struct Base {
    pub observed_generation: i64,
    pub current_revision: String,
    pub update_revision: String,
    pub collision_count: i32,
    pub label_selector: String,
}

/// The replica counters over `pods` (the slot pods and the condemned ones), without completing
/// the rollout (see [`complete`]).
pub fn counts(base: &Base, pods: &[AstsPod], min_ready_seconds: i32) -> StatefulSetStatus {
    // OnDelete: compute_status then leaves the completion to [`complete`].
    let c = compute_status(
        pods,
        min_ready_seconds,
        UpdateStrategyType::OnDelete,
        &base.current_revision,
        &base.update_revision,
    );
    StatefulSetStatus {
        observed_generation: base.observed_generation,
        replicas: c.replicas,
        ready_replicas: c.ready_replicas,
        available_replicas: c.available_replicas,
        current_replicas: c.current_replicas,
        updated_replicas: c.updated_replicas,
        updated_ready_replicas: c.updated_ready_replicas,
        updated_available_replicas: c.updated_available_replicas,
        current_revision: base.current_revision.clone(),
        update_revision: base.update_revision.clone(),
        collision_count: Some(base.collision_count),
        label_selector: Some(base.label_selector.clone()),
        conditions: Vec::new(),
        volume_claims: Vec::new(),
    }
}

/// Port of `completeRollingUpdate`: once every replica is updated and ready, the update
/// revision becomes the current one.
pub fn complete(status: &mut StatefulSetStatus, strategy: UpdateStrategyType) {
    if strategy == UpdateStrategyType::RollingUpdate
        && status.updated_replicas == status.replicas
        && status.ready_replicas == status.replicas
    {
        status.current_replicas = status.updated_replicas;
        status.current_revision = status.update_revision.clone();
    }
}

/// Port of `SetStatefulsetCondition` (as `NewStatefulsetCondition` builds it, reason empty):
/// an existing condition of the same status keeps its transition time, `old` is the stored
/// status it is compared against.
pub fn set_condition(
    status: &mut StatefulSetStatus,
    old: Option<&StatefulSetStatus>,
    type_: &str,
    message: String,
    now: i64,
) {
    let previous = old
        .into_iter()
        .flat_map(|s| &s.conditions)
        .chain(&status.conditions)
        .find(|c| c.type_ == type_)
        .cloned();
    let time = match &previous {
        Some(p) if p.status == "True" => p.last_transition_time.clone(),
        _ => jiff::Timestamp::from_second(now).ok().map(Time),
    };
    status.conditions.retain(|c| c.type_ != type_);
    status.conditions.push(WorkloadCondition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        last_transition_time: time,
        reason: None,
        message: Some(message),
    });
}

/// Whether `new` differs from the stored status in anything the controller writes: upstream's
/// `inconsistentStatus` fields, the updated ready/available counters, the collision count and
/// the conditions (ignoring the stored volume claim statuses, which this controller leaves).
pub fn should_write(old: Option<&StatefulSetStatus>, new: &StatefulSetStatus) -> bool {
    let default = StatefulSetStatus::default();
    let old = old.unwrap_or(&default);
    new.observed_generation > old.observed_generation
        || new.replicas != old.replicas
        || new.current_replicas != old.current_replicas
        || new.ready_replicas != old.ready_replicas
        || new.available_replicas != old.available_replicas
        || new.updated_replicas != old.updated_replicas
        || new.updated_ready_replicas != old.updated_ready_replicas
        || new.updated_available_replicas != old.updated_available_replicas
        || new.current_revision != old.current_revision
        || new.update_revision != old.update_revision
        || new.label_selector != old.label_selector
        || new.collision_count.unwrap_or(0) != old.collision_count.unwrap_or(0)
        || new.conditions != old.conditions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, rev: &str, ready: bool) -> AstsPod {
        AstsPod {
            name: name.to_owned(),
            revision: rev.to_owned(),
            phase: "Running".to_owned(),
            ready,
            ..AstsPod::default()
        }
    }

    #[test]
    fn completion_needs_every_replica_updated_and_ready() {
        let base = Base {
            current_revision: "db-1".into(),
            update_revision: "db-2".into(),
            ..Base::default()
        };
        let mut s = counts(
            &base,
            &[pod("db-0", "db-2", true), pod("db-1", "db-2", false)],
            0,
        );
        complete(&mut s, UpdateStrategyType::RollingUpdate);
        assert_eq!(s.current_revision, "db-1");
        let mut s = counts(
            &base,
            &[pod("db-0", "db-2", true), pod("db-1", "db-2", true)],
            0,
        );
        complete(&mut s, UpdateStrategyType::RollingUpdate);
        assert_eq!(
            (s.current_revision.as_str(), s.current_replicas),
            ("db-2", 2)
        );
        assert!(should_write(None, &s));
        assert!(!should_write(Some(&s), &s));
    }

    #[test]
    fn a_condition_keeps_its_transition_time() {
        let mut old = StatefulSetStatus::default();
        set_condition(&mut old, None, FAILED_CREATE_POD, "a".into(), 100);
        let mut new = StatefulSetStatus::default();
        set_condition(&mut new, Some(&old), FAILED_CREATE_POD, "b".into(), 200);
        assert_eq!(
            new.conditions[0].last_transition_time,
            old.conditions[0].last_transition_time
        );
        assert_eq!(new.conditions[0].message.as_deref(), Some("b"));
    }
}
