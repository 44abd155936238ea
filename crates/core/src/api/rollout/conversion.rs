//! Kruise Rollout's conversion webhook (`api/v1alpha1/conversion.go`; v1beta1 is the hub) as
//! JSON rewrites of a Rollout or BatchRelease between v1alpha1 and v1beta1. Like upstream's, the
//! conversion builds the target's spec and status field by field, so what the other version has
//! no place for is lost (v1alpha1 `rolloutID`, `disableGenerateCanaryService`; v1beta1 match
//! `path`/`queryParams`, blue-green), and the rolling style and TrafficRouting name travel as
//! v1alpha1 annotations.

use serde_json::{Map, Value, json};

use crate::api::keys::{ROLLING_STYLE, ROLLOUT_TRAFFIC_ROUTING};

/// Rewrites `object` (a Rollout or BatchRelease) from `from` to `to`; other kinds and equal
/// versions are left alone.
pub fn convert(kind: &str, from: &str, to: &str, object: &mut Value) {
    match (kind, from, to) {
        ("Rollout", "v1alpha1", "v1beta1") => rollout_to_v1beta1(object),
        ("Rollout", "v1beta1", "v1alpha1") => rollout_to_v1alpha1(object),
        ("BatchRelease", "v1alpha1", "v1beta1") => batchrelease_to_v1beta1(object),
        ("BatchRelease", "v1beta1", "v1alpha1") => batchrelease_to_v1alpha1(object),
        _ => {}
    }
}

/// Copies `keys` of `src` that are present (and not null) into `dst`.
fn copy(dst: &mut Map<String, Value>, src: &Value, keys: &[&str]) {
    for key in keys {
        if let Some(v) = src.get(*key).filter(|v| !v.is_null()) {
            dst.insert((*key).to_owned(), v.clone());
        }
    }
}

fn object_ref(src: &Value) -> Value {
    let mut out = Map::new();
    for key in ["apiVersion", "kind", "name"] {
        out.insert(key.to_owned(), json!(src[key].as_str().unwrap_or_default()));
    }
    Value::Object(out)
}

fn annotations_mut(object: &mut Value) -> Option<&mut Map<String, Value>> {
    let metadata = object
        .as_object_mut()?
        .entry("metadata")
        .or_insert(json!({}));
    let annotations = metadata
        .as_object_mut()?
        .entry("annotations")
        .or_insert(json!({}));
    if annotations.is_null() {
        *annotations = json!({});
    }
    annotations.as_object_mut()
}

fn annotation<'a>(object: &'a Value, key: &str) -> &'a str {
    object["metadata"]["annotations"][key]
        .as_str()
        .unwrap_or_default()
}

/// `ConversionToV1beta1TrafficRoutingRef` and back: the same fields in both versions.
fn traffic_routing(src: &Value) -> Value {
    let mut out = Map::new();
    copy(&mut out, src, &["service", "gracePeriodSeconds"]);
    if let Some(ingress) = src.get("ingress").filter(|v| v.is_object()) {
        let mut i = Map::new();
        copy(&mut i, ingress, &["classType", "name"]);
        out.insert("ingress".into(), Value::Object(i));
    }
    if let Some(gateway) = src.get("gateway").filter(|v| v.is_object()) {
        let mut g = Map::new();
        copy(&mut g, gateway, &["httpRouteName"]);
        out.insert("gateway".into(), Value::Object(g));
    }
    if let Some(refs) = src["customNetworkRefs"].as_array() {
        out.insert(
            "customNetworkRefs".into(),
            Value::Array(refs.iter().map(object_ref).collect()),
        );
    }
    Value::Object(out)
}

/// Only `headers` of each match exists in v1alpha1.
fn matches_headers_only(step: &Value) -> Option<Value> {
    let matches = step["matches"].as_array()?;
    Some(Value::Array(
        matches
            .iter()
            .map(|m| {
                let mut out = Map::new();
                copy(&mut out, m, &["headers"]);
                Value::Object(out)
            })
            .collect(),
    ))
}

fn pod_template_metadata(src: &Value) -> Option<Value> {
    let meta = src
        .get("patchPodTemplateMetadata")
        .filter(|v| v.is_object())?;
    Some(json!({
        "annotations": meta.get("annotations").filter(|v| v.is_object()).cloned().unwrap_or(json!({})),
        "labels": meta.get("labels").filter(|v| v.is_object()).cloned().unwrap_or(json!({})),
    }))
}

fn conditions(src: &Value) -> Option<Value> {
    let conditions = src["conditions"].as_array()?;
    Some(Value::Array(
        conditions
            .iter()
            .map(|c| {
                let mut out = Map::new();
                copy(
                    &mut out,
                    c,
                    &[
                        "type",
                        "status",
                        "lastUpdateTime",
                        "lastTransitionTime",
                        "reason",
                        "message",
                    ],
                );
                Value::Object(out)
            })
            .collect(),
    ))
}

const CANARY_STATUS_FIELDS: [&str; 14] = [
    "observedWorkloadGeneration",
    "observedRolloutID",
    "rolloutHash",
    "stableRevision",
    "podTemplateHash",
    "currentStepIndex",
    "currentStepState",
    "message",
    "lastUpdateTime",
    "finalisingStep",
    "nextStepIndex",
    "canaryRevision",
    "canaryReplicas",
    "canaryReadyReplicas",
];

/// The Rollout status fields both versions share; `top_level_mirror` adds v1beta1's
/// `currentStepIndex`/`currentStepState` (Go writes them without omitempty).
fn rollout_status(src: &Value, top_level_mirror: bool) -> Value {
    let mut out = Map::new();
    copy(&mut out, src, &["observedGeneration", "phase", "message"]);
    if let Some(c) = conditions(src) {
        out.insert("conditions".into(), c);
    }
    if let Some(canary) = src.get("canaryStatus").filter(|v| v.is_object()) {
        let mut c = Map::new();
        copy(&mut c, canary, &CANARY_STATUS_FIELDS);
        out.insert("canaryStatus".into(), Value::Object(c));
    }
    if top_level_mirror {
        out.insert("currentStepIndex".into(), json!(0));
        out.insert("currentStepState".into(), json!(""));
    }
    Value::Object(out)
}

/// `Rollout.ConvertTo` (v1alpha1 → v1beta1).
fn rollout_to_v1beta1(object: &mut Value) {
    let src = object.clone();
    let spec = &src["spec"];
    let canary = &spec["strategy"]["canary"];
    let steps: Vec<Value> = canary["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .map(|step| {
                    let mut out = Map::new();
                    if let Some(weight) = step["weight"].as_i64() {
                        out.insert("traffic".into(), json!(format!("{weight}%")));
                    }
                    copy(&mut out, step, &["requestHeaderModifier"]);
                    if let Some(m) = matches_headers_only(step) {
                        out.insert("matches".into(), m);
                    }
                    match (
                        step.get("replicas").filter(|v| !v.is_null()),
                        step["weight"].as_i64(),
                    ) {
                        (Some(replicas), _) => {
                            out.insert("replicas".into(), replicas.clone());
                        }
                        (None, Some(weight)) => {
                            out.insert("replicas".into(), json!(format!("{weight}%")));
                        }
                        (None, None) => {}
                    }
                    let mut pause = Map::new();
                    copy(&mut pause, &step["pause"], &["duration"]);
                    out.insert("pause".into(), Value::Object(pause));
                    Value::Object(out)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut new_canary = Map::new();
    copy(&mut new_canary, canary, &["failureThreshold"]);
    new_canary.insert("steps".into(), Value::Array(steps));
    if let Some(routings) = canary["trafficRoutings"].as_array() {
        new_canary.insert(
            "trafficRoutings".into(),
            Value::Array(routings.iter().map(traffic_routing).collect()),
        );
    }
    if let Some(meta) = pod_template_metadata(canary) {
        new_canary.insert("patchPodTemplateMetadata".into(), meta);
    }
    if !annotation(&src, ROLLING_STYLE).eq_ignore_ascii_case("partition") {
        new_canary.insert("enableExtraWorkloadForCanary".into(), json!(true));
    }
    let routing = annotation(&src, ROLLOUT_TRAFFIC_ROUTING);
    if !routing.is_empty() {
        new_canary.insert("trafficRoutingRef".into(), json!(routing));
    }
    let mut strategy = Map::new();
    copy(&mut strategy, &spec["strategy"], &["paused"]);
    strategy.insert("canary".into(), Value::Object(new_canary));
    let mut new_spec = Map::new();
    new_spec.insert(
        "workloadRef".into(),
        object_ref(&spec["objectRef"]["workloadRef"]),
    );
    copy(&mut new_spec, spec, &["disabled"]);
    new_spec.insert("strategy".into(), Value::Object(strategy));
    if let Some(m) = object.as_object_mut() {
        m.insert("spec".into(), Value::Object(new_spec));
        if src.get("status").is_some_and(Value::is_object) {
            m.insert("status".into(), rollout_status(&src["status"], true));
        }
    }
}

/// `Rollout.ConvertFrom` (v1beta1 → v1alpha1). A blue-green Rollout has no v1alpha1 form: only
/// its metadata comes through (research §1.4).
fn rollout_to_v1alpha1(object: &mut Value) {
    let src = object.clone();
    let spec = &src["spec"];
    let Some(canary) = spec["strategy"].get("canary").filter(|v| v.is_object()) else {
        if let Some(m) = object.as_object_mut() {
            m.insert("spec".into(), json!({}));
            m.insert("status".into(), json!({}));
        }
        return;
    };
    let steps: Vec<Value> = canary["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .map(|step| {
                    let mut out = Map::new();
                    copy(&mut out, step, &["replicas", "requestHeaderModifier"]);
                    if let Some(traffic) = step["traffic"].as_str() {
                        let value =
                            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(
                                traffic.to_owned(),
                            );
                        let weight =
                            crate::kruise::intstr::scaled_value_apimachinery(&value, 100, true)
                                .unwrap_or(0);
                        out.insert("weight".into(), json!(weight));
                    }
                    if let Some(m) = matches_headers_only(step) {
                        out.insert("matches".into(), m);
                    }
                    let mut pause = Map::new();
                    copy(&mut pause, &step["pause"], &["duration"]);
                    out.insert("pause".into(), Value::Object(pause));
                    Value::Object(out)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut new_canary = Map::new();
    copy(&mut new_canary, canary, &["failureThreshold"]);
    new_canary.insert("steps".into(), Value::Array(steps));
    if let Some(routings) = canary["trafficRoutings"].as_array() {
        new_canary.insert(
            "trafficRoutings".into(),
            Value::Array(routings.iter().map(traffic_routing).collect()),
        );
    }
    if let Some(meta) = pod_template_metadata(canary) {
        new_canary.insert("patchPodTemplateMetadata".into(), meta);
    }
    let mut strategy = Map::new();
    copy(&mut strategy, &spec["strategy"], &["paused"]);
    strategy.insert("canary".into(), Value::Object(new_canary));
    let mut new_spec = Map::new();
    new_spec.insert(
        "objectRef".into(),
        json!({ "workloadRef": object_ref(&spec["workloadRef"]) }),
    );
    new_spec.insert("strategy".into(), Value::Object(strategy));
    copy(&mut new_spec, spec, &["disabled"]);
    let style = if canary["enableExtraWorkloadForCanary"].as_bool() == Some(true) {
        "canary"
    } else {
        "partition"
    };
    let routing = canary["trafficRoutingRef"].as_str().unwrap_or_default();
    if let Some(annotations) = annotations_mut(object) {
        annotations.insert(ROLLING_STYLE.into(), json!(style));
        if !routing.is_empty() {
            annotations.insert(ROLLOUT_TRAFFIC_ROUTING.into(), json!(routing));
        }
    }
    if let Some(m) = object.as_object_mut() {
        m.insert("spec".into(), Value::Object(new_spec));
        if src.get("status").is_some_and(Value::is_object) {
            m.insert("status".into(), rollout_status(&src["status"], false));
        }
    }
}

const RELEASE_PLAN_FIELDS: [&str; 5] = [
    "batchPartition",
    "rolloutID",
    "failureThreshold",
    "finalizingPolicy",
    "enableExtraWorkloadForCanary",
];

const BR_STATUS_FIELDS: [&str; 8] = [
    "stableRevision",
    "updateRevision",
    "observedGeneration",
    "observedRolloutID",
    "observedWorkloadReplicas",
    "observedReleasePlanHash",
    "collisionCount",
    "phase",
];

fn release_plan(src: &Value) -> Map<String, Value> {
    let mut plan = Map::new();
    copy(&mut plan, src, &RELEASE_PLAN_FIELDS);
    if let Some(batches) = src["batches"].as_array() {
        plan.insert(
            "batches".into(),
            Value::Array(
                batches
                    .iter()
                    .map(|b| {
                        let mut out = Map::new();
                        copy(&mut out, b, &["canaryReplicas"]);
                        Value::Object(out)
                    })
                    .collect(),
            ),
        );
    }
    if let Some(meta) = pod_template_metadata(src) {
        plan.insert("patchPodTemplateMetadata".into(), meta);
    }
    plan
}

/// Both versions' BatchRelease status; `canaryStatus` is a value in Go, so always written.
fn batchrelease_status(src: &Value) -> Value {
    let mut out = Map::new();
    copy(&mut out, src, &BR_STATUS_FIELDS);
    if let Some(c) = conditions(src) {
        out.insert("conditions".into(), c);
    }
    let mut canary = Map::new();
    copy(
        &mut canary,
        &src["canaryStatus"],
        &[
            "batchState",
            "batchReadyTime",
            "updatedReplicas",
            "updatedReadyReplicas",
            "noNeedUpdateReplicas",
        ],
    );
    canary.insert(
        "currentBatch".into(),
        json!(src["canaryStatus"]["currentBatch"].as_i64().unwrap_or(0)),
    );
    out.insert("canaryStatus".into(), Value::Object(canary));
    Value::Object(out)
}

/// `BatchRelease.ConvertTo` (v1alpha1 → v1beta1): the rolling style comes from the annotation.
fn batchrelease_to_v1beta1(object: &mut Value) {
    let src = object.clone();
    let mut plan = release_plan(&src["spec"]["releasePlan"]);
    let style = annotation(&src, ROLLING_STYLE);
    for known in ["Partition", "Canary", "BlueGreen"] {
        if style.eq_ignore_ascii_case(known) {
            plan.insert("rollingStyle".into(), json!(known));
        }
    }
    let spec = json!({
        "workloadRef": object_ref(&src["spec"]["targetReference"]["workloadRef"]),
        "releasePlan": Value::Object(plan),
    });
    if let Some(m) = object.as_object_mut() {
        m.insert("spec".into(), spec);
        if src.get("status").is_some_and(Value::is_object) {
            m.insert("status".into(), batchrelease_status(&src["status"]));
        }
    }
}

/// `BatchRelease.ConvertFrom` (v1beta1 → v1alpha1).
fn batchrelease_to_v1alpha1(object: &mut Value) {
    let src = object.clone();
    let mut plan = release_plan(&src["spec"]["releasePlan"]);
    let style = src["spec"]["releasePlan"]["rollingStyle"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if !style.is_empty() {
        plan.insert("rollingStyle".into(), json!(style));
    }
    let spec = json!({
        "targetReference": { "workloadRef": object_ref(&src["spec"]["workloadRef"]) },
        "releasePlan": Value::Object(plan),
    });
    if let Some(annotations) = annotations_mut(object) {
        annotations.insert(ROLLING_STYLE.into(), json!(style.to_lowercase()));
    }
    if let Some(m) = object.as_object_mut() {
        m.insert("spec".into(), spec);
        if src.get("status").is_some_and(Value::is_object) {
            m.insert("status".into(), batchrelease_status(&src["status"]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1alpha1_rollout() -> Value {
        json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1",
            "kind": "Rollout",
            "metadata": {"name": "web", "namespace": "demo",
                         "annotations": {"rollouts.kruise.io/rolling-style": "partition"}},
            "spec": {
                "objectRef": {"workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1",
                                              "kind": "CloneSet", "name": "web"}},
                "rolloutID": "r1",
                "strategy": {"paused": true, "canary": {
                    "steps": [{"replicas": 1}, {"weight": 20, "pause": {"duration": 60}},
                              {"replicas": "100%"}],
                    "failureThreshold": "10%"
                }}
            },
            "status": {"phase": "Progressing", "canaryStatus": {
                "currentStepIndex": 2, "currentStepState": "StepPaused", "nextStepIndex": 3,
                "canaryRevision": "abc", "canaryReplicas": 2, "canaryReadyReplicas": 2,
                "podTemplateHash": "abc", "finalisingStep": ""
            }}
        })
    }

    #[test]
    fn a_v1alpha1_partition_rollout_reads_as_v1beta1_as_upstream_converts_it() {
        let mut obj = v1alpha1_rollout();
        convert("Rollout", "v1alpha1", "v1beta1", &mut obj);
        let spec = &obj["spec"];
        assert_eq!(spec["workloadRef"]["kind"], "CloneSet");
        assert!(spec.get("objectRef").is_none() && spec.get("rolloutID").is_none());
        assert_eq!(spec["strategy"]["paused"], true);
        let canary = &spec["strategy"]["canary"];
        assert!(canary.get("enableExtraWorkloadForCanary").is_none());
        assert_eq!(canary["steps"][1]["replicas"], "20%");
        assert_eq!(canary["steps"][1]["traffic"], "20%");
        assert_eq!(canary["steps"][1]["pause"]["duration"], 60);
        assert_eq!(canary["steps"][0]["pause"], json!({}));
        assert_eq!(
            obj["status"]["canaryStatus"]["currentStepState"],
            "StepPaused"
        );
        assert_eq!(obj["status"]["currentStepIndex"], 0);
        let typed: crate::api::rollout::Rollout =
            serde_json::from_value(obj).expect("v1beta1 shape");
        assert!(typed.is_real_partition());
        assert_eq!(typed.steps().len(), 3);
    }

    #[test]
    fn without_the_style_annotation_the_canary_flag_is_stored_and_comes_back() {
        let mut obj = v1alpha1_rollout();
        obj["metadata"]["annotations"] = json!({"rollouts.kruise.io/trafficrouting": "tr"});
        convert("Rollout", "v1alpha1", "v1beta1", &mut obj);
        let canary = &obj["spec"]["strategy"]["canary"];
        assert_eq!(canary["enableExtraWorkloadForCanary"], true);
        assert_eq!(canary["trafficRoutingRef"], "tr");
        convert("Rollout", "v1beta1", "v1alpha1", &mut obj);
        assert_eq!(obj["metadata"]["annotations"][ROLLING_STYLE], "canary");
        assert_eq!(obj["spec"]["objectRef"]["workloadRef"]["name"], "web");
        assert_eq!(obj["spec"]["strategy"]["canary"]["steps"][1]["weight"], 20);
    }

    #[test]
    fn a_blue_green_rollout_keeps_only_its_metadata_in_v1alpha1() {
        let mut obj = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "bg"},
            "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                     "strategy": {"blueGreen": {"steps": [{"replicas": "50%"}]}}},
            "status": {"phase": "Healthy"}
        });
        convert("Rollout", "v1beta1", "v1alpha1", &mut obj);
        assert_eq!(obj["spec"], json!({}));
        assert_eq!(obj["status"], json!({}));
        assert_eq!(obj["metadata"]["name"], "bg");
    }

    #[test]
    fn a_batchrelease_round_trips_with_its_style_in_an_annotation() {
        let mut obj = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "BatchRelease",
            "metadata": {"name": "web"},
            "spec": {"workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                                     "name": "web"},
                     "releasePlan": {"batches": [{"canaryReplicas": 1}, {"canaryReplicas": "50%"}],
                                     "batchPartition": 1, "rolloutID": "x",
                                     "rollingStyle": "Partition",
                                     "enableExtraWorkloadForCanary": false}},
            "status": {"phase": "Progressing",
                       "canaryStatus": {"currentBatch": 1, "batchState": "Ready"}}
        });
        let original = obj.clone();
        convert("BatchRelease", "v1beta1", "v1alpha1", &mut obj);
        assert_eq!(
            obj["spec"]["targetReference"]["workloadRef"]["kind"],
            "CloneSet"
        );
        assert_eq!(obj["metadata"]["annotations"][ROLLING_STYLE], "partition");
        convert("BatchRelease", "v1alpha1", "v1beta1", &mut obj);
        assert_eq!(obj["spec"], original["spec"]);
        assert_eq!(obj["status"], original["status"]);
    }
}
