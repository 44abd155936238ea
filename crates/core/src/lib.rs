//! kruise-tui's pure core: the Kruise API types ([`api`]), the sans-IO port of Kruise's
//! controller and webhook logic ([`kruise`]) and the simulated cluster's pure decisions
//! ([`sim`]).
//!
//! This crate is the bottom layer. Its dependencies are plain data and algorithm crates
//! (k8s-openapi types, serde, jiff, regex, sha2): no tokio, no kube client, no hyper, no
//! ratatui, no clock read. Every other crate of the workspace builds on it; it imports none of
//! them, and Cargo refuses a build where it would.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod api;
pub mod kruise;
pub mod sim;
