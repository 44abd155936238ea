//! cloneset-lifecycle: one Update() pass on a single pod (lifecycle states, in-place update,
//! grace period, recreation).

use std::collections::BTreeMap;

use kruise_tui::kruise::{
    FeatureGates, KruiseVersion,
    cloneset::{
        CloneSetParams, SPECIFIED_DELETE_LABEL,
        inplace::{self, PodModel},
        lifecycle::Lifecycle,
        update, update_pass,
    },
};
use serde_json::{Value, json};

use super::{NOW, field, str_field};
use crate::eval::common::{expect_eq, expect_subset, expected, input, no_op, parse};

/// Replaces `<now>` / `<now-Ns>` placeholders with RFC 3339 times around [`NOW`].
fn fill_times(v: &Value) -> Value {
    match v {
        Value::String(s) if s.starts_with("<now") && s.ends_with('>') => {
            let offset = s
                .trim_start_matches("<now")
                .trim_end_matches('>')
                .trim_start_matches('-')
                .trim_end_matches('s')
                .parse::<i64>()
                .unwrap_or(0);
            Value::String(inplace::rfc3339(NOW - offset))
        }
        Value::Array(a) => Value::Array(a.iter().map(fill_times).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), fill_times(v))).collect())
        }
        other => other.clone(),
    }
}

fn lifecycle_pod(p: &Value) -> Result<PodModel, String> {
    let labels: BTreeMap<String, String> = parse("pod labels", field(p, "labels"))?;
    let mut annotations = BTreeMap::new();
    for (k, v) in field(p, "annotations").as_object().into_iter().flatten() {
        let text = match fill_times(v) {
            Value::String(s) => s,
            other => other.to_string(),
        };
        annotations.insert(k.clone(), text);
    }
    let images: BTreeMap<String, String> = parse("containers", field(p, "containers"))?;
    let ids: BTreeMap<String, String> = parse("containerImageIDs", field(p, "containerImageIDs"))?;
    let mut conditions = Vec::new();
    for (key, type_) in [
        ("readyCondition", "Ready"),
        (
            "inPlaceUpdateReadyCondition",
            inplace::IN_PLACE_UPDATE_READY,
        ),
    ] {
        if let Some(status) = field(p, key).as_str() {
            conditions.push(inplace::Condition {
                type_: type_.to_owned(),
                status: status.to_owned(),
                reason: String::new(),
                last_transition: Some(NOW - 1000),
            });
        }
    }
    Ok(PodModel {
        name: "pod-0".to_owned(),
        // `nodeName` is optional: the pod is scheduled unless a case says otherwise.
        node_name: field(p, "nodeName")
            .as_str()
            .map_or_else(|| "node".to_owned(), str::to_owned),
        phase: str_field(p, "phase"),
        labels,
        annotations,
        finalizers: parse("finalizers", field(p, "finalizers"))?,
        readiness_gates: parse("readinessGates", field(p, "readinessGates"))?,
        conditions,
        containers: images
            .iter()
            .map(|(name, image)| inplace::Container {
                name: name.clone(),
                image: image.clone(),
                status_image: image.clone(),
                image_id: ids.get(name).cloned().unwrap_or_default(),
            })
            .collect(),
        created: Some(NOW - 2000),
    })
}

/// A case with `expected_v1_8_4` is checked at both versions (`expected` is v1.9.0's); the
/// others hold v1.8.4 facts and run at v1.8.
pub fn lifecycle(op: Option<&str>, case: &Value) -> Result<(), String> {
    no_op(op, "cloneset-lifecycle")?;
    match case.get("expected_v1_8_4") {
        None => lifecycle_at(case, expected(case)?, KruiseVersion::V1_8),
        Some(old) => {
            lifecycle_at(case, expected(case)?, KruiseVersion::V1_9)
                .map_err(|e| format!("v1.9.0 behaviour:\n{e}"))?;
            lifecycle_at(case, old, KruiseVersion::V1_8)
                .map_err(|e| format!("v1.8.4 behaviour:\n{e}"))
        }
    }
}

fn lifecycle_at(case: &Value, exp: &Value, version: KruiseVersion) -> Result<(), String> {
    let inp = input(case)?;
    let image_only = field(inp, "templateDiffIsImageOnly").as_bool();
    let update_name = str_field(inp, "updateRevision");
    let mut revisions = Vec::new();
    for (name, t) in field(inp, "revisionTemplates")
        .as_object()
        .ok_or("no revisionTemplates")?
    {
        let containers = field(t, "containers")
            .as_array()
            .ok_or("revision has no containers")?
            .iter()
            .map(|c| (str_field(c, "name"), str_field(c, "image")))
            .collect();
        let comparable = !(image_only == Some(false) && *name == update_name);
        revisions.push(inplace::RevisionTemplate {
            name: name.clone(),
            containers: comparable.then_some(containers),
        });
    }
    let find = |name: &str| {
        revisions
            .iter()
            .find(|r| r.name == name)
            .cloned()
            .ok_or_else(|| format!("no revision template {name}"))
    };
    let current = find(&str_field(inp, "currentRevision"))?;
    let update_rev = find(&update_name)?;
    let lc: Option<Lifecycle> = match field(inp, "lifecycle") {
        Value::Null => None,
        v => Some(parse("lifecycle", v)?),
    };
    let cs = CloneSetParams {
        replicas: field(inp, "replicas")
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(1),
        ..CloneSetParams::default()
    };
    let mut pods = vec![lifecycle_pod(field(inp, "pod"))?];
    let gates = FeatureGates::new();
    let outcome = update_pass::update_pass(
        &update_pass::UpdatePassInput {
            cs: &cs,
            strategy_type: &str_field(inp, "updateStrategyType"),
            grace_seconds: field(field(inp, "inPlaceUpdateStrategy"), "gracePeriodSeconds")
                .as_i64()
                .and_then(|g| i32::try_from(g).ok())
                .unwrap_or(0),
            lifecycle: lc.as_ref(),
            order: &update::UpdateOrder::default(),
            current_revision: &current,
            update_revision: &update_rev,
            revisions: &revisions,
            gates: &gates,
            version,
            now: NOW,
        },
        &mut pods,
    );
    if !outcome.errors.is_empty() {
        return Err(format!("update failed: {:?}", outcome.errors));
    }
    let pod = &pods[0];
    let cond = pod.condition(inplace::IN_PLACE_UPDATE_READY);
    let containers: BTreeMap<&str, &str> = pod
        .containers
        .iter()
        .map(|c| (c.name.as_str(), c.image.as_str()))
        .collect();
    let actual = json!({
        "labels": pod.labels,
        "specifiedDelete": pod.labels.contains_key(SPECIFIED_DELETE_LABEL),
        "containers": containers,
        "inPlaceUpdateReadyCondition": cond.map(|c| c.status.clone()),
        "inPlaceUpdateReadyReason": cond.map(|c| c.reason.clone()),
    });
    let mut exp_rest = exp.clone();
    let exp_annotations = exp_rest.as_object_mut().and_then(|o| {
        o.remove("requeueAfterSecondsAtLeast");
        o.remove("annotations")
    });
    expect_subset(&exp_rest, &actual)?;
    if let Some(at_least) = exp
        .get("requeueAfterSecondsAtLeast")
        .and_then(Value::as_i64)
    {
        match outcome.requeue_after {
            Some(d) if d >= at_least => {}
            other => {
                return Err(format!(
                    "requeue after {other:?}, expected at least {at_least}s"
                ));
            }
        }
    }
    for (key, want) in exp_annotations
        .as_ref()
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let got = pod.annotations.get(key);
        match (fill_times(want), got) {
            (Value::Null, None) => {}
            (Value::Null, Some(g)) => return Err(format!("{key}: expected removed, found {g}")),
            (Value::String(w), Some(g)) if w == *g => {}
            (w @ Value::Object(_), Some(g)) => {
                let decoded: Value = serde_json::from_str(g).map_err(|e| format!("{key}: {e}"))?;
                expect_eq(&w, &decoded).map_err(|e| format!("annotation {key}:\n{e}"))?;
            }
            (w, g) => return Err(format!("{key}: expected {w}, found {g:?}")),
        }
    }
    Ok(())
}
