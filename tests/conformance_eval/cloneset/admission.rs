//! cloneset-admission: the `vcloneset.kb.io` validating webhook on CREATE / UPDATE, after
//! upstream's defaulting, at v1.9.0 (`expected`) and v1.8.4 (`expected_v1_8_4`, required).

use kruise_tui::{
    api::CloneSet,
    kruise::{
        KruiseVersion,
        cloneset::validate::{Request, admit, defaulted},
    },
};
use serde_json::{Value, json};

use super::field;
use crate::eval::common::{expect_subset, expected, input, no_op, parse};

fn object(v: &Value) -> Result<Option<CloneSet>, String> {
    match v {
        Value::Null => Ok(None),
        v => parse("CloneSet", v).map(|cs: CloneSet| Some(defaulted(&cs))),
    }
}

fn at(inp: &Value, exp: &Value, version: KruiseVersion) -> Result<(), String> {
    let cs = object(field(inp, "object"))?.ok_or("no object")?;
    let old = object(field(inp, "oldObject"))?;
    let selector_set = field(field(inp, "object"), "spec")
        .get("selector")
        .is_some_and(|s| !s.is_null());
    let no_pods = |_: &str| None;
    let (verdict, errs) = admit(&Request {
        cs: &cs,
        old: old.as_ref(),
        selector_set,
        version,
        pods: &no_pods,
    });
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    let actual = json!({
        "allowed": verdict.allowed,
        "code": if verdict.allowed { Value::Null } else { json!(verdict.code) },
        "message": verdict.message,
        "fields": fields,
    });
    expect_subset(exp, &actual)
}

pub fn admission(op: Option<&str>, case: &Value) -> Result<(), String> {
    no_op(op, "cloneset-admission")?;
    let inp = input(case)?;
    let old = case
        .get("expected_v1_8_4")
        .ok_or("cloneset-admission case has no expected_v1_8_4")?;
    at(inp, expected(case)?, KruiseVersion::V1_9).map_err(|e| format!("v1.9.0 behaviour:\n{e}"))?;
    at(inp, old, KruiseVersion::V1_8).map_err(|e| format!("v1.8.4 behaviour:\n{e}"))
}
