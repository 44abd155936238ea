//! The PodMetrics and NodeMetrics requests: what metrics-server's `podMetrics` and
//! `nodeMetrics` storages answer (lists sorted, selectors applied, not-found errors worded as
//! its listers word them), built from the store's pods and nodes at the last scrape.

use std::{collections::HashMap, sync::Arc};

use http::Method;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use kruise_core::{
    kruise::sidecarset::quantity::from_nanos,
    sim::usage::{self, Scrape, Usage},
};

use super::{GROUP, GROUP_VERSION, MetricsApi, table};
use crate::server::{
    http::{Req, Resp, Shared, error_response, json_response},
    meta,
    resources::ResourceInfo,
    selector::{FieldSelector, LabelSelector},
    status::ApiError,
    store::Obj,
};

/// `123456789n`, as metrics-server's `NewScaledQuantity(n, -9)` prints.
pub(super) fn cpu(nanos: u64) -> String {
    from_nanos(i128::from(nanos), false).unwrap_or_default()
}

/// `51200Ki`, as metrics-server's `NewQuantity(bytes, BinarySI)` prints.
pub(super) fn memory(bytes: u64) -> String {
    from_nanos(i128::from(bytes) * 1_000_000_000, true).unwrap_or_default()
}

pub(super) fn usage_json(u: Usage) -> Value {
    json!({"cpu": cpu(u.cpu_nanos), "memory": memory(u.memory_bytes)})
}

/// Go's `time.Duration.String()` for the scrape windows (under a minute): `15.023s`.
pub(super) fn go_duration(d: jiff::SignedDuration) -> String {
    let ms = d.as_millis();
    let (secs, frac) = (ms / 1000, ms % 1000);
    if frac == 0 {
        format!("{secs}s")
    } else {
        let f = format!("{frac:03}");
        format!("{secs}.{}s", f.trim_end_matches('0'))
    }
}

/// The go-restful mux's answer for a path no route serves.
fn page_not_found() -> Resp {
    let mut r = Resp::new(crate::server::http::full("404 page not found\n"));
    *r.status_mut() = http::StatusCode::NOT_FOUND;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn not_found(kind: &str, group: &str, name: &str) -> ApiError {
    let qualified = crate::server::status::qualified(kind, group);
    let mut details = json!({"name": name, "kind": kind});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    ApiError {
        details: Some(Box::new(details)),
        ..ApiError::new(404, "NotFound", format!("{qualified} \"{name}\" not found"))
    }
}

/// What a request asks for.
enum Ask<'a> {
    Pods(Option<&'a str>),
    Pod(&'a str, &'a str),
    Nodes,
    Node(&'a str),
}

/// A request below `/apis/metrics.k8s.io/v1beta1/`.
pub fn resource(shared: &Shared, req: &Req, rest: &[&str]) -> Resp {
    let ask = match rest {
        ["pods"] => Ask::Pods(None),
        ["namespaces", ns, "pods"] => Ask::Pods(Some(ns)),
        ["namespaces", ns, "pods", name] => Ask::Pod(ns, name),
        ["nodes"] => Ask::Nodes,
        ["nodes", name] => Ask::Node(name),
        _ => return page_not_found(),
    };
    if req.method != Method::GET {
        return error_response(&ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    let list = matches!(ask, Ask::Pods(_) | Ask::Nodes);
    if list && req.flag("watch") {
        let plural = if matches!(ask, Ask::Nodes) {
            "nodes"
        } else {
            "pods"
        };
        return error_response(&ApiError {
            details: Some(Box::new(json!({"group": GROUP, "kind": plural}))),
            ..ApiError::method_not_allowed(format!(
                "watch is not supported on resources of kind \"{plural}.{GROUP}\""
            ))
        });
    }
    let s = usage::scrape(jiff::Timestamp::now());
    let one = |item: Result<Value, ApiError>, kind: &str| {
        item.map(|v| {
            if crate::server::table::wants_table(req) {
                table::table(kind, &[v])
            } else {
                typed(v, kind)
            }
        })
    };
    let answer = match ask {
        Ask::Pods(ns) => list_pods(shared, req, ns, &s),
        Ask::Pod(ns, name) => one(get_pod(shared, ns, name, &s), "PodMetrics"),
        Ask::Nodes => list_nodes(shared, req, &s),
        Ask::Node(name) => one(get_node(shared, name, &s), "NodeMetrics"),
    };
    match answer {
        Ok(v) => json_response(200, &v),
        Err(e) => error_response(&e),
    }
}

fn selectors(
    req: &Req,
    kind: &str,
    namespaced: bool,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let label = LabelSelector::parse(req.q("labelSelector").unwrap_or(""))?;
    let field = match req.q("fieldSelector") {
        // No conversion registered for the kind: apimachinery's default one.
        Some(f) => FieldSelector::for_resource(&conversion_only(kind, namespaced), f)?,
        None => FieldSelector::default(),
    };
    Ok((label, field))
}

/// A resource that only carries the kind's name for the field label conversion.
fn conversion_only(kind: &str, namespaced: bool) -> ResourceInfo {
    ResourceInfo {
        group: GROUP.into(),
        version: super::VERSION.into(),
        kind: kind.into(),
        plural: String::new(),
        singular: String::new(),
        namespaced,
        short_names: Vec::new(),
        categories: Vec::new(),
        verbs: vec!["get", "list"],
        status: false,
        scale: None,
        extra_subresources: Vec::new(),
        schema: None,
        definition: None,
        printer_columns: Vec::new(),
        crd: false,
        webhook_conversion: false,
        key: Arc::from(""),
    }
}

fn core(shared: &Shared, plural: &str) -> Result<Arc<ResourceInfo>, ApiError> {
    shared
        .store
        .registry()
        .lookup("", "v1", plural)
        .ok_or_else(|| ApiError::internal(format!("{plural} are not served")))
}

impl MetricsApi {
    /// The pod parsed, from the cache while its resourceVersion holds.
    fn parsed(&self, o: &Obj) -> Option<Arc<Pod>> {
        let key = format!(
            "{}/{}",
            o.head["metadata"]["namespace"].as_str().unwrap_or(""),
            o.head["metadata"]["name"].as_str().unwrap_or("")
        );
        if let Ok(cache) = self.pods.lock()
            && let Some((rv, pod)) = cache.get(&key)
            && *rv == o.rv
        {
            return Some(pod.clone());
        }
        let pod: Arc<Pod> = Arc::new(serde_json::from_slice(&o.json).ok()?);
        if let Ok(mut cache) = self.pods.lock() {
            cache.insert(key, (o.rv, pod.clone()));
        }
        Some(pod)
    }

    /// Forget the pods no longer stored (after a list of every pod).
    fn keep_only(&self, items: &[Arc<Obj>]) {
        if let Ok(mut cache) = self.pods.lock()
            && cache.len() > items.len()
        {
            let live: std::collections::HashSet<String> = items
                .iter()
                .map(|o| {
                    format!(
                        "{}/{}",
                        o.head["metadata"]["namespace"].as_str().unwrap_or(""),
                        o.head["metadata"]["name"].as_str().unwrap_or("")
                    )
                })
                .collect();
            cache.retain(|k, _| live.contains(k));
        }
    }
}

fn running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

/// A PodMetrics (without kind and apiVersion, as a list item), None when it has no figures.
fn pod_metrics(o: &Obj, pod: &Pod, s: &Scrape, now: &str) -> Option<Value> {
    let containers = usage::pod_usage(pod, s);
    if containers.is_empty() {
        return None;
    }
    let meta = &o.head["metadata"];
    let mut metadata = json!({
        "name": meta["name"],
        "namespace": meta["namespace"],
        "creationTimestamp": now,
    });
    if meta["labels"].as_object().is_some_and(|l| !l.is_empty()) {
        metadata["labels"] = meta["labels"].clone();
    }
    let containers: Vec<Value> = containers
        .into_iter()
        .map(|(name, u)| json!({"name": name, "usage": usage_json(u)}))
        .collect();
    Some(json!({
        "metadata": metadata,
        "timestamp": s.at.to_string(),
        "window": go_duration(s.window),
        "containers": containers,
    }))
}

fn typed(mut item: Value, kind: &str) -> Value {
    let mut out = json!({"kind": kind, "apiVersion": GROUP_VERSION});
    if let (Some(o), Some(i)) = (out.as_object_mut(), item.as_object_mut()) {
        o.append(i);
    }
    out
}

fn list_doc(req: &Req, kind: &str, items: Vec<Value>) -> Value {
    if crate::server::table::wants_table(req) {
        return table::table(kind, &items);
    }
    json!({"kind": format!("{kind}List"), "apiVersion": GROUP_VERSION, "metadata": {}, "items": items})
}

fn list_pods(shared: &Shared, req: &Req, ns: Option<&str>, s: &Scrape) -> Result<Value, ApiError> {
    let (label, field) = selectors(req, "PodMetrics", true)?;
    let res = core(shared, "pods")?;
    let all = shared.store.list(&res, ns, &|_| true, None, None).items;
    if ns.is_none() && label.is_empty() && field.is_empty() {
        shared.metrics.keep_only(&all);
    }
    let now = meta::now();
    // The store lists in (namespace, name) order: metrics-server's order.
    let items: Vec<Value> = all
        .iter()
        .filter(|o| label.matches(&o.head) && field.matches(&o.head))
        .filter_map(|o| {
            let pod = shared.metrics.parsed(o)?;
            pod_metrics(o, &pod, s, &now)
        })
        .collect();
    Ok(list_doc(req, "PodMetrics", items))
}

fn get_pod(shared: &Shared, ns: &str, name: &str, s: &Scrape) -> Result<Value, ApiError> {
    let res = core(shared, "pods")?;
    let missing = || not_found("pods", "", name);
    let o = shared.store.get(&res, ns, name).map_err(|_| missing())?;
    let pod = shared.metrics.parsed(&o).ok_or_else(missing)?;
    // metrics-server's pod informer holds only running pods.
    if !running(&pod) {
        return Err(missing());
    }
    pod_metrics(&o, &pod, s, &meta::now())
        .ok_or_else(|| not_found("podmetrics", GROUP, &format!("{ns}/{name}")))
}

/// The node's usage at the scrape: its pods' and its system's; None while it is not Ready
/// (metrics-server cannot scrape its kubelet).
/// Every node's pods' usage at the scrape, from one pass over the pods.
fn by_node(shared: &Shared, pods: &[Arc<Obj>], s: &Scrape) -> HashMap<String, Usage> {
    let mut out: HashMap<String, Usage> = HashMap::new();
    for pod in pods.iter().filter_map(|o| shared.metrics.parsed(o)) {
        let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) else {
            continue;
        };
        let u: Usage = usage::pod_usage(&pod, s).into_iter().map(|(_, u)| u).sum();
        let sum = out.entry(node.to_owned()).or_default();
        *sum = *sum + u;
    }
    out
}

/// The node's usage at the scrape: its pods' and its system's; None while it is not Ready
/// (metrics-server cannot scrape its kubelet).
fn node_usage(node: &Value, pods: &HashMap<String, Usage>, s: &Scrape) -> Option<Usage> {
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    if !ready {
        return None;
    }
    let name = node["metadata"]["name"].as_str()?;
    let on_node = pods.get(name).copied().unwrap_or_default();
    Some(on_node + usage::node_overhead(name, s))
}

fn node_metrics(node: &Value, u: Usage, s: &Scrape, now: &str) -> Value {
    let meta = &node["metadata"];
    let mut metadata = json!({"name": meta["name"], "creationTimestamp": now});
    if meta["labels"].as_object().is_some_and(|l| !l.is_empty()) {
        metadata["labels"] = meta["labels"].clone();
    }
    json!({
        "metadata": metadata,
        "timestamp": s.at.to_string(),
        "window": go_duration(s.window),
        "usage": usage_json(u),
    })
}

fn list_nodes(shared: &Shared, req: &Req, s: &Scrape) -> Result<Value, ApiError> {
    let (label, field) = selectors(req, "NodeMetrics", false)?;
    let nodes = shared
        .store
        .list(&*core(shared, "nodes")?, None, &|_| true, None, None)
        .items;
    let pods = shared
        .store
        .list(&*core(shared, "pods")?, None, &|_| true, None, None)
        .items;
    let pods = by_node(shared, &pods, s);
    let now = meta::now();
    let items: Vec<Value> = nodes
        .iter()
        .filter(|o| label.matches(&o.head) && field.matches(&o.head))
        .filter_map(|o| {
            let node = o.value();
            let u = node_usage(&node, &pods, s)?;
            Some(node_metrics(&node, u, s, &now))
        })
        .collect();
    Ok(list_doc(req, "NodeMetrics", items))
}

fn get_node(shared: &Shared, name: &str, s: &Scrape) -> Result<Value, ApiError> {
    let o = shared
        .store
        .get(&*core(shared, "nodes")?, "", name)
        .map_err(|_| not_found("node", "", name))?;
    let pods = shared
        .store
        .list(&*core(shared, "pods")?, None, &|_| true, None, None)
        .items;
    let pods = by_node(shared, &pods, s);
    let node = o.value();
    let u = node_usage(&node, &pods, s).ok_or_else(|| not_found("nodemetrics", GROUP, name))?;
    Ok(node_metrics(&node, u, s, &meta::now()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_and_windows_print_as_metrics_server_prints_them() {
        assert_eq!(cpu(123_456_789), "123456789n");
        assert_eq!(cpu(500_000_000), "500m");
        assert_eq!(cpu(1_000_000_000), "1");
        assert_eq!(cpu(1_200_000), "1200u");
        assert_eq!(memory(51_200 * 1024), "50Mi");
        assert_eq!(memory(51_204 * 1024), "51204Ki");
        assert_eq!(memory(1536), "1536");
        assert_eq!(
            go_duration(jiff::SignedDuration::from_millis(15_023)),
            "15.023s"
        );
        assert_eq!(
            go_duration(jiff::SignedDuration::from_millis(15_500)),
            "15.5s"
        );
        assert_eq!(go_duration(jiff::SignedDuration::from_secs(15)), "15s");
    }
}
