//! Upstream's TestApplyResourcesPolicy / TestValidateResourcesPolicy cases.

use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::*;

fn pod() -> Pod {
    serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "app1", "resources": {"limits": {"cpu": "200m", "memory": "200Mi"}, "requests": {"cpu": "50m", "memory": "100Mi"}}},
        {"name": "app2", "resources": {"limits": {"cpu": "400m", "memory": "400Mi"}, "requests": {"cpu": "100m", "memory": "200Mi"}}}
    ]}}))
    .expect("pod")
}

fn sidecar(policy: serde_json::Value) -> SidecarContainer {
    serde_json::from_value(json!({"name": "sidecar", "image": "s", "resourcesPolicy": policy}))
        .expect("sidecar")
}

#[test]
fn sum_mode_with_percentage_basic() {
    let mut s = sidecar(
        json!({"targetContainersMode": "sum", "targetContainersNameRegex": ".*",
        "resourcesExpr": {"limits": {"cpu": "cpu*50%", "memory": "200Mi"},
                          "requests": {"cpu": "cpu*50%", "memory": "100Mi"}}}),
    );
    apply_resources_policy(&pod(), &mut s, &[]).expect("applied");
    let got = serde_json::to_value(&s.container.resources).expect("json");
    assert_eq!(
        got,
        json!({"limits": {"cpu": "300m", "memory": "200Mi"}, "requests": {"cpu": "75m", "memory": "100Mi"}})
    );
}

#[test]
fn max_mode_unlimited_limit_is_skipped_and_no_match_is_an_error() {
    let mut p = pod();
    if let Some(spec) = p.spec.as_mut() {
        spec.containers[1].resources = None;
    }
    let mut s = sidecar(
        json!({"targetContainersMode": "max", "targetContainersNameRegex": "app",
        "resourcesExpr": {"limits": {"cpu": "cpu"}, "requests": {"cpu": "cpu*2"}}}),
    );
    apply_resources_policy(&p, &mut s, &[]).expect("applied");
    let got = serde_json::to_value(&s.container.resources).expect("json");
    assert_eq!(got, json!({"requests": {"cpu": "100m"}}));
    let mut s = sidecar(
        json!({"targetContainersMode": "sum", "targetContainersNameRegex": "^db$",
        "resourcesExpr": {"limits": {"cpu": "cpu"}}}),
    );
    assert_eq!(
        apply_resources_policy(&p, &mut s, &[]),
        Err("no containers match the regex pattern \"^db$\"".to_owned())
    );
}

#[test]
fn evaluate_resource_expression_cases() {
    let q = |s: &str| Value::quantity(s).expect("quantity");
    let ev = |e: &str, v: Value, lim: bool| evaluate_resource_expression(e, v, lim);
    assert_eq!(
        ev("max(cpu*50%, 100m)", q("150m"), true),
        Ok(Some("100m".to_owned()))
    );
    assert_eq!(
        ev("max(cpu*50%, 100m)", q("400m"), true),
        Ok(Some("200m".to_owned()))
    );
    assert_eq!(
        ev("max(memory*20% + 100Mi, 200Mi)", q("800Mi"), true),
        Ok(Some("260Mi".to_owned()))
    );
    assert_eq!(ev("", q("1"), true), Ok(None));
    assert_eq!(ev("", q("1"), false), Ok(Some("0".to_owned())));
    assert_eq!(ev("2", q("1"), false), Ok(Some("2".to_owned())));
    assert_eq!(
        ev("memory / 2", q("1Gi"), false),
        Ok(Some("512Mi".to_owned()))
    );
}

#[test]
fn validate_resources_policy_cases() {
    let errs = |v: serde_json::Value| {
        validate_resources_policy(
            &serde_json::from_value(v).expect("sidecar"),
            "spec.containers[0].resourcesPolicy",
        )
    };
    // resources policy and resources.limits both configured - should fail
    let e = errs(json!({"name": "s", "resources": {"limits": {"cpu": "1"}},
        "resourcesPolicy": {"targetContainersMode": "sum", "targetContainersNameRegex": ".*", "resourcesExpr": {"limits": {"cpu": "cpu"}}}}));
    assert_eq!(e.len(), 1);
    assert_eq!(
        e[0].message,
        r#"Invalid value: {"targetContainersMode":"sum","targetContainersNameRegex":".*","resourcesExpr":{"limits":{"cpu":"cpu"}}}: resourcesPolicy and resources cannot be configured together"#
    );
    // valid resources policy with empty regex -> 1 error
    let e = errs(
        json!({"name": "s", "resourcesPolicy": {"targetContainersMode": "sum", "resourcesExpr": {"limits": {"cpu": "cpu*50%"}}}}),
    );
    assert_eq!(e.len(), 1);
    assert_eq!(
        e[0].field,
        "spec.containers[0].resourcesPolicy.targetContainersNameRegex"
    );
    // no limits and requests
    let e = errs(
        json!({"name": "s", "resourcesPolicy": {"targetContainersMode": "sum", "targetContainersNameRegex": ".*", "resourcesExpr": {}}}),
    );
    assert_eq!(
        e[0].message,
        "Invalid value: {}: at least one of limits or requests must be configured"
    );
    // invalid expressions
    for bad in ["cpu +", "(cpu*2", "max(cpu)", "mem*2"] {
        let e = errs(
            json!({"name": "s", "resourcesPolicy": {"targetContainersMode": "sum", "targetContainersNameRegex": ".*", "resourcesExpr": {"requests": {"cpu": bad}}}}),
        );
        assert_eq!(e.len(), 1, "{bad}");
        let prefix = format!("Invalid value: {bad:?}: invalid expression: ");
        assert!(e[0].message.starts_with(&prefix), "{bad}: {}", e[0].message);
    }
    let e = errs(
        json!({"name": "s", "resourcesPolicy": {"targetContainersMode": "sum", "targetContainersNameRegex": "(", "resourcesExpr": {"limits": {"cpu": "max(cpu*50%, 50m) + 10m", "memory": "memory*2"}}}}),
    );
    assert_eq!(e.len(), 1);
    assert!(
        e[0].message
            .starts_with("Invalid value: \"(\": invalid regex pattern: ")
    );
}
