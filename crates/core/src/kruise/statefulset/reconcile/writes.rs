//! The pod writes an Advanced StatefulSet reconcile returns, and the events and status
//! conditions upstream records for them (`stateful_pod_control.go::recordPodEvent`,
//! `recordClaimEvent`, `inPlaceUpdatePod`, `deletePod`, v1.8.4).

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use super::status;
use crate::kruise::events::EventRecord;

/// One pod write.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Create the missing claims, then the pod.
    Create {
        pod: Box<Pod>,
        claims: Vec<PersistentVolumeClaim>,
    },
    /// Create the missing claims of an existing (pending) pod.
    Claims {
        claims: Vec<PersistentVolumeClaim>,
    },
    /// Status first (conditions), then the pod; each carries the resourceVersion read.
    Update {
        status: Option<Box<Pod>>,
        pod: Option<Box<Pod>>,
    },
    Delete {
        uid: String,
    },
}

/// Why a pod write happens: decides its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    Create,
    Claims,
    Delete,
    /// `UpdateStatefulPod`: the pod's identity labels are fixed.
    Identity,
    InPlaceUpdate {
        revision: String,
    },
    /// Lifecycle state, in-place readiness, grace period: no event.
    Refresh,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodWrite {
    pub name: String,
    pub op: Op,
    pub why: Why,
}

impl PodWrite {
    /// The events upstream records when the write succeeds (`recordPodEvent`, in-place).
    pub fn success_events(&self, set: &str) -> Vec<EventRecord> {
        let pod = &self.name;
        match &self.why {
            Why::Create => vec![EventRecord::normal(
                "SuccessfulCreate",
                format!("create Pod {pod} in StatefulSet {set} successful"),
            )],
            Why::Delete => vec![EventRecord::normal(
                "SuccessfulDelete",
                format!("delete Pod {pod} in StatefulSet {set} successful"),
            )],
            Why::Identity => vec![EventRecord::normal(
                "SuccessfulUpdate",
                format!("update Pod {pod} in StatefulSet {set} successful"),
            )],
            Why::InPlaceUpdate { revision } => vec![EventRecord::normal(
                "SuccessfulUpdatePodInPlace",
                format!("successfully update pod {pod} in-place(revision {revision})"),
            )],
            Why::Claims | Why::Refresh => Vec::new(),
        }
    }

    /// The events upstream records when the write fails with `err`.
    pub fn failure_events(&self, set: &str, err: &str) -> Vec<EventRecord> {
        let pod = &self.name;
        match &self.why {
            Why::Create => vec![EventRecord::warning(
                "FailedCreate",
                format!("create Pod {pod} in StatefulSet {set} failed error: {err}"),
            )],
            // DeleteStatefulPod records, then deletePod records again.
            Why::Delete => vec![
                EventRecord::warning(
                    "FailedDelete",
                    format!("delete Pod {pod} in StatefulSet {set} failed error: {err}"),
                ),
                EventRecord::warning("FailedDelete", format!("failed to delete pod {pod}: {err}")),
            ],
            Why::Identity => vec![EventRecord::warning(
                "FailedUpdate",
                format!("update Pod {pod} in StatefulSet {set} failed error: {err}"),
            )],
            Why::InPlaceUpdate { revision } => vec![EventRecord::warning(
                "FailedUpdatePodInPlace",
                format!("failed to update pod {pod} in-place(revision {revision}): {err}"),
            )],
            Why::Claims | Why::Refresh => Vec::new(),
        }
    }

    /// The status condition upstream sets when the write fails with `err`.
    pub fn failure_condition(&self, err: &str) -> Option<(&'static str, String)> {
        match self.why {
            Why::Create => Some((
                status::FAILED_CREATE_POD,
                format!("StatefulPodControl failed to create Pod error: {err}"),
            )),
            Why::Identity => Some((
                status::FAILED_UPDATE_POD,
                format!("StatefulPodControl failed to update Pod error: {err}"),
            )),
            _ => None,
        }
    }
}

/// `recordClaimEvent` for creating `claim` for `pod`.
pub fn claim_event(set: &str, pod: &str, claim: &str, err: Option<&str>) -> EventRecord {
    match err {
        None => EventRecord::normal(
            "SuccessfulCreate",
            format!("create Claim {claim} Pod {pod} in StatefulSet {set} success"),
        ),
        Some(err) => EventRecord::warning(
            "FailedCreate",
            format!("create Claim {claim} for Pod {pod} in StatefulSet {set} failed error: {err}"),
        ),
    }
}
