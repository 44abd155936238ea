//! The resource table: every served group/version/resource with its kind, scope, verbs, short names,
//! subresources, schema and printer columns. Built-in kinds come from `builtin`; every
//! CustomResourceDefinition in the store adds its served versions.

use std::{collections::HashMap, sync::Arc};

use jsonpath_rust::parser::model::JpQuery;
use serde_json::Value;

/// Where a `/scale` subresource reads and writes replicas (JSON paths like `.spec.replicas`).
#[derive(Debug, Clone, PartialEq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

/// A `kubectl get` column (CRD additionalPrinterColumns).
#[derive(Debug, Clone, PartialEq)]
pub struct PrinterColumn {
    pub name: String,
    pub type_: String,
    pub json_path: String,
    pub priority: i64,
    /// The parsed path (None when it does not parse: the cells stay empty).
    pub query: Option<Arc<JpQuery>>,
}

/// One served group/version/resource.
#[derive(Debug, Clone)]
pub struct ResourceInfo {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub verbs: Vec<&'static str>,
    /// Has a `/status` subresource (status changes only through it).
    pub status: bool,
    pub scale: Option<ScalePaths>,
    /// Other subresources, with the kind they take (`eviction` → Eviction).
    pub extra_subresources: Vec<(&'static str, &'static str, &'static str)>,
    /// The openAPIV3Schema of a CRD version (structural-schema validation and pruning).
    pub schema: Option<Arc<Value>>,
    /// A built-in kind's schema name in the built-in catalog (`io.k8s.api.core.v1.Pod`), for the
    /// OpenAPI documents and decode-time validation.
    pub definition: Option<Arc<str>>,
    pub printer_columns: Vec<PrinterColumn>,
    /// Served from a CRD.
    pub crd: bool,
    /// The CRD converts between its versions with a webhook (`spec.conversion.strategy:
    /// Webhook`, as kruise-manager sets on the Kruise CRDs): the embedded cluster runs
    /// Kruise's conversion in-process. Otherwise (`None`) only `apiVersion` changes and the
    /// target version's schema prunes.
    pub webhook_conversion: bool,
    /// Storage key shared by all versions of the resource: `group/plural`.
    pub key: Arc<str>,
}

impl ResourceInfo {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    pub fn group_version_path(&self) -> String {
        if self.group.is_empty() {
            format!("api/{}", self.version)
        } else {
            format!("apis/{}/{}", self.group, self.version)
        }
    }

    /// Whether objects of this resource keep `metadata.generation`: every custom resource, and
    /// the built-in kinds whose registry strategy sets it (a ConfigMap, Pod or Lease has none).
    pub fn tracks_generation(&self) -> bool {
        self.crd
            || GENERATION_KINDS
                .iter()
                .any(|(g, p)| *g == self.group && *p == self.plural)
    }

    /// Whether a PUT of a missing object creates it (the strategy's `AllowCreateOnUpdate`).
    pub fn allows_create_on_update(&self) -> bool {
        CREATE_ON_UPDATE_KINDS
            .iter()
            .any(|(g, p)| *g == self.group && *p == self.plural)
    }

    /// Whether a PUT without `metadata.resourceVersion` is taken as unconditional (every
    /// built-in kind's `AllowUnconditionalUpdate`); a custom resource's must carry one.
    pub fn allows_unconditional_update(&self) -> bool {
        !self.crd
    }

    /// Whether strategic merge patch is accepted (built-in kinds only, like the real server).
    pub fn strategic_merge(&self) -> bool {
        !self.crd
    }
}

/// The built-in resources whose strategy's `PrepareForCreate` sets `metadata.generation` to 1
/// and `PrepareForUpdate` bumps it when the spec changes (kube-apiserver's pkg/registry).
const GENERATION_KINDS: &[(&str, &str)] = &[
    ("", "replicationcontrollers"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
    ("policy", "poddisruptionbudgets"),
    ("networking.k8s.io", "networkpolicies"),
    ("networking.k8s.io", "ingresses"),
    ("networking.k8s.io", "ingressclasses"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
    ),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"),
    (
        "flowcontrol.apiserver.k8s.io",
        "prioritylevelconfigurations",
    ),
];

/// The built-in resources whose strategy's `AllowCreateOnUpdate` is true: a PUT of a missing
/// object creates it.
const CREATE_ON_UPDATE_KINDS: &[(&str, &str)] = &[
    ("", "events"),
    ("", "endpoints"),
    ("", "limitranges"),
    ("events.k8s.io", "events"),
    ("coordination.k8s.io", "leases"),
    ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "clusterroles"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
];

/// Storage key for a group and plural.
pub fn storage_key(group: &str, plural: &str) -> Arc<str> {
    Arc::from(format!("{group}/{plural}"))
}

/// All served resources, with lookups.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    all: Vec<Arc<ResourceInfo>>,
    by_gvr: HashMap<(String, String, String), Arc<ResourceInfo>>,
    by_gvk: HashMap<(String, String), Arc<ResourceInfo>>,
    /// The storage version of each CRD resource, by storage key (built-in kinds store their own).
    storage: HashMap<Arc<str>, String>,
    /// Bumped whenever the table changes (discovery/OpenAPI hashes).
    pub generation: u64,
}

impl Registry {
    pub fn new(builtin: Vec<ResourceInfo>, crds: &[Value]) -> Self {
        let mut r = Registry::default();
        r.rebuild(builtin, crds);
        r
    }

    pub fn rebuild(&mut self, builtin: Vec<ResourceInfo>, crds: &[Value]) {
        let mut all: Vec<Arc<ResourceInfo>> = builtin.into_iter().map(Arc::new).collect();
        self.storage.clear();
        for crd in crds {
            let served = from_crd(crd);
            if let (Some(first), Some(version)) = (served.first(), storage_version_of(crd)) {
                self.storage.insert(first.key.clone(), version);
            }
            all.extend(served.into_iter().map(Arc::new));
        }
        self.by_gvr.clear();
        self.by_gvk.clear();
        for r in &all {
            self.by_gvr.insert(
                (r.group.clone(), r.version.clone(), r.plural.clone()),
                r.clone(),
            );
            self.by_gvk
                .insert((r.api_version(), r.kind.clone()), r.clone());
        }
        self.all = all;
        self.generation += 1;
    }

    pub fn all(&self) -> &[Arc<ResourceInfo>] {
        &self.all
    }

    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.by_gvr
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        self.by_gvk
            .get(&(api_version.to_string(), kind.to_string()))
            .cloned()
    }

    /// Groups in discovery order, each with its versions (preferred first).
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for r in &self.all {
            match out.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, vs)) => {
                    if !vs.contains(&r.version) {
                        vs.push(r.version.clone());
                    }
                }
                None => out.push((r.group.clone(), vec![r.version.clone()])),
            }
        }
        for (_, vs) in &mut out {
            vs.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        }
        out
    }

    /// The version objects of `res` are stored at: the CRD's `storage: true` version; a
    /// built-in kind's own version.
    pub fn storage_version<'a>(&'a self, res: &'a ResourceInfo) -> &'a str {
        if !res.crd {
            return &res.version;
        }
        self.storage
            .get(&res.key)
            .map_or(res.version.as_str(), String::as_str)
    }

    /// The served resource at the storage version of `res` (itself for built-in kinds).
    pub fn storage_resource(&self, res: &ResourceInfo) -> Option<Arc<ResourceInfo>> {
        self.lookup(&res.group, self.storage_version(res), &res.plural)
    }

    pub fn in_group_version(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        self.all
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .cloned()
            .collect()
    }
}

/// Kubernetes version priority: GA > beta > alpha, higher numbers first.
fn version_priority(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    let (level, minor_str) = if tail.is_empty() {
        (3, "")
    } else if let Some(m) = tail.strip_prefix("beta") {
        (2, m)
    } else if let Some(m) = tail.strip_prefix("alpha") {
        (1, m)
    } else {
        (0, "")
    };
    (level, major, minor_str.parse().unwrap_or(0))
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The name of the CRD's `storage: true` version.
fn storage_version_of(crd: &Value) -> Option<String> {
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["storage"].as_bool() == Some(true))
        .and_then(|v| v["name"].as_str())
        .map(str::to_string)
}

/// The served versions of a CRD object (none if it is malformed).
pub fn from_crd(crd: &Value) -> Vec<ResourceInfo> {
    let spec = &crd["spec"];
    let (Some(group), Some(plural), Some(kind)) = (
        spec["group"].as_str(),
        spec["names"]["plural"].as_str(),
        spec["names"]["kind"].as_str(),
    ) else {
        return Vec::new();
    };
    if crd["metadata"]["deletionTimestamp"].is_string() {
        return Vec::new();
    }
    let singular = spec["names"]["singular"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_lowercase());
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let key = storage_key(group, plural);
    let mut out = Vec::new();
    for v in spec["versions"].as_array().into_iter().flatten() {
        if v["served"].as_bool() == Some(false) {
            continue;
        }
        let Some(version) = v["name"].as_str() else {
            continue;
        };
        let sub = &v["subresources"];
        let scale = sub["scale"].as_object().map(|s| ScalePaths {
            spec_replicas: s
                .get("specReplicasPath")
                .and_then(Value::as_str)
                .unwrap_or(".spec.replicas")
                .to_string(),
            status_replicas: s
                .get("statusReplicasPath")
                .and_then(Value::as_str)
                .unwrap_or(".status.replicas")
                .to_string(),
            label_selector: s
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(str::to_string),
        });
        let printer_columns = v["additionalPrinterColumns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let json_path = c["jsonPath"].as_str()?.to_string();
                Some(PrinterColumn {
                    name: c["name"].as_str()?.to_string(),
                    type_: c["type"].as_str().unwrap_or("string").to_string(),
                    query: super::jsonpath::compile(&json_path).ok().map(Arc::new),
                    json_path,
                    priority: c["priority"].as_i64().unwrap_or(0),
                })
            })
            .collect();
        out.push(ResourceInfo {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            plural: plural.to_string(),
            singular: singular.clone(),
            namespaced,
            short_names: strings(spec["names"].get("shortNames")),
            categories: strings(spec["names"].get("categories")),
            verbs: super::builtin::ALL_VERBS.to_vec(),
            status: sub.get("status").is_some(),
            scale,
            extra_subresources: Vec::new(),
            schema: v["schema"]
                .get("openAPIV3Schema")
                .map(|s| Arc::new(s.clone())),
            definition: None,
            printer_columns,
            crd: true,
            webhook_conversion: spec["conversion"]["strategy"].as_str() == Some("Webhook"),
            key: key.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_order_prefers_ga_then_beta() {
        let mut vs = vec!["v1alpha1", "v1beta1", "v1", "v2beta2"];
        vs.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        assert_eq!(vs, vec!["v1", "v2beta2", "v1beta1", "v1alpha1"]);
    }
}
