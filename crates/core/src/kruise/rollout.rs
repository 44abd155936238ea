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

/// `HashReleasePlanBatches`: `hex(sha256(json(releasePlan)))` over the **whole** release plan,
/// written by the BatchRelease into `status.observedReleasePlanHash` and compared by the Rollout
/// before it counts a batch as done. Only stable within the port (serde's field order, not Go's).
pub fn hash_release_plan(plan: &crate::api::rollout::ReleasePlan) -> String {
    use sha2::Digest as _;
    let json = serde_json::to_vec(plan).unwrap_or_default();
    let digest = sha2::Sha256::digest(&json);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::rollout::{ReleaseBatch, ReleasePlan};

    #[test]
    fn the_plan_hash_follows_every_field_of_the_plan() {
        let mut plan = ReleasePlan {
            batches: vec![ReleaseBatch {
                canary_replicas: IntOrString::Int(1),
            }],
            batch_partition: Some(0),
            ..ReleasePlan::default()
        };
        let first = hash_release_plan(&plan);
        assert_eq!(first.len(), 64);
        assert_eq!(first, hash_release_plan(&plan.clone()));
        plan.batch_partition = Some(1);
        assert_ne!(first, hash_release_plan(&plan));
    }

    #[test]
    fn scale_rounds_percents_up_and_refuses_bare_numbers() {
        assert_eq!(scale(&IntOrString::String("20%".into()), 10).ok(), Some(2));
        assert_eq!(scale(&IntOrString::String("1%".into()), 101).ok(), Some(2));
        assert!(scale(&IntOrString::String("50".into()), 10).is_err());
        assert_eq!(calculate_batch_replicas(&IntOrString::Int(200), 10), 10);
        assert_eq!(
            calculate_batch_replicas(&IntOrString::String("200%".into()), 10),
            10
        );
    }
}
