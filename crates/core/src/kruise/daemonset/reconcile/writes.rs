//! The pod writes an Advanced DaemonSet reconcile returns, and the events upstream records for
//! them (k8s `RealPodControl`, `inPlaceUpdatePods`, v1.8.4).

use k8s_openapi::api::core::v1::Pod;

use crate::kruise::events::EventRecord;

/// One pod write.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Create a daemon pod for `node` (the server names it).
    Create {
        node: String,
        pod: Box<Pod>,
    },
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
    Delete,
    /// In place to the current revision (named for the failure event).
    InPlaceUpdate {
        revision: String,
    },
    /// Lifecycle state, in-place readiness: no event.
    Refresh,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodWrite {
    /// The pod's name (empty for a creation).
    pub name: String,
    pub op: Op,
    pub why: Why,
}

impl PodWrite {
    /// The event upstream records when the write of pod `pod` succeeds (k8s `RealPodControl`,
    /// the in-place update).
    pub fn success_event(&self, pod: &str) -> Option<EventRecord> {
        Some(match &self.why {
            Why::Create => EventRecord::normal("SuccessfulCreate", format!("Created pod: {pod}")),
            Why::Delete => EventRecord::normal("SuccessfulDelete", format!("Deleted pod: {pod}")),
            Why::InPlaceUpdate { .. } => EventRecord::normal(
                "SuccessfulUpdatePodInPlace",
                format!("successfully update pod {pod} in-place"),
            ),
            Why::Refresh => return None,
        })
    }

    /// The event upstream records when the write fails with `err`.
    pub fn failure_event(&self, err: &str) -> Option<EventRecord> {
        Some(match &self.why {
            Why::Create => EventRecord::warning("FailedCreate", format!("Error creating: {err}")),
            Why::Delete => EventRecord::warning("FailedDelete", format!("Error deleting: {err}")),
            Why::InPlaceUpdate { revision } => EventRecord::warning(
                "FailedUpdatePodInPlace",
                format!(
                    "failed to update pod {} in-place(revision {revision}): {err}",
                    self.name
                ),
            ),
            Why::Refresh => return None,
        })
    }
}
