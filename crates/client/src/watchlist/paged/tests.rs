//! The pipelined paged watcher against a scripted HTTP server: the requests it makes (exactly),
//! the events it yields, and when it asks for the next page.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{Stream, StreamExt as _};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client, runtime::watcher};
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::{TcpListener, TcpStream},
    sync::Notify,
};

use super::{Item, watcher as paged};

/// What the server sends for a request, piece by piece.
enum Part {
    Bytes(String),
    /// Wait until a request whose target contains this arrives (on any connection).
    WaitFor(&'static str),
    /// Keep the response open (a watch).
    Hold,
}

struct Reply {
    status: u16,
    parts: Vec<Part>,
}

fn ok(parts: Vec<Part>) -> Reply {
    Reply { status: 200, parts }
}

type Handler = Box<dyn FnMut(&str) -> Reply + Send>;

/// A scripted API server on loopback (HTTP/1.1, chunked bodies).
struct Mock {
    url: String,
    seen: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Mock {
    async fn start(handler: impl FnMut(&str) -> Reply + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let arrived = Arc::new(Notify::new());
        let handler: Arc<Mutex<Handler>> = Arc::new(Mutex::new(Box::new(handler)));
        let log = seen.clone();
        let task = tokio::spawn(async move {
            loop {
                let (conn, _) = listener.accept().await.unwrap();
                tokio::spawn(serve(conn, log.clone(), arrived.clone(), handler.clone()));
            }
        });
        Mock { url, seen, task }
    }

    fn client(&self) -> Client {
        let config = kube::Config::new(self.url.parse().unwrap());
        Client::try_from(config).unwrap()
    }

    /// The request targets (path and query) in arrival order.
    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(
    mut conn: TcpStream,
    log: Arc<Mutex<Vec<String>>>,
    arrived: Arc<Notify>,
    handler: Arc<Mutex<Handler>>,
) {
    let mut buf = Vec::new();
    loop {
        // One request head (GETs: no body).
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        buf.drain(..end);
        let target = head.split(' ').nth(1).unwrap_or_default().to_owned();
        log.lock().unwrap().push(target.clone());
        arrived.notify_waiters();
        let reply = (handler.lock().unwrap())(&target);
        let status = format!(
            "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
            reply.status
        );
        if conn.write_all(status.as_bytes()).await.is_err() {
            return;
        }
        for part in reply.parts {
            match part {
                Part::Bytes(b) => {
                    let chunk = format!("{:x}\r\n{b}\r\n", b.len());
                    if conn.write_all(chunk.as_bytes()).await.is_err() {
                        return;
                    }
                }
                Part::WaitFor(s) => loop {
                    let wake = arrived.notified();
                    if log.lock().unwrap().iter().any(|t| t.contains(s)) {
                        break;
                    }
                    wake.await;
                },
                Part::Hold => std::future::pending::<()>().await,
            }
        }
        if conn.write_all(b"0\r\n\r\n").await.is_err() {
            return;
        }
    }
}

const URL: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str, rv: u32) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default","resourceVersion":"{rv}"}}}}"#
    )
}

fn items(names: &[&str]) -> String {
    let objs: Vec<String> = names.iter().map(|n| cm(n, 1)).collect();
    format!(r#""items":[{}]"#, objs.join(","))
}

fn head(rv: &str, token: Option<&str>) -> String {
    let tok = token.map(|t| format!(r#","continue":"{t}""#));
    format!(
        r#"{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":"{rv}"{}}},"#,
        tok.unwrap_or_default()
    )
}

/// A page whose metadata comes first (as kube-apiserver writes it), sent in two pieces: the
/// items only once `wait` (the next page's request) arrived, when given.
fn page(rv: &str, token: Option<&str>, names: &[&str], wait: Option<&'static str>) -> Reply {
    let mut parts = vec![Part::Bytes(head(rv, token))];
    parts.extend(wait.map(Part::WaitFor));
    parts.push(Part::Bytes(format!("{}}}", items(names))));
    ok(parts)
}

fn event(kind: &str, obj: &str) -> String {
    format!("{{\"type\":\"{kind}\",\"object\":{obj}}}\n")
}

fn gone(message: &str) -> Reply {
    Reply {
        status: 410,
        parts: vec![Part::Bytes(format!(
            r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"{message}","reason":"Expired","code":410}}"#
        ))],
    }
}

fn words(item: Item<ConfigMap>) -> String {
    use watcher::Event;
    let name = |o: ConfigMap| o.metadata.name.unwrap_or_default();
    match item {
        Ok(Event::Init) => "Init".into(),
        Ok(Event::InitApply(o)) => format!("InitApply {}", name(o)),
        Ok(Event::InitDone) => "InitDone".into(),
        Ok(Event::Apply(o)) => format!("Apply {}", name(o)),
        Ok(Event::Delete(o)) => format!("Delete {}", name(o)),
        Err(e) => format!("Err {e}"),
    }
}

async fn take(s: &mut (impl Stream<Item = Item<ConfigMap>> + Unpin), n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..n {
        // A guard against a hang (a sequential client never gets a page that waits for the
        // next request), not a speed check.
        let item = tokio::time::timeout(Duration::from_secs(10), s.next())
            .await
            .unwrap_or_else(|_| panic!("no item after {out:?}"))
            .expect("the stream goes on");
        out.push(words(item));
    }
    out
}

/// Polls `s` (its next item is not expected: the watch holds) until `mock` has seen `n`
/// requests, and returns them.
async fn requests(
    s: &mut (impl Stream<Item = Item<ConfigMap>> + Unpin),
    mock: &Mock,
    n: usize,
) -> Vec<String> {
    for _ in 0..200 {
        if mock.seen().len() >= n {
            break;
        }
        if let Ok(item) = tokio::time::timeout(Duration::from_millis(50), s.next()).await {
            panic!("unexpected item {:?}", item.map(words));
        }
    }
    mock.seen()
}

fn config(page: u32) -> watcher::Config {
    watcher::Config::default().page_size(page)
}

#[tokio::test]
async fn pages_are_pipelined_and_every_object_comes_once_in_order() {
    // Each page sends its items only once the next page was asked for: a watcher that reads
    // a whole page before asking for the next never gets past the first.
    let mock = Mock::start(|target| {
        if target.contains("watch=true") {
            return ok(vec![
                Part::Bytes(event("ADDED", &cm("f", 11))),
                Part::Bytes(event("MODIFIED", &cm("a", 12))),
                Part::Bytes(event("DELETED", &cm("b", 13))),
                Part::Hold,
            ]);
        }
        match target.split("continue=").nth(1) {
            None => page("10", Some("t1"), &["a", "b"], Some("continue=t1")),
            Some("t1") => page("10", Some("t2"), &["c", "d"], Some("continue=t2")),
            Some(_) => page("10", None, &["e"], None),
        }
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(mock.client(), "default");
    let mut w = paged(api, config(2)).boxed();
    assert_eq!(
        take(&mut w, 10).await,
        [
            "Init",
            "InitApply a",
            "InitApply b",
            "InitApply c",
            "InitApply d",
            "InitApply e",
            "InitDone",
            "Apply f",
            "Apply a",
            "Delete b",
        ]
    );
    assert_eq!(
        mock.seen(),
        [
            format!("{URL}?&limit=2"),
            format!("{URL}?&limit=2&continue=t1"),
            format!("{URL}?&limit=2&continue=t2"),
            format!(
                "{URL}?&watch=true&timeoutSeconds=290&allowWatchBookmarks=true&resourceVersion=10"
            ),
        ]
    );
}

#[tokio::test]
async fn a_body_whose_metadata_comes_after_its_items_is_listed_page_by_page() {
    let mock = Mock::start(|target| {
        if target.contains("watch=true") {
            return ok(vec![Part::Hold]);
        }
        let (names, meta) = match target.split("continue=").nth(1) {
            None => (vec!["a", "b"], r#"{"resourceVersion":"7","continue":"t1"}"#),
            Some(_) => (vec!["c"], r#"{"resourceVersion":"7"}"#),
        };
        ok(vec![
            Part::Bytes(format!(r#"{{"kind":"ConfigMapList",{},"#, items(&names))),
            Part::Bytes(format!(r#""metadata":{meta}}}"#)),
        ])
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(mock.client(), "default");
    let mut w = paged(api, config(2)).boxed();
    assert_eq!(
        take(&mut w, 5).await,
        [
            "Init",
            "InitApply a",
            "InitApply b",
            "InitApply c",
            "InitDone"
        ]
    );
    let seen = requests(&mut w, &mock, 3).await;
    assert_eq!(
        seen[..2],
        [
            format!("{URL}?&limit=2"),
            format!("{URL}?&limit=2&continue=t1")
        ]
    );
    assert!(seen[2].ends_with("resourceVersion=7"), "{seen:?}");
}

#[tokio::test]
async fn an_expired_continue_token_lists_again_from_the_first_page() {
    // The first list's token expires (410); the second list's does not.
    let firsts = Arc::new(Mutex::new(0u32));
    let count = firsts.clone();
    let mock = Mock::start(move |target| {
        if target.contains("watch=true") {
            return ok(vec![Part::Hold]);
        }
        match target.split("continue=").nth(1) {
            None => {
                let mut n = count.lock().unwrap();
                *n += 1;
                match *n {
                    1 => page("5", Some("old"), &["a", "b"], None),
                    _ => page("9", Some("new"), &["a", "b"], None),
                }
            }
            Some("old") => gone("The provided continue parameter is too old"),
            Some(_) => page("9", None, &["c"], None),
        }
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(mock.client(), "default");
    let mut w = paged(api, config(2)).boxed();
    assert_eq!(
        take(&mut w, 8).await,
        [
            "Init",
            "InitApply a",
            "InitApply b",
            "Init",
            "InitApply a",
            "InitApply b",
            "InitApply c",
            "InitDone",
        ]
    );
    let seen = requests(&mut w, &mock, 5).await;
    assert_eq!(
        seen[..4],
        [
            format!("{URL}?&limit=2"),
            format!("{URL}?&limit=2&continue=old"),
            format!("{URL}?&limit=2"),
            format!("{URL}?&limit=2&continue=new"),
        ]
    );
    assert!(seen[4].ends_with("&resourceVersion=9"), "{seen:?}");
}

#[tokio::test]
async fn a_token_that_expires_again_is_an_error_and_the_next_poll_lists_again() {
    let mock = Mock::start(|target| match target.split("continue=").nth(1) {
        None => page("5", Some("old"), &["a"], None),
        Some(_) => gone("The provided continue parameter is too old"),
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(mock.client(), "default");
    let mut w = paged(api, config(1)).boxed();
    let got = take(&mut w, 7).await;
    assert_eq!(got[..4], ["Init", "InitApply a", "Init", "InitApply a"]);
    assert!(
        got[4].starts_with("Err failed to perform initial object list"),
        "{got:?}"
    );
    // After the error (and the caller's backoff), a new list.
    assert_eq!(got[5..], ["Init", "InitApply a"]);
}

#[tokio::test]
async fn a_failed_page_is_an_error_item_and_nothing_is_asked_until_polled_again() {
    let mock = Mock::start(|_| Reply {
        status: 500,
        parts: vec![Part::Bytes(
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcd down","reason":"InternalError","code":500}"#.into(),
        )],
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(mock.client(), "default");
    let mut w = paged(api, config(2)).boxed();
    let got = take(&mut w, 2).await;
    assert_eq!(got[0], "Init");
    assert!(got[1].contains("etcd down"), "{got:?}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(mock.seen().len(), 1, "no retry behind the caller's back");
}

#[tokio::test]
async fn the_watch_goes_on_from_bookmarks_and_lists_again_on_410() {
    let watches = Arc::new(Mutex::new(0u32));
    let count = watches.clone();
    let mock = Mock::start(move |target| {
        if !target.contains("watch=true") {
            return page("10", None, &["a"], None);
        }
        let mut n = count.lock().unwrap();
        *n += 1;
        match *n {
            // A bookmark, then the watch ends (its timeout): the next starts at the bookmark.
            1 => ok(vec![Part::Bytes(event(
                "BOOKMARK",
                r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"20"}}"#,
            ))]),
            2 => ok(vec![
                Part::Bytes(event("ADDED", &cm("late", 21))),
                Part::Bytes(event(
                    "ERROR",
                    r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 20 (30)","reason":"Expired","code":410}"#,
                )),
                Part::Hold,
            ]),
            _ => ok(vec![Part::Hold]),
        }
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(mock.client(), "default");
    let mut w = paged(api, config(500)).boxed();
    let got = take(&mut w, 8).await;
    assert_eq!(got[..4], ["Init", "InitApply a", "InitDone", "Apply late"]);
    assert!(
        got[4].starts_with("Err error returned by apiserver during watch"),
        "{got:?}"
    );
    assert_eq!(got[5..], ["Init", "InitApply a", "InitDone"]);
    let watch = "?&watch=true&timeoutSeconds=290&allowWatchBookmarks=true&resourceVersion=";
    let seen = mock.seen();
    assert_eq!(
        seen[..4],
        [
            format!("{URL}?&limit=500"),
            format!("{URL}{watch}10"),
            format!("{URL}{watch}20"),
            format!("{URL}?&limit=500"),
        ]
    );
}

#[tokio::test]
async fn selectors_and_the_list_semantic_are_those_of_the_config() {
    let mock = Mock::start(|target| {
        if target.contains("watch=true") {
            return ok(vec![Part::Hold]);
        }
        match target.split("continue=").nth(1) {
            None => page("3", Some("t1"), &["a"], None),
            Some(_) => page("3", None, &["b"], None),
        }
    })
    .await;
    let api: Api<ConfigMap> = Api::all(mock.client());
    let config = config(1)
        .labels("app=web")
        .fields("metadata.namespace=default")
        .timeout(60)
        .any_semantic();
    let mut w = paged(api, config).boxed();
    assert_eq!(
        take(&mut w, 4).await,
        ["Init", "InitApply a", "InitApply b", "InitDone"]
    );
    let seen = requests(&mut w, &mock, 3).await;
    let sel = "fieldSelector=metadata.namespace%3Ddefault&labelSelector=app%3Dweb";
    assert_eq!(
        seen,
        [
            // With a limit, kube sends no resourceVersion=0 (it would unpage the list).
            format!("/api/v1/configmaps?&{sel}&limit=1"),
            format!("/api/v1/configmaps?&{sel}&limit=1&continue=t1"),
            format!(
                "/api/v1/configmaps?&watch=true&timeoutSeconds=60&{sel}&allowWatchBookmarks=true&resourceVersion=3"
            ),
        ]
    );
}
