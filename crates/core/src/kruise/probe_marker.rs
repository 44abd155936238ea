//! PodProbeMarker / NodePodProbe: a sans-IO port of Kruise's probe-marker admission
//! (`pkg/webhook/podprobemarker/validating`, `pkg/webhook/pod/mutating/pod_probe_marker.go`)
//! and of how probe results reach pods and NodePodProbes
//! (`pkg/controller/podprobemarker`, `pkg/controller/nodepodprobe`), v1.8.4.
//!
//! - [`validate::admit`]: the PodProbeMarker validating hook;
//! - [`mutating::annotate_pod`]: the pod CREATE hook (serverless gate);
//! - [`apply::apply_probe_states`]: NodePodProbe results -> pod labels, annotations, conditions;
//! - [`node_probe`]: NodePodProbe spec maintenance;
//! - [`controller`]: both controllers as pure passes built on the above;
//! - [`reconcile`]: those passes as plans of writes (finalizer, status, node lifecycle);
//! - [`daemon`]: the node side: probe workers, their results, the NodePodProbe status.

pub mod apply;
pub mod controller;
pub mod daemon;
pub mod mutating;
pub mod node_probe;
pub mod reconcile;
pub mod types;
pub mod validate;

pub use types::{NodePodProbe, PodProbeMarker};

/// Finalizer that makes sure NodePodProbes are cleaned up.
pub const CLEANUP_FINALIZER: &str = "kruise.io/node-pod-probe-cleanup";
/// Pod annotation (serverless): the probes the pod should run, as JSON.
pub const POD_PROBE_ANNOTATION: &str = "kruise.io/podprobe";
/// Pod annotation (serverless): the matched markers, sorted and comma-joined.
pub const POD_PROBE_MARKER_LIST_ANNOTATION: &str = "kruise.io/podprobemarker-list";
/// Probe state: the probe passed.
pub const PROBE_SUCCEEDED: &str = "Succeeded";
/// Probe state: the probe failed.
pub const PROBE_FAILED: &str = "Failed";
/// Probe state: not known yet.
pub const PROBE_UNKNOWN: &str = "Unknown";

#[cfg(test)]
mod tests;
