//! `Stores`: read handles of the reflector stores, one per kind. Cheap to clone; the kube layer
//! holds the writers. Tests build them from fixtures with `kube::runtime::reflector::store()`
//! (pods: [`pods::pod_store`], the console's own compact pod store).

pub mod pods;

pub use pods::{PodStore, PodWriter, pod_store};

use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::runtime::reflector::{self, Store, store::Writer};

use crate::api::{
    CloneSet, ContainerRecreateRequest, DaemonSet, NodePodProbe, PodProbeMarker,
    PodUnavailableBudget, SidecarSet, StatefulSet,
    rollout::{BatchRelease, Rollout},
};

#[derive(Clone)]
pub struct Stores {
    pub clonesets: Store<CloneSet>,
    pub statefulsets: Store<StatefulSet>,
    pub daemonsets: Store<DaemonSet>,
    pub pods: PodStore,
    /// What the on-call views read (budgets, sidecars, probes).
    pub oncall: OncallStores,
}

/// The stores behind `:pub`, `:sidecarset`, `:ppm`, `:crr`, `:rollouts` and triage (Kruise
/// Rollout's kinds are watched only where discovery finds them served; else they stay empty).
#[derive(Clone)]
pub struct OncallStores {
    pub budgets: Store<PodUnavailableBudget>,
    pub sidecarsets: Store<SidecarSet>,
    pub probe_markers: Store<PodProbeMarker>,
    /// Status only: the watch drops each object's spec.
    pub node_probes: Store<NodePodProbe>,
    /// SidecarSet ControllerRevisions (labels and annotations; `data` dropped).
    pub sidecar_revisions: Store<ControllerRevision>,
    pub restarts: Store<ContainerRecreateRequest>,
    /// Kruise Rollouts (v1beta1).
    pub rollouts: Store<Rollout>,
    /// Their BatchReleases (v1beta1).
    pub batch_releases: Store<BatchRelease>,
}

/// The writers of [`OncallStores`].
pub struct OncallWriters {
    pub budgets: Writer<PodUnavailableBudget>,
    pub sidecarsets: Writer<SidecarSet>,
    pub probe_markers: Writer<PodProbeMarker>,
    pub node_probes: Writer<NodePodProbe>,
    pub sidecar_revisions: Writer<ControllerRevision>,
    pub restarts: Writer<ContainerRecreateRequest>,
    pub rollouts: Writer<Rollout>,
    pub batch_releases: Writer<BatchRelease>,
}

impl OncallStores {
    /// Fresh, empty stores and their writers.
    pub fn new() -> (OncallStores, OncallWriters) {
        let (budgets, bw) = reflector::store();
        let (sidecarsets, sw) = reflector::store();
        let (probe_markers, pw) = reflector::store();
        let (node_probes, nw) = reflector::store();
        let (sidecar_revisions, rw) = reflector::store();
        let (restarts, cw) = reflector::store();
        let (rollouts, row) = reflector::store();
        let (batch_releases, brw) = reflector::store();
        (
            OncallStores {
                budgets,
                sidecarsets,
                probe_markers,
                node_probes,
                sidecar_revisions,
                restarts,
                rollouts,
                batch_releases,
            },
            OncallWriters {
                budgets: bw,
                sidecarsets: sw,
                probe_markers: pw,
                node_probes: nw,
                sidecar_revisions: rw,
                restarts: cw,
                rollouts: row,
                batch_releases: brw,
            },
        )
    }
}
