//! Evaluators for: sidecarset crr probe_marker.

use serde_json::Value;

pub fn sidecarset(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn crr(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn probe_marker(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}
