//! Kruise's conversion webhook (`apis/apps/v1alpha1/*_conversion.go`): the field moves between
//! the served versions of a kind, as JSON rewrites. A real cluster with kruise-manager converts
//! through these on every read or write at a version other than the stored one; the embedded
//! cluster does the same, and the console and the controllers map a version they read into
//! their internal (mostly v1alpha1-shaped) models with them.
//!
//! | kind | v1alpha1 | v1beta1 |
//! |---|---|---|
//! | SidecarSet | `spec.namespace: X` (wins over `namespaceSelector`) | `spec.namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: X}}` |
//! | | label `apps.kruise.io/sidecarset-custom-version` | `spec.customVersion` (the label is removed) |
//! | Advanced DaemonSet | annotation `daemonset.kruise.io/progressive-create-pod: "true"` | `spec.scaleStrategy.partitionedScaling: true` |
//! | | `status.daemonSetHash` | `status.updateRevision` |
//! | | `rollingUpdate.rollingUpdateType: Surging` | `Standard` |
//! | CloneSet (upstream main) | see `api::cloneset::v1beta1` | |
//! | AdvancedCronJob | no `imageListPullJobTemplate`: converting one is an error | |
//! | Rollout, BatchRelease (`rollouts.kruise.io`) | see `api::rollout::conversion` | (hub) |
//!
//! Every other kind served at both versions has the same schema in both.

use serde_json::{Map, Value};

use crate::api::keys::{PROGRESSIVE_CREATE_POD, SIDECARSET_CUSTOM_VERSION};
/// The namespace label every namespace carries (what a v1alpha1 `spec.namespace` becomes).
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Converts `object` (a `group` `kind`) from `from` to `to` in place, `apiVersion` included.
/// An error is the conversion webhook's refusal (the request then fails).
pub fn convert(
    group: &str,
    kind: &str,
    from: &str,
    to: &str,
    object: &mut Value,
) -> Result<(), String> {
    if from != to {
        match (group, kind, from, to) {
            ("rollouts.kruise.io", _, _, _) => {
                crate::api::rollout::conversion::convert(kind, from, to, object);
            }
            ("apps.kruise.io", "SidecarSet", "v1alpha1", "v1beta1") => {
                sidecarset_to_v1beta1(object)
            }
            ("apps.kruise.io", "SidecarSet", "v1beta1", "v1alpha1") => {
                sidecarset_to_v1alpha1(object);
            }
            ("apps.kruise.io", "DaemonSet", "v1alpha1", "v1beta1") => daemonset_to_v1beta1(object),
            ("apps.kruise.io", "DaemonSet", "v1beta1", "v1alpha1") => daemonset_to_v1alpha1(object),
            ("apps.kruise.io", "CloneSet", "v1beta1", "v1alpha1") => {
                crate::api::cloneset::v1beta1_to_internal(object);
            }
            ("apps.kruise.io", "CloneSet", "v1alpha1", "v1beta1") => {
                crate::api::cloneset::internal_to_v1beta1(object);
            }
            ("apps.kruise.io", "AdvancedCronJob", "v1beta1", "v1alpha1")
                if object
                    .pointer("/spec/template/imageListPullJobTemplate")
                    .is_some_and(|t| !t.is_null()) =>
            {
                return Err("imageListPullJobTemplate is not supported in v1alpha1".to_owned());
            }
            _ => {}
        }
    }
    if let Some(o) = object.as_object_mut() {
        let api_version = if group.is_empty() {
            to.to_owned()
        } else {
            format!("{group}/{to}")
        };
        o.insert("apiVersion".into(), Value::String(api_version));
    }
    Ok(())
}

fn object_at<'a>(value: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let o = value.as_object_mut()?;
    let entry = o.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if entry.is_null() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut()
}

fn meta_map<'a>(value: &'a mut Value, map: &str) -> Option<&'a mut Map<String, Value>> {
    let meta = object_at(value, "metadata")?;
    let entry = meta.entry(map).or_insert_with(|| Value::Object(Map::new()));
    if entry.is_null() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut()
}

/// upstream `SidecarSet.ConvertTo`.
fn sidecarset_to_v1beta1(object: &mut Value) {
    let custom = object
        .pointer(&format!(
            "/metadata/labels/{}",
            SIDECARSET_CUSTOM_VERSION.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        let namespace = spec.remove("namespace");
        if let Some(ns) = namespace
            .as_ref()
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            spec.insert(
                "namespaceSelector".into(),
                serde_json::json!({"matchLabels": {NAMESPACE_NAME_LABEL: ns}}),
            );
        }
        if let Some(custom) = &custom {
            spec.insert("customVersion".into(), Value::String(custom.clone()));
        }
    }
    if custom.is_some()
        && let Some(labels) = object
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
    {
        labels.remove(SIDECARSET_CUSTOM_VERSION);
    }
}

/// upstream `SidecarSet.ConvertFrom`.
fn sidecarset_to_v1alpha1(object: &mut Value) {
    let custom = object
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .and_then(|spec| spec.remove("customVersion"))
        .and_then(|v| v.as_str().map(str::to_owned))
        .filter(|c| !c.is_empty());
    if let Some(custom) = custom
        && let Some(labels) = meta_map(object, "labels")
    {
        labels.insert(SIDECARSET_CUSTOM_VERSION.into(), Value::String(custom));
    }
}

/// upstream `DaemonSet.ConvertTo`.
fn daemonset_to_v1beta1(object: &mut Value) {
    let progressive = object
        .pointer(&format!(
            "/metadata/annotations/{}",
            PROGRESSIVE_CREATE_POD.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        == Some("true");
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        if progressive {
            spec.insert(
                "scaleStrategy".into(),
                serde_json::json!({"partitionedScaling": true}),
            );
        }
        if let Some(rolling) = spec
            .get_mut("updateStrategy")
            .and_then(|s| s.get_mut("rollingUpdate"))
            .and_then(Value::as_object_mut)
            && rolling.get("rollingUpdateType").and_then(Value::as_str) == Some("Surging")
        {
            rolling.insert("rollingUpdateType".into(), Value::from("Standard"));
        }
    }
    if let Some(status) = object.get_mut("status").and_then(Value::as_object_mut)
        && let Some(hash) = status.remove("daemonSetHash")
    {
        status.insert("updateRevision".into(), hash);
    }
}

/// upstream `DaemonSet.ConvertFrom`.
fn daemonset_to_v1alpha1(object: &mut Value) {
    let scaling = object
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .and_then(|spec| spec.remove("scaleStrategy"));
    let partitioned = scaling
        .as_ref()
        .and_then(|s| s.get("partitionedScaling"))
        .and_then(Value::as_bool)
        == Some(true);
    if partitioned && let Some(annotations) = meta_map(object, "annotations") {
        annotations.insert(PROGRESSIVE_CREATE_POD.into(), Value::from("true"));
    }
    if let Some(status) = object.get_mut("status").and_then(Value::as_object_mut)
        && let Some(hash) = status.remove("updateRevision")
    {
        status.insert("daemonSetHash".into(), hash);
    }
}

/// The version an object's `apiVersion` names (`apps.kruise.io/v1beta1` → `v1beta1`), v1alpha1
/// when it names none.
pub fn version_of(object: &Value) -> &str {
    object["apiVersion"]
        .as_str()
        .map(|a| a.rsplit_once('/').map_or(a, |(_, v)| v))
        .filter(|v| !v.is_empty())
        .unwrap_or("v1alpha1")
}

/// Reads a `kind` object served at `version` into a model whose shape is `internal` (the
/// version the Rust type follows), converting as the webhook would.
pub fn from_served<T: serde::de::DeserializeOwned>(
    group: &str,
    kind: &str,
    internal: &str,
    version: &str,
    mut value: Value,
) -> Result<T, serde_json::Error> {
    convert(group, kind, version, internal, &mut value)
        .map_err(<serde_json::Error as serde::de::Error>::custom)?;
    serde_json::from_value(value)
}

/// Writes a model whose shape is `internal` as a `kind` object served at `version` (the inverse
/// of [`from_served`]), with `apiVersion` and `kind` set.
pub fn to_served<T: serde::Serialize>(
    group: &str,
    kind: &str,
    internal: &str,
    version: &str,
    model: &T,
) -> Result<Value, serde_json::Error> {
    let mut value = serde_json::to_value(model)?;
    convert(group, kind, internal, version, &mut value)
        .map_err(<serde_json::Error as serde::ser::Error>::custom)?;
    if let Some(o) = value.as_object_mut() {
        o.insert("kind".into(), Value::String(kind.to_owned()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn round(kind: &str, from: &str, to: &str, mut v: Value) -> Value {
        convert("apps.kruise.io", kind, from, to, &mut v).unwrap();
        v
    }

    #[test]
    fn sidecarset_namespace_becomes_a_selector_and_custom_version_moves_into_the_spec() {
        let alpha = json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "s", "labels": {SIDECARSET_CUSTOM_VERSION: "v2", "a": "b"}},
            "spec": {"namespace": "demo", "namespaceSelector": {"matchLabels": {"x": "y"}}}
        });
        let beta = round("SidecarSet", "v1alpha1", "v1beta1", alpha);
        assert_eq!(beta["apiVersion"], "apps.kruise.io/v1beta1");
        assert_eq!(
            beta["spec"]["namespaceSelector"],
            json!({"matchLabels": {NAMESPACE_NAME_LABEL: "demo"}})
        );
        assert!(beta["spec"].get("namespace").is_none());
        assert_eq!(beta["spec"]["customVersion"], "v2");
        assert_eq!(beta["metadata"]["labels"], json!({"a": "b"}));
        let back = round("SidecarSet", "v1beta1", "v1alpha1", beta);
        assert_eq!(back["metadata"]["labels"][SIDECARSET_CUSTOM_VERSION], "v2");
        assert!(back["spec"].get("customVersion").is_none());
        assert!(back["spec"].get("namespace").is_none());
        assert_eq!(
            back["spec"]["namespaceSelector"]["matchLabels"][NAMESPACE_NAME_LABEL],
            "demo"
        );
    }

    #[test]
    fn daemonset_fields_move_both_ways() {
        let alpha = json!({
            "metadata": {"name": "d", "annotations": {PROGRESSIVE_CREATE_POD: "true"}},
            "spec": {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Surging", "partition": "25%"}}},
            "status": {"daemonSetHash": "abc"}
        });
        let beta = round("DaemonSet", "v1alpha1", "v1beta1", alpha);
        assert_eq!(beta["spec"]["scaleStrategy"]["partitionedScaling"], true);
        assert_eq!(
            beta["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"],
            "Standard"
        );
        assert_eq!(
            beta["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
            "25%"
        );
        assert_eq!(beta["status"], json!({"updateRevision": "abc"}));
        let back = round("DaemonSet", "v1beta1", "v1alpha1", beta);
        assert_eq!(
            back["metadata"]["annotations"][PROGRESSIVE_CREATE_POD],
            "true"
        );
        assert!(back["spec"].get("scaleStrategy").is_none());
        assert_eq!(back["status"], json!({"daemonSetHash": "abc"}));
        let mut plain = json!({"spec": {"scaleStrategy": {"partitionedScaling": true}}});
        convert(
            "apps.kruise.io",
            "DaemonSet",
            "v1beta1",
            "v1alpha1",
            &mut plain,
        )
        .unwrap();
        assert_eq!(
            plain["metadata"]["annotations"][PROGRESSIVE_CREATE_POD],
            "true"
        );
    }

    #[test]
    fn a_cronjob_with_an_image_list_template_cannot_be_read_as_v1alpha1() {
        let mut v = json!({"spec": {"template": {"imageListPullJobTemplate": {"spec": {}}}}});
        let err = convert(
            "apps.kruise.io",
            "AdvancedCronJob",
            "v1beta1",
            "v1alpha1",
            &mut v,
        );
        assert_eq!(
            err,
            Err("imageListPullJobTemplate is not supported in v1alpha1".to_owned())
        );
        let mut ok = json!({"spec": {"template": {"jobTemplate": {}}}});
        convert(
            "apps.kruise.io",
            "AdvancedCronJob",
            "v1beta1",
            "v1alpha1",
            &mut ok,
        )
        .unwrap();
        assert_eq!(ok["apiVersion"], "apps.kruise.io/v1alpha1");
    }
}
