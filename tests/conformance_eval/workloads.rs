//! Evaluators for: statefulset_partition daemonset_partition deletion_protection pub_budget.

use serde_json::Value;

pub fn statefulset_partition(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn daemonset_partition(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn deletion_protection(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn pub_budget(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}
