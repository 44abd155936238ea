//! The kube-rs side: connection, discovery, one reflector per kind, and the effect executor.
//!
//! Everything that talks to an API server lives here; `app` and `view` never do.

// The plumbing shared with the controllers and the embedded cluster (crate `kruise_client`).
pub use kruise_client::{connect, detect, discovery, errors, lease, metrics};

pub mod act;
pub mod exec;
pub mod gates;
pub mod guard;
pub mod health;
pub mod oncall_watch;
pub mod report;
pub mod restart;
pub mod shell;
pub mod triage_all;
pub mod usage;
pub mod watch;
pub mod watch_rollouts;
pub mod watchset;
pub mod workload;

pub use exec::Executor;
pub use watchset::WatchSet;
