use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
};

use futures::{StreamExt as _, stream};
use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::{
    core::Status,
    runtime::watcher::{self, Event, InitialListStrategy},
};

use super::*;

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn status(code: u16, reason: &str, message: &str) -> Box<Status> {
    Box::new(Status::failure(message, reason).with_code(code))
}

fn start_failed(code: u16, reason: &str, message: &str) -> Item<ConfigMap> {
    Err(watcher::Error::WatchStartFailed(kube::Error::Api(status(
        code, reason, message,
    ))))
}

const GATE_OFF: &str = "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: \
                        sendInitialEvents is forbidden for watch unless the WatchList feature \
                        gate is enabled";

/// Scripted watchers: each start pops the next script of its mode; a script's stream then
/// stays open (as a watch does).
#[derive(Default)]
struct Scripts {
    streaming: Mutex<VecDeque<Vec<Item<ConfigMap>>>>,
    paged: Mutex<VecDeque<Vec<Item<ConfigMap>>>>,
    started: Mutex<Vec<ListMode>>,
}

impl Scripts {
    fn new(streaming: Vec<Vec<Item<ConfigMap>>>, paged: Vec<Vec<Item<ConfigMap>>>) -> Arc<Self> {
        Arc::new(Self {
            streaming: Mutex::new(streaming.into()),
            paged: Mutex::new(paged.into()),
            started: Mutex::default(),
        })
    }

    fn started(&self) -> Vec<ListMode> {
        self.started.lock().unwrap().clone()
    }
}

fn key() -> Key {
    Key::new(
        "https://127.0.0.1:6443",
        "/api/v1/namespaces/default/configmaps",
    )
}

/// The wrapper over `scripts`, with what it announced.
fn fallback(
    scripts: &Arc<Scripts>,
    modes: &Arc<ListModes>,
) -> (Fallback<ConfigMap>, Arc<Mutex<Vec<ListMode>>>) {
    let announced = Arc::new(Mutex::new(Vec::new()));
    let heard = announced.clone();
    let scripts = scripts.clone();
    let f = Fallback::new(
        move |config: watcher::Config| {
            let mode = if config.initial_list_strategy == InitialListStrategy::StreamingList {
                ListMode::Streaming
            } else {
                assert_eq!(
                    config.page_size,
                    Some(500),
                    "the paged list keeps its page size"
                );
                ListMode::Paged
            };
            scripts.started.lock().unwrap().push(mode);
            let queue = match mode {
                ListMode::Streaming => &scripts.streaming,
                ListMode::Paged => &scripts.paged,
            };
            let items = queue.lock().unwrap().pop_front().unwrap_or_default();
            stream::iter(items).chain(stream::pending()).boxed()
        },
        watcher::Config::default().page_size(500),
        key(),
        modes.clone(),
        move |mode| heard.lock().unwrap().push(mode),
    );
    (f, announced)
}

/// The first `n` items, as words.
async fn take(f: &mut Fallback<ConfigMap>, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..n {
        let item = tokio::time::timeout(std::time::Duration::from_secs(5), f.next())
            .await
            .expect("an item (the script ran out)")
            .expect("the stream goes on");
        out.push(match item {
            Ok(Event::Init) => "Init".to_owned(),
            Ok(Event::InitApply(o)) => format!("InitApply {}", o.metadata.name.unwrap()),
            Ok(Event::InitDone) => "InitDone".to_owned(),
            Ok(Event::Apply(o)) => format!("Apply {}", o.metadata.name.unwrap()),
            Ok(Event::Delete(o)) => format!("Delete {}", o.metadata.name.unwrap()),
            Err(e) => format!("Err {e}"),
        });
    }
    out
}

fn listed(names: &[&str]) -> Vec<Item<ConfigMap>> {
    let mut items = vec![Ok(Event::Init)];
    items.extend(names.iter().map(|n| Ok(Event::InitApply(cm(n)))));
    items.push(Ok(Event::InitDone));
    items
}

#[tokio::test]
async fn a_server_that_streams_lists_is_listed_by_streaming() {
    let mut live = listed(&["a", "b"]);
    live.push(Ok(Event::Apply(cm("c"))));
    let scripts = Scripts::new(vec![live], vec![]);
    let modes = ListModes::new();
    let (mut f, announced) = fallback(&scripts, &modes);
    assert_eq!(
        take(&mut f, 5).await,
        ["Init", "InitApply a", "InitApply b", "InitDone", "Apply c"]
    );
    assert_eq!(scripts.started(), [ListMode::Streaming]);
    assert_eq!(*announced.lock().unwrap(), [ListMode::Streaming]);
    assert_eq!(modes.get(&key()), Some(ListMode::Streaming));
}

#[tokio::test]
async fn a_refused_streaming_list_falls_back_to_pages_without_an_error() {
    for (code, reason) in [(422, "Invalid"), (400, "BadRequest"), (403, "Forbidden")] {
        let scripts = Scripts::new(
            vec![vec![start_failed(code, reason, GATE_OFF)]],
            vec![listed(&["a"])],
        );
        let modes = ListModes::new();
        let (mut f, announced) = fallback(&scripts, &modes);
        assert_eq!(
            take(&mut f, 3).await,
            ["Init", "InitApply a", "InitDone"],
            "{code}: no error reaches the caller"
        );
        assert_eq!(scripts.started(), [ListMode::Streaming, ListMode::Paged]);
        assert_eq!(*announced.lock().unwrap(), [ListMode::Paged], "{code}");
        assert_eq!(modes.get(&key()), Some(ListMode::Paged), "{code}");
    }
}

#[tokio::test]
async fn a_server_that_refused_before_is_listed_in_pages_at_once() {
    let scripts = Scripts::new(vec![listed(&["never"])], vec![listed(&["a"])]);
    let modes = ListModes::new();
    modes.remember(&key(), ListMode::Paged);
    let (mut f, announced) = fallback(&scripts, &modes);
    assert_eq!(take(&mut f, 3).await, ["Init", "InitApply a", "InitDone"]);
    assert_eq!(scripts.started(), [ListMode::Paged], "no streaming request");
    assert_eq!(*announced.lock().unwrap(), [ListMode::Paged]);
}

#[tokio::test]
async fn the_memory_is_per_server_and_resource_not_per_namespace() {
    let modes = ListModes::new();
    modes.remember(&key(), ListMode::Paged);
    let other_ns = Key::new(
        "https://127.0.0.1:6443",
        "/api/v1/namespaces/kube-system/configmaps",
    );
    let all = Key::new("https://127.0.0.1:6443", "/api/v1/configmaps");
    let other_server = Key::new("https://10.0.0.1:6443", "/api/v1/configmaps");
    let other_kind = Key::new("https://127.0.0.1:6443", "/api/v1/pods");
    assert_eq!(modes.get(&other_ns), Some(ListMode::Paged));
    assert_eq!(modes.get(&all), Some(ListMode::Paged));
    assert_eq!(modes.get(&other_server), None);
    assert_eq!(modes.get(&other_kind), None);
}

#[tokio::test]
async fn a_stream_that_ends_before_the_bookmark_falls_back() {
    // kube-runtime restarts a streaming list whose stream closed early: a second Init.
    let scripts = Scripts::new(
        vec![vec![
            Ok(Event::Init),
            Ok(Event::InitApply(cm("a"))),
            Ok(Event::Init),
            Ok(Event::InitApply(cm("streamed-again"))),
        ]],
        vec![listed(&["a", "b"])],
    );
    let modes = ListModes::new();
    let (mut f, announced) = fallback(&scripts, &modes);
    assert_eq!(
        take(&mut f, 6).await,
        [
            "Init",
            "InitApply a",
            "Init",
            "InitApply a",
            "InitApply b",
            "InitDone"
        ]
    );
    assert_eq!(scripts.started(), [ListMode::Streaming, ListMode::Paged]);
    assert_eq!(
        *announced.lock().unwrap(),
        [ListMode::Streaming, ListMode::Paged]
    );
    assert_eq!(modes.get(&key()), Some(ListMode::Paged));
}

#[tokio::test]
async fn an_error_before_the_bookmark_falls_back() {
    let scripts = Scripts::new(
        vec![vec![
            Ok(Event::Init),
            Err(watcher::Error::WatchFailed(
                kube::Error::LinesCodecMaxLineLengthExceeded,
            )),
        ]],
        vec![listed(&["a"])],
    );
    let modes = ListModes::new();
    let (mut f, _) = fallback(&scripts, &modes);
    assert_eq!(
        take(&mut f, 4).await,
        ["Init", "Init", "InitApply a", "InitDone"]
    );
    assert_eq!(modes.get(&key()), Some(ListMode::Paged));
}

#[tokio::test]
async fn an_outage_is_no_refusal() {
    // No answer (a transport error) or a 5xx: passed on, and streaming is kept.
    let scripts = Scripts::new(
        vec![vec![
            Err(watcher::Error::WatchStartFailed(
                kube::Error::LinesCodecMaxLineLengthExceeded,
            )),
            start_failed(503, "ServiceUnavailable", "the server is shutting down"),
            Ok(Event::Init),
            Ok(Event::InitDone),
        ]],
        vec![],
    );
    let modes = ListModes::new();
    let (mut f, announced) = fallback(&scripts, &modes);
    let got = take(&mut f, 4).await;
    assert!(
        got[0].starts_with("Err failed to start watching"),
        "{got:?}"
    );
    assert!(
        got[1].starts_with("Err failed to start watching"),
        "{got:?}"
    );
    assert_eq!(got[2..], ["Init", "InitDone"]);
    assert_eq!(scripts.started(), [ListMode::Streaming]);
    assert_eq!(*announced.lock().unwrap(), [ListMode::Streaming]);
    assert_eq!(modes.get(&key()), Some(ListMode::Streaming));
}

#[tokio::test]
async fn after_the_list_a_refused_watch_is_the_watch_s_business() {
    // A resumed watch (no sendInitialEvents) refused with 403 is RBAC, not streaming lists.
    let mut items = listed(&["a"]);
    items.push(start_failed(403, "Forbidden", "pods is forbidden"));
    let scripts = Scripts::new(vec![items], vec![]);
    let modes = ListModes::new();
    let (mut f, _) = fallback(&scripts, &modes);
    let got = take(&mut f, 4).await;
    assert!(
        got[3].starts_with("Err failed to start watching"),
        "{got:?}"
    );
    assert_eq!(scripts.started(), [ListMode::Streaming]);
    assert_eq!(modes.get(&key()), Some(ListMode::Streaming));
}

#[tokio::test]
async fn a_relist_refused_after_expiry_falls_back() {
    // 410 Gone after the list: kube-runtime relists by streaming, which is now refused.
    let mut items = listed(&["a"]);
    items.push(Err(watcher::Error::WatchError(status(
        410,
        "Expired",
        "too old resource version",
    ))));
    items.push(start_failed(422, "Invalid", GATE_OFF));
    let scripts = Scripts::new(vec![items], vec![listed(&["a", "b"])]);
    let modes = ListModes::new();
    let (mut f, _) = fallback(&scripts, &modes);
    let got = take(&mut f, 8).await;
    assert!(
        got[3].starts_with("Err error returned by apiserver"),
        "{got:?}"
    );
    assert_eq!(got[4..], ["Init", "InitApply a", "InitApply b", "InitDone"]);
    assert_eq!(modes.get(&key()), Some(ListMode::Paged));
}

#[test]
fn collection_paths_drop_the_namespace() {
    assert_eq!(
        collection_path("/api/v1/namespaces/demo/pods"),
        "/api/v1/pods"
    );
    assert_eq!(
        collection_path("/apis/apps.kruise.io/v1alpha1/namespaces/x/clonesets"),
        "/apis/apps.kruise.io/v1alpha1/clonesets"
    );
    assert_eq!(collection_path("/api/v1/pods"), "/api/v1/pods");
    assert_eq!(collection_path("/api/v1/namespaces"), "/api/v1/namespaces");
}

#[test]
fn a_judge_tells_refusals_from_the_rest() {
    let mut j = Judge::default();
    assert_eq!(
        j.judge(&start_failed(500, "InternalError", GATE_OFF)),
        Verdict::Refused(format!("500 InternalError: {GATE_OFF}")),
        "a status naming sendInitialEvents is a refusal whatever its code"
    );
    assert_eq!(
        j.judge(&start_failed(500, "InternalError", "etcd timed out")),
        Verdict::Pass
    );
    assert_eq!(j.judge::<ConfigMap>(&Ok(Event::Init)), Verdict::Accepted);
    assert_eq!(j.judge::<ConfigMap>(&Ok(Event::InitDone)), Verdict::Listed);
    assert_eq!(
        j.judge(&start_failed(422, "Invalid", GATE_OFF)),
        Verdict::Pass,
        "after the list, a start failure is a resumed watch's"
    );
}
