//! Sans-IO port of OpenKruise's controller and webhook logic (reference: Kruise v1.8.4, commit
//! a081ad61e2; HEAD differences behind [`KruiseVersion`]).
//!
//! Must not depend on tokio, kube, ratatui, hyper or any clock: time is a parameter.
