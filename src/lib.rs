//! kruise-tui: a terminal operations console for OpenKruise.
//!
//! The layout follows the architecture in DEVELOPERS.md:
//! `app` (state, messages, pure `update`), `view` (rendering only), `cmd` (the subcommands beside
//! the console), `actions` (the action layer both use), `kube` (client, discovery,
//! reflectors, effect executor), `kruise` (sans-IO port of Kruise's logic), `cluster` (the embedded
//! API server and simulated nodes), `config` (themes, keymaps, paths) and `api` (the Kruise API
//! types, plain serde structs shared by all of them).
#![forbid(unsafe_code)]

pub mod actions;
pub mod api;
pub mod app;
pub mod cli;
pub mod cluster;
pub mod cmd;
pub mod config;
pub mod controllers;
pub mod journal;
pub mod kruise;
pub mod kube;
pub mod runtime;
pub mod view;
