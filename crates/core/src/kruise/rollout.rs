//! Sans-IO port of Kruise Rollout v0.6.2 (openkruise/rollouts, commit 6f9f871d): the Rollout
//! controller ([`controller`]), the BatchRelease controller and the workload webhook
//! ([`batchrelease`]), for partition-style releases of CloneSet, Advanced StatefulSet, native
//! StatefulSet and Advanced DaemonSet. Reference: `research/kruise-rollout.md`.
//!
//! Like the rest of [`crate::kruise`], no IO and no clock: `now` is a parameter.

pub mod batchrelease;
pub mod controller;
pub mod workload;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::rollout::{Rollout, phase};
use crate::kruise::intstr::{IntStrError, scaled_value_apimachinery};

pub use workload::WorkloadInfo;

/// `intstr.GetScaledValueFromIntOrPercent(x, R, roundUp=true)`: an int as is, `"p%"` →
/// `ceil(p·R/100)` with an integer `p`; a string without `%` is an error.
pub fn scale(value: &IntOrString, replicas: i32) -> Result<i32, IntStrError> {
    scaled_value_apimachinery(value, replicas, true)
}

/// `CalculateBatchReplicas`: the pods a step wants on the new revision, `scale` clamped to
/// `0..=R` (an unparsable value counts as 0, as upstream's error path leaves it).
pub fn calculate_batch_replicas(value: &IntOrString, replicas: i32) -> i32 {
    scale(value, replicas)
        .unwrap_or(0)
        .clamp(0, replicas.max(0))
}

/// The Rollout that controls the workload `(group, kind, name)` in the Rollouts' namespace, as
/// the workload webhook finds it (`fetchMatchedRollout`): the first whose `workloadRef` names it
/// by group, kind and name, skipping Rollouts being deleted and `Disabled` ones.
pub fn controlling<'a>(
    rollouts: impl IntoIterator<Item = &'a Rollout>,
    group: &str,
    kind: &str,
    name: &str,
) -> Option<&'a Rollout> {
    rollouts.into_iter().find(|r| {
        r.metadata.deletion_timestamp.is_none()
            && r.phase() != phase::DISABLED
            && r.spec.workload_ref.names(group, kind, name)
    })
}
