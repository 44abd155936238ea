//! The HTTP/1.1 server on loopback: accepting connections, bearer-token auth, request parsing and
//! response helpers. Stopping the server closes the listener and every open connection (and so
//! every watch); the store is untouched.

use std::{collections::HashMap, convert::Infallible, net::SocketAddr, sync::Arc};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::{
    admission::Admission,
    auth::{Authenticator, UserInfo},
    routes,
    status::ApiError,
    store::Store,
};

pub type Body = BoxBody<Bytes, Infallible>;
pub type Resp = Response<Body>;

/// State shared by every request.
pub struct Shared {
    pub store: Arc<Store>,
    pub admission: Admission,
    /// Bearer tokens: the admin token and the ServiceAccount tokens this server issues.
    pub auth: Authenticator,
    pub token: String,
    pub addr: SocketAddr,
    /// Every mutating request received (tests count what a client sent).
    pub requests: super::requests::RequestLog,
    /// The serving certificate (PEM), the CA every namespace's `kube-root-ca.crt` holds.
    pub ca_pem: String,
    /// The `WatchList` gate: whether watches may ask for `sendInitialEvents` (streaming lists).
    pub watch_list: super::listopts::WatchListGate,
    /// The resource metrics API (`metrics.k8s.io`): whether it is served, and its pod cache.
    pub metrics: super::metrics::MetricsApi,
}

/// A parsed request.
pub struct Req {
    pub method: Method,
    pub path: String,
    pub query: HashMap<String, String>,
    /// The query string as sent (repeated keys, as in exec's `command=…&command=…`, intact).
    pub raw_query: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Who sent it.
    pub user: Arc<UserInfo>,
    /// The connection, once a `101 Switching Protocols` answer is sent (exec, attach).
    pub upgrade: Option<hyper::upgrade::OnUpgrade>,
}

impl Req {
    pub fn q(&self, k: &str) -> Option<&str> {
        self.query
            .get(k)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    pub fn flag(&self, k: &str) -> bool {
        matches!(self.q(k), Some("true" | "1"))
    }

    pub fn header(&self, k: header::HeaderName) -> &str {
        self.headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(x) => {
                        out.push(x);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn parse_query(q: &str) -> HashMap<String, String> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

pub fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).boxed()
}

pub fn bytes_response(code: u16, body: Bytes) -> Resp {
    let mut r = Response::new(full(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

pub fn json_response(code: u16, v: &Value) -> Resp {
    bytes_response(code, Bytes::from(serde_json::to_vec(v).unwrap_or_default()))
}

pub fn error_response(e: &ApiError) -> Resp {
    with_warnings(json_response(e.code, &e.to_status()), e.warnings())
}

/// Add `Warning: 299 - "..."` headers.
pub fn with_warnings(mut r: Resp, warnings: &[String]) -> Resp {
    for w in warnings {
        let text = format!("299 - \"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""));
        if let Ok(v) = HeaderValue::from_str(&text) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
    r
}

async fn handle(
    shared: Arc<Shared>,
    stop: CancellationToken,
    req: hyper::Request<Incoming>,
) -> Result<Resp, Infallible> {
    let (mut parts, body) = req.into_parts();
    let upgrade = parts.extensions.remove::<hyper::upgrade::OnUpgrade>();
    let path = parts.uri.path().to_string();
    let credentials = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    // Anonymous auth is on, as by default: a request without credentials is system:anonymous
    // and left to authorization (public-info-viewer lets it read /version and the health
    // paths, nothing else); credentials that do not check out are a 401.
    let user = match shared.auth.authenticate(&shared.store, credentials) {
        Some(user) => user,
        None if credentials.is_none() => Arc::new(UserInfo::anonymous()),
        None => return Ok(error_response(&ApiError::unauthorized())),
    };
    shared.requests.record(&parts.method, &path, &parts.headers);
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return Ok(error_response(&ApiError::bad_request(format!(
                "reading the body: {e}"
            ))));
        }
    };
    let r = Req {
        method: parts.method,
        query: parse_query(parts.uri.query().unwrap_or("")),
        raw_query: parts.uri.query().unwrap_or("").to_owned(),
        path,
        headers: parts.headers,
        body,
        user,
        upgrade,
    };
    let started = std::time::Instant::now();
    let resp = routes::dispatch(&shared, &stop, r).await;
    tracing::debug!(
        elapsed_us = started.elapsed().as_micros() as u64,
        "request served"
    );
    Ok(resp)
}

async fn serve_conn<S>(io: S, shared: Arc<Shared>, stop: CancellationToken)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let svc_stop = stop.clone();
    let svc = service_fn(move |req| handle(shared.clone(), svc_stop.clone(), req));
    let conn = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), svc)
        .with_upgrades();
    tokio::select! {
        _ = conn => {}
        _ = stop.cancelled() => {}
    }
}

/// Accept connections until `stop` fires; then every connection is dropped. A connection whose
/// first byte is a TLS handshake record is served over TLS, any other as plain HTTP.
pub async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    stop: CancellationToken,
    tls: TlsAcceptor,
) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            a = listener.accept() => a,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let stop = stop.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let mut first = [0u8; 1];
            let is_tls = tokio::select! {
                _ = stop.cancelled() => return,
                n = stream.peek(&mut first) => matches!(n, Ok(1)) && first[0] == 0x16,
            };
            if is_tls {
                let accepted = tokio::select! {
                    _ = stop.cancelled() => return,
                    a = tls.accept(stream) => a,
                };
                match accepted {
                    Ok(s) => serve_conn(s, shared, stop).await,
                    Err(e) => tracing::debug!("TLS handshake failed: {e}"),
                }
            } else {
                serve_conn(stream, shared, stop).await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let q = parse_query("labelSelector=app%3Dweb%2Ctier+in+(a)&watch=true&x");
        assert_eq!(q["labelSelector"], "app=web,tier in (a)");
        assert_eq!(q["watch"], "true");
        assert_eq!(q["x"], "");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
