//! The what-if plan: given a workload, its pods and a proposed change, which pods update or roll
//! back, in what order, which are blocked now and by what, and the resulting status numbers.
//!
//! Kind-aware: [`plan`] dispatches on [`WorkloadKind`]; CloneSet is planned by
//! [`cloneset::plan_cloneset`], Advanced StatefulSet by [`statefulset::plan_statefulset`] (on
//! `kruise::statefulset`), Advanced DaemonSet by [`daemonset::plan_daemonset`] (on
//! `kruise::daemonset`). Another kind plugs in as one more module returning [`Plan`].

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{
    FeatureGates, KruiseVersion,
    cloneset::{ExpectationDiffs, lifecycle::Lifecycle},
    intstr::PartitionInputError,
    statefulset::AstsSpec,
    updatesort::{PriorityStrategy, ScatterTerm},
};

pub mod cloneset;
pub mod daemonset;
pub mod statefulset;

pub use daemonset::AdsInput;

pub use crate::api::kinds::WorkloadKind;

/// The workload as the planner sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanWorkload {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    /// `spec.replicas` (nil is 1).
    pub replicas: i32,
    pub partition: Option<IntOrString>,
    pub max_unavailable: Option<IntOrString>,
    pub max_surge: Option<IntOrString>,
    pub paused: bool,
    pub current_revision: String,
    pub update_revision: String,
    /// `updateStrategy.type`: `ReCreate` (or empty), `InPlaceIfPossible`, `InPlaceOnly`.
    pub strategy_type: String,
    pub priority: Option<PriorityStrategy>,
    pub scatter: Vec<ScatterTerm>,
    pub min_ready_seconds: i32,
    pub scale_max_unavailable: Option<IntOrString>,
    pub exclude_preparing_delete: bool,
    pub pods_to_delete: Vec<String>,
    /// Whether the revision diff can be applied in place (image-only); unknown counts as true.
    pub in_place_possible: bool,
    /// `spec.lifecycle` hooks (PreDelete parks deletions, InPlaceUpdate parks in-place updates).
    pub lifecycle: Option<Lifecycle>,
    /// Advanced StatefulSet only: its spec (ordinals, pod management, rolling update); the
    /// generic fields above override replicas, partition and paused.
    pub asts: Option<AstsSpec>,
    /// Advanced DaemonSet only: its spec and the nodes; `update_revision` is its pod hash and
    /// `replicas` is ignored (the desired nodes count).
    pub ads: Option<AdsInput>,
}

impl Default for PlanWorkload {
    fn default() -> Self {
        Self {
            kind: WorkloadKind::CloneSet,
            namespace: String::new(),
            name: String::new(),
            replicas: 1,
            partition: None,
            max_unavailable: None,
            max_surge: None,
            paused: false,
            current_revision: String::new(),
            update_revision: String::new(),
            strategy_type: String::new(),
            priority: None,
            scatter: Vec::new(),
            min_ready_seconds: 0,
            scale_max_unavailable: None,
            exclude_preparing_delete: false,
            pods_to_delete: Vec::new(),
            in_place_possible: true,
            lifecycle: None,
            asts: None,
            ads: None,
        }
    }
}

/// One pod as the planner sees it. Times are unix seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanPod {
    pub name: String,
    /// `controller-revision-hash`.
    pub revision: String,
    pub phase: String,
    pub node_name: String,
    /// Ready=True condition.
    pub ready: bool,
    pub ready_since: Option<i64>,
    /// `InPlaceUpdateReady` absent or True.
    pub in_place_update_ready: bool,
    /// `lifecycle.apps.kruise.io/state` (`""` when absent).
    pub lifecycle_state: String,
    pub labels: BTreeMap<String, String>,
    pub created: Option<i64>,
    pub restarts: i32,
    pub deletion_cost: Option<String>,
    pub specified_delete: bool,
    pub in_place_grace: bool,
    pub finalizers: Vec<String>,
}

/// The proposed change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// No change: what the controller does next as things stand.
    Nothing,
    /// Set the partition, as typed (`"3"`, `"40%"`).
    Partition(String),
    /// A template change (e.g. a new image): `revision` becomes the update revision.
    NewRevision {
        revision: String,
        in_place_possible: bool,
    },
    Pause,
    Resume,
    /// Roll back: the current revision (or `to`) becomes the update revision again.
    Undo {
        to: Option<String>,
    },
    /// Delete the workload (its pods go with it).
    Delete,
    /// Restart every pod: a template-metadata change, applied in place where the strategy allows.
    Restart,
}

/// A caller-supplied protection verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protection {
    Allowed,
    Denied(String),
}

/// Guards evaluated elsewhere and passed in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Guards {
    /// A PodUnavailableBudget's `status.unavailableAllowed`, when one covers the pods.
    pub pub_unavailable_allowed: Option<i32>,
    /// The deletion-protection verdict for the workload (only `Delete` reads it).
    pub protection: Option<Protection>,
}

/// Everything [`plan`] reads.
#[derive(Debug, Clone)]
pub struct PlanInput {
    pub workload: PlanWorkload,
    pub pods: Vec<PlanPod>,
    pub change: Change,
    pub guards: Guards,
    pub gates: FeatureGates,
    pub version: KruiseVersion,
    /// The clock, unix seconds.
    pub now: i64,
}

/// Why the plan cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    BadPartition(#[from] PartitionInputError),
    #[error(
        "{0} has no previous revision to roll back to (current and update revision are both {1})"
    )]
    NothingToUndo(String, String),
    #[error("{0}")]
    Unsupported(String),
}

/// What happens to a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Patched in place to the target revision.
    InPlace,
    /// Marked specified-delete and recreated at the target revision.
    Recreate,
    /// Deleted with the workload.
    Delete,
}

/// What holds a pod back now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocker {
    /// The maxUnavailable budget is used up; it moves once others are available again.
    MaxUnavailable,
    /// The maxSurge budget is used up; it moves once a surge pod is available and its old pod is gone.
    MaxSurge,
    /// The rollout is paused.
    Paused,
    /// The PodUnavailableBudget allows no more disruption now.
    PodUnavailableBudget,
    /// Deletion protection refuses the delete.
    Protection(String),
    /// The controller scales first this reconcile (surge or missing pods); updates follow.
    ScalingFirst,
    /// The pod's InPlaceUpdate lifecycle hook holds it in PreparingUpdate until released.
    LifecycleHook,
}

impl std::fmt::Display for Blocker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MaxUnavailable => f.write_str("maxUnavailable budget used up"),
            Self::MaxSurge => f.write_str("maxSurge budget used up"),
            Self::Paused => f.write_str("rollout paused"),
            Self::PodUnavailableBudget => f.write_str("PodUnavailableBudget allows no more"),
            Self::Protection(why) => write!(f, "deletion protection: {why}"),
            Self::ScalingFirst => f.write_str("controller scales first this round"),
            Self::LifecycleHook => {
                f.write_str("waits in PreparingUpdate until its inPlaceUpdate hook is released")
            }
        }
    }
}

/// One pod that will move, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedPod {
    pub name: String,
    pub from_revision: String,
    pub to_revision: String,
    pub action: Action,
    /// `None`: it moves in the next reconcile.
    pub blocked: Option<Blocker>,
}

/// Which way pods move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Rollback,
    Delete,
    None,
}

/// Status numbers, now and after the change converges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanStatus {
    pub replicas: i32,
    pub ready_replicas: i32,
    pub available_replicas: i32,
    pub updated_replicas: i32,
    pub updated_ready_replicas: i32,
    /// `status.expectedUpdatedReplicas` with the change applied.
    pub expected_updated_replicas: i32,
    /// Updated pods after the next reconcile's moves.
    pub updated_after_next_step: i32,
    /// Updated pods once the change has converged.
    pub updated_at_convergence: i32,
}

/// The plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub kind: WorkloadKind,
    pub name: String,
    pub partition: i32,
    /// Resolved `maxUnavailable` / `maxSurge` (pods).
    pub max_unavailable: i32,
    pub max_surge: i32,
    pub paused: bool,
    pub current_revision: String,
    pub update_revision: String,
    pub direction: Direction,
    /// Every pod that will move to reach the partition, in order; the unblocked ones go next.
    pub moves: Vec<PlannedPod>,
    /// Pods left out of the update, with why (PreparingDelete, in a grace period).
    pub skipped: Vec<(String, String)>,
    pub status: PlanStatus,
    pub diffs: ExpectationDiffs,
    /// Facts worth telling the operator (gates, no-ops, scaling first).
    pub notes: Vec<String>,
}

impl Plan {
    /// The pods that move in the next reconcile.
    pub fn next_step(&self) -> impl Iterator<Item = &PlannedPod> {
        self.moves.iter().filter(|m| m.blocked.is_none())
    }
}

/// Plans `input.change` for the workload's kind.
pub fn plan(input: &PlanInput) -> Result<Plan, PlanError> {
    match input.workload.kind {
        WorkloadKind::CloneSet => cloneset::plan_cloneset(input),
        WorkloadKind::AdvancedStatefulSet => statefulset::plan_statefulset(input),
        WorkloadKind::AdvancedDaemonSet => daemonset::plan_daemonset(input),
    }
}
