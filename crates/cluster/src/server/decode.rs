//! Checking a built-in kind's JSON against its k8s-openapi schema the way the real server's decoder
//! and validation see it: a value of the wrong JSON type is a decode error (400, worded like Go's
//! `json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type
//! []v1.Container`); unknown fields are pruned and reported (for fieldValidation); `null` is
//! accepted as "unset"; a missing required field is a 422 field error.

use serde_json::Value;

use super::{builtin::catalog::Catalog, status::FieldError};

/// What checking found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The first type mismatch, as Go's decoder words it.
    pub decode_error: Option<String>,
    pub errors: Vec<FieldError>,
    /// Paths of unknown fields (already pruned from the object).
    pub unknown: Vec<String>,
}

/// Where the walk is: the JSON path with indices (`spec.containers[0]`, for field errors), the
/// path without them (`spec.containers`, what Go's decoder reports) and the Go struct holding it.
struct At<'a> {
    field: String,
    go_path: String,
    go_struct: &'a str,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The last `n` dot-separated segments of a definition name (`v1.Container`, `Container`).
fn tail(name: &str, n: usize) -> &str {
    let mut idx = name.len();
    for _ in 0..n {
        match name[..idx].rfind('.') {
            Some(i) => idx = i,
            None => return name,
        }
    }
    &name[idx + 1..]
}

fn json_kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) => {
            format!("number {n}")
        }
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
    }
}

struct Walker<'c> {
    catalog: &'c Catalog,
    /// The definition of the object walked (its schema is not reached through a `$ref`).
    root: Option<&'c str>,
    out: Outcome,
}

impl<'c> Walker<'c> {
    /// Go's name for the type a schema decodes into (`[]v1.Container`, `map[string]string`).
    fn go_type(&self, s: &Value) -> String {
        let (s, name) = self.catalog.resolve(s);
        if let Some(n) = name {
            return tail(n, 2).to_string();
        }
        match s["type"].as_str() {
            Some("array") => format!("[]{}", self.go_type(&s["items"])),
            Some("object") => match s.get("additionalProperties").filter(|a| a.is_object()) {
                Some(a) => format!("map[string]{}", self.go_type(a)),
                None => "map[string]interface {}".into(),
            },
            Some("string") if s["format"] == "byte" => "[]uint8".into(),
            Some("string") => "string".into(),
            Some("integer") if s["format"] == "int32" => "int32".into(),
            Some("integer") => "int64".into(),
            Some("number") => "float64".into(),
            Some("boolean") => "bool".into(),
            _ => "interface {}".into(),
        }
    }

    fn mismatch(&mut self, at: &At, v: &Value, schema: &Value) {
        if self.out.decode_error.is_some() {
            return;
        }
        let target = if at.go_path.is_empty() {
            "Go value".to_string()
        } else {
            format!("Go struct field {}.{}", at.go_struct, at.go_path)
        };
        self.out.decode_error = Some(format!(
            "json: cannot unmarshal {} into {target} of type {}",
            json_kind(v),
            self.go_type(schema)
        ));
    }

    /// Whether `v` is an empty slice or map (a Go struct, even empty, is always written).
    fn empty_collection(&self, schema: &Value, v: Option<&Value>) -> bool {
        let (s, _) = self.catalog.resolve(schema);
        match v {
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Object(m)) => {
                m.is_empty()
                    && s.get("properties").is_none()
                    && s.get("additionalProperties").is_some_and(Value::is_object)
            }
            _ => false,
        }
    }

    fn walk(&mut self, schema: &'c Value, v: &mut Value, at: &At) {
        let (s, name) = self.catalog.resolve(schema);
        // Types with their own Go unmarshaller, wider than their schema's `type`: a Quantity
        // also reads a bare number (`cpu: 1`), apiextensions' JSON is any JSON value (a CRD
        // schema's `default: false`).
        match name {
            Some("io.k8s.apimachinery.pkg.api.resource.Quantity") => {
                if !(v.is_string() || v.is_number()) {
                    self.mismatch(at, v, schema);
                }
                return;
            }
            Some("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON") => return,
            _ => {}
        }
        if s["x-kubernetes-int-or-string"].as_bool() == Some(true) {
            let ok = v.is_string() || v.as_f64().is_some_and(|f| f.fract() == 0.0);
            if !ok {
                self.mismatch(at, v, schema);
            }
            return;
        }
        let ok = match s["type"].as_str() {
            Some("object") => v.is_object(),
            Some("array") => v.is_array(),
            Some("string") => v.is_string(),
            Some("boolean") => v.is_boolean(),
            Some("number") => v.is_number(),
            Some("integer") => v.as_f64().is_some_and(|f| f.fract() == 0.0),
            _ => true,
        };
        if !ok {
            self.mismatch(at, v, schema);
            return;
        }
        match v {
            Value::Array(items) => {
                let Some(is) = s.get("items") else { return };
                for (i, item) in items.iter_mut().enumerate() {
                    if item.is_null() {
                        continue;
                    }
                    let inner = At {
                        field: format!("{}[{i}]", at.field),
                        go_path: at.go_path.clone(),
                        go_struct: at.go_struct,
                    };
                    self.walk(is, item, &inner);
                }
            }
            Value::Object(m) => {
                let go_struct = name.map(|n| tail(n, 1)).unwrap_or(at.go_struct);
                let name = name.or(self.root.filter(|_| at.field.is_empty()));
                let props = s["properties"].as_object();
                let additional = s.get("additionalProperties").filter(|a| a.is_object());
                if props.is_none() && additional.is_none() {
                    return; // free-form (RawExtension, FieldsV1)
                }
                let keys: Vec<String> = m.keys().cloned().collect();
                for k in keys {
                    let (sub, is_field) = match props.and_then(|p| p.get(&k)) {
                        Some(p) => (Some(p), true),
                        None => (additional, false),
                    };
                    let Some(sub) = sub else {
                        m.remove(&k);
                        self.out.unknown.push(join(&at.field, &k));
                        continue;
                    };
                    if m.get(&k).is_some_and(Value::is_null) {
                        if is_field {
                            m.remove(&k);
                        }
                        continue;
                    }
                    let inner = At {
                        field: join(&at.field, &k),
                        go_path: if is_field {
                            join(&at.go_path, &k)
                        } else {
                            at.go_path.clone()
                        },
                        go_struct: if is_field { go_struct } else { at.go_struct },
                    };
                    if let Some(x) = m.get_mut(&k) {
                        self.walk(sub, x, &inner);
                    }
                    if is_field && self.empty_collection(sub, m.get(&k)) && !keeps_empty(name, &k) {
                        // Go's encoder omits an empty omitempty slice or map.
                        m.remove(&k);
                    }
                }
                for r in s["required"].as_array().into_iter().flatten() {
                    if let Some(r) = r.as_str()
                        && !m.contains_key(r)
                        && !(at.field.is_empty() && r == "metadata")
                    {
                        self.out
                            .errors
                            .push(FieldError::required(&join(&at.field, r)));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The slice and map fields of the built-in kinds that have no `omitempty` (k8s.io/api's
/// types.go): an empty one stays in the stored object; every other empty slice or map field is
/// left out, as Go's encoder leaves it out.
const KEEP_EMPTY: &[(&str, &str)] = &[
    (
        "io.k8s.api.admissionregistration.v1.MutatingWebhook",
        "admissionReviewVersions",
    ),
    (
        "io.k8s.api.admissionregistration.v1.ValidatingWebhook",
        "admissionReviewVersions",
    ),
    (
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus",
        "currentMetrics",
    ),
    ("io.k8s.api.batch.v1.PodFailurePolicy", "rules"),
    (
        "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
        "values",
    ),
    ("io.k8s.api.batch.v1.SuccessPolicy", "rules"),
    (
        "io.k8s.api.core.v1.CephFSPersistentVolumeSource",
        "monitors",
    ),
    ("io.k8s.api.core.v1.CephFSVolumeSource", "monitors"),
    ("io.k8s.api.core.v1.ContainerImage", "names"),
    ("io.k8s.api.core.v1.LimitRangeSpec", "limits"),
    ("io.k8s.api.core.v1.NodeSelector", "nodeSelectorTerms"),
    (
        "io.k8s.api.core.v1.PodExtendedResourceClaimStatus",
        "requestMappings",
    ),
    ("io.k8s.api.core.v1.PodSpec", "containers"),
    ("io.k8s.api.core.v1.ProjectedVolumeSource", "sources"),
    ("io.k8s.api.core.v1.RBDPersistentVolumeSource", "monitors"),
    ("io.k8s.api.core.v1.RBDVolumeSource", "monitors"),
    (
        "io.k8s.api.core.v1.TopologySelectorLabelRequirement",
        "values",
    ),
    ("io.k8s.api.discovery.v1.Endpoint", "addresses"),
    ("io.k8s.api.discovery.v1.EndpointSlice", "endpoints"),
    ("io.k8s.api.discovery.v1.EndpointSlice", "ports"),
    (
        "io.k8s.api.flowcontrol.v1.NonResourcePolicyRule",
        "nonResourceURLs",
    ),
    ("io.k8s.api.flowcontrol.v1.NonResourcePolicyRule", "verbs"),
    (
        "io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects",
        "subjects",
    ),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "apiGroups"),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "namespaces"),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "resources"),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "verbs"),
    ("io.k8s.api.networking.v1.HTTPIngressRuleValue", "paths"),
    ("io.k8s.api.rbac.v1.ClusterRole", "rules"),
    ("io.k8s.api.rbac.v1.PolicyRule", "verbs"),
    ("io.k8s.api.rbac.v1.Role", "rules"),
    ("io.k8s.api.storage.v1.CSINodeDriver", "topologyKeys"),
    ("io.k8s.api.storage.v1.CSINodeSpec", "drivers"),
];

fn keeps_empty(definition: Option<&str>, field: &str) -> bool {
    definition.is_some_and(|d| KEEP_EMPTY.iter().any(|(k, f)| *k == d && *f == field))
}

/// Check (and prune) a whole object against its kind's definition.
pub fn check(catalog: &Catalog, definition: &str, obj: &mut Value) -> Outcome {
    let Some(schema) = catalog.definition(definition) else {
        return Outcome::default();
    };
    let mut w = Walker {
        catalog,
        root: catalog
            .definitions
            .get_key_value(definition)
            .map(|(k, _)| k.as_str()),
        out: Outcome::default(),
    };
    let root = At {
        field: String::new(),
        go_path: String::new(),
        go_struct: tail(definition, 1),
    };
    w.walk(schema, obj, &root);
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::builtin::catalog::catalog;
    use serde_json::json;

    #[test]
    fn empty_omitempty_slices_and_maps_are_left_out() {
        let c = catalog();
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
            "labels": {}}, "data": {}});
        check(c, "io.k8s.api.core.v1.ConfigMap", &mut cm);
        assert_eq!(
            cm,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        );
        let mut p = pod(json!({"containers": [], "volumes": [], "securityContext": {}}));
        check(c, "io.k8s.api.core.v1.Pod", &mut p);
        assert_eq!(p["spec"], json!({"containers": [], "securityContext": {}}));
        let mut role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "r"}, "rules": []});
        check(c, "io.k8s.api.rbac.v1.Role", &mut role);
        assert_eq!(role["rules"], json!([]));
    }

    fn pod(spec: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}, "spec": spec})
    }

    #[test]
    fn wrong_types_are_worded_like_gos_decoder() {
        let c = catalog();
        let mut o = pod(json!({"containers": "oops"}));
        let out = check(c, "io.k8s.api.core.v1.Pod", &mut o);
        assert_eq!(
            out.decode_error.as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container"
            )
        );
        let mut o = pod(json!({"containers": [{"name": "a", "image": 3}]}));
        let out = check(c, "io.k8s.api.core.v1.Pod", &mut o);
        assert_eq!(
            out.decode_error.as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string"
            )
        );
        let mut o = json!({"metadata": {"name": "d"}, "spec": {"replicas": 1.5, "selector": {}, "template": {}}});
        let out = check(c, "io.k8s.api.apps.v1.Deployment", &mut o);
        assert_eq!(
            out.decode_error.as_deref(),
            Some(
                "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        let mut o = pod(json!({"containers": [], "overhead": {"cpu": {}}}));
        let out = check(c, "io.k8s.api.core.v1.Pod", &mut o);
        assert_eq!(
            out.decode_error.as_deref(),
            Some(
                "json: cannot unmarshal object into Go struct field PodSpec.spec.overhead of type resource.Quantity"
            )
        );
    }

    #[test]
    fn quantities_read_numbers_and_crd_defaults_any_json() {
        let mut p = pod(json!({"containers": [{"name": "a", "image": "x",
            "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}));
        let o = check(catalog(), "io.k8s.api.core.v1.Pod", &mut p);
        assert_eq!(o.decode_error, None);
        let mut crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ws.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "ws", "kind": "W"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "on": {"type": "boolean", "default": false},
                        "n": {"type": "integer", "default": 3}}}}}]}});
        let o = check(
            catalog(),
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
            &mut crd,
        );
        assert_eq!(o.decode_error, None);
    }

    #[test]
    fn unknown_fields_nulls_and_required() {
        let c = catalog();
        let mut o = pod(
            json!({"containers": [{"name": "a", "image": "x", "bogus": 1, "ports": [{"containerPort": 80, "hostPort": null}]}, {}],
                "nodeName": null, "extra": {"x": 1}}),
        );
        let out = check(c, "io.k8s.api.core.v1.Pod", &mut o);
        assert!(out.decode_error.is_none(), "{:?}", out.decode_error);
        assert_eq!(out.unknown, vec!["spec.containers[0].bogus", "spec.extra"]);
        assert!(o["spec"]["containers"][0].get("bogus").is_none());
        assert!(o["spec"].get("nodeName").is_none());
        let msgs: Vec<String> = out.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs, vec!["spec.containers[1].name: Required value"]);
        // Labels are a map of strings; free-form RawExtension data is kept as is.
        let mut o = json!({"metadata": {"name": "r", "labels": {"a": 1}}, "revision": 1, "data": {"any": [1]}});
        let out = check(c, "io.k8s.api.apps.v1.ControllerRevision", &mut o);
        assert_eq!(
            out.decode_error.as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
            )
        );
        assert_eq!(o["data"], json!({"any": [1]}));
    }
}
