//! OpenAPI v3 documents (`/openapi/v3` and one per group/version). kubectl reads them to decide
//! that the server validates fields itself (`fieldValidation=Strict` on PATCH operations) and
//! which patch types a kind takes; CRD kinds carry their full openAPIV3Schema.

use serde_json::{Map, Value, json};

use super::{
    builtin::catalog::{self, Catalog},
    discovery::short_hash,
    resources::{Registry, ResourceInfo},
};

/// The `/openapi/v3` index: one entry per group/version.
pub fn root(reg: &Registry) -> Value {
    let mut paths = Map::new();
    for (g, vs) in reg.groups() {
        for v in vs {
            let p = if g.is_empty() {
                format!("api/{v}")
            } else {
                format!("apis/{g}/{v}")
            };
            let hash = short_hash(&format!("{p}#{}", reg.generation));
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash}")}),
            );
        }
    }
    json!({ "paths": paths })
}

/// The schema name of a kind: `io.k8s.api.core.v1.Pod`, `io.kruise.apps.v1alpha1.CloneSet`.
pub fn schema_name(r: &ResourceInfo) -> String {
    if let Some(d) = &r.definition {
        return d.to_string();
    }
    if r.crd {
        let rev: Vec<&str> = r.group.split('.').rev().collect();
        format!("{}.{}.{}", rev.join("."), r.version, r.kind)
    } else {
        let g = if r.group.is_empty() {
            "core".to_string()
        } else {
            r.group.split('.').next().unwrap_or("").to_string()
        };
        format!("io.k8s.api.{g}.{}.{}", r.version, r.kind)
    }
}

/// Add every definition `schema` references, transitively (kubectl explain follows `$ref`s
/// within the one document).
fn add_referenced(catalog: &Catalog, schema: &Value, out: &mut Map<String, Value>) {
    match schema {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                let name = r.rsplit('/').next().unwrap_or(r);
                if !out.contains_key(name)
                    && let Some(d) = catalog.definition(name)
                {
                    out.insert(name.to_string(), d.clone());
                    add_referenced(catalog, d, out);
                }
            }
            for v in m.values() {
                add_referenced(catalog, v, out);
            }
        }
        Value::Array(a) => {
            for v in a {
                add_referenced(catalog, v, out);
            }
        }
        _ => {}
    }
}

fn param(name: &str) -> Value {
    json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}})
}

fn operation(
    r: &ResourceInfo,
    action: &str,
    gvk: &Value,
    body_types: &[&str],
    with_body: bool,
) -> Value {
    let sref = json!({"$ref": format!("#/components/schemas/{}", schema_name(r))});
    let mut op = json!({
        "operationId": format!("{action}{}", r.kind),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
        "parameters": [param("dryRun"), param("fieldManager"), param("fieldValidation")],
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": sref}}}},
    });
    if with_body && let Some(m) = op.as_object_mut() {
        let content: Map<String, Value> = body_types
            .iter()
            .map(|t| (t.to_string(), json!({"schema": sref})))
            .collect();
        m.insert(
            "requestBody".into(),
            json!({"content": content, "required": true}),
        );
    }
    op
}

/// One group/version's document (`api/v1`, `apis/apps.kruise.io/v1alpha1`).
pub fn group_doc(reg: &Registry, path: &str) -> Option<Value> {
    let parts: Vec<&str> = path.split('/').collect();
    let (group, version) = match parts.as_slice() {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return None,
    };
    let rs = reg.in_group_version(group, version);
    if rs.is_empty() {
        return None;
    }
    let catalog = catalog::catalog();
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for r in &rs {
        let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind});
        let builtin = r.definition.as_deref().and_then(|d| catalog.definition(d));
        if let Some(root) = builtin {
            add_referenced(catalog, root, &mut schemas);
        }
        let mut schema = match (builtin, &r.schema) {
            (Some(b), _) => b.clone(),
            (None, Some(s)) => (**s).clone(),
            (None, None) => {
                json!({"type": "object", "description": format!("{} (built in)", r.kind)})
            }
        };
        if let Some(m) = schema.as_object_mut() {
            m.insert("x-kubernetes-group-version-kind".into(), json!([gvk]));
        }
        schemas.insert(schema_name(r), schema);
        let base = format!("/{}", r.group_version_path());
        let coll = if r.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}", r.plural)
        } else {
            format!("{base}/{}", r.plural)
        };
        // Strategic merge is left out on purpose: kubectl then builds its strategic patches for
        // built-in kinds from its compiled-in types, and JSON merge patches for custom resources.
        let patch_types: &[&str] = &[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ];
        paths.insert(
            coll.clone(),
            json!({
                "get": operation(r, "list", &gvk, &[], false),
                "post": operation(r, "post", &gvk, &["*/*"], true),
            }),
        );
        let item = json!({
            "get": operation(r, "get", &gvk, &[], false),
            "put": operation(r, "put", &gvk, &["*/*"], true),
            "patch": operation(r, "patch", &gvk, patch_types, true),
            "delete": operation(r, "delete", &gvk, &[], false),
        });
        paths.insert(format!("{coll}/{{name}}"), item);
        if r.status {
            paths.insert(
                format!("{coll}/{{name}}/status"),
                json!({
                    "get": operation(r, "get", &gvk, &[], false),
                    "put": operation(r, "put", &gvk, &["*/*"], true),
                    "patch": operation(r, "patch", &gvk, patch_types, true),
                }),
            );
        }
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}
