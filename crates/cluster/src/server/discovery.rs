//! Discovery documents: `/version`, `/api`, `/apis`, `/apis/{group}` and the APIResourceLists.

use std::net::SocketAddr;

use serde_json::{Value, json};

use super::resources::Registry;

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": "v1.32.0+kruise-tui",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.23.0",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

pub fn api_versions(addr: SocketAddr) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr.to_string()}]
    })
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "versions": vs,
        "preferredVersion": vs.first().cloned().unwrap_or(Value::Null),
    })
}

pub fn api_groups(reg: &Registry) -> Value {
    let groups: Vec<Value> = reg
        .groups()
        .iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| group_json(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn api_group(reg: &Registry, group: &str) -> Option<Value> {
    let groups = reg.groups();
    let (_, vs) = groups.iter().find(|(g, _)| g == group && !g.is_empty())?;
    let mut v = group_json(group, vs);
    if let Some(m) = v.as_object_mut() {
        m.insert("kind".into(), json!("APIGroup"));
        m.insert("apiVersion".into(), json!("v1"));
    }
    Some(v)
}

pub fn resource_list(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    let rs = reg.in_group_version(group, version);
    if rs.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for r in &rs {
        let mut main = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
        });
        if let Some(m) = main.as_object_mut() {
            if !r.short_names.is_empty() {
                m.insert("shortNames".into(), json!(r.short_names));
            }
            if !r.categories.is_empty() {
                m.insert("categories".into(), json!(r.categories));
            }
            // The real server's hash of the storage group/version/kind: clients can tell
            // which served version is stored.
            let stored = kruise_client::discovery::storage_version_hash(
                &r.group,
                reg.storage_version(r),
                &r.kind,
            );
            m.insert("storageVersionHash".into(), json!(stored));
        }
        out.push(main);
        if r.status {
            out.push(json!({
                "name": format!("{}/status", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if r.scale.is_some() {
            out.push(json!({
                "name": format!("{}/scale", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        for (sub, kind, gv) in &r.extra_subresources {
            let mut e = json!({
                "name": format!("{}/{sub}", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": kind,
                "verbs": match *sub {
                    "finalize" => json!(["update"]),
                    "log" => json!(["get"]),
                    "exec" | "attach" => json!(["create", "get"]),
                    _ => json!(["create"]),
                },
            });
            if let (Some((g, v)), Some(m)) = (gv.split_once('/'), e.as_object_mut()) {
                m.insert("group".into(), json!(g));
                m.insert("version".into(), json!(v));
            }
            out.push(e);
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}),
    )
}

/// A short stable hash (FNV-1a, base-36-ish hex), for OpenAPI URLs.
pub fn short_hash(s: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016X}")
}

/// Whether the client asks for aggregated discovery (`as=APIGroupDiscoveryList`, which kubectl
/// 1.30+ does first); the version it takes (`v2`, else `v2beta1`).
pub fn aggregated_version(accept: &str) -> Option<&'static str> {
    let wants = |v: &str| {
        accept.split(',').any(|part| {
            let p: Vec<&str> = part.split(';').map(str::trim).collect();
            p.contains(&"as=APIGroupDiscoveryList")
                && p.contains(&"g=apidiscovery.k8s.io")
                && p.contains(&format!("v={v}").as_str())
        })
    };
    if wants("v2") {
        Some("v2")
    } else if wants("v2beta1") {
        Some("v2beta1")
    } else {
        None
    }
}

/// One group/version's resources in the aggregated form: each resource with its subresources.
pub(super) fn aggregated_resources(list: &Value) -> Vec<Value> {
    let entries = list["resources"].as_array().cloned().unwrap_or_default();
    let mut out: Vec<Value> = Vec::new();
    for e in &entries {
        let name = e["name"].as_str().unwrap_or("");
        let response_kind = |e: &Value, gv: (&Value, &Value)| json!({"group": e.get("group").unwrap_or(gv.0), "version": e.get("version").unwrap_or(gv.1), "kind": e["kind"]});
        if let Some((parent, sub)) = name.split_once('/') {
            if let Some(p) = out.iter_mut().find(|r| r["resource"] == parent) {
                let gv = (
                    &p["responseKind"]["group"].clone(),
                    &p["responseKind"]["version"].clone(),
                );
                let s = json!({"subresource": sub, "responseKind": response_kind(e, gv), "verbs": e["verbs"]});
                if let Some(subs) = p["subresources"].as_array_mut() {
                    subs.push(s);
                } else {
                    p["subresources"] = json!([s]);
                }
            }
            continue;
        }
        let (group, version) = match list["groupVersion"].as_str().unwrap_or("").split_once('/') {
            Some((g, v)) => (json!(g), json!(v)),
            None => (json!(""), list["groupVersion"].clone()),
        };
        let mut r = json!({
            "resource": name,
            "responseKind": response_kind(e, (&group, &version)),
            "scope": if e["namespaced"] == true { "Namespaced" } else { "Cluster" },
            "singularResource": e["singularName"],
            "verbs": e["verbs"],
        });
        for k in ["shortNames", "categories"] {
            if let Some(v) = e.get(k) {
                r[k] = v.clone();
            }
        }
        out.push(r);
    }
    out
}

/// `/api` or `/apis` as an `APIGroupDiscoveryList` (aggregated discovery, KEP-3352): every
/// group, its versions in preference order, each with its resources.
pub fn aggregated(reg: &Registry, core: bool, version: &str) -> Value {
    let items: Vec<Value> = reg
        .groups()
        .iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, vs)| {
            let versions: Vec<Value> = vs
                .iter()
                .filter_map(|v| {
                    let list = resource_list(reg, g, v)?;
                    Some(
                        json!({"version": v, "resources": aggregated_resources(&list),
                                "freshness": "Current"}),
                    )
                })
                .collect();
            json!({"metadata": {"name": g, "creationTimestamp": null}, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {},
        "items": items,
    })
}
