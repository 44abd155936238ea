//! Evaluators for: sidecarset crr probe_marker (one submodule per vector file).

mod crr_eval;
mod probe_marker_eval;
mod sidecarset_eval;
mod sidecarset_flows;

use serde_json::Value;

pub fn sidecarset(op: Option<&str>, case: &Value) -> Result<(), String> {
    sidecarset_eval::eval(op.ok_or("case has no op")?, case)
}

pub fn crr(op: Option<&str>, case: &Value) -> Result<(), String> {
    crr_eval::eval(op.ok_or("case has no op")?, case)
}

pub fn probe_marker(op: Option<&str>, case: &Value) -> Result<(), String> {
    probe_marker_eval::eval(op.ok_or("case has no op")?, case)
}
