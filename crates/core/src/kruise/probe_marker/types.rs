//! PodProbeMarker and NodePodProbe API types (`apis/apps/v1alpha1/pod_probe_marker_types.go`,
//! `nodepodprobe_types.go`, v1.8.4): the shared definitions in [`crate::api::podprobemarker`]
//! and [`crate::api::nodepodprobe`], re-exported for the port.

pub use crate::api::nodepodprobe::{
    ContainerProbe, ContainerProbeState, NodePodProbe, NodePodProbeSpec, NodePodProbeStatus,
    PodProbe, PodProbeStatus,
};
pub use crate::api::podprobemarker::{
    PodContainerProbe, PodProbeMarker, PodProbeMarkerSpec, PodProbeMarkerStatus, ProbeMarkerPolicy,
};
