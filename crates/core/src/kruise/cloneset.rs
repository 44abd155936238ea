//! Sans-IO port of the CloneSet controller (`pkg/controller/cloneset`, v1.8.4): the pod and spec
//! projections it reads, availability predicates, and the algorithm submodules.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

pub mod diffs;
pub mod inplace;
pub mod lifecycle;
pub mod pod_sort;
pub mod progress;
pub mod reconcile;
pub mod scale;
pub mod update;
pub mod update_pass;
pub mod validate;

pub use diffs::{ExpectationDiffs, IsPodUpdateMode, calculate_diffs};

/// Lifecycle states (`apis/apps/pub/lifecycle.go`).
pub mod state {
    pub const PREPARING_NORMAL: &str = "PreparingNormal";
    pub const NORMAL: &str = "Normal";
    pub const PREPARING_UPDATE: &str = "PreparingUpdate";
    pub const UPDATING: &str = "Updating";
    pub const UPDATED: &str = "Updated";
    pub const PREPARING_DELETE: &str = "PreparingDelete";
}

/// The pod label marking a pod for deletion (only its presence matters).
pub const SPECIFIED_DELETE_LABEL: &str = "apps.kruise.io/specified-delete";
/// CloneSet label: PreparingDelete pods do not count toward the replica total when `"true"`.
pub const EXCLUDE_PREPARING_DELETE_LABEL: &str =
    "apps.kruise.io/cloneset-scaling-exclude-preparing-delete";
/// Pod annotation holding the deletion cost.
pub const DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// What the CloneSet logic reads from one pod. Times are unix seconds; `None` is Go's zero time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodInfo {
    pub name: String,
    pub uid: String,
    /// `controller-revision-hash` label.
    pub revision: String,
    /// `lifecycle.apps.kruise.io/state` label, `""` when absent.
    pub lifecycle_state: String,
    /// `status.phase` (`Pending`, `Running`, ...).
    pub phase: String,
    /// `spec.nodeName`, `""` when unscheduled.
    pub node_name: String,
    /// The raw `Ready=True` condition.
    pub ready: bool,
    /// `InPlaceUpdateReady` is absent or True.
    pub in_place_update_ready: bool,
    /// `lastTransitionTime` of the Ready condition.
    pub ready_since: Option<i64>,
    pub created: Option<i64>,
    /// Highest container restart count.
    pub restarts: i32,
    /// Raw `controller.kubernetes.io/pod-deletion-cost` annotation.
    pub deletion_cost: Option<String>,
    /// Has the `apps.kruise.io/specified-delete` label.
    pub specified_delete: bool,
    /// Has an `apps.kruise.io/inplace-update-grace` annotation.
    pub in_place_grace: bool,
    /// Has a deletionTimestamp.
    pub terminating: bool,
    pub labels: BTreeMap<String, String>,
    pub finalizers: Vec<String>,
}

impl PodInfo {
    /// A ready, running, scheduled pod at `revision` (handy for tests and fixtures).
    pub fn ready_at(name: &str, revision: &str) -> Self {
        Self {
            name: name.to_owned(),
            uid: name.to_owned(),
            revision: revision.to_owned(),
            phase: "Running".to_owned(),
            node_name: "node".to_owned(),
            ready: true,
            in_place_update_ready: true,
            ..Self::default()
        }
    }

    /// Port of clonesetcore.commonControl::IsPodUpdateReady (v1.8.4): Running, Ready for
    /// `min_ready_seconds` as of `now`, and `InPlaceUpdateReady` not False.
    pub fn is_update_ready(&self, min_ready_seconds: i32, now: i64) -> bool {
        if self.phase != "Running" || !self.ready || !self.in_place_update_ready {
            return false;
        }
        if min_ready_seconds <= 0 {
            return true;
        }
        // k8s podutil.IsPodAvailable: lastTransitionTime + minReadySeconds strictly before now.
        self.ready_since
            .is_some_and(|since| since + i64::from(min_ready_seconds) < now)
    }

    /// Port of sync/cloneset_sync_utils.go::IsPodAvailable (v1.8.4): lifecycle `""`/Normal and
    /// update-ready.
    pub fn is_available(&self, min_ready_seconds: i32, now: i64) -> bool {
        (self.lifecycle_state.is_empty() || self.lifecycle_state == state::NORMAL)
            && self.is_update_ready(min_ready_seconds, now)
    }

    /// Port of sync/cloneset_sync_utils.go::isPodReady (v1.8.4): available with minReadySeconds 0.
    pub fn is_ready_for_delete(&self) -> bool {
        self.is_available(0, 0)
    }
}

/// What the CloneSet logic reads from the CloneSet itself (spec + the bits of metadata it uses).
#[derive(Debug, Clone, PartialEq)]
pub struct CloneSetParams {
    /// `spec.replicas` (nil is 1).
    pub replicas: i32,
    pub partition: Option<IntOrString>,
    pub max_unavailable: Option<IntOrString>,
    pub max_surge: Option<IntOrString>,
    pub paused: bool,
    /// `scaleStrategy.maxUnavailable` (nil is unlimited).
    pub scale_max_unavailable: Option<IntOrString>,
    pub min_ready_seconds: i32,
    /// The exclude-preparing-delete label (or manager flag) is on.
    pub exclude_preparing_delete: bool,
    /// `scaleStrategy.podsToDelete`.
    pub pods_to_delete: Vec<String>,
}

impl Default for CloneSetParams {
    fn default() -> Self {
        Self {
            replicas: 1,
            partition: None,
            max_unavailable: None,
            max_surge: None,
            paused: false,
            scale_max_unavailable: None,
            min_ready_seconds: 0,
            exclude_preparing_delete: false,
            pods_to_delete: Vec::new(),
        }
    }
}

impl CloneSetParams {
    /// Port of sync/cloneset_sync_utils.go::isSpecifiedDelete (v1.8.4).
    pub fn is_specified_delete(&self, pod: &PodInfo) -> bool {
        pod.specified_delete || self.pods_to_delete.contains(&pod.name)
    }
}
