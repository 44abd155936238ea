//! Per-file evaluators. Each takes the case's `op` (if any) and the whole case, runs the embedded
//! logic on `input` and compares with `expected`, returning a readable diff on mismatch.

pub mod common;

mod cloneset;
mod ops;
mod pub_reconcile;
mod rollout_batch;
mod rollout_intercept;
mod rollout_status;
mod rollout_steps;
mod rollout_validation;
mod rollout_wire;
mod workloads;

/// Evaluates one case: Ok on a match, Err(diff or reason) otherwise.
pub type Evaluator = fn(Option<&str>, &serde_json::Value) -> Result<(), String>;

/// The evaluator for a vector file, by file stem. None means the file is unknown (a failure).
/// `upstream-<stem>` files (upstream unit-test cases the shared set leaves out) use the same
/// schema, and so the same evaluator, as `<stem>`.
pub fn evaluator(file_stem: &str) -> Option<Evaluator> {
    let stem = file_stem.strip_prefix("upstream-").unwrap_or(file_stem);
    Some(match stem {
        "cloneset-admission" => cloneset::admission,
        "cloneset-diffs" => cloneset::diffs,
        "cloneset-lifecycle" => cloneset::lifecycle,
        "cloneset-partition" => cloneset::partition,
        "cloneset-progressing" => cloneset::progressing,
        "cloneset-scale-down-order" => cloneset::scale_down_order,
        "cloneset-scale" => cloneset::scale,
        "cloneset-scatter" => cloneset::scatter,
        "cloneset-update-count" => cloneset::update_count,
        "cloneset-update-order" => cloneset::update_order,
        "int-or-percent" => cloneset::int_or_percent,
        "revision-hash" => cloneset::revision_hash,
        "statefulset-partition" => workloads::statefulset_partition,
        "daemonset-partition" => workloads::daemonset_partition,
        "daemonset-partition-percent" => workloads::daemonset_partition_percent,
        "daemonset-admission" => workloads::daemonset_admission,
        "statefulset-parallel" => workloads::statefulset_parallel,
        "statefulset-pvc-labels" => workloads::statefulset_pvc_labels,
        "deletion-protection" => workloads::deletion_protection,
        "pub" => workloads::pub_budget,
        "sidecarset" => ops::sidecarset,
        "crr" => ops::crr,
        "probe-marker" => ops::probe_marker,
        "rollout-batch" => rollout_batch::batch,
        "rollout-batch-executor" => rollout_batch::executor,
        "rollout-intercept" => rollout_intercept::intercept_case,
        "rollout-steps" => rollout_steps::steps,
        "rollout-finalise" => rollout_steps::finalise,
        "rollout-undo" => rollout_steps::undo,
        "rollout-status" => rollout_status::status,
        "rollout-validation" => rollout_validation::validation,
        "rollout-wire" => rollout_wire::wire,
        _ => return None,
    })
}
