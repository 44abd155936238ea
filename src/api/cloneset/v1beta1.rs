//! The CloneSet v1beta1 ⇄ v1alpha1 field mapping (upstream `cloneset_conversion.go` at HEAD).
//!
//! v1beta1 `updateStrategy` is `{type: RollingUpdate|OnDelete, rollingUpdate: {partition,
//! maxUnavailable, maxSurge, podUpdatePolicy, paused, priorityStrategy, scatterStrategy,
//! inPlaceUpdateStrategy}}`; v1alpha1 keeps those flat, with `podUpdatePolicy` as `type`.
//! `scaleStrategy.enablePVCReuse` (default false) is the inverse of `disablePVCReuse`, and
//! `scaleStrategy.excludePreparingDelete` is the v1alpha1 label below.

use serde_json::{Map, Value};

use crate::api::keys::CLONESET_SCALING_EXCLUDE_PREPARING_DELETE;

/// The `rollingUpdate` fields that sit directly in the v1alpha1 `updateStrategy`.
const LIFTED: [&str; 7] = [
    "partition",
    "maxUnavailable",
    "maxSurge",
    "paused",
    "priorityStrategy",
    "scatterStrategy",
    "inPlaceUpdateStrategy",
];

/// Rewrites a v1beta1 CloneSet JSON object into the v1alpha1 (internal) shape, in place.
pub(super) fn to_internal(value: &mut Value) {
    let mut exclude_preparing_delete = false;
    if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(strategy) = spec
            .get_mut("updateStrategy")
            .and_then(Value::as_object_mut)
        {
            lift_rolling_update(strategy);
        }
        let scale = spec
            .entry("scaleStrategy")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(scale) = scale.as_object_mut() {
            let enable = scale.remove("enablePVCReuse").and_then(|v| v.as_bool());
            if enable != Some(true) {
                scale.insert("disablePVCReuse".into(), Value::Bool(true));
            }
            exclude_preparing_delete = scale
                .remove("excludePreparingDelete")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
        }
    }
    if exclude_preparing_delete {
        set_label(value, CLONESET_SCALING_EXCLUDE_PREPARING_DELETE, "true");
    }
}

fn lift_rolling_update(strategy: &mut Map<String, Value>) {
    let kind = strategy.remove("type");
    let mut rolling = match strategy.remove("rollingUpdate") {
        Some(Value::Object(rolling)) => rolling,
        _ => Map::new(),
    };
    for key in LIFTED {
        if let Some(v) = rolling.remove(key) {
            strategy.insert(key.into(), v);
        }
    }
    let policy = rolling.remove("podUpdatePolicy");
    let internal_type = match kind.as_ref().and_then(Value::as_str) {
        Some("OnDelete") => Some(Value::from("OnDelete")),
        _ => policy,
    };
    if let Some(t) = internal_type {
        strategy.insert("type".into(), t);
    }
}

fn set_label(value: &mut Value, key: &str, label: &str) {
    let Some(object) = value.as_object_mut() else {
        return;
    };
    let metadata = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(metadata) = metadata.as_object_mut() else {
        return;
    };
    let labels = metadata
        .entry("labels")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(key.into(), label.into());
    }
}

/// Rewrites an internal (v1alpha1-shaped) CloneSet JSON object into the v1beta1 shape, in place.
pub(super) fn from_internal(value: &mut Value) {
    let exclude = value
        .pointer(&format!(
            "/metadata/labels/{}",
            CLONESET_SCALING_EXCLUDE_PREPARING_DELETE.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        == Some("true");
    let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(strategy) = spec
        .get_mut("updateStrategy")
        .and_then(Value::as_object_mut)
    {
        let mut rolling = Map::new();
        for key in LIFTED {
            if let Some(v) = strategy.remove(key) {
                rolling.insert(key.into(), v);
            }
        }
        let kind = match strategy.remove("type") {
            Some(Value::String(t)) if t == "OnDelete" => "OnDelete",
            Some(policy) => {
                rolling.insert("podUpdatePolicy".into(), policy);
                "RollingUpdate"
            }
            None => "RollingUpdate",
        };
        strategy.insert("type".into(), kind.into());
        if !rolling.is_empty() {
            strategy.insert("rollingUpdate".into(), Value::Object(rolling));
        }
    }
    let scale = spec
        .entry("scaleStrategy")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(scale) = scale.as_object_mut() {
        let disabled = scale
            .remove("disablePVCReuse")
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        scale.insert("enablePVCReuse".into(), Value::Bool(!disabled));
        if exclude {
            scale.insert("excludePreparingDelete".into(), Value::Bool(true));
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use serde_json::json;

    use crate::api::CloneSet;
    use crate::api::cloneset::{from_served_json, to_served_json};
    use crate::api::keys::CLONESET_SCALING_EXCLUDE_PREPARING_DELETE;

    fn v1beta1_object() -> serde_json::Value {
        json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 5,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}},
                "scaleStrategy": {"enablePVCReuse": true, "excludePreparingDelete": true},
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {
                        "partition": "40%",
                        "maxUnavailable": 2,
                        "maxSurge": "10%",
                        "paused": true,
                        "podUpdatePolicy": "InPlaceIfPossible",
                        "scatterStrategy": [{"key": "zone", "value": "a"}],
                        "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}
                    }
                }
            }
        })
    }

    #[test]
    fn v1beta1_rolling_update_fields_are_lifted() {
        let cs = from_served_json("v1beta1", v1beta1_object()).unwrap();
        let s = &cs.spec.update_strategy;
        assert_eq!(s.partition, Some(IntOrString::String("40%".into())));
        assert_eq!(s.max_unavailable, Some(IntOrString::Int(2)));
        assert_eq!(s.max_surge, Some(IntOrString::String("10%".into())));
        assert!(s.paused);
        assert_eq!(s.type_.as_deref(), Some("InPlaceIfPossible"));
        assert_eq!(s.scatter_strategy[0].key, "zone");
        assert_eq!(
            s.in_place_update_strategy
                .as_ref()
                .unwrap()
                .grace_period_seconds,
            Some(10)
        );
        assert!(!cs.spec.scale_strategy.as_ref().unwrap().disable_pvc_reuse);
        let labels = cs.metadata.labels.as_ref().unwrap();
        assert_eq!(labels[CLONESET_SCALING_EXCLUDE_PREPARING_DELETE], "true");
    }

    #[test]
    fn v1beta1_defaults_disable_pvc_reuse_and_on_delete_is_kept() {
        let mut obj = v1beta1_object();
        obj["spec"]["scaleStrategy"] = json!({});
        obj["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
        let cs = CloneSet::from_served_json("v1beta1", obj).unwrap();
        assert!(cs.spec.scale_strategy.unwrap().disable_pvc_reuse);
        assert_eq!(cs.spec.update_strategy.type_.as_deref(), Some("OnDelete"));
        assert!(!cs.spec.update_strategy.paused);
        assert_eq!(cs.spec.update_strategy.partition, None);
    }

    #[test]
    fn v1alpha1_reads_as_is() {
        let obj = json!({
            "metadata": {"name": "web"},
            "spec": {"updateStrategy": {"type": "ReCreate", "partition": 3, "paused": true},
                     "scaleStrategy": {"podsToDelete": ["web-abc"], "disablePVCReuse": true}}
        });
        let cs = from_served_json("v1alpha1", obj).unwrap();
        assert_eq!(cs.spec.update_strategy.partition, Some(IntOrString::Int(3)));
        assert_eq!(cs.spec.update_strategy.type_.as_deref(), Some("ReCreate"));
        let scale = cs.spec.scale_strategy.unwrap();
        assert_eq!(scale.pods_to_delete, vec!["web-abc".to_string()]);
        assert!(scale.disable_pvc_reuse);
    }

    #[test]
    fn unknown_version_is_an_error() {
        let err = from_served_json("v2", json!({})).unwrap_err();
        assert!(err.to_string().contains("v2"), "{err}");
        assert!(to_served_json("v9", &CloneSet::default()).is_err());
    }

    #[test]
    fn v1beta1_round_trips_through_the_internal_model() {
        let cs = from_served_json("v1beta1", v1beta1_object()).unwrap();
        let served = to_served_json("v1beta1", &cs).unwrap();
        let rolling = &served["spec"]["updateStrategy"]["rollingUpdate"];
        assert_eq!(served["spec"]["updateStrategy"]["type"], "RollingUpdate");
        assert_eq!(rolling["podUpdatePolicy"], "InPlaceIfPossible");
        assert_eq!(rolling["partition"], "40%");
        assert_eq!(rolling["paused"], true);
        assert_eq!(served["spec"]["scaleStrategy"]["enablePVCReuse"], true);
        assert_eq!(
            served["spec"]["scaleStrategy"]["excludePreparingDelete"],
            true
        );
        assert_eq!(served["apiVersion"], "apps.kruise.io/v1beta1");
        assert_eq!(from_served_json("v1beta1", served).unwrap(), cs);
    }

    #[test]
    fn v1alpha1_round_trips() {
        let cs = from_served_json("v1beta1", v1beta1_object()).unwrap();
        let served = to_served_json("v1alpha1", &cs).unwrap();
        assert_eq!(served["spec"]["updateStrategy"]["partition"], "40%");
        assert_eq!(served["kind"], "CloneSet");
        assert_eq!(from_served_json("v1alpha1", served).unwrap(), cs);
    }
}
