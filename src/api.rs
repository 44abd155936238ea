//! Kruise API types: plain serde structs (no IO), one internal model per kind.
//!
//! Each type implements `k8s_openapi::Resource` and `Metadata`, so kube-rs's blanket impls make
//! it usable with `kube::Api` and reflectors without this module depending on kube. Field names
//! follow the upstream CRD schemas in `crds/` (checked by `tests/api_schema.rs`).

pub mod cloneset;
pub mod daemonset;
pub mod pod;
pub mod resource;
pub mod statefulset;

pub use cloneset::CloneSet;
pub use daemonset::DaemonSet;
pub use pod::SlimPod;
pub use statefulset::StatefulSet;

pub use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
