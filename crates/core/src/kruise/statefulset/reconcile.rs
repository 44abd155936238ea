//! One Advanced StatefulSet reconcile (`stateful_set_control.go::updateStatefulSet` after the
//! revisions are settled, v1.8.4), pure: what the controller read (the set, its pods, the claims
//! of its namespace, its revisions, the clock) in, the writes out, in upstream's order:
//!
//! 1. every slot in ordinal order (`processReplica`): missing pods are created at the revision
//!    [`is_current_revision_needed`](super::is_current_revision_needed) picks, failed pods deleted, in-place and lifecycle state
//!    refreshed, identities fixed; `OrderedReady` stops at the first pod that is not Running and
//!    available, `Parallel` with `scaleStrategy.maxUnavailable` once that many are in flight;
//! 2. condemned pods (beyond the replicas or on reserved ordinals), highest ordinal first, one at
//!    a time with `OrderedReady`;
//! 3. the rolling update ([`rolling_update_step`](super::rolling_update_step)): specified-delete pods, then pods in update
//!    order under the partition and maxUnavailable, in place or deleted (the next reconcile
//!    recreates them).
//!
//! The IO shell (src/controllers/statefulset.rs) settles the revisions first
//! ([`revisions::active_revisions`]), applies the writes in order stopping at the first failure,
//! records their events and writes the status.

pub mod inplace;
pub mod pods;
pub mod revisions;
pub mod status;
mod sync;
#[cfg(test)]
mod tests;
mod writes;

use std::collections::HashSet;

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{PersistentVolumeClaim, Pod},
    },
    apimachinery::pkg::{apis::meta::v1::OwnerReference, util::intstr::IntOrString},
    jiff::Timestamp,
};

use self::sync::Run;
pub use self::writes::{Op, PodWrite, Why, claim_event};
use super::{
    AstsPod, AstsSpec, PodManagementPolicy, PodUpdatePolicy, RollingUpdate, UnorderedUpdate,
    UpdateStrategyType, ordinals::replica_slots,
};
use crate::{
    api::{StatefulSet, statefulset::StatefulSetStatus},
    kruise::{
        FeatureGates, KruiseVersion,
        cloneset::{lifecycle::Lifecycle, reconcile::revisions::revision_templates},
        events::EventRecord,
    },
};

/// The controller ownerReference an Advanced StatefulSet puts on its pods and revisions.
pub fn owner_reference(set: &StatefulSet) -> Option<OwnerReference> {
    Some(OwnerReference {
        api_version: "apps.kruise.io/v1beta1".to_owned(),
        kind: "StatefulSet".to_owned(),
        name: set.metadata.name.clone()?,
        uid: set.metadata.uid.clone()?,
        controller: Some(true),
        block_owner_deletion: Some(true),
    })
}

/// The set's spec as the ported algorithms read it, with upstream's defaults
/// (`SetDefaultsStatefulSet`): OrderedReady, RollingUpdate with partition 0, maxUnavailable 1,
/// ReCreate.
pub fn spec_of(set: &StatefulSet) -> AstsSpec {
    let strategy = set.spec.update_strategy.clone().unwrap_or_default();
    let on_delete = strategy.type_.as_deref() == Some("OnDelete");
    let rolling = (!on_delete).then(|| {
        let r = strategy.rolling_update.clone().unwrap_or_default();
        RollingUpdate {
            partition: r.partition.unwrap_or(0),
            max_unavailable: Some(r.max_unavailable.unwrap_or(IntOrString::Int(1))),
            paused: r.paused,
            unordered_update: r.unordered_update.map(|u| UnorderedUpdate {
                priority_strategy: u
                    .priority_strategy
                    .and_then(|p| serde_json::to_value(p).ok())
                    .and_then(|v| serde_json::from_value(v).ok()),
            }),
            pod_update_policy: match r.pod_update_policy.as_deref() {
                Some("InPlaceIfPossible") => PodUpdatePolicy::InPlaceIfPossible,
                Some("InPlaceOnly") => PodUpdatePolicy::InPlaceOnly,
                _ => PodUpdatePolicy::ReCreate,
            },
            min_ready_seconds: r.min_ready_seconds.unwrap_or(0),
        }
    });
    AstsSpec {
        replicas: set.spec.replicas.unwrap_or(1),
        reserve_ordinals: set.spec.reserve_ordinals.clone(),
        ordinals_start: set.spec.ordinals.as_ref().map(|o| o.start),
        pod_management_policy: if set.spec.pod_management_policy.as_deref() == Some("Parallel") {
            PodManagementPolicy::Parallel
        } else {
            PodManagementPolicy::OrderedReady
        },
        update_strategy_type: if on_delete {
            UpdateStrategyType::OnDelete
        } else {
            UpdateStrategyType::RollingUpdate
        },
        rolling_update: rolling,
    }
}

/// `spec.lifecycle` in the port's shape.
pub fn lifecycle_of(set: &StatefulSet) -> Option<Lifecycle> {
    let value = serde_json::to_value(set.spec.lifecycle.as_ref()?).ok()?;
    serde_json::from_value(value).ok()
}

/// Everything one reconcile reads.
pub struct Input<'a> {
    pub set: &'a StatefulSet,
    /// Every pod the set controls, terminating and finished ones included.
    pub pods: &'a [Pod],
    /// The claims of the set's namespace (to find the missing ones).
    pub claims: &'a [PersistentVolumeClaim],
    /// Every revision of the set (the update revision included).
    pub revisions: &'a [ControllerRevision],
    pub current: &'a ControllerRevision,
    pub update: &'a ControllerRevision,
    pub collision_count: i32,
    /// `selector.String()` of the set's selector.
    pub label_selector: String,
    pub gates: &'a FeatureGates,
    pub version: KruiseVersion,
    /// The clock, unix seconds.
    pub now: i64,
}

/// What one reconcile writes, in order: pods (with their claims), status, pruned revisions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub pods: Vec<PodWrite>,
    /// The status these writes lead to (the shell adds a failed write's condition).
    pub status: StatefulSetStatus,
    /// Revisions to prune.
    pub delete_revisions: Vec<String>,
    /// Events not tied to one write.
    pub events: Vec<EventRecord>,
    /// Seconds until the controller must look again (minReadySeconds, grace period).
    pub requeue_after: Option<i64>,
    pub errors: Vec<String>,
}

fn name_of(r: &ControllerRevision) -> &str {
    r.metadata.name.as_deref().unwrap_or_default()
}

/// One reconcile.
pub fn reconcile(input: &Input<'_>) -> Outcome {
    let set = input.set;
    let spec = spec_of(set);
    let now = Timestamp::from_second(input.now).unwrap_or(Timestamp::UNIX_EPOCH);
    let listed: Vec<AstsPod> = input
        .pods
        .iter()
        .map(|p| AstsPod::from_pod(p, now))
        .collect();
    let (mut slots, condemned) = replica_slots(&spec, input.gates, &listed);
    let mut run = Run {
        input,
        lifecycle: lifecycle_of(set),
        by_name: input
            .pods
            .iter()
            .filter_map(|p| Some((p.metadata.name.as_deref()?, p)))
            .collect(),
        templates: revision_templates(input.revisions, input.update),
        out: Outcome::default(),
        conditions: Vec::new(),
        refreshed: false,
        seen: HashSet::new(),
        current_gone: 0,
        updated_gone: 0,
        spec,
    };
    if set.metadata.deletion_timestamp.is_none() {
        run.sync(&mut slots, &condemned);
    }
    let min_ready = run.min_ready();
    let base = status::Base {
        observed_generation: set.metadata.generation.unwrap_or(0),
        current_revision: name_of(input.current).to_owned(),
        update_revision: name_of(input.update).to_owned(),
        collision_count: input.collision_count,
        label_selector: input.label_selector.clone(),
    };
    let counted: Vec<AstsPod> = slots.into_iter().flatten().chain(condemned).collect();
    let mut st = status::counts(&base, &counted, min_ready);
    st.current_replicas -= run.current_gone;
    st.updated_replicas -= run.updated_gone;
    status::complete(&mut st, run.spec.update_strategy_type);
    for (type_, message) in std::mem::take(&mut run.conditions) {
        status::set_condition(&mut st, set.status.as_ref(), type_, message, input.now);
    }
    let mut out = run.out;
    out.status = st;
    let pod_revisions: Vec<&str> = listed.iter().map(|p| p.revision.as_str()).collect();
    out.delete_revisions = revisions::truncate_history(
        set,
        input.revisions,
        &pod_revisions,
        name_of(input.current),
        name_of(input.update),
    );
    out
}
