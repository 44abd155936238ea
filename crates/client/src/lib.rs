//! The kube-rs plumbing every online part of kruise-tui shares: building a client from a
//! kubeconfig ([`connect`]), discovering the Kruise kinds a cluster serves ([`discovery`]),
//! reading API errors as a user would ([`errors`]), mapping watch streams ([`events`]),
//! streaming lists with their paged fallback ([`watchlist`]),
//! conflict-safe writes ([`write`]), the resource metrics API ([`metrics`]), the controllers' leader Lease ([`lease`]), finding a
//! kruise-manager or its webhooks ([`detect`]) and the headless commands' signal handling and
//! logging ([`process`]).
//!
//! It builds on the pure core (`kruise_core`) and on nothing above it: the console, the
//! controllers and the embedded cluster all use it.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod connect;
pub mod detect;
pub mod discovery;
pub mod errors;
pub mod events;
pub mod lease;
pub mod metrics;
pub mod process;
pub mod release;
pub mod watchlist;
pub mod write;
