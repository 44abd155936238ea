//! The kinds the console watches, one reflector each, and the descriptor of each.

use super::{
    ADVANCED_DAEMONSET, ADVANCED_STATEFULSET, BATCH_RELEASE, CLONESET, CONTAINER_RECREATE_REQUEST,
    CONTROLLER_REVISION, KindInfo, NODE_POD_PROBE, POD, POD_PROBE_MARKER, POD_UNAVAILABLE_BUDGET,
    ROLLOUT, SIDECARSET,
};

/// The kinds the console watches (one reflector each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    CloneSet,
    StatefulSet,
    DaemonSet,
    Pod,
    // The kinds behind the on-call views (`:pub`, `:sidecarset`, `:ppm`, `:crr`, triage).
    PodUnavailableBudget,
    SidecarSet,
    PodProbeMarker,
    NodePodProbe,
    ContainerRecreateRequest,
    /// The ControllerRevisions of SidecarSets (in `kruise-system`, label-selected).
    SidecarSetRevision,
    /// Kruise Rollout (`rollouts.kruise.io`, v1beta1): `:rollouts`, the rollout view, triage.
    Rollout,
    /// The BatchRelease a Rollout's controller creates (same name as the Rollout).
    BatchRelease,
}

impl Kind {
    /// True for the kinds only the on-call views read: a refusal to list them is said in those
    /// views, not in a banner over every view.
    pub fn is_oncall(self) -> bool {
        matches!(
            self,
            Kind::PodUnavailableBudget
                | Kind::SidecarSet
                | Kind::PodProbeMarker
                | Kind::NodePodProbe
                | Kind::ContainerRecreateRequest
                | Kind::SidecarSetRevision
                | Kind::Rollout
                | Kind::BatchRelease
        )
    }

    /// The kind's description (a SidecarSet revision is a ControllerRevision).
    pub fn info(self) -> &'static KindInfo {
        match self {
            Kind::CloneSet => &CLONESET,
            Kind::StatefulSet => &ADVANCED_STATEFULSET,
            Kind::DaemonSet => &ADVANCED_DAEMONSET,
            Kind::Pod => &POD,
            Kind::PodUnavailableBudget => &POD_UNAVAILABLE_BUDGET,
            Kind::SidecarSet => &SIDECARSET,
            Kind::PodProbeMarker => &POD_PROBE_MARKER,
            Kind::NodePodProbe => &NODE_POD_PROBE,
            Kind::ContainerRecreateRequest => &CONTAINER_RECREATE_REQUEST,
            Kind::SidecarSetRevision => &CONTROLLER_REVISION,
            Kind::Rollout => &ROLLOUT,
            Kind::BatchRelease => &BATCH_RELEASE,
        }
    }

    /// The watched kind of `info`, if the console watches it (ControllerRevisions only as
    /// SidecarSet revisions).
    pub fn of(info: &KindInfo) -> Option<Kind> {
        Self::ALL.into_iter().find(|k| k.info() == info)
    }

    /// Every watched kind.
    pub const ALL: [Kind; 12] = [
        Kind::CloneSet,
        Kind::StatefulSet,
        Kind::DaemonSet,
        Kind::Pod,
        Kind::PodUnavailableBudget,
        Kind::SidecarSet,
        Kind::PodProbeMarker,
        Kind::NodePodProbe,
        Kind::ContainerRecreateRequest,
        Kind::SidecarSetRevision,
        Kind::Rollout,
        Kind::BatchRelease,
    ];

    /// The variant's name, as `{:?}` prints it.
    pub fn debug_name(self) -> &'static str {
        match self {
            Kind::SidecarSetRevision => "SidecarSetRevision",
            kind => kind.info().kind,
        }
    }

    /// The kind's name as messages say it (`Advanced StatefulSet`; a SidecarSet revision by its
    /// variant's name).
    pub fn title(self) -> &'static str {
        match self {
            Kind::SidecarSetRevision => "SidecarSetRevision",
            kind => kind.info().title,
        }
    }

    /// The kind's plural name as the console shows it.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::SidecarSetRevision => "SidecarSet revisions",
            kind => kind.info().titles,
        }
    }
}
