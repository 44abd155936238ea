//! Kruise API types: plain serde structs (no IO), one internal model per kind.
//!
//! Each type implements `k8s_openapi::Resource` and `Metadata`, so kube-rs's blanket impls make
//! it usable with `kube::Api` and reflectors without this module depending on kube. Field names
//! follow the upstream CRD schemas in `crds/` (checked by `tests/pure/api_schema.rs`); every type also
//! derives `schemars::JsonSchema` for that check. `kinds` names every kind the product handles,
//! `keys` the well-known labels and annotations, `podstate` the JSON values Kruise keeps in pod
//! annotations (in-place update state, SidecarSet upgrade specs).

pub mod advancedcronjob;
pub mod broadcastjob;
pub mod cloneset;
pub mod common;
pub mod containerrecreaterequest;
pub mod conversion;
pub mod daemonset;
pub mod denied;
pub mod imagelistpulljob;
pub mod imagepulljob;
pub mod keys;
pub mod kinds;
pub mod nodeimage;
pub mod nodepodprobe;
pub mod persistentpodstate;
pub mod pod;
pub mod podprobemarker;
pub mod podstate;
pub mod podunavailablebudget;
pub mod resource;
pub mod resourcedistribution;
pub mod rollout;
pub mod sidecarset;
pub mod statefulset;
pub mod uniteddeployment;
pub mod workloadspread;

pub use advancedcronjob::AdvancedCronJob;
pub use broadcastjob::BroadcastJob;
pub use cloneset::CloneSet;
pub use containerrecreaterequest::ContainerRecreateRequest;
pub use daemonset::DaemonSet;
pub use imagelistpulljob::ImageListPullJob;
pub use imagepulljob::ImagePullJob;
pub use nodeimage::NodeImage;
pub use nodepodprobe::NodePodProbe;
pub use persistentpodstate::PersistentPodState;
pub use pod::SlimPod;
pub use podprobemarker::PodProbeMarker;
pub use podunavailablebudget::PodUnavailableBudget;
pub use resourcedistribution::ResourceDistribution;
pub use sidecarset::SidecarSet;
pub use statefulset::StatefulSet;
pub use uniteddeployment::UnitedDeployment;
pub use workloadspread::WorkloadSpread;

pub use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
