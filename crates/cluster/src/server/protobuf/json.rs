//! A decoded message written out as the JSON Kubernetes' Go types marshal to, with the kind's
//! OpenAPI schema (from the built-in catalog) for what the `.proto` files do not say:
//!
//! - field names are the JSON names (go-to-protobuf names fields after them); the few that JSON
//!   spells differently (`$ref`, `x-kubernetes-*` in CRD schemas) are matched to the schema;
//! - a message field the schema does not list is a Go struct embedded `json:",inline"`
//!   (`Volume.volumeSource`, `Probe.handler`, `IngressRule.ingressRuleValue`): its fields go into
//!   the parent object;
//! - Go writes every non-pointer field to protobuf, zero or not, and omits zero `omitempty` fields
//!   from JSON; a zero scalar is therefore kept only where JSON keeps it: a required field, or an
//!   int or bool whose documentation makes zero a choice (see [`zero_is_a_choice`]: `replicas:
//!   0`, `backoffLimit: 0`, `enableServiceLinks: false`, `runAsUser: 0`). The `.proto` files do
//!   not say which Go fields are pointers, so this reads upstream's field documentation; objects
//!   are always kept (`resources: {}`), unset fields are absent;
//! - apimachinery's types take their JSON forms: IntOrString → number or string, Quantity →
//!   string, Time → RFC 3339 seconds (zero → null), MicroTime → microseconds, Duration → Go's
//!   duration string, RawExtension/FieldsV1/JSON → the embedded JSON, bytes → base64, the
//!   `JSONSchemaPropsOr*` unions → their one form, `{items: [...]}` wrappers → arrays.

use std::sync::OnceLock;

use base64::{Engine, engine::general_purpose::STANDARD};
use prost_reflect::{DynamicMessage, MapKey, ReflectMessage, Value as PValue};
use regex::Regex;
use serde_json::{Map, Value, json};

use crate::server::builtin::catalog::Catalog;

const META: &str = "apimachinery.pkg.apis.meta.v1";
const EXT: &str = "apiextensions_apiserver.pkg.apis.apiextensions.v1";
const SCHEMA_PROPS: &str =
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";

pub struct Writer<'c> {
    catalog: &'c Catalog,
}

/// Where a schema says a field is required, and its documented default.
struct FieldInfo<'s> {
    schema: Option<&'s Value>,
    required: bool,
    description: &'s str,
}

fn is_zero(v: &PValue) -> bool {
    match v {
        PValue::Bool(b) => !b,
        PValue::I32(n) | PValue::EnumNumber(n) => *n == 0,
        PValue::I64(n) => *n == 0,
        PValue::U32(n) => *n == 0,
        PValue::U64(n) => *n == 0,
        PValue::F32(n) => *n == 0.0,
        PValue::F64(n) => *n == 0.0,
        PValue::String(s) => s.is_empty(),
        PValue::Bytes(b) => b.is_empty(),
        PValue::Message(_) | PValue::List(_) | PValue::Map(_) => false,
    }
}

/// Whether a zero int or bool is a choice (the Go field is a pointer) rather than Go's zero of
/// an `omitempty` field, by what upstream documents: a default other than zero ("Defaults to
/// 6", "Default to true"), "a pointer to distinguish between explicit zero and not specified",
/// or a meaning for unset, nil or zero (`ttlSecondsAfterFinished`, `runAsUser`). Not where zero
/// is documented as the default ("Default is false") or invalid ("Minimum value is 1", Probe's
/// thresholds, which Go defaults when zero).
pub(super) fn zero_is_a_choice(description: &str) -> bool {
    struct Res {
        nonzero_default: Regex,
        meaning: Regex,
        zero_default: Regex,
        minimum: Regex,
    }
    static RE: OnceLock<Option<Res>> = OnceLock::new();
    let res = RE.get_or_init(|| {
        Some(Res {
            nonzero_default: Regex::new(
                r"(?i)\bdefaults?(?: value)?(?: is| to)?:? (?:true\b|[1-9])",
            )
            .ok()?,
            meaning: Regex::new(r"(?i)\b(?:unset|unspecified|nil|zero|pointer)\b").ok()?,
            zero_default: Regex::new(r"(?i)\bdefaults?(?: is| to)? (?:false|0)\b").ok()?,
            minimum: Regex::new(r"(?i)\bminimum value is [1-9]").ok()?,
        })
    });
    let Some(re) = res.as_ref() else {
        return true;
    };
    if re.minimum.is_match(description) || re.zero_default.is_match(description) {
        return false;
    }
    re.nonzero_default.is_match(description) || re.meaning.is_match(description)
}

/// `xKubernetesListType` → `x-kubernetes-list-type`.
fn kebab_extension(name: &str) -> Option<String> {
    let rest = name.strip_prefix("xKubernetes")?;
    let mut out = String::from("x-kubernetes");
    for c in rest.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// The property a field name stands for where JSON spells it differently: `ref` → `$ref`,
/// `xKubernetesListType` → `x-kubernetes-list-type`, and Go field names that go-to-protobuf
/// kept in the Go case (`Webhooks`, `aPIGroup`, `Expression`).
fn json_spelling(name: &str, props: &Map<String, Value>) -> Option<String> {
    if props.contains_key(name) {
        return Some(name.to_string());
    }
    [Some(format!("${name}")), kebab_extension(name)]
        .into_iter()
        .flatten()
        .find(|k| props.contains_key(k))
        .or_else(|| props.keys().find(|k| k.eq_ignore_ascii_case(name)).cloned())
}

fn map_key(k: &MapKey) -> String {
    match k {
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(n) => n.to_string(),
        MapKey::I64(n) => n.to_string(),
        MapKey::U32(n) => n.to_string(),
        MapKey::U64(n) => n.to_string(),
        MapKey::String(s) => s.clone(),
    }
}

fn field<'m>(msg: &'m DynamicMessage, name: &str) -> Option<std::borrow::Cow<'m, PValue>> {
    msg.has_field_by_name(name)
        .then(|| msg.get_field_by_name(name))
        .flatten()
}

fn int_field(msg: &DynamicMessage, name: &str) -> i64 {
    match field(msg, name).as_deref() {
        Some(PValue::I64(n)) => *n,
        Some(PValue::I32(n)) => i64::from(*n),
        _ => 0,
    }
}

fn bytes_field(msg: &DynamicMessage, name: &str) -> Vec<u8> {
    match field(msg, name).as_deref() {
        Some(PValue::Bytes(b)) => b.to_vec(),
        _ => Vec::new(),
    }
}

/// Embedded JSON (RawExtension, FieldsV1, apiextensions' JSON); empty is null.
fn embedded_json(raw: &[u8], what: &str) -> Result<Value, String> {
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(raw).map_err(|e| format!("{what} does not hold JSON: {e}"))
}

/// `metav1.Time` (seconds) or `MicroTime` (microseconds), as Go marshals them.
fn time(msg: &DynamicMessage, micro: bool) -> Result<Value, String> {
    let (secs, nanos) = (int_field(msg, "seconds"), int_field(msg, "nanos"));
    if secs == 0 && nanos == 0 {
        return Ok(Value::Null);
    }
    let nanos = if micro { nanos - nanos % 1000 } else { 0 };
    let ts = jiff::Timestamp::new(secs, nanos as i32).map_err(|e| format!("a time: {e}"))?;
    let fmt = if micro {
        "%Y-%m-%dT%H:%M:%S%.6fZ"
    } else {
        "%Y-%m-%dT%H:%M:%SZ"
    };
    Ok(json!(ts.strftime(fmt).to_string()))
}

pub use crate::gotime::go_duration;

impl<'c> Writer<'c> {
    pub fn new(catalog: &'c Catalog) -> Self {
        Writer { catalog }
    }

    /// Write the set fields of `msg` into `out`, by the (object) schema `schema`.
    pub fn fields_into(
        &self,
        msg: &DynamicMessage,
        schema: Option<&'c Value>,
        out: &mut Map<String, Value>,
    ) -> Result<(), String> {
        let schema = schema.map(|s| self.catalog.resolve(s).0);
        let props = schema.and_then(|s| s["properties"].as_object());
        let required: Vec<&str> = schema
            .and_then(|s| s["required"].as_array())
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (fd, value) in msg.fields() {
            let name = fd.name();
            let key = match props {
                None => Some(name.to_string()),
                Some(p) if p.contains_key(name) => Some(name.to_string()),
                Some(p) => json_spelling(name, p),
            };
            let Some(key) = key else {
                if let PValue::Message(inner) = value {
                    // An embedded Go struct: its fields are the parent's in JSON.
                    self.fields_into(inner, schema, out)?;
                } else {
                    out.insert(name.to_string(), self.value(value, None)?);
                }
                continue;
            };
            let prop = props.and_then(|p| p.get(&key));
            let info = FieldInfo {
                schema: prop,
                required: required.contains(&key.as_str()),
                description: prop
                    .and_then(|p| {
                        p["description"]
                            .as_str()
                            .or_else(|| self.catalog.resolve(p).0["description"].as_str())
                    })
                    .unwrap_or(""),
            };
            let keep = schema.is_none()
                || !is_zero(value)
                || info.required
                || (matches!(
                    value,
                    PValue::Bool(_) | PValue::I32(_) | PValue::I64(_) | PValue::U32(_)
                ) && zero_is_a_choice(info.description));
            if keep {
                out.insert(key, self.value(value, info.schema)?);
            }
        }
        Ok(())
    }

    fn value(&self, v: &PValue, schema: Option<&'c Value>) -> Result<Value, String> {
        let schema = schema.map(|s| self.catalog.resolve(s).0);
        Ok(match v {
            PValue::Bool(b) => json!(b),
            PValue::I32(n) | PValue::EnumNumber(n) => json!(n),
            PValue::I64(n) => json!(n),
            PValue::U32(n) => json!(n),
            PValue::U64(n) => json!(n),
            PValue::F32(n) => json!(n),
            PValue::F64(n) => json!(n),
            PValue::String(s) => json!(s),
            PValue::Bytes(b) => json!(STANDARD.encode(b)),
            PValue::List(items) => {
                let item = schema.and_then(|s| s.get("items"));
                Value::Array(
                    items
                        .iter()
                        .map(|i| self.value(i, item))
                        .collect::<Result<_, _>>()?,
                )
            }
            PValue::Map(entries) => {
                let each = schema
                    .and_then(|s| s.get("additionalProperties"))
                    .filter(|a| a.is_object());
                let mut sorted: Vec<(String, &PValue)> =
                    entries.iter().map(|(k, v)| (map_key(k), v)).collect();
                sorted.sort_by(|a, b| a.0.cmp(&b.0));
                let mut m = Map::new();
                for (k, v) in sorted {
                    m.insert(k, self.value(v, each)?);
                }
                Value::Object(m)
            }
            PValue::Message(m) => self.message(m, schema)?,
        })
    }

    fn message(&self, m: &DynamicMessage, schema: Option<&'c Value>) -> Result<Value, String> {
        let desc = m.descriptor();
        let full = desc.full_name();
        let schema_props = || self.catalog.definition(SCHEMA_PROPS);
        match full {
            "apimachinery.pkg.util.intstr.IntOrString" => {
                return Ok(if int_field(m, "type") == 1 {
                    match field(m, "strVal").as_deref() {
                        Some(PValue::String(s)) => json!(s),
                        _ => json!(""),
                    }
                } else {
                    json!(int_field(m, "intVal"))
                });
            }
            "apimachinery.pkg.api.resource.Quantity" => {
                return Ok(match field(m, "string").as_deref() {
                    Some(PValue::String(s)) => json!(s),
                    _ => json!("0"),
                });
            }
            "apimachinery.pkg.runtime.RawExtension" => {
                return embedded_json(&bytes_field(m, "raw"), "a RawExtension");
            }
            _ => {}
        }
        if let Some(name) = full.strip_prefix(&format!("{META}.")) {
            match name {
                "Time" | "Timestamp" => return time(m, false),
                "MicroTime" => return time(m, true),
                "Duration" => return Ok(json!(go_duration(int_field(m, "duration")))),
                "FieldsV1" => return embedded_json(&bytes_field(m, "Raw"), "a FieldsV1"),
                _ => {}
            }
        }
        if let Some(name) = full.strip_prefix(&format!("{EXT}.")) {
            let sub = |n: &str| -> Result<Option<Value>, String> {
                match field(m, n).as_deref() {
                    Some(v) => self.value(v, schema_props()).map(Some),
                    None => Ok(None),
                }
            };
            match name {
                "JSON" => return embedded_json(&bytes_field(m, "raw"), "a JSON value"),
                "JSONSchemaPropsOrArray" => {
                    return Ok(match field(m, "jSONSchemas").as_deref() {
                        Some(PValue::List(l)) if !l.is_empty() => {
                            let items: Vec<Value> = l
                                .iter()
                                .map(|i| self.value(i, schema_props()))
                                .collect::<Result<_, _>>()?;
                            Value::Array(items)
                        }
                        _ => sub("schema")?.unwrap_or(Value::Null),
                    });
                }
                "JSONSchemaPropsOrBool" => {
                    return Ok(match sub("schema")? {
                        Some(s) => s,
                        None => json!(matches!(
                            field(m, "allows").as_deref(),
                            Some(PValue::Bool(true))
                        )),
                    });
                }
                "JSONSchemaPropsOrStringArray" => {
                    return Ok(match field(m, "property").as_deref() {
                        Some(PValue::List(l)) if !l.is_empty() => {
                            self.value(&PValue::List(l.clone()), None)?
                        }
                        _ => sub("schema")?.unwrap_or(Value::Null),
                    });
                }
                "JSONSchemaProps" => {
                    let mut out = Map::new();
                    self.fields_into(m, schema_props(), &mut out)?;
                    return Ok(Value::Object(out));
                }
                _ => {}
            }
        }
        // `{repeated string items}` wrappers (authentication's ExtraValue, meta's Verbs) are
        // plain string arrays in JSON.
        if desc.fields().len() == 1
            && let Some(items) = desc.get_field_by_name("items")
            && items.is_list()
            && matches!(items.kind(), prost_reflect::Kind::String)
        {
            return Ok(match field(m, "items").as_deref() {
                Some(v) => self.value(v, None)?,
                None => json!([]),
            });
        }
        let mut out = Map::new();
        self.fields_into(m, schema, &mut out)?;
        Ok(Value::Object(out))
    }
}

/// Kept for the tests: which message fields the writer maps to no schema property and cannot
/// inline (a mismatch between upstream's messages and k8s-openapi's schemas).
#[cfg(test)]
pub fn unmapped_fields(catalog: &Catalog, desc: &prost_reflect::MessageDescriptor) -> Vec<String> {
    let w = Writer::new(catalog);
    let mut seen = std::collections::HashMap::new();
    let mut out = Vec::new();
    let root = catalog.definition(&super::definition_name(desc.full_name()));
    w.walk_descriptor(desc, root, &mut seen, &mut out, desc.name());
    out
}

#[cfg(test)]
impl<'c> Writer<'c> {
    fn walk_descriptor(
        &self,
        desc: &prost_reflect::MessageDescriptor,
        schema: Option<&'c Value>,
        seen: &mut std::collections::HashMap<String, ()>,
        out: &mut Vec<String>,
        path: &str,
    ) {
        let full = desc.full_name();
        if seen.insert(full.to_string(), ()).is_some()
            || full.starts_with(&format!("{EXT}.JSONSchemaProps"))
        {
            return;
        }
        let Some(schema) = schema.map(|s| self.catalog.resolve(s).0) else {
            return;
        };
        let Some(props) = schema["properties"].as_object() else {
            return;
        };
        for fd in desc.fields() {
            let name = fd.name();
            let key = json_spelling(name, props);
            let inner = match fd.kind() {
                prost_reflect::Kind::Message(m) if !fd.is_map() => Some(m),
                prost_reflect::Kind::Message(m) => {
                    m.map_entry_value_field().kind().as_message().cloned()
                }
                _ => None,
            };
            match (key, inner) {
                (Some(k), Some(m)) => {
                    let mut sub = props.get(&k).map(|p| self.catalog.resolve(p).0);
                    if fd.is_list() {
                        sub = sub.and_then(|s| s.get("items"));
                    } else if fd.is_map() {
                        sub = sub.and_then(|s| s.get("additionalProperties"));
                    }
                    self.walk_descriptor(&m, sub, seen, out, &format!("{path}.{k}"));
                }
                (Some(_), None) => {}
                (None, Some(m)) if !fd.is_list() && !fd.is_map() => {
                    seen.remove(m.full_name());
                    self.walk_descriptor(&m, Some(schema), seen, out, path);
                }
                (None, _) => out.push(format!("{path}.{name}")),
            }
        }
    }
}
