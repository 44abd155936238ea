//! The BatchRelease side of Kruise Rollout: batch arithmetic and per-kind partition control
//! (`pkg/controller/batchrelease/control/partitionstyle/*`), batch readiness, the pod batch-label
//! patcher, the executor's phase and batch-state machine, and the workload mutating webhook that
//! intercepts a template change (`pkg/webhook/workload/mutating`).
//!
//! Entry points: [`reconcile`] (one BatchRelease reconcile → [`Outcome`]) and [`intercept`]
//! (one workload UPDATE → the mutated object, or None). Partition style only, for CloneSet,
//! Advanced and native StatefulSet and Advanced DaemonSet; Deployment and the canary and
//! blue-green styles are recognised and left alone.

pub mod context;
pub mod control;
pub mod executor;
pub mod labels;
pub mod webhook;

pub use context::{
    BatchContext, calculate_batch_context, is_batch_ready,
    is_current_more_than_or_equal_to_desired, parse_integer_as_percentage_if_possible,
    step_partition,
};
pub use control::{control_info, finalize_patch, initialize_patch, upgrade_patch};
pub use executor::{FinalizerChange, Outcome, REQUEUE_SECONDS, reconcile, target_kind};
pub use labels::{PodPatch, batch_label_patches, planned_step_increments};
pub use webhook::{intercept, is_effective_change};

#[cfg(test)]
mod tests;
