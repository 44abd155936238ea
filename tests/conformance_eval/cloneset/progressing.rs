//! cloneset-progressing: the v1.9.0 `Progressing` condition (`calculateProgressingStatus`,
//! `getRequeueSecondsFromCondition`, `HasProgressDeadline`, `CloneSetPartitionAvailable`) and
//! the conditions a reconcile writes at each version (`status::finish`: C1 + C2).
//!
//! Condition times in the vectors are unix seconds (`null` is Go's zero time).

use kruise_tui::{
    api::{
        CloneSet,
        cloneset::{CloneSetCondition, CloneSetSpec, CloneSetStatus},
    },
    kruise::{
        KruiseVersion,
        cloneset::{progress, reconcile::status},
    },
};
use serde_json::{Value, json};

use super::field;
use crate::eval::common::{expect_eq, expected, input, parse};

const TIMES: [&str; 2] = ["lastUpdateTime", "lastTransitionTime"];

/// Vector shape (times in seconds) → API shape (RFC 3339).
fn to_api(conditions: &Value) -> Result<Value, String> {
    let mut out = conditions.clone();
    for c in out.as_array_mut().into_iter().flatten() {
        for key in TIMES {
            if let Some(secs) = c.get(key).and_then(Value::as_i64) {
                let t = jiff::Timestamp::from_second(secs).map_err(|e| e.to_string())?;
                c[key] = json!(t.to_string());
            }
        }
    }
    Ok(out)
}

/// API shape → vector shape.
fn to_vector(c: &CloneSetCondition) -> Value {
    let secs = |t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>| {
        progress::seconds(t).map_or(Value::Null, |s| json!(s))
    };
    json!({
        "type": c.type_,
        "status": c.status,
        "reason": c.reason,
        "message": c.message,
        "lastUpdateTime": secs(c.last_update_time.as_ref()),
        "lastTransitionTime": secs(c.last_transition_time.as_ref()),
    })
}

fn status_of(v: &Value) -> Result<CloneSetStatus, String> {
    let mut v = if v.is_null() { json!({}) } else { v.clone() };
    if let Some(conds) = v.get("conditions") {
        v["conditions"] = to_api(conds)?;
    }
    parse("status", &v)
}

fn cloneset(inp: &Value, stored: &Value) -> Result<CloneSet, String> {
    let spec: CloneSetSpec = parse("spec", field(inp, "spec"))?;
    Ok(CloneSet {
        spec,
        status: (!stored.is_null()).then(|| status_of(stored)).transpose()?,
        ..CloneSet::default()
    })
}

fn now(inp: &Value) -> i64 {
    field(inp, "now").as_i64().unwrap_or(0)
}

pub fn progressing(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    match op {
        Some("progressing") => {
            let cs = cloneset(inp, &Value::Null)?;
            let mut new = status_of(field(inp, "newStatus"))?;
            let requeue = progress::calculate(&cs, &mut new, now(inp));
            let cond = progress::condition(&new, progress::PROGRESSING).map(to_vector);
            expect_eq(
                expected(case)?,
                &json!({ "condition": cond, "requeueSeconds": requeue }),
            )
        }
        Some("requeueSeconds") => {
            let cond: Option<CloneSetCondition> = match field(inp, "condition") {
                Value::Null => None,
                c => Some(parse("condition", &to_api(&json!([c]))?[0])?),
            };
            let pds = field(inp, "progressDeadlineSeconds").as_i64().unwrap_or(0);
            let pds = i32::try_from(pds).map_err(|e| e.to_string())?;
            let got = progress::requeue_seconds(cond.as_ref(), pds, now(inp));
            expect_eq(expected(case)?, &json!({ "seconds": got }))
        }
        Some("hasProgressDeadline") => {
            let cs = cloneset(inp, &Value::Null)?;
            let got = progress::has_progress_deadline(&cs);
            expect_eq(expected(case)?, &json!({ "value": got }))
        }
        Some("partitionAvailable") => {
            let cs = cloneset(inp, &Value::Null)?;
            let new = status_of(field(inp, "newStatus"))?;
            let got = progress::is_partition_available(&cs, &new);
            expect_eq(expected(case)?, &json!({ "value": got }))
        }
        Some("finishStatus") => {
            let old = case
                .get("expected_v1_8_4")
                .ok_or("finishStatus case has no expected_v1_8_4")?;
            finish_at(inp, expected(case)?, KruiseVersion::V1_9)
                .map_err(|e| format!("v1.9.0 behaviour:\n{e}"))?;
            finish_at(inp, old, KruiseVersion::V1_8).map_err(|e| format!("v1.8.4 behaviour:\n{e}"))
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

fn finish_at(inp: &Value, exp: &Value, version: KruiseVersion) -> Result<(), String> {
    let cs = cloneset(inp, field(inp, "storedStatus"))?;
    let mut new = status_of(field(inp, "newStatus"))?;
    let failure = field(inp, "failure");
    let failure = (!failure.is_null()).then(|| {
        (
            failure["type"].as_str().unwrap_or_default(),
            failure["message"].as_str().unwrap_or_default(),
        )
    });
    let done = status::finish(&cs, &mut new, failure, version, now(inp));
    let conditions: Vec<Value> = new.conditions.iter().map(to_vector).collect();
    expect_eq(
        exp,
        &json!({
            "conditions": conditions,
            "changed": done.changed,
            "requeueSeconds": done.requeue_after,
        }),
    )
}
