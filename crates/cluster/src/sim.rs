//! Simulated nodes and kubelet, against any API server (like kwok): `kruise-tui sim-nodes`.
//!
//! The decisions are pure (`kubelet::decide`, `schedule::pick_node`, `nodes::node_object`, and
//! for the simulated kruise-daemon `recreate::plan` and `probes::NodeProber::pass`); `driver` is
//! the thin IO loop that watches pods, nodes, ContainerRecreateRequests and NodePodProbes with
//! kube-rs, applies those decisions through `io`, and keeps one sorted deadline queue
//! (`deadlines`) instead of per-object tasks or polling.
//!
//! Steering the simulated daemon (documented in README's "Using it" too):
//! - `sim.kruise-tui.io/probe-<probe name>: "fail"` on a pod makes that PodProbeMarker probe
//!   fail on its next periods (`failureThreshold` of them); without it, or with `"succeed"`, a
//!   probe succeeds while its container runs (a container that is not running fails it);
//! - `sim.kruise-tui.io/kill-<container>: "fail"` on a pod makes a CRR's kill of that container
//!   fail (`kill container error: ...`), so the CRR's `failurePolicy` decides what follows.

pub use kruise_core::sim::{ids, kubelet, nodes, schedule};

pub mod deadlines;
pub mod driver;
pub mod events;
pub mod io;
pub mod logs;
pub mod probes;
pub mod recreate;
pub mod shell;

pub use driver::{SimOptions, run};
