//! The resource metrics API, `metrics.k8s.io/v1beta1`, as kubernetes-sigs/metrics-server serves
//! it behind the aggregator (its `pkg/api` and `pkg/storage`), from the simulated containers'
//! usage (`kruise_core::sim::usage`): what `kubectl top`, HPA-style consoles, k9s and kdash read.
//!
//! - `GET /apis/metrics.k8s.io/v1beta1/{pods, namespaces/NS/pods, namespaces/NS/pods/NAME,
//!   nodes, nodes/NAME}`: PodMetrics and NodeMetrics (and their lists, sorted by namespace and
//!   name), `labelSelector` and `fieldSelector` (`metadata.name`, `metadata.namespace`), `as=Table`.
//!   Only `Running` pods with a reportable container are listed (metrics-server's pod informer
//!   selects `status.phase=Running`); a node's usage is its pods' plus its system's.
//! - As metrics-server: `limit` and `continue` are ignored (the whole list, no continue token;
//!   metrics-server#200), `watch` is refused with 405, other methods get 405, a missing pod is
//!   `pods "X" not found`, a running pod without figures `podmetrics.metrics.k8s.io "NS/X" not
//!   found`, a missing node `node "X" not found`; unrouted paths the Go mux's plain 404.
//! - Discovery lists the group (`/apis`, aggregated discovery, `/apis/metrics.k8s.io`,
//!   `/apis/metrics.k8s.io/v1beta1`) while the API is on; off ([`MetricsApi::set`],
//!   `ServerOptions::metrics`), every path answers as on a cluster without metrics-server.
//! - At start (when on) the store gets what installing metrics-server adds: the APIService
//!   `v1beta1.metrics.k8s.io` and the ClusterRole `system:aggregated-metrics-reader`
//!   (aggregated into view, edit and admin). Authorization is the server's, before routing.

mod install;
mod serve;
mod table;

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use serde_json::{Value, json};

use super::http::{Req, Resp, Shared, json_response};

pub use install::install;

pub const GROUP: &str = "metrics.k8s.io";
pub const VERSION: &str = "v1beta1";
pub const GROUP_VERSION: &str = "metrics.k8s.io/v1beta1";

/// Whether the metrics API is served, and what it remembers between requests (each pod's
/// parsed spec and status by resourceVersion, so a list of many pods parses only the changed).
pub struct MetricsApi {
    enabled: AtomicBool,
    pods: Mutex<HashMap<String, (u64, Arc<k8s_openapi::api::core::v1::Pod>)>>,
}

impl MetricsApi {
    pub fn new(enabled: bool) -> Self {
        MetricsApi {
            enabled: AtomicBool::new(enabled),
            pods: Mutex::default(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Serve the API or stop serving it (discovery follows at once). The APIService and the
    /// ClusterRole installed at start stay as they are.
    pub fn set(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }
}

fn group_version() -> Value {
    json!({"groupVersion": GROUP_VERSION, "version": VERSION})
}

/// The group as `/apis` lists it.
fn group() -> Value {
    json!({"name": GROUP, "versions": [group_version()], "preferredVersion": group_version()})
}

/// The APIResourceList metrics-server answers (nodes before pods, no singular names).
fn resource_list() -> Value {
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GROUP_VERSION,
        "resources": [
            {"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics",
             "verbs": ["get", "list"]},
            {"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics",
             "verbs": ["get", "list"]},
        ],
    })
}

/// `/apis` with the group added (last: its APIService's groupPriorityMinimum is 100).
pub fn add_group(shared: &Shared, doc: &mut Value) {
    if shared.metrics.enabled()
        && let Some(groups) = doc["groups"].as_array_mut()
    {
        groups.push(group());
    }
}

/// The aggregated discovery document of `/apis` with the group added.
pub fn add_aggregated(shared: &Shared, doc: &mut Value) {
    if !shared.metrics.enabled() {
        return;
    }
    let resources = super::discovery::aggregated_resources(&resource_list());
    if let Some(items) = doc["items"].as_array_mut() {
        items.push(json!({
            "metadata": {"name": GROUP, "creationTimestamp": null},
            "versions": [{"version": VERSION, "resources": resources, "freshness": "Current"}],
        }));
    }
}

/// The answer to a request under `/apis/metrics.k8s.io` while the API is served; None for
/// any other path, or when it is off (the caller answers as for any unknown group).
pub fn route(shared: &Shared, req: &Req, segs: &[&str]) -> Option<Resp> {
    if !shared.metrics.enabled() {
        return None;
    }
    let rest = match segs {
        ["apis", GROUP, rest @ ..] => rest,
        _ => return None,
    };
    let doc = match rest {
        [] => {
            let mut g = group();
            g["kind"] = json!("APIGroup");
            g["apiVersion"] = json!("v1");
            Some(g)
        }
        [VERSION] => Some(resource_list()),
        [VERSION, ..] => None,
        // Another version: the caller's answer for an unknown group/version.
        _ => return None,
    };
    if let Some(doc) = doc {
        return Some(json_response(200, &doc));
    }
    Some(serve::resource(shared, req, &rest[1..]))
}
