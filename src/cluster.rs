//! The embedded cluster: a loopback Kubernetes API server (object store with watch, generic CRD
//! serving, admission chains), simulated nodes and kubelet, and the demo scenario.

pub mod server;
pub mod webhooks;

pub mod demo;
pub mod sim;

pub use demo::run_demo_server;
pub use sim::run_sim_nodes;
pub use webhooks::install_kruise_webhooks;
