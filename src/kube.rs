//! The kube-rs side: connection, discovery, one reflector per kind, and the effect executor.
//!
//! Everything that talks to an API server lives here; `app` and `view` never do.

pub mod connect;
pub mod plan_cmd;

pub use plan_cmd::run_plan;
