//! ContainerRecreateRequest: a sans-IO port of Kruise's CRR webhook
//! (`pkg/webhook/containerrecreaterequest/mutating`), manager controller
//! (`pkg/controller/containerrecreaterequest`) and daemon state machine
//! (`pkg/daemon/containerrecreate`), v1.8.4.
//!
//! - [`admission::admit_create`] / [`admission::admit_update`]: the webhook hook (verdict plus
//!   the defaulted, injected object);
//! - [`controller::reconcile`]: what the manager does with one CRR now;
//! - [`daemon`]: per-container states, CRR pick order and one daemon sync step;
//! - [`manager`]: one manager reconcile as the list of writes to make;
//! - [`readiness`]: the pod's `KruisePodReady` not-ready holders.

pub mod admission;
pub mod controller;
pub mod daemon;
pub mod manager;
pub mod readiness;
pub mod types;

pub use crate::kruise::admission::Verdict;
pub use types::ContainerRecreateRequest;

/// Label: the daemon only watches CRRs carrying it (`"true"`); removed on completion.
pub const ACTIVE_KEY: &str = "crr.apps.kruise.io/active";
/// Label: the node of the target pod (immutable).
pub const NODE_NAME_KEY: &str = "crr.apps.kruise.io/node-name";
/// Label: the UID of the target pod (immutable).
pub const POD_UID_KEY: &str = "crr.apps.kruise.io/pod-uid";
/// Annotation: container statuses the manager observed while Recreating.
pub const SYNC_CONTAINER_STATUSES_KEY: &str = "crr.apps.kruise.io/sync-container-statuses";
/// Annotation and finalizer: when the pod was forced not-ready.
pub const UNREADY_ACQUIRED_KEY: &str = "crr.apps.kruise.io/unready-acquired";

#[cfg(test)]
mod tests;
