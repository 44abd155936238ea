//! The CloneSet v1beta1 ⇄ v1alpha1 field mapping (upstream `cloneset_conversion.go` at HEAD).
//!
//! v1beta1 `updateStrategy` is `{type: RollingUpdate|OnDelete, rollingUpdate: {partition,
//! maxUnavailable, maxSurge, podUpdatePolicy, paused, priorityStrategy, scatterStrategy,
//! inPlaceUpdateStrategy}}`; v1alpha1 keeps those flat, with `podUpdatePolicy` as `type`.
//! `scaleStrategy.enablePVCReuse` (default false) is the inverse of `disablePVCReuse`, and
//! `scaleStrategy.excludePreparingDelete` is the v1alpha1 label below (upstream does not convert
//! it back; we do, since our logic reads the label). The image pre-download settings that v1beta1
//! keeps in `rollingUpdate.inPlaceUpdateStrategy` are annotations in v1alpha1, as upstream
//! converts them.

use serde_json::{Map, Value};

use crate::api::keys::{
    CLONESET_SCALING_EXCLUDE_PREPARING_DELETE, IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
    IMAGE_PREDOWNLOAD_PARALLELISM, IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS,
};

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

/// v1beta1 `inPlaceUpdateStrategy` fields that are workload annotations in v1alpha1.
const PREDOWNLOAD: [(&str, &str); 3] = [
    ("imagePreDownloadParallelism", IMAGE_PREDOWNLOAD_PARALLELISM),
    (
        "imagePreDownloadTimeoutSeconds",
        IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS,
    ),
    (
        "imagePreDownloadMinUpdatedReadyPods",
        IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
    ),
];

/// Rewrites a v1beta1 CloneSet JSON object into the v1alpha1 (internal) shape, in place.
pub(super) fn to_internal(value: &mut Value) {
    let mut exclude_preparing_delete = false;
    let mut annotations = Vec::new();
    if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(strategy) = spec
            .get_mut("updateStrategy")
            .and_then(Value::as_object_mut)
        {
            lift_rolling_update(strategy);
            if let Some(in_place) = strategy
                .get_mut("inPlaceUpdateStrategy")
                .and_then(Value::as_object_mut)
            {
                for (field, key) in PREDOWNLOAD {
                    let text = match in_place.remove(field) {
                        Some(Value::String(s)) => s,
                        Some(Value::Number(n)) => n.to_string(),
                        _ => continue,
                    };
                    annotations.push((key, text));
                }
            }
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
        set_meta(
            value,
            "labels",
            CLONESET_SCALING_EXCLUDE_PREPARING_DELETE,
            "true",
        );
    }
    for (key, text) in annotations {
        set_meta(value, "annotations", key, &text);
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

/// Sets `metadata.<map>.<key>` (`map` is `labels` or `annotations`).
fn set_meta(value: &mut Value, map: &str, key: &str, text: &str) {
    let Some(object) = value.as_object_mut() else {
        return;
    };
    let metadata = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(metadata) = metadata.as_object_mut() else {
        return;
    };
    let entries = metadata
        .entry(map)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(entries) = entries.as_object_mut() {
        entries.insert(key.into(), text.into());
    }
}

/// Rewrites an internal (v1alpha1-shaped) CloneSet JSON object into the v1beta1 shape, in place.
pub(super) fn from_internal(value: &mut Value) {
    let meta = |map: &str, key: &str| {
        value
            .pointer(&format!("/metadata/{map}/{}", key.replace('/', "~1")))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let exclude =
        meta("labels", CLONESET_SCALING_EXCLUDE_PREPARING_DELETE).as_deref() == Some("true");
    let predownload: Vec<(&str, Value)> = PREDOWNLOAD
        .iter()
        .filter_map(|(field, key)| {
            let text = meta("annotations", key)?;
            let number = text.parse::<i32>().ok().map(Value::from);
            match (*field, number) {
                (_, Some(n)) => Some((*field, n)),
                // Parallelism is int-or-string ("50%"); the others must be integers.
                ("imagePreDownloadParallelism", None) => Some((*field, Value::from(text))),
                _ => None,
            }
        })
        .collect();
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
        if !predownload.is_empty() {
            let in_place = rolling
                .entry("inPlaceUpdateStrategy")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(in_place) = in_place.as_object_mut() {
                for (field, v) in predownload {
                    in_place.insert(field.into(), v);
                }
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
    use crate::api::keys::{
        CLONESET_SCALING_EXCLUDE_PREPARING_DELETE, IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
        IMAGE_PREDOWNLOAD_PARALLELISM, IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS,
    };

    fn v1beta1_object() -> serde_json::Value {
        json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 5,
                "progressDeadlineSeconds": 600,
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
                        "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10,
                            "imagePreDownloadParallelism": "50%",
                            "imagePreDownloadMinUpdatedReadyPods": 2}
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
        assert_eq!(cs.spec.progress_deadline_seconds, Some(600));
        let labels = cs.metadata.labels.as_ref().unwrap();
        assert_eq!(labels[CLONESET_SCALING_EXCLUDE_PREPARING_DELETE], "true");
        let annotations = cs.metadata.annotations.as_ref().unwrap();
        assert_eq!(annotations[IMAGE_PREDOWNLOAD_PARALLELISM], "50%");
        assert_eq!(annotations[IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS], "2");
        assert!(!annotations.contains_key(IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS));
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
        let in_place = &rolling["inPlaceUpdateStrategy"];
        assert_eq!(in_place["gracePeriodSeconds"], 10);
        assert_eq!(in_place["imagePreDownloadParallelism"], "50%");
        assert_eq!(in_place["imagePreDownloadMinUpdatedReadyPods"], 2);
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
