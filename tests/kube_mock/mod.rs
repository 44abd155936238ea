//! A small Kubernetes API server for the kube layer's tests: discovery, paged lists, watches
//! (chunked JSON lines, resumable from a resourceVersion), GET, and field-selected event lists,
//! over plain HTTP on loopback. It can stop and start serving on the same port to play an API
//! server restart. Objects are kept as JSON; every change gets the next resourceVersion.

#![allow(dead_code)]

use std::{
    collections::BTreeMap,
    convert::Infallible,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::{Request, Response, body::Frame, service::service_fn};
use hyper_util::rt::TokioIo;
use kruise_tui::kube::connect::Connection;
use serde_json::{Value, json};
use tokio::{net::TcpListener, sync::broadcast, task::JoinSet};

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// What the mock serves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Serve apps.kruise.io at all.
    pub kruise: bool,
    /// The one version CloneSets are served at ("v1alpha1" or "v1beta1"). StatefulSets are always
    /// at v1beta1, which is the preferred version, so discovery must not stop there.
    pub cloneset_version: &'static str,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            kruise: true,
            cloneset_version: "v1alpha1",
        }
    }
}

#[derive(Default)]
struct Inner {
    rv: u64,
    /// (resource plural, namespace, name) -> object
    objects: BTreeMap<(String, String, String), Value>,
    /// Every change, for watches resuming from a resourceVersion.
    history: Vec<(u64, String, String, Value)>,
    /// Request log: "METHOD path?query".
    requests: Vec<String>,
}

struct Shared {
    options: Options,
    inner: Mutex<Inner>,
    changes: broadcast::Sender<(u64, String, String, Value)>,
}

/// A running mock API server.
pub struct MockApi {
    shared: Arc<Shared>,
    addr: SocketAddr,
    serving: Option<tokio::task::JoinHandle<()>>,
}

impl MockApi {
    pub async fn start(options: Options) -> Self {
        let (changes, _) = broadcast::channel(4096);
        let shared = Arc::new(Shared {
            options,
            inner: Mutex::new(Inner::default()),
            changes,
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let serving = Some(tokio::spawn(serve(listener, shared.clone())));
        Self {
            shared,
            addr,
            serving,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A connection as `kube::connect` would build it, pointing at this server.
    pub fn connection(&self) -> Connection {
        let mut config = kube::Config::new(self.url().parse().unwrap());
        config.default_namespace = "demo".into();
        Connection {
            client: kube::Client::try_from(config).unwrap(),
            context: Some("mock".into()),
            contexts: vec!["mock".into()],
            default_namespace: "demo".into(),
            cluster_url: self.url(),
        }
    }

    /// Closes the listener and every open connection (watches end), like a server going down.
    pub fn stop_serving(&mut self) {
        if let Some(task) = self.serving.take() {
            task.abort();
        }
    }

    /// Serves again on the same port, with the same objects.
    pub async fn start_serving(&mut self) {
        let listener = TcpListener::bind(self.addr).await.unwrap();
        self.serving = Some(tokio::spawn(serve(listener, self.shared.clone())));
    }

    /// Creates or replaces an object (ADDED or MODIFIED).
    pub fn put(&self, resource: &str, mut obj: Value) {
        let ns = obj["metadata"]["namespace"].as_str().unwrap().to_owned();
        let name = obj["metadata"]["name"].as_str().unwrap().to_owned();
        let mut inner = self.shared.inner.lock().unwrap();
        inner.rv += 1;
        let rv = inner.rv;
        obj["metadata"]["resourceVersion"] = json!(rv.to_string());
        let key = (resource.to_owned(), ns, name);
        let kind = if inner.objects.contains_key(&key) {
            "MODIFIED"
        } else {
            "ADDED"
        };
        inner.objects.insert(key, obj.clone());
        self.record(&mut inner, rv, resource, kind, obj);
    }

    /// Deletes an object (DELETED).
    pub fn delete(&self, resource: &str, ns: &str, name: &str) {
        let mut inner = self.shared.inner.lock().unwrap();
        let key = (resource.to_owned(), ns.to_owned(), name.to_owned());
        let Some(mut obj) = inner.objects.remove(&key) else {
            return;
        };
        inner.rv += 1;
        let rv = inner.rv;
        obj["metadata"]["resourceVersion"] = json!(rv.to_string());
        self.record(&mut inner, rv, resource, "DELETED", obj);
    }

    /// Applies `change` to a stored object (MODIFIED).
    pub fn modify(&self, resource: &str, ns: &str, name: &str, change: impl FnOnce(&mut Value)) {
        let key = (resource.to_owned(), ns.to_owned(), name.to_owned());
        let mut obj = self.shared.inner.lock().unwrap().objects[&key].clone();
        change(&mut obj);
        self.put(resource, obj);
    }

    fn record(&self, inner: &mut Inner, rv: u64, resource: &str, kind: &str, obj: Value) {
        let event = json!({"type": kind, "object": obj});
        inner.history.push((
            rv,
            resource.to_owned(),
            ns_of(&obj_of(&event)),
            event.clone(),
        ));
        let _ = self
            .shared
            .changes
            .send((rv, resource.to_owned(), ns_of(&obj_of(&event)), event));
    }

    pub fn requests(&self) -> Vec<String> {
        self.shared.inner.lock().unwrap().requests.clone()
    }
}

fn obj_of(event: &Value) -> Value {
    event["object"].clone()
}

fn ns_of(obj: &Value) -> String {
    obj["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    // Connections live in this set: aborting the serve task drops it, closing them all.
    let mut connections = JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        connections.spawn(async move {
            let service = service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(handle(&shared, req)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn full(status: u16, body: Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(
            Full::new(Bytes::from(body.to_string()))
                .map_err(|never| match never {})
                .boxed_unsync(),
        )
        .unwrap()
}

fn not_found() -> Response<Body> {
    full(
        404,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
               "message": "the server could not find the requested resource", "code": 404}),
    )
}

fn query_map(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k.to_owned(), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// The resources apps.kruise.io serves at `version`.
fn kruise_resources(options: &Options, version: &str) -> Vec<(&'static str, &'static str)> {
    let mut resources = Vec::new();
    if version == options.cloneset_version {
        resources.push(("clonesets", "CloneSet"));
    }
    if version == "v1beta1" {
        resources.push(("statefulsets", "StatefulSet"));
    }
    resources
}

fn kruise_versions(options: &Options) -> Vec<&'static str> {
    let mut versions = vec!["v1beta1"];
    if options.cloneset_version != "v1beta1" {
        versions.push(options.cloneset_version);
    }
    versions
}

fn handle(shared: &Shared, req: Request<hyper::body::Incoming>) -> Response<Body> {
    let path = req.uri().path().to_owned();
    let query = query_map(req.uri().query().unwrap_or(""));
    shared.inner.lock().unwrap().requests.push(format!(
        "{} {}?{}",
        req.method(),
        path,
        req.uri().query().unwrap_or("")
    ));
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let options = &shared.options;
    let rest: &[&str] = match segs.as_slice() {
        ["api"] => return full(200, json!({"kind": "APIVersions", "versions": ["v1"]})),
        ["apis"] => {
            let groups: Vec<Value> = if options.kruise {
                let versions: Vec<Value> = kruise_versions(options)
                    .iter()
                    .map(|v| json!({"groupVersion": format!("apps.kruise.io/{v}"), "version": v}))
                    .collect();
                vec![json!({"name": "apps.kruise.io", "versions": versions,
                            "preferredVersion": versions[0]})]
            } else {
                vec![]
            };
            return full(
                200,
                json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
            );
        }
        ["api", "v1", rest @ ..] => rest,
        ["apis", "apps.kruise.io", version, rest @ ..] if options.kruise => {
            let served = kruise_resources(options, version);
            if rest.is_empty() {
                let resources: Vec<Value> = served
                    .iter()
                    .map(|(plural, kind)| {
                        json!({"name": plural, "singularName": kind.to_lowercase(),
                               "namespaced": true, "kind": kind,
                               "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]})
                    })
                    .collect();
                return full(
                    200,
                    json!({"kind": "APIResourceList", "apiVersion": "v1",
                           "groupVersion": format!("apps.kruise.io/{version}"), "resources": resources}),
                );
            }
            let resource = match rest {
                [r] | ["namespaces", _, r] | ["namespaces", _, r, _] => *r,
                _ => return not_found(),
            };
            if !served.iter().any(|(plural, _)| *plural == resource) {
                return not_found();
            }
            rest
        }
        _ => return not_found(),
    };
    match rest {
        ["namespaces"] => {
            let items: Vec<Value> = ["demo", "other"]
                .iter()
                .map(|n| json!({"metadata": {"name": n}}))
                .collect();
            full(
                200,
                json!({"kind": "NamespaceList", "apiVersion": "v1",
                       "metadata": {"resourceVersion": "1"}, "items": items}),
            )
        }
        [resource] => collection(shared, resource, None, &query),
        ["namespaces", ns, resource] => collection(shared, resource, Some(ns), &query),
        ["namespaces", ns, resource, name] => {
            let key = ((*resource).to_owned(), (*ns).to_owned(), (*name).to_owned());
            match shared.inner.lock().unwrap().objects.get(&key) {
                Some(obj) => full(200, obj.clone()),
                None => not_found(),
            }
        }
        _ => not_found(),
    }
}

fn collection(
    shared: &Shared,
    resource: &str,
    ns: Option<&str>,
    query: &BTreeMap<String, String>,
) -> Response<Body> {
    if query.get("watch").is_some_and(|w| w == "true" || w == "1") {
        if query.contains_key("sendInitialEvents") {
            // No streaming lists here: refused as a v1.33 server (WatchList gate off) does.
            let message = "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: \
                           sendInitialEvents is forbidden for watch unless the WatchList feature \
                           gate is enabled";
            return full(
                422,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "reason": "Invalid", "code": 422}),
            );
        }
        let from: u64 = query
            .get("resourceVersion")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        return watch(shared, resource, ns, from);
    }
    let inner = shared.inner.lock().unwrap();
    let fields = query.get("fieldSelector").cloned().unwrap_or_default();
    let matching: Vec<Value> = inner
        .objects
        .iter()
        .filter(|((r, n, _), _)| r == resource && ns.is_none_or(|ns| ns == n))
        .map(|(_, obj)| obj.clone())
        .filter(|obj| field_match(obj, &fields))
        .collect();
    let offset: usize = query
        .get("continue")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let limit: usize = query
        .get("limit")
        .and_then(|l| l.parse().ok())
        .unwrap_or(usize::MAX);
    let end = offset.saturating_add(limit).min(matching.len());
    let items = matching[offset.min(end)..end].to_vec();
    let continue_ = if end < matching.len() {
        end.to_string()
    } else {
        String::new()
    };
    full(
        200,
        json!({"kind": "List", "apiVersion": "v1",
               "metadata": {"resourceVersion": inner.rv.to_string(), "continue": continue_},
               "items": items}),
    )
}

/// `a.b=x,c=y` against the object's fields.
fn field_match(obj: &Value, selector: &str) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|term| {
        let Some((path, want)) = term.split_once('=') else {
            return false;
        };
        let pointer = format!("/{}", path.replace('.', "/"));
        obj.pointer(&pointer).and_then(Value::as_str) == Some(want)
    })
}

fn watch(shared: &Shared, resource: &str, ns: Option<&str>, from: u64) -> Response<Body> {
    let mut live = shared.changes.subscribe();
    let wanted = |r: &str, n: &str| r == resource && ns.is_none_or(|ns| ns == n);
    let replay: Vec<(u64, Value)> = shared
        .inner
        .lock()
        .unwrap()
        .history
        .iter()
        .filter(|(rv, r, n, _)| *rv > from && wanted(r, n))
        .map(|(rv, _, _, ev)| (*rv, ev.clone()))
        .collect();
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1024);
    let resource = resource.to_owned();
    let ns = ns.map(str::to_owned);
    tokio::spawn(async move {
        let mut last = from;
        for (rv, ev) in replay {
            last = rv;
            if tx.send(Bytes::from(format!("{ev}\n"))).await.is_err() {
                return;
            }
        }
        while let Ok((rv, r, n, ev)) = live.recv().await {
            if rv > last && r == resource && ns.as_deref().is_none_or(|ns| ns == n) {
                last = rv;
                if tx.send(Bytes::from(format!("{ev}\n"))).await.is_err() {
                    return;
                }
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(BodyExt::boxed_unsync(StreamBody::new(stream.boxed())))
        .unwrap()
}

/// A CloneSet as served at `version` (v1beta1 keeps partition under rollingUpdate).
pub fn cloneset(version: &str, ns: &str, name: &str, replicas: i32, partition: i32) -> Value {
    let strategy = if version == "v1beta1" {
        json!({"type": "InPlaceIfPossible", "rollingUpdate": {"partition": partition, "paused": false}})
    } else {
        json!({"type": "InPlaceIfPossible", "partition": partition})
    };
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"),
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{name}"),
                     "generation": 1, "creationTimestamp": "2026-01-01T00:00:00Z",
                     "managedFields": [{"manager": "kubectl", "operation": "Update",
                                        "apiVersion": format!("apps.kruise.io/{version}"),
                                        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
        "spec": {"replicas": replicas,
                 "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}},
                 "updateStrategy": strategy},
        "status": {"replicas": replicas, "readyReplicas": replicas, "updatedReplicas": 0,
                   "updateRevision": format!("{name}-2"), "currentRevision": format!("{name}-1"),
                   "observedGeneration": 1}
    })
}

/// A kubectl-like Pod, managedFields included.
pub fn pod(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{name}"),
                     "labels": {"app": "web", "controller-revision-hash": "web-1"},
                     "creationTimestamp": "2026-01-01T00:00:00Z",
                     "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                                          "name": "web", "uid": "uid-web", "controller": true}],
                     "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                                        "apiVersion": "v1", "fieldsType": "FieldsV1",
                                        "fieldsV1": {"f:metadata": {"f:labels": {}}}}]},
        "spec": {"nodeName": "node-1",
                 "containers": [{"name": "main", "image": "nginx:1.25",
                                 "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Running", "podIP": "10.0.0.1",
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
                                          "image": "nginx:1.25", "imageID": "sha256:abc",
                                          "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}}}]}
    })
}

/// A core/v1 Event about an object.
pub fn event(ns: &str, name: &str, kind: &str, about: &str, reason: &str, last: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": {"kind": kind, "name": about, "namespace": ns,
                           "apiVersion": if kind == "Pod" { "v1" } else { "apps.kruise.io/v1alpha1" }},
        "reason": reason, "message": format!("{reason} happened"), "type": "Normal",
        "count": 2, "lastTimestamp": last, "source": {"component": "kruise-manager"}
    })
}
