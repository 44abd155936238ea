//! Evaluators for the CloneSet vector files, one submodule per responsibility: the diff
//! arithmetic ([`arith`]: diffs, partition, int-or-percent, revision hash, update count), the
//! update and deletion orders ([`order`]), one Scale() pass and pod creation ([`scale`]) and
//! one Update() pass on a pod ([`lifecycle`]). This file holds the vector readers they share.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::kruise::{
    FeatureGates,
    cloneset::{
        CloneSetParams, EXCLUDE_PREPARING_DELETE_LABEL, ExpectationDiffs, IsPodUpdateMode, PodInfo,
        calculate_diffs,
    },
};
use serde_json::{Value, json};

use super::common::parse;

mod admission;
mod arith;
mod lifecycle;
mod order;
mod progressing;
mod scale;

pub use admission::admission;
pub use arith::{diffs, int_or_percent, partition, revision_hash, update_count};
pub use lifecycle::lifecycle;
pub use order::{scale_down_order, scatter, update_order};
pub use progressing::progressing;
pub use scale::scale;

/// The evaluators' clock (unix seconds).
pub(super) const NOW: i64 = 1_700_000_000;

pub(super) fn int_or_string(v: &Value) -> Result<Option<IntOrString>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(|n| Some(IntOrString::Int(n)))
            .ok_or_else(|| format!("{n} is not an int32")),
        Value::String(s) => Ok(Some(IntOrString::String(s.clone()))),
        other => Err(format!("{other} is not an int-or-string")),
    }
}

pub(super) fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&Value::Null)
}

pub(super) fn gates(v: &Value) -> FeatureGates {
    let mut gates = FeatureGates::new();
    if let Some(map) = v.get("featureGates").and_then(Value::as_object) {
        for (k, on) in map {
            gates.set(k, on.as_bool().unwrap_or(false));
        }
    }
    gates
}

pub(super) fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A vector pod (`{revision, lifecycleState, ready, specifiedDelete, name?, readyForSeconds?}`).
pub(super) fn vector_pod(i: usize, p: &Value) -> PodInfo {
    let ready = p.get("ready").and_then(Value::as_bool).unwrap_or(false);
    let name = p
        .get("name")
        .and_then(Value::as_str)
        .map_or_else(|| format!("pod-{i}"), str::to_owned);
    PodInfo {
        uid: name.clone(),
        name,
        revision: str_field(p, "revision"),
        lifecycle_state: str_field(p, "lifecycleState"),
        phase: "Running".to_owned(),
        node_name: "node".to_owned(),
        ready,
        in_place_update_ready: true,
        ready_since: p
            .get("readyForSeconds")
            .and_then(Value::as_i64)
            .map(|s| NOW - s),
        specified_delete: p
            .get("specifiedDelete")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..PodInfo::default()
    }
}

pub(super) struct DiffInput {
    pub(super) cs: CloneSetParams,
    pub(super) pods: Vec<PodInfo>,
    pub(super) current: String,
    pub(super) update: String,
    pub(super) mode: IsPodUpdateMode,
    pub(super) gates: FeatureGates,
}

pub(super) fn diff_input(inp: &Value) -> Result<DiffInput, String> {
    let exclude = inp
        .get("cloneSetLabels")
        .and_then(|l| l.get(EXCLUDE_PREPARING_DELETE_LABEL))
        .and_then(Value::as_str)
        == Some("true");
    let cs = CloneSetParams {
        replicas: field(inp, "replicas")
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(1),
        partition: int_or_string(field(inp, "partition"))?,
        max_unavailable: int_or_string(field(inp, "maxUnavailable"))?,
        max_surge: int_or_string(field(inp, "maxSurge"))?,
        paused: field(inp, "paused").as_bool().unwrap_or(false),
        scale_max_unavailable: int_or_string(field(inp, "scaleStrategyMaxUnavailable"))?,
        min_ready_seconds: field(inp, "minReadySeconds")
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(0),
        exclude_preparing_delete: exclude,
        pods_to_delete: Vec::new(),
    };
    let mode = match field(inp, "isPodUpdate").as_str() {
        Some("revisionOnly") | None => IsPodUpdateMode::RevisionOnly,
        Some("revisionOrPreparingUpdate") => IsPodUpdateMode::RevisionOrPreparingUpdate,
        Some(other) => return Err(format!("unknown isPodUpdate {other:?}")),
    };
    let pods = field(inp, "pods")
        .as_array()
        .ok_or("input has no pods")?
        .iter()
        .enumerate()
        .map(|(i, p)| vector_pod(i, p))
        .collect();
    Ok(DiffInput {
        cs,
        pods,
        current: str_field(inp, "currentRevision"),
        update: str_field(inp, "updateRevision"),
        mode,
        gates: gates(inp),
    })
}

pub(super) fn run_diffs(d: &DiffInput) -> ExpectationDiffs {
    calculate_diffs(&d.cs, &d.pods, &d.current, &d.update, d.mode, &d.gates, NOW)
}

pub(super) fn diffs_json(r: &ExpectationDiffs) -> Value {
    json!({
        "scaleUpNum": r.scale_up_num,
        "scaleUpNumOldRevision": r.scale_up_num_old_revision,
        "scaleDownNum": r.scale_down_num,
        "scaleDownNumOldRevision": r.scale_down_num_old_revision,
        "scaleUpLimit": r.scale_up_limit,
        "deleteReadyLimit": r.delete_ready_limit,
        "useSurge": r.use_surge,
        "useSurgeOldRevision": r.use_surge_old_revision,
        "updateNum": r.update_num,
        "updateMaxUnavailable": r.update_max_unavailable,
    })
}

/// `expected` minus its prose `note`.
pub(super) fn without_note(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("note");
    }
    v
}

pub(super) fn indexes(v: &Value, key: &str) -> Result<Vec<usize>, String> {
    parse(key, field(v, key))
}
