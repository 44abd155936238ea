//! What a refusal (HTTP 403) said the user may not do, read from the server's `Status`: plain
//! data the console shows and the client layer fills.

/// What a 403 said the user may not do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// The verb refused (`list`, `watch`).
    pub verb: String,
    /// The user the server named (`system:serviceaccount:perf-0:viewer`), if it named one.
    pub user: Option<String>,
    /// The namespace of the refused request; None for the cluster scope (all namespaces).
    pub namespace: Option<String>,
    /// The server's message, whole.
    pub message: String,
}
