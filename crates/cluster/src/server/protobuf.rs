//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`, what kubectl's typed
//! generators send: `create deployment|job|cronjob|service|configmap|secret`, `run`, `expose`,
//! `auth can-i`, `create token`, `drain`'s evictions), read into the JSON the store keeps.
//!
//! The messages are upstream's own: build.rs compiles Kubernetes' `generated.proto` files into a
//! descriptor set, prost-reflect decodes the body as a dynamic message of the kind the envelope
//! names, and [`json`] writes it out by Kubernetes' JSON rules (not protobuf's JSON mapping),
//! guided by the kind's OpenAPI schema from the built-in catalog.

mod json;

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, Value as PValue};
use serde_json::{Map, Value};

use super::builtin::catalog::catalog;

/// Kubernetes' protobuf envelope: these four bytes, then a `runtime.Unknown`.
const MAGIC: &[u8] = b"k8s\0";

/// The descriptor set build.rs compiled from upstream's `.proto` files.
static DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/k8s.fds"));

/// Why a protobuf body was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Not a well-formed Kubernetes protobuf body of the kind it names (a 400).
    Malformed(String),
    /// A kind upstream's message definitions do not describe, e.g. a custom resource (a 415).
    Unsupported { api_version: String, kind: String },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Malformed(m) => write!(f, "the protobuf body could not be decoded: {m}"),
            Error::Unsupported { api_version, kind } => write!(
                f,
                "no protobuf message is known for {kind} in {api_version}; send it as JSON or \
                 YAML instead, e.g. kubectl create -f FILE (kubectl's generators write one with \
                 --dry-run=client -o yaml)"
            ),
        }
    }
}

fn malformed(e: impl std::fmt::Display) -> Error {
    Error::Malformed(e.to_string())
}

/// The descriptor pool, decoded once.
fn pool() -> Result<&'static DescriptorPool, Error> {
    static POOL: OnceLock<Result<DescriptorPool, String>> = OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(DESCRIPTORS).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::Malformed(format!("the built-in message definitions: {e}")))
}

fn message(pool: &DescriptorPool, name: &str) -> Result<MessageDescriptor, Error> {
    pool.get_message_by_name(name)
        .ok_or_else(|| Error::Malformed(format!("no message {name} in the definitions")))
}

/// The message upstream defines for `kind` in `api_version`. Packages are named after the Go
/// package (`api.apps.v1`, `api.rbac.v1`, `apiextensions_apiserver.pkg.apis.apiextensions.v1`),
/// whose name is the group's first label (`core` for the legacy group).
fn lookup(pool: &DescriptorPool, api_version: &str, kind: &str) -> Option<MessageDescriptor> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let label = match group.split('.').next() {
        Some("") | None => "core",
        Some(l) => l,
    };
    let mut names = vec![
        format!("api.{label}.{version}.{kind}"),
        format!("apiextensions_apiserver.pkg.apis.{label}.{version}.{kind}"),
        format!("kube_aggregator.pkg.apis.{label}.{version}.{kind}"),
    ];
    if group.is_empty() || group == "meta.k8s.io" {
        names.push(format!("apimachinery.pkg.apis.meta.{version}.{kind}"));
    }
    names.iter().find_map(|n| pool.get_message_by_name(n))
}

/// The OpenAPI definition name of a message (`api.apps.v1.Deployment` →
/// `io.k8s.api.apps.v1.Deployment`), as k8s-openapi names its schemas.
fn definition_name(full_name: &str) -> String {
    let name = full_name
        .replacen("apiextensions_apiserver.", "apiextensions-apiserver.", 1)
        .replacen("kube_aggregator.", "kube-aggregator.", 1);
    format!("io.k8s.{name}")
}

fn string_field(msg: &DynamicMessage, name: &str) -> String {
    match msg.get_field_by_name(name).as_deref() {
        Some(PValue::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// Decode a protobuf request body into the object's JSON.
pub fn decode(body: &[u8]) -> Result<Value, Error> {
    let rest = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| malformed("it does not start with the k8s\\0 envelope"))?;
    let pool = pool()?;
    let unknown = DynamicMessage::decode(message(pool, "apimachinery.pkg.runtime.Unknown")?, rest)
        .map_err(malformed)?;
    let type_meta = match unknown.get_field_by_name("typeMeta").as_deref() {
        Some(PValue::Message(m)) => m.clone(),
        _ => return Err(malformed("the envelope names no apiVersion and kind")),
    };
    let api_version = string_field(&type_meta, "apiVersion");
    let kind = string_field(&type_meta, "kind");
    if kind.is_empty() {
        return Err(malformed("the envelope names no kind"));
    }
    let encoding = string_field(&unknown, "contentEncoding");
    if !encoding.is_empty() {
        return Err(malformed(format!(
            "content encoding {encoding:?} is not supported"
        )));
    }
    let raw = match unknown.get_field_by_name("raw").as_deref() {
        Some(PValue::Bytes(b)) => b.clone(),
        _ => Default::default(),
    };
    let Some(desc) = lookup(pool, &api_version, &kind) else {
        return Err(Error::Unsupported { api_version, kind });
    };
    let msg = DynamicMessage::decode(desc.clone(), raw)
        .map_err(|e| malformed(format!("{kind} {api_version}: {e}")))?;
    let c = catalog();
    let schema = c.definition(&definition_name(desc.full_name()));
    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::String(api_version));
    out.insert("kind".into(), Value::String(kind));
    json::Writer::new(c)
        .fields_into(&msg, schema, &mut out)
        .map_err(Error::Malformed)?;
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests;
