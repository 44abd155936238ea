//! Streaming lists end to end: the console's pod watch lists by streaming (watch-list,
//! `sendInitialEvents`) where the server serves them, falls back to paged LIST+WATCH where it
//! refuses them (`ServerOptions::streaming_lists: false`, as v1.33 does) without a reported
//! failure, and a second watch against a server that refused goes straight to pages.
//!
//! The paged fallback's pipelined watcher (`kruise_client::watchlist::paged`) against the
//! embedded server, which pages pods with `limit`/`continue` and checks every parameter as a
//! real server does: every pod once in list order, then the watch from the list's version;
//! selectors on every page and on the watch.
//!
//! Against `KRUISE_TUI_TEST_KUBECONFIG` the first test watches `kube-system`'s pods in whichever
//! mode that server allows; the refusal tests need the embedded server's switch and are skipped.

use crate::msgs;

use futures::{Stream, StreamExt as _};
use kruise_client::watchlist::{ListModes, Lister, paged};
use kruise_tui::{
    api::pod::WatchedPod,
    app::{
        msg::{Kind, ListMode, Msg},
        stores::{PodStore, pod_store},
    },
    cluster::server::{EmbeddedCluster, ServerOptions},
    kube::{
        connect::{Source, connect},
        watchset::{self as watch, PAGE_SIZE},
    },
};
use kube::{
    Api, Client,
    api::{ListParams, WatchEvent, WatchParams},
    runtime::watcher::{self, Event},
};
use msgs::{PATIENCE, failures, has, ready, until};
use serde_json::json;
use tokio::{
    sync::mpsc::{UnboundedReceiver, unbounded_channel},
    task::JoinHandle,
};

const EXISTING: &str = "KRUISE_TUI_TEST_KUBECONFIG";

/// More than two pages of the paged fallback.
const PODS: usize = 2 * PAGE_SIZE as usize + 100;

fn existing() -> Option<std::path::PathBuf> {
    std::env::var_os(EXISTING)
        .filter(|v| !v.is_empty())
        .map(Into::into)
}

fn skip_on_existing(reason: &str) -> bool {
    if existing().is_some() {
        eprintln!("skipped on {EXISTING}: {reason}");
        return true;
    }
    false
}

/// An embedded server holding [`PODS`] pods in `default`.
async fn embedded(streaming_lists: bool) -> (EmbeddedCluster, Client) {
    let c = EmbeddedCluster::start(ServerOptions {
        streaming_lists,
        ..ServerOptions::default()
    })
    .await
    .expect("embedded cluster starts");
    let store = c.store();
    for i in 0..PODS {
        store
            .create(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("web-{i:04}"), "namespace": "default",
                             "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]}
            }))
            .expect("pod stored");
    }
    let client = c.client().await.expect("client");
    (c, client)
}

struct PodWatch {
    store: PodStore,
    rx: UnboundedReceiver<Msg>,
    seen: Vec<Msg>,
    task: JoinHandle<()>,
}

impl Drop for PodWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The console's pod watch of `namespace`, run until its store is ready.
async fn watch_pods(client: &Client, lister: &Lister, namespace: &str) -> PodWatch {
    let (store, writer) = pod_store();
    let (tx, rx) = unbounded_channel();
    let task = tokio::spawn(watch::watch_pods(
        client.clone(),
        lister.clone(),
        Some(namespace.to_owned()),
        writer,
        tx,
    ));
    let mut w = PodWatch {
        store,
        rx,
        seen: Vec::new(),
        task,
    };
    until(&mut w.rx, &mut w.seen, PATIENCE, |s| ready(s, Kind::Pod)).await;
    w
}

/// The modes the watch announced, in order, and whether the first came before `StoreReady`.
fn modes(seen: &[Msg]) -> (Vec<ListMode>, bool) {
    let modes = seen
        .iter()
        .filter_map(|m| match m {
            Msg::ListMode {
                kind: Kind::Pod,
                mode,
            } => Some(*mode),
            _ => None,
        })
        .collect();
    let first_mode = seen.iter().position(|m| {
        matches!(
            m,
            Msg::ListMode {
                kind: Kind::Pod,
                ..
            }
        )
    });
    let ready_at = seen
        .iter()
        .position(|m| matches!(m, Msg::StoreReady(Kind::Pod)));
    (modes, first_mode.is_some() && first_mode < ready_at)
}

#[tokio::test]
async fn the_pod_watch_streams_its_list_where_the_server_serves_streaming_lists() {
    let (cluster, client, server, namespace) = match existing() {
        Some(path) => {
            let source = Source {
                kubeconfig: Some(path),
                context: None,
            };
            let conn = connect(&source, None).await.expect("connects");
            (
                None,
                conn.client,
                conn.cluster_url,
                "kube-system".to_owned(),
            )
        }
        None => {
            let (c, client) = embedded(true).await;
            let url = c.url();
            (Some(c), client, url, "default".to_owned())
        }
    };
    let lister = Lister::with_memory(&server, ListModes::new());
    let w = watch_pods(&client, &lister, &namespace).await;
    let (announced, before_ready) = modes(&w.seen);
    assert!(before_ready, "the mode is told while loading: {:?}", w.seen);
    assert_eq!(failures(&w.seen, Kind::Pod), 0, "{:?}", w.seen);
    let listed = Api::<WatchedPod>::namespaced(client.clone(), &namespace)
        .list_metadata(&ListParams::default())
        .await
        .expect("list")
        .items
        .len();
    assert_eq!(w.store.state().len(), listed, "the store holds every pod");
    let pods: Api<WatchedPod> = Api::namespaced(client.clone(), &namespace);
    match cluster {
        Some(c) => {
            assert_eq!(listed, PODS);
            assert_eq!(announced, [ListMode::Streaming]);
            assert_eq!(lister.mode_of(&pods), Some(ListMode::Streaming));
            assert!(c.watch_list().asked() >= 1);
            assert_eq!(c.watch_list().refused(), 0);
        }
        None => {
            // Whichever this server allows; what was told is what is remembered.
            eprintln!("{server}: pods listed by {announced:?}");
            assert_eq!(lister.mode_of(&pods), announced.last().copied());
        }
    }
}

#[tokio::test]
async fn a_server_refusing_streaming_lists_is_listed_in_pages_without_a_failure() {
    if skip_on_existing("needs the embedded server's streaming-lists switch") {
        return;
    }
    let (c, client) = embedded(false).await;
    let lister = Lister::with_memory(&c.url(), ListModes::new());
    let w = watch_pods(&client, &lister, "default").await;
    let (announced, before_ready) = modes(&w.seen);
    assert_eq!(announced, [ListMode::Paged], "{:?}", w.seen);
    assert!(before_ready);
    assert_eq!(failures(&w.seen, Kind::Pod), 0, "no failure is reported");
    assert!(!has(&w.seen, |m| matches!(m, Msg::WatchForbidden { .. })));
    assert_eq!(w.store.state().len(), PODS);
    assert_eq!(c.watch_list().refused(), 1, "asked once, refused once");
    let pods: Api<WatchedPod> = Api::namespaced(client.clone(), "default");
    assert_eq!(lister.mode_of(&pods), Some(ListMode::Paged));
    // The paged watch that follows sees changes.
    c.store()
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "late", "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "nginx"}]}
        }))
        .expect("pod stored");
    crate::common::eventually("the late pod is watched", || {
        let n = w.store.state().len();
        async move { n == PODS + 1 }
    })
    .await;
}

#[tokio::test]
async fn a_second_watch_of_a_refusing_server_goes_straight_to_pages() {
    if skip_on_existing("needs the embedded server's streaming-lists switch") {
        return;
    }
    let (c, client) = embedded(false).await;
    let lister = Lister::with_memory(&c.url(), ListModes::new());
    let first = watch_pods(&client, &lister, "default").await;
    drop(first);
    let (asked, refused) = (c.watch_list().asked(), c.watch_list().refused());
    assert_eq!((asked, refused), (1, 1));
    // As after `:ns`: another watch of the same kind on the same server (all namespaces now).
    let (store, writer) = pod_store();
    let (tx, mut rx) = unbounded_channel();
    let task = tokio::spawn(watch::watch_pods(
        client.clone(),
        lister.clone(),
        None,
        writer,
        tx,
    ));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| ready(s, Kind::Pod)).await;
    task.abort();
    assert_eq!(modes(&seen).0, [ListMode::Paged]);
    assert_eq!(failures(&seen, Kind::Pod), 0);
    assert!(store.state().len() >= PODS);
    assert_eq!(
        (c.watch_list().asked(), c.watch_list().refused()),
        (asked, refused),
        "no second watch-list request"
    );
}

#[tokio::test]
async fn the_embedded_server_refuses_streaming_lists_as_a_real_one_does() {
    let c = EmbeddedCluster::start(ServerOptions {
        streaming_lists: false,
        ..ServerOptions::default()
    })
    .await
    .expect("embedded cluster starts");
    let client = c.client().await.expect("client");
    let pods: Api<WatchedPod> = Api::namespaced(client.clone(), "default");
    let err = match pods.watch(&WatchParams::streaming_lists(), "0").await {
        Ok(_) => panic!("a watch-list is refused"),
        Err(kube::Error::Api(status)) => status,
        Err(other) => panic!("not an API answer: {other}"),
    };
    assert_eq!(err.code, 422);
    assert_eq!(err.reason, "Invalid");
    assert_eq!(
        err.message,
        "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: \
         sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
    );
    let details = err.details.expect("details");
    assert_eq!(
        (details.kind.as_str(), details.group.as_str()),
        ("ListOptions", "meta.k8s.io")
    );
    let causes: Vec<(String, String)> = details
        .causes
        .iter()
        .map(|c| (c.field.clone(), c.reason.clone()))
        .collect();
    assert_eq!(
        causes,
        [(
            "sendInitialEvents".to_owned(),
            "FieldValueForbidden".to_owned()
        )]
    );
    // A plain watch is still served, and switching the gate on serves watch-lists.
    assert!(pods.watch(&WatchParams::default(), "0").await.is_ok());
    c.watch_list().set(true);
    assert!(
        pods.watch(&WatchParams::streaming_lists(), "0")
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_watch_list_newer_than_the_server_is_a_too_large_resource_version() {
    use futures::StreamExt as _;
    let c = EmbeddedCluster::start(ServerOptions::default())
        .await
        .expect("embedded cluster starts");
    let client = c.client().await.expect("client");
    let pods: Api<WatchedPod> = Api::namespaced(client, "default");
    let ahead = (c.store().current_rv() + 1000).to_string();
    let mut events = pods
        .watch(&WatchParams::streaming_lists(), &ahead)
        .await
        .expect("answered as a watch")
        .boxed();
    match events.next().await {
        Some(Ok(WatchEvent::Error(status))) => {
            assert_eq!(status.code, 504);
            assert!(status.message.starts_with("Too large resource version"));
        }
        other => panic!("expected the watch cache's 504, got {other:?}"),
    }
}

fn pod(name: &str, namespace: &str, app: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}
    })
}

/// The next event of `w` as words (a hang guard, not a speed check).
async fn next_event(
    w: &mut (impl Stream<Item = Result<Event<WatchedPod>, watcher::Error>> + Unpin),
) -> String {
    let item = tokio::time::timeout(PATIENCE, w.next())
        .await
        .expect("an event in time")
        .expect("the watch goes on");
    let name = |p: WatchedPod| p.metadata.name.unwrap_or_default();
    match item {
        Ok(Event::Init) => "Init".into(),
        Ok(Event::InitApply(p)) => format!("InitApply {}", name(p)),
        Ok(Event::InitDone) => "InitDone".into(),
        Ok(Event::Apply(p)) => format!("Apply {}", name(p)),
        Ok(Event::Delete(p)) => format!("Delete {}", name(p)),
        Err(e) => format!("Err {e}"),
    }
}

/// `Init`, the objects, `InitDone`: the names listed.
async fn initial_list(
    w: &mut (impl Stream<Item = Result<Event<WatchedPod>, watcher::Error>> + Unpin),
) -> Vec<String> {
    assert_eq!(next_event(w).await, "Init");
    let mut names = Vec::new();
    loop {
        let e = next_event(w).await;
        match e.strip_prefix("InitApply ") {
            Some(name) => names.push(name.to_owned()),
            None => {
                assert_eq!(e, "InitDone", "after {} objects", names.len());
                return names;
            }
        }
    }
}

#[tokio::test]
async fn the_pipelined_pages_list_every_pod_once_in_order_then_watch_from_the_list() {
    if skip_on_existing("counts the embedded server's pods") {
        return;
    }
    let (c, client) = embedded(false).await;
    let pods: Api<WatchedPod> = Api::namespaced(client, "default");
    let config = watcher::Config::default().page_size(PAGE_SIZE);
    let mut w = paged::watcher(pods, config).boxed();
    let want: Vec<String> = (0..PODS).map(|i| format!("web-{i:04}")).collect();
    assert_eq!(
        initial_list(&mut w).await,
        want,
        "three pages, in order, once"
    );
    // The watch starts at the list's version: a pod made now is seen, and nothing listed is
    // seen again.
    c.store()
        .create(pod("late", "default", "web"))
        .expect("pod stored");
    assert_eq!(next_event(&mut w).await, "Apply late");
    c.store()
        .delete_value("v1", "Pod", "default", "web-0000")
        .expect("pod deleted");
    // A listed pod's change (graceful deletion stamps it first).
    assert_eq!(next_event(&mut w).await, "Apply web-0000");
}

#[tokio::test]
async fn selectors_apply_to_every_page_and_to_the_watch() {
    if skip_on_existing("writes pods") {
        return;
    }
    let (c, client) = embedded(false).await;
    let store = c.store();
    for (name, ns) in [
        ("db-0", "default"),
        ("db-1", "default"),
        ("db-2", "default"),
    ] {
        store.create(pod(name, ns, "db")).expect("pod stored");
    }
    store
        .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}))
        .expect("namespace stored");
    store
        .create(pod("db-elsewhere", "other", "db"))
        .expect("pod stored");
    let pods: Api<WatchedPod> = Api::all(client);
    let config = watcher::Config::default()
        .page_size(2)
        .labels("app=db")
        .fields("metadata.namespace=default");
    let mut w = paged::watcher(pods, config).boxed();
    assert_eq!(initial_list(&mut w).await, ["db-0", "db-1", "db-2"]);
    store
        .create(pod("web-late", "default", "web"))
        .expect("pod stored");
    store
        .create(pod("db-late-elsewhere", "other", "db"))
        .expect("pod stored");
    store
        .create(pod("db-late", "default", "db"))
        .expect("pod stored");
    assert_eq!(
        next_event(&mut w).await,
        "Apply db-late",
        "the pods the selectors exclude are not watched"
    );
}
