//! API errors as a user reads them: the message of the server's `Status` (what kubectl prints
//! after "Error from server"), never the Rust `Debug` form kube-rs puts in its `Display`
//! (`ApiError: … (Status { status: Some(Failure), … })`). And a 403 read into what the user may
//! not do, for the console's one-line "no permission" notice.

use kruise_core::api::denied::Denied;
use kube::{core::Status, runtime::watcher};

/// One line for a `Status`: its message, else its reason and code.
pub fn status_text(status: &Status) -> String {
    if !status.message.is_empty() {
        return status.message.clone();
    }
    match (status.reason.as_str(), status.code) {
        ("", 0) => "the server returned an error without a message".to_owned(),
        ("", code) => format!("the server answered HTTP {code}"),
        (reason, 0) => reason.to_owned(),
        (reason, code) => format!("{reason} (HTTP {code})"),
    }
}

/// A kube-rs error as one line: the server's message; for a request that got no answer, what
/// went wrong underneath ("cannot reach the server: connection refused"), not every layer's
/// wrapper (`ServiceError: client error (Connect): tcp connect error: …`); else with its causes.
pub fn text(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => status_text(status),
        kube::Error::HyperError(_) | kube::Error::Service(_) => unreached_text(err),
        other => with_causes(other),
    }
}

/// Why a request got no answer: the socket's error as a phrase, else the deepest cause.
fn unreached_text(err: &(dyn std::error::Error + 'static)) -> String {
    use std::io::ErrorKind;
    let chain: Vec<&(dyn std::error::Error + 'static)> =
        std::iter::successors(Some(err), |e| e.source()).collect();
    let io = chain
        .iter()
        .find_map(|e| e.downcast_ref::<std::io::Error>());
    let phrase = match io.map(std::io::Error::kind) {
        Some(ErrorKind::ConnectionRefused) => "connection refused".to_owned(),
        Some(ErrorKind::TimedOut) => "timed out".to_owned(),
        Some(ErrorKind::ConnectionReset) => "connection reset".to_owned(),
        Some(ErrorKind::ConnectionAborted) => "connection aborted".to_owned(),
        Some(ErrorKind::HostUnreachable) => "host unreachable".to_owned(),
        Some(ErrorKind::NetworkUnreachable) => "network unreachable".to_owned(),
        _ => {
            let deepest = chain.last().map(|e| e.to_string()).unwrap_or_default();
            // "Connection refused (os error 111)": the number says nothing more.
            match deepest.rfind(" (os error ") {
                Some(i) if deepest.ends_with(')') => deepest[..i].to_owned(),
                _ => deepest,
            }
        }
    };
    format!("cannot reach the server: {phrase}")
}

fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A watcher error as one line.
pub fn watcher_text(err: &watcher::Error) -> String {
    match err {
        watcher::Error::InitialListFailed(e) => format!("list failed: {}", text(e)),
        watcher::Error::WatchStartFailed(e) => format!("watch failed to start: {}", text(e)),
        watcher::Error::WatchError(status) => format!("watch failed: {}", status_text(status)),
        watcher::Error::WatchFailed(e) => format!("watch failed: {}", text(e)),
        other => with_causes(other),
    }
}

/// The `Status` of a 403 behind a watcher error, if that is what it is.
pub fn forbidden(err: &watcher::Error) -> Option<&Status> {
    let status = match err {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => s.as_ref(),
        watcher::Error::WatchError(s) => s.as_ref(),
        _ => return None,
    };
    (status.code == 403).then_some(status)
}

/// What a 403 says the user may not do, read from the real server's wording:
/// `clonesets.apps.kruise.io is forbidden: User "system:serviceaccount:perf-0:viewer" cannot list
/// resource "clonesets" in API group "apps.kruise.io" in the namespace "perf-0"`.
pub fn denied(status: &Status) -> Denied {
    let message = status_text(status);
    let quoted_after = |marker: &str| {
        let start = message.find(marker)? + marker.len();
        let len = message[start..].find('"')?;
        Some(message[start..start + len].to_owned())
    };
    let verb = message
        .find("\" cannot ")
        .map(|i| &message[i + "\" cannot ".len()..])
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_owned);
    Denied {
        verb: verb.unwrap_or_else(|| "list".to_owned()),
        user: quoted_after("User \""),
        namespace: quoted_after("in the namespace \""),
        message,
    }
}

/// `Result<T, kube::Error>` → `anyhow::Result<T>` whose message is [`text`], for errors that are
/// printed (`plan`) or shown in the console.
pub trait Plain<T> {
    fn plain(self) -> anyhow::Result<T>;
}

impl<T> Plain<T> for Result<T, kube::Error> {
    fn plain(self) -> anyhow::Result<T> {
        self.map_err(|e| anyhow::anyhow!(text(&e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error whose source is `source`, as hyper and tower wrap one.
    #[derive(Debug)]
    struct Wrap(&'static str, Box<dyn std::error::Error + Send + Sync>);
    impl std::fmt::Display for Wrap {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Wrap {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(self.1.as_ref())
        }
    }

    #[test]
    fn a_request_without_an_answer_says_why_in_a_few_words() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let err = kube::Error::Service(Box::new(Wrap(
            "client error (Connect)",
            Box::new(Wrap("tcp connect error", Box::new(refused))),
        )));
        assert_eq!(text(&err), "cannot reach the server: connection refused");
        // A cause that is not a socket error: the deepest one, without its errno.
        let dns = std::io::Error::other("failed to lookup address information (os error -2)");
        let dns = kube::Error::Service(Box::new(Wrap(
            "client error (Connect)",
            Box::new(Wrap("dns error", Box::new(Wrap("lookup", Box::new(dns))))),
        )));
        assert_eq!(
            text(&dns),
            "cannot reach the server: failed to lookup address information"
        );
    }

    fn status(code: u16, message: &str) -> Status {
        Status {
            code,
            message: message.to_owned(),
            reason: "Forbidden".to_owned(),
            ..Status::default()
        }
    }

    const MESSAGE: &str = "clonesets.apps.kruise.io is forbidden: User \
        \"system:serviceaccount:perf-0:viewer\" cannot list resource \"clonesets\" in API group \
        \"apps.kruise.io\" in the namespace \"perf-0\"";

    #[test]
    fn api_errors_read_as_their_status_message() {
        let err = kube::Error::Api(status(403, MESSAGE).boxed());
        assert!(
            err.to_string().contains("Status {"),
            "kube-rs' Display has the Debug form"
        );
        assert_eq!(text(&err), MESSAGE);
        let listed = watcher::Error::InitialListFailed(err);
        let line = watcher_text(&listed);
        assert_eq!(line, format!("list failed: {MESSAGE}"));
        assert!(!line.contains("Status {") && !line.contains("ListMeta"));
        let empty = Status {
            code: 500,
            reason: "InternalError".into(),
            ..Status::default()
        };
        assert_eq!(status_text(&empty), "InternalError (HTTP 500)");
    }

    #[test]
    fn a_403_names_verb_user_and_namespace() {
        let err = watcher::Error::InitialListFailed(kube::Error::Api(status(403, MESSAGE).boxed()));
        let denied = denied(forbidden(&err).expect("a 403"));
        assert_eq!(denied.verb, "list");
        assert_eq!(
            denied.user.as_deref(),
            Some("system:serviceaccount:perf-0:viewer")
        );
        assert_eq!(denied.namespace.as_deref(), Some("perf-0"));
        let cluster = status(
            403,
            "clonesets.apps.kruise.io is forbidden: User \"jane\" cannot watch resource \
             \"clonesets\" in API group \"apps.kruise.io\" at the cluster scope",
        );
        let denied = super::denied(&cluster);
        assert_eq!((denied.verb.as_str(), denied.namespace), ("watch", None));
        let other = watcher::Error::InitialListFailed(kube::Error::Api(status(500, "x").boxed()));
        assert!(forbidden(&other).is_none());
        let odd = super::denied(&status(403, "access denied by policy"));
        assert_eq!((odd.verb.as_str(), odd.user), ("list", None));
    }
}
