//! The embedded cluster: a loopback Kubernetes API server (object store with watch, generic CRD
//! serving, admission chains), simulated nodes and kubelet, and the demo scenario.
//!
//! It builds on the pure core (`kruise_core`: API types, the Kruise port, the simulated
//! kubelet's decisions), the client plumbing (`kruise_client`) and, for the demo, the
//! controllers (`kruise_controllers`); it knows nothing of the console, its command line or its
//! config files (the binary turns those into [`demo::DemoOptions`] and [`sim::SimOptions`]).
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod gotime;
pub mod server;
pub mod webhooks;

pub mod demo;
pub mod sim;

pub use webhooks::install_kruise_webhooks;

use kruise_core::{api, kruise};
