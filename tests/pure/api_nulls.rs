//! Edge class A: a JSON `null` in place of any optional field of our API types decodes as
//! Go's `encoding/json` reads it: as if the field were absent (a nil struct, list or map, a zero
//! scalar). For every Kruise kind we build a full instance from OUR JSON schema (every property
//! present, recursively), then null out each optional property of our own types in turn and
//! require that the object still decodes, and decodes to the same value as with the key removed.
//! A future field that lacks the rule (`deserialize_with = null_as_default` on a defaulted
//! non-`Option` field) fails here with its path.

use kruise_tui::api;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

struct Filler {
    defs: Map<String, Value>,
}

/// Whether a `$defs` entry is one of k8s-openapi's types (their optional fields are `Option`s,
/// which serde already reads `null` into; we fill only their required fields).
fn is_k8s(name: &str) -> bool {
    name.starts_with("io.k8s.")
        || matches!(
            name,
            "ObjectMeta"
                | "PodTemplateSpec"
                | "LabelSelector"
                | "Time"
                | "Quantity"
                | "IntOrString"
                | "Container"
                | "PodSpec"
        )
}

impl Filler {
    fn new(schema: &Value) -> Self {
        let defs = schema
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Filler { defs }
    }

    fn resolve(&self, node: &Value) -> (Value, Option<String>) {
        let mut node = node.clone();
        let mut name = None;
        for _ in 0..16 {
            if let Some(r) = node.get("$ref").and_then(Value::as_str) {
                let n = r.trim_start_matches("#/$defs/").replace("~1", "/");
                node = self.defs.get(&n).cloned().unwrap_or(Value::Null);
                name = Some(n);
                continue;
            }
            if let Some(alts) = ["anyOf", "oneOf"]
                .iter()
                .find_map(|k| node.get(*k).and_then(Value::as_array).cloned())
            {
                // an Option (`T | null`) or an enum: take the first non-null alternative
                if let Some(first) = alts.into_iter().find(|a| a["type"] != "null") {
                    node = first;
                    continue;
                }
            }
            break;
        }
        (node, name)
    }

    /// A value for `node`: every property present (only the required ones inside k8s types).
    fn fill(&self, node: &Value, depth: usize, minimal: bool) -> Value {
        let (node, name) = self.resolve(node);
        let minimal = minimal || name.as_deref().is_some_and(is_k8s);
        if depth > 12 {
            return Value::Null;
        }
        if let Some(v) = node.get("const") {
            return v.clone();
        }
        if let Some(first) = node
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return first.clone();
        }
        if node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            return json!(1);
        }
        let ty = match node.get("type") {
            Some(Value::Array(ts)) => ts
                .iter()
                .find(|t| *t != "null")
                .and_then(Value::as_str)
                .unwrap_or("object")
                .to_owned(),
            Some(Value::String(t)) => t.clone(),
            _ => {
                if node.get("properties").is_some() {
                    "object".to_owned()
                } else {
                    return json!({});
                }
            }
        };
        match ty.as_str() {
            "string" => match node.get("format").and_then(Value::as_str) {
                Some("date-time") => json!("2024-01-01T00:00:00Z"),
                _ => json!("1"),
            },
            "integer" => json!(1),
            "number" => json!(1.5),
            "boolean" => json!(true),
            "array" => match node.get("items") {
                Some(items) if !minimal => json!([self.fill(items, depth + 1, minimal)]),
                _ => json!([]),
            },
            _ => {
                let mut out = Map::new();
                let required: Vec<&str> = node
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let Some(props) = node.get("properties").and_then(Value::as_object) {
                    for (k, v) in props {
                        if minimal && !required.contains(&k.as_str()) {
                            continue;
                        }
                        out.insert(k.clone(), self.fill(v, depth + 1, minimal));
                    }
                } else if let Some(ap) = node.get("additionalProperties").filter(|a| a.is_object())
                    && !minimal
                {
                    out.insert("k".to_owned(), self.fill(ap, depth + 1, minimal));
                }
                Value::Object(out)
            }
        }
    }

    /// Every JSON-pointer path (into `value`) to an optional property of one of our own types.
    fn optional_paths(&self, node: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
        let (node, name) = self.resolve(node);
        if name.as_deref().is_some_and(is_k8s) {
            return;
        }
        match value {
            Value::Array(items) => {
                if let (Some(schema), Some(first)) = (node.get("items"), items.first()) {
                    self.optional_paths(schema, first, &format!("{path}/0"), out);
                }
            }
            Value::Object(obj) => {
                let required: Vec<&str> = node
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let Some(props) = node.get("properties").and_then(Value::as_object) {
                    for (k, schema) in props {
                        let Some(child) = obj.get(k) else { continue };
                        let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                        if !required.contains(&k.as_str()) {
                            out.push(p.clone());
                        }
                        self.optional_paths(schema, child, &p, out);
                    }
                } else if let Some(ap) = node.get("additionalProperties").filter(|a| a.is_object())
                    && let Some(child) = obj.get("k")
                {
                    self.optional_paths(ap, child, &format!("{path}/k"), out);
                }
            }
            _ => {}
        }
    }
}

fn set_null(value: &Value, pointer: &str) -> (Value, Value) {
    let mut nulled = value.clone();
    let mut removed = value.clone();
    if let Some(slot) = nulled.pointer_mut(pointer) {
        *slot = Value::Null;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    let key = key.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(obj)) = removed.pointer_mut(parent) {
        obj.remove(&key);
    }
    (nulled, removed)
}

/// Checks every optional position of `T`; returns (paths checked, failures).
fn check<T: JsonSchema + DeserializeOwned + Serialize>() -> (usize, Vec<String>) {
    let schema = serde_json::to_value(schemars::schema_for!(T)).expect("schema");
    let filler = Filler::new(&schema);
    let full = filler.fill(&schema, 0, false);
    let base: Result<T, _> = serde_json::from_value(full.clone());
    if let Err(e) = base {
        return (
            0,
            vec![format!("the full instance does not decode: {e}\n{full:#}")],
        );
    }
    let mut paths = Vec::new();
    filler.optional_paths(&schema, &full, "", &mut paths);
    let mut failures = Vec::new();
    for p in &paths {
        let (nulled, removed) = set_null(&full, p);
        match serde_json::from_value::<T>(nulled) {
            Err(e) => failures.push(format!("{p}: {e}")),
            Ok(decoded) => {
                let absent: Result<T, _> = serde_json::from_value(removed);
                let same = absent.is_ok_and(|a| {
                    serde_json::to_value(&a).ok() == serde_json::to_value(&decoded).ok()
                });
                if !same {
                    failures.push(format!("{p}: null decodes unlike an absent field"));
                }
            }
        }
    }
    (paths.len(), failures)
}

macro_rules! check_all {
    ($($ty:ty),* $(,)?) => {{
        let mut failures = Vec::new();
        let mut total = 0;
        $(
            let (n, f) = check::<$ty>();
            assert!(n > 0 || !f.is_empty(), "{}: no optional paths found", stringify!($ty));
            total += n;
            failures.extend(f.into_iter().map(|f| format!("{} {f}", stringify!($ty))));
        )*
        (total, failures)
    }};
}

#[test]
fn null_in_every_optional_position_reads_as_absent() {
    let (total, failures) = check_all!(
        api::AdvancedCronJob,
        api::BroadcastJob,
        api::CloneSet,
        api::ContainerRecreateRequest,
        api::DaemonSet,
        api::ImageListPullJob,
        api::ImagePullJob,
        api::NodeImage,
        api::NodePodProbe,
        api::PersistentPodState,
        api::PodProbeMarker,
        api::PodUnavailableBudget,
        api::ResourceDistribution,
        api::SidecarSet,
        api::StatefulSet,
        api::uniteddeployment::UnitedDeployment,
        api::workloadspread::WorkloadSpread,
    );
    assert!(total > 300, "only {total} optional paths walked");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The walk finds a field without the rule: a plain `#[serde(default)]` Vec fails on null.
#[test]
fn a_field_without_the_rule_is_caught() {
    #[derive(serde::Deserialize, Serialize, JsonSchema)]
    struct Probe {
        #[serde(default)]
        items: Vec<String>,
    }
    let (n, failures) = check::<Probe>();
    assert_eq!(n, 1);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].starts_with("/items"), "{failures:?}");
}
