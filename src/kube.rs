//! The kube-rs side: connection, discovery, one reflector per kind, and the effect executor.
//!
//! Everything that talks to an API server lives here; `app` and `view` never do.

pub mod act;
pub mod connect;
pub mod discovery;
pub mod errors;
pub mod exec;
pub mod gates;
pub mod guard;
pub mod health;
pub mod oncall_watch;
pub mod restart;
pub mod shell;
pub mod watch;
pub mod watchset;
pub mod workload;

pub use exec::Executor;
pub use watchset::WatchSet;
