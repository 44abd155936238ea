//! Reads: get (and the status/scale subresources), list (selectors, limit/continue, Table), and
//! watch (resume from a resourceVersion, initial events, bookmarks, 410 Gone as an ERROR event).

use std::{sync::Arc, time::Duration};

use bytes::{Bytes, BytesMut};
use futures::stream;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    convert,
    http::{Req, Resp, Shared, bytes_response, json_response},
    listopts::{self, EXACT, ListOptions},
    resources::ResourceInfo,
    routes::Target,
    selector::{FieldSelector, LabelSelector},
    status::ApiError,
    store::{EventType, ListResult, Obj, StoreEvent, WatchFrom},
    subresource, table,
};

/// What the real server says when an `Exact` list asks for a version etcd has compacted.
const LIST_EXPIRED: &str = "The resourceVersion for the provided list is too old.";

/// An object's JSON as served at the requested version.
pub fn output(res: &ResourceInfo, o: &Obj) -> Bytes {
    if !convert::needs_conversion(res, &o.head) {
        return o.json.clone();
    }
    match convert::to_served(res, &o.value()) {
        None => o.json.clone(),
        Some(v) => Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
    }
}

/// The object as a Value at the requested version.
pub fn output_value(res: &ResourceInfo, o: &Obj) -> Value {
    let v = o.value();
    convert::to_served(res, &v).unwrap_or(v)
}

/// Whether the client asked for metadata only (`as=PartialObjectMetadata[List]`, kube-rs'
/// `list_metadata`/`metadata_watcher`).
fn wants_metadata(req: &Req) -> bool {
    let accept = req.header(http::header::ACCEPT);
    accept.contains("as=PartialObjectMetadata") && !accept.contains("as=Table")
}

/// An object as `PartialObjectMetadata`.
fn metadata_of(o: &Obj) -> Bytes {
    let v = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.metadata()});
    Bytes::from(serde_json::to_vec(&v).unwrap_or_default())
}

pub fn get(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let name = t.name.as_deref().unwrap_or("");
    if let Some(rv) = req.q("resourceVersion") {
        listopts::parse_rv(rv)?;
    }
    let o = shared.store.get(&t.res, t.ns(), name)?;
    if t.sub.as_deref() == Some("scale") {
        return Ok(json_response(
            200,
            &subresource::scale_of(&t.res, &o.value()),
        ));
    }
    if table::wants_table(req) {
        return Ok(json_response(
            200,
            &table::table(
                &t.res,
                std::slice::from_ref(&o),
                None,
                shared.store.current_rv(),
            ),
        ));
    }
    if wants_metadata(req) {
        return Ok(bytes_response(200, metadata_of(&o)));
    }
    Ok(bytes_response(200, output(&t.res, &o)))
}

/// Whether a stored object matches the selectors (parsing it only for non-metadata fields).
pub fn matches_obj(label: &LabelSelector, field: &FieldSelector, o: &Obj) -> bool {
    if !label.matches(&o.head) {
        return false;
    }
    if field.is_empty() {
        return true;
    }
    if field.metadata_only() {
        field.matches(&o.head)
    } else {
        field.matches(&o.value())
    }
}

/// A continue token: the list's resourceVersion and the last (namespace, name) returned, so
/// every page is served at the first page's version (see `store::snapshot`).
fn encode_token(rv: u64, ns: &str, name: &str) -> String {
    format!("{rv}/{ns}/{name}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn decode_token(tok: &str) -> Result<(u64, String, String), ApiError> {
    let bad = || ApiError::bad_request(format!("invalid continue token: {tok}"));
    if !tok.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes: Result<Vec<u8>, _> = (0..tok.len())
        .step_by(2)
        .map(|i| {
            tok.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or(())
        })
        .collect();
    let s = String::from_utf8(bytes.map_err(|_| bad())?).map_err(|_| bad())?;
    let (rv, rest) = s.split_once('/').ok_or_else(bad)?;
    let rv = rv.parse().map_err(|_| bad())?;
    let (ns, name) = rest.split_once('/').ok_or_else(bad)?;
    Ok((rv, ns.to_string(), name.to_string()))
}

/// The page a list asks for: after a continue token (at its version), at an exact earlier
/// version (`resourceVersionMatch=Exact`, rebuilt from the watch window), or the latest.
fn list_page(
    shared: &Shared,
    t: &Target,
    opts: &ListOptions,
    filter: &dyn Fn(&Obj) -> bool,
) -> Result<ListResult, ApiError> {
    let ns = t.namespace.as_deref();
    let store = &shared.store;
    if let Some(tok) = &opts.continue_token {
        if opts.resource_version.as_deref().is_some_and(|rv| rv != "0") {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let (rv, a_ns, a_name) = decode_token(tok)?;
        return store.list_at(&t.res, ns, filter, opts.limit, (a_ns, a_name), rv);
    }
    let Some(rv) = opts.resource_version.as_deref() else {
        return Ok(store.list(&t.res, ns, filter, opts.limit, None));
    };
    let wanted = listopts::parse_rv(rv)?;
    let current = store.current_rv();
    if wanted > current {
        return Err(listopts::too_large_rv(wanted, current));
    }
    if opts.rv_match.as_deref() == Some(EXACT) && wanted < current {
        return store
            .list_at(
                &t.res,
                ns,
                filter,
                opts.limit,
                (String::new(), String::new()),
                wanted,
            )
            .map_err(|e| {
                if e.code == 410 {
                    ApiError::gone(LIST_EXPIRED)
                } else {
                    e
                }
            });
    }
    Ok(store.list(&t.res, ns, filter, opts.limit, None))
}

pub fn list(shared: &Shared, req: &Req, t: &Target) -> Result<Resp, ApiError> {
    let opts = ListOptions::from_request(req, t, false)?;
    let filter = |o: &Obj| matches_obj(&opts.label, &opts.field, o);
    let r = list_page(shared, t, &opts, &filter)?;
    let token = r
        .continue_after
        .as_ref()
        .map(|(ns, n)| encode_token(r.rv, ns, n));
    // etcd counts what is left only when nothing filters the range.
    let remaining =
        (token.is_some() && opts.label.is_empty() && opts.field.is_empty()).then_some(r.remaining);
    if table::wants_table(req) {
        let mut tbl = table::table(&t.res, &r.items, token, r.rv);
        if let Some(n) = remaining {
            tbl["metadata"]["remainingItemCount"] = json!(n);
        }
        return Ok(json_response(200, &tbl));
    }
    let mut meta = json!({"resourceVersion": r.rv.to_string()});
    if let Some(tok) = token {
        meta["continue"] = json!(tok);
    }
    if let Some(n) = remaining {
        meta["remainingItemCount"] = json!(n);
    }
    let metadata_only = wants_metadata(req);
    let head = if metadata_only {
        json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta})
    } else {
        json!({"kind": format!("{}List", t.res.kind), "apiVersion": t.res.api_version(), "metadata": meta})
    };
    let head = serde_json::to_string(&head).unwrap_or_default();
    let total: usize = r.items.iter().map(|o| o.json.len() + 1).sum();
    let mut buf = BytesMut::with_capacity(head.len() + total + 16);
    buf.extend_from_slice(&head.as_bytes()[..head.len().saturating_sub(1)]);
    buf.extend_from_slice(b",\"items\":[");
    for (i, o) in r.items.iter().enumerate() {
        if i > 0 {
            buf.extend_from_slice(b",");
        }
        if metadata_only {
            buf.extend_from_slice(&metadata_of(o));
        } else {
            buf.extend_from_slice(&output(&t.res, o));
        }
    }
    buf.extend_from_slice(b"]}");
    Ok(bytes_response(200, buf.freeze()))
}

fn line(etype: &str, obj: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(obj.len() + 32);
    b.extend_from_slice(b"{\"type\":\"");
    b.extend_from_slice(etype.as_bytes());
    b.extend_from_slice(b"\",\"object\":");
    b.extend_from_slice(obj);
    b.extend_from_slice(b"}\n");
    b.freeze()
}

fn bookmark(res: &ResourceInfo, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let o = json!({"kind": res.kind, "apiVersion": res.api_version(), "metadata": meta});
    line("BOOKMARK", &serde_json::to_vec(&o).unwrap_or_default())
}

/// Which event type (if any) a watcher with these selectors sees for a change.
fn visible(ev: &StoreEvent, m: &dyn Fn(&Obj) -> bool) -> Option<&'static str> {
    let now = m(&ev.obj);
    let before = ev.old.as_ref().map(|o| m(o));
    match ev.etype {
        EventType::Added => now.then_some("ADDED"),
        EventType::Modified => match (before.unwrap_or(false), now) {
            (true, true) => Some("MODIFIED"),
            (false, true) => Some("ADDED"),
            (true, false) => Some("DELETED"),
            (false, false) => None,
        },
        EventType::Deleted => (now || before.unwrap_or(false)).then_some("DELETED"),
    }
}

fn stream_response(rx: mpsc::Receiver<Bytes>) -> Resp {
    let s = stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, std::convert::Infallible>(Frame::data(b)), rx))
    });
    let mut r = Resp::new(StreamBody::new(s).boxed());
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

pub async fn watch(
    shared: &Arc<Shared>,
    stop: &CancellationToken,
    req: &Req,
    t: &Target,
) -> Result<Resp, ApiError> {
    let gate = &shared.watch_list;
    let enabled = gate.enabled();
    let opts = ListOptions::from_watch_request(req, t, enabled);
    gate.count(
        req.q("sendInitialEvents").is_some(),
        !enabled && opts.is_err(),
    );
    let opts = opts?;
    let (label, field) = (opts.label, opts.field);
    let bookmarks = req.flag("allowWatchBookmarks");
    // A watch-list (the cacher's `isListWatchRequest`) ends its initial events with a bookmark.
    let watch_list = opts.send_initial_events == Some(true) && bookmarks;
    let rv = opts
        .resource_version
        .as_deref()
        .map(listopts::parse_rv)
        .transpose()?;
    let (tx, rx) = mpsc::channel::<Bytes>(512);
    // sendInitialEvents=true waits for the cache to reach the version asked for ("not older
    // than"); one it has not reached is the watch cache's 504, as an ERROR event.
    if let Some(wanted) = rv.filter(|_| opts.send_initial_events == Some(true)) {
        let current = shared.store.current_rv();
        if wanted > current {
            let e = listopts::too_large_rv(wanted, current);
            let _ = tx.try_send(line(
                "ERROR",
                &serde_json::to_vec(&e.to_status()).unwrap_or_default(),
            ));
            drop(tx);
            return Ok(stream_response(rx));
        }
    }
    let from = match (rv, opts.send_initial_events) {
        // sendInitialEvents=false: only what happens from now (or from that version).
        (None | Some(0), Some(false)) => WatchFrom::Version(shared.store.current_rv()),
        (None | Some(0), _) => WatchFrom::InitialState,
        (Some(_), Some(true)) => WatchFrom::InitialState,
        (Some(v), _) => WatchFrom::Version(v),
    };
    let timeout = req.q("timeoutSeconds").and_then(|s| s.parse::<u64>().ok());
    let ns = t.namespace.clone().filter(|_| t.res.namespaced);
    let mut sub = match shared.store.watch_client(Some(t.res.key.clone()), ns, from) {
        Ok(s) => s,
        Err(e) => {
            // Like the real server: 200, then one ERROR event carrying the Status.
            let _ = tx.try_send(line(
                "ERROR",
                &serde_json::to_vec(&e.to_status()).unwrap_or_default(),
            ));
            drop(tx);
            return Ok(stream_response(rx));
        }
    };
    let res = t.res.clone();
    let stop = stop.clone();
    let as_table = table::wants_table(req);
    let metadata_only = wants_metadata(req);
    let store = shared.store.clone();
    tokio::spawn(async move {
        let lag = sub.lag.clone().unwrap_or_default();
        // Every send also ends on shutdown and when the store closed this watcher for lagging
        // (a client that does not read must not hold the server's shutdown or its memory).
        let send = |b: Bytes| {
            let (tx, stop, lag) = (&tx, &stop, &lag);
            async move {
                tokio::select! {
                    r = tx.send(b) => r.is_ok(),
                    () = stop.cancelled() => false,
                    () = lag.closed() => false,
                }
            }
        };
        let m = move |o: &Obj| matches_obj(&label, &field, o);
        // kubectl asks for Table rows; each event then carries a one-row Table.
        let render = |o: &Arc<Obj>| -> Bytes {
            if as_table {
                let t = table::table(&res, std::slice::from_ref(o), None, o.rv);
                Bytes::from(serde_json::to_vec(&t).unwrap_or_default())
            } else if metadata_only {
                metadata_of(o)
            } else {
                output(&res, o)
            }
        };
        for o in std::mem::take(&mut sub.initial) {
            if m(&o) && !send(line("ADDED", &render(&o))).await {
                return;
            }
        }
        if watch_list && !send(bookmark(&res, sub.rv, true)).await {
            return;
        }
        let mut last_rv = sub.rv;
        for ev in std::mem::take(&mut sub.replay) {
            last_rv = ev.rv;
            if let Some(et) = visible(&ev, &m)
                && !send(line(et, &render(&ev.obj))).await
            {
                return;
            }
        }
        let deadline = tokio::time::sleep(Duration::from_secs(timeout.unwrap_or(86_400 * 365)));
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        tick.tick().await;
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = &mut deadline => return,
                _ = tx.closed() => return,
                () = lag.closed() => return,
                _ = tick.tick(), if bookmarks => {
                    // Nothing queued for this watch: it has seen everything up to the store's
                    // current version (events are queued under the store's lock as the version
                    // moves), so the bookmark carries that, as the watch cache's progress does.
                    // Otherwise a watch of a quiet kind would resume from a version the window
                    // has long dropped, and relist.
                    let current = store.current_rv();
                    if sub.rx.is_empty() {
                        last_rv = last_rv.max(current);
                    }
                    if !send(bookmark(&res, last_rv, false)).await {
                        return;
                    }
                }
                ev = sub.rx.recv() => {
                    let Some(ev) = ev else { return };
                    lag.took(&ev);
                    last_rv = ev.rv;
                    if let Some(et) = visible(&ev, &m)
                        && !send(line(et, &render(&ev.obj))).await
                    {
                        return;
                    }
                }
            }
        }
    });
    Ok(stream_response(rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let t = encode_token(42, "default", "web-1");
        assert_eq!(
            decode_token(&t).unwrap(),
            (42, "default".into(), "web-1".into())
        );
        assert_eq!(
            decode_token(&encode_token(7, "", "node-a")).unwrap(),
            (7, String::new(), "node-a".into())
        );
        assert!(decode_token("zz").is_err());
        assert!(decode_token("é1").is_err());
    }
}
