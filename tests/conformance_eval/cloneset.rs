//! Evaluators for: diffs lifecycle partition scale_down_order scale scatter update_count update_order int_or_percent revision_hash.

use serde_json::Value;

pub fn diffs(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn lifecycle(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn partition(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn scale_down_order(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn scale(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn scatter(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn update_count(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn update_order(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn int_or_percent(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}

pub fn revision_hash(_op: Option<&str>, _case: &Value) -> Result<(), String> {
    Err("not evaluated yet".to_owned())
}
