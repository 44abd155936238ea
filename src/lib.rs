//! kruise-tui: a terminal operations console for OpenKruise.
//!
//! The layout follows the architecture in DEVELOPERS.md:
//! `app` (state, messages, pure `update`), `view` (rendering only), `cmd` (the subcommands beside
//! the console), `actions` (the action layer both use), `kube` (client, discovery,
//! reflectors, effect executor), `kruise` (sans-IO port of Kruise's logic), `cluster` (the embedded
//! API server and simulated nodes), `config` (themes, keymaps, paths) and `api` (the Kruise API
//! types, plain serde structs shared by all of them).
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The layers below the console, each a crate of the workspace (ARCHITECTURE.md): the pure core,
// the embedded cluster and the controllers, under the names this crate has always used.
pub use kruise_cluster as cluster;
pub use kruise_controllers as controllers;
pub use kruise_core::{api, kruise, sim};

pub mod actions;
pub mod app;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod journal;
pub mod kube;
pub mod runtime;
pub mod view;
