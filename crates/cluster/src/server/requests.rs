//! A record of the mutating requests the server received (POST, PUT, PATCH, DELETE): method,
//! path and User-Agent, the newest [`KEPT`] kept. Tests count what one client sent (a
//! `--readonly` console must send none) by the User-Agent that client sets.

use std::{
    collections::VecDeque,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use http::{HeaderMap, Method, header};

/// How many requests the log keeps (the count covers all of them).
pub const KEPT: usize = 4096;

/// One mutating request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub user_agent: String,
}

/// The log; shared by every connection.
#[derive(Debug, Default)]
pub struct RequestLog {
    total: AtomicU64,
    kept: Mutex<VecDeque<Request>>,
}

impl RequestLog {
    /// Records the request if it is mutating.
    pub fn record(&self, method: &Method, path: &str, headers: &HeaderMap) {
        if !matches!(
            *method,
            Method::POST | Method::PUT | Method::PATCH | Method::DELETE
        ) {
            return;
        }
        self.total.fetch_add(1, Ordering::Relaxed);
        let user_agent = headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if let Ok(mut kept) = self.kept.lock() {
            if kept.len() == KEPT {
                kept.pop_front();
            }
            kept.push_back(Request {
                method: method.to_string(),
                path: path.to_owned(),
                user_agent,
            });
        }
    }

    /// Mutating requests received since the server started.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// The kept requests whose User-Agent starts with `user_agent`, oldest first.
    pub fn from(&self, user_agent: &str) -> Vec<Request> {
        self.kept
            .lock()
            .map(|k| {
                k.iter()
                    .filter(|r| r.user_agent.starts_with(user_agent))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_mutations_and_keeps_who_sent_them() {
        let log = RequestLog::default();
        let mut headers = HeaderMap::new();
        headers.insert(header::USER_AGENT, "console-test/1".parse().expect("ua"));
        log.record(&Method::GET, "/api/v1/pods", &headers);
        log.record(&Method::PATCH, "/apis/apps.kruise.io/v1alpha1/x", &headers);
        log.record(&Method::POST, "/api/v1/pods", &HeaderMap::new());
        assert_eq!(log.total(), 2);
        let mine = log.from("console-test");
        assert_eq!(mine.len(), 1);
        assert_eq!(mine[0].method, "PATCH");
    }
}
