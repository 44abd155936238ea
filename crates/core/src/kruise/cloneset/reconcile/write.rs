//! One pod write of a reconcile and the events upstream records for it.

use k8s_openapi::api::core::v1::Pod;

use crate::kruise::events::EventRecord;

/// Why a pod write happens: decides its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    Create,
    Delete,
    InPlaceUpdate {
        revision: String,
    },
    RecreateUpdate {
        revision: String,
    },
    /// Lifecycle state, in-place readiness, grace period: no event.
    Refresh,
}

/// One pod write.
#[derive(Debug, Clone, PartialEq)]
pub enum PodOp {
    Create(Box<Pod>),
    /// Status first (conditions), then the pod itself; each carries the resourceVersion read.
    Update {
        status: Option<Box<Pod>>,
        pod: Option<Box<Pod>>,
    },
    Delete {
        uid: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodWrite {
    pub name: String,
    pub op: PodOp,
    pub why: Why,
}

impl PodWrite {
    /// The event upstream records when the write succeeds.
    pub fn success_event(&self) -> Option<EventRecord> {
        Some(match &self.why {
            Why::Create => EventRecord::normal(
                "SuccessfulCreate",
                format!("succeed to create pod {}", self.name),
            ),
            Why::Delete => EventRecord::normal(
                "SuccessfulDelete",
                format!("succeed to delete pod {}", self.name),
            ),
            Why::InPlaceUpdate { revision } => EventRecord::normal(
                "SuccessfulUpdatePodInPlace",
                format!(
                    "successfully update pod {} in-place(revision {revision})",
                    self.name
                ),
            ),
            Why::RecreateUpdate { revision } => EventRecord::normal(
                "SuccessfulUpdatePodReCreate",
                format!(
                    "successfully patch pod {} specified-delete for update(revision {revision})",
                    self.name
                ),
            ),
            Why::Refresh => return None,
        })
    }

    /// The event upstream records when the write fails with `err`.
    pub fn failure_event(&self, err: &str) -> Option<EventRecord> {
        Some(match &self.why {
            Why::Create => EventRecord::warning(
                "FailedCreate",
                format!("failed to create pod: {err}, pod: {}", self.name),
            ),
            Why::Delete => EventRecord::warning(
                "FailedDelete",
                format!("failed to delete pod {}: {err}", self.name),
            ),
            Why::InPlaceUpdate { revision } => EventRecord::warning(
                "FailedUpdatePodInPlace",
                format!(
                    "failed to update pod {} in-place(revision {revision}): {err}",
                    self.name
                ),
            ),
            Why::RecreateUpdate { revision } => EventRecord::warning(
                "FailedUpdatePodReCreate",
                format!(
                    "failed to patch pod specified-delete {} for update(revision {revision}): {err}",
                    self.name
                ),
            ),
            Why::Refresh => return None,
        })
    }
}
