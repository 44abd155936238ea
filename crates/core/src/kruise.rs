//! Sans-IO port of OpenKruise's controller and webhook logic (reference: Kruise v1.8.4, commit
//! a081ad61e2; documented HEAD/v1.9 differences behind [`KruiseVersion`]).
//!
//! Must not depend on tokio, kube, ratatui, hyper or any clock: time is a parameter. Inputs are
//! this module's own small structs (or k8s-openapi / `crate::api` types, which are plain data).

pub mod admission;
pub mod events;
pub mod features;
pub mod release;
pub mod rollout;
pub mod selector;
pub mod validation;

// Workload logic.
pub mod cloneset;
pub mod intstr;
pub mod plan;
pub mod revision;
pub mod scheduling;
pub mod updatesort;

pub mod daemonset;
pub mod protection;
pub mod pub_budget;
pub mod statefulset;

// Ops logic.
pub mod cronjob;
pub mod crr;
pub mod distribution;
pub mod persistent_pod_state;
pub mod probe_marker;
pub mod sidecarset;
pub mod workloadspread;

pub use features::{FeatureGates, KruiseVersion};
