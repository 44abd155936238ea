//! Building [`AstsPod`] from a Kubernetes Pod (the caller passes the time: nothing reads a clock).

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};

use super::{AstsPod, LIFECYCLE_STATE_LABEL, REVISION_LABEL, SPECIFIED_DELETE_LABEL};
use crate::{
    api::pod::{is_ready, ready_condition},
    kruise::pub_budget::pod::check_in_place_update_completed,
};

/// Seconds since the pod's Ready condition turned True at `now` (None when not ready or unknown).
pub fn ready_for_seconds(pod: &Pod, now: Timestamp) -> Option<i64> {
    let cond = ready_condition(pod)?;
    let since = cond.last_transition_time.as_ref()?.0;
    Some(now.as_second() - since.as_second())
}

impl AstsPod {
    /// The rollout view of `pod` at time `now`.
    pub fn from_pod(pod: &Pod, now: Timestamp) -> Self {
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let status = pod.status.as_ref();
        let ready = is_ready(pod);
        Self {
            name: pod.metadata.name.clone().unwrap_or_default(),
            revision: labels.get(REVISION_LABEL).cloned().unwrap_or_default(),
            phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
            ready,
            ready_for_seconds: ready_for_seconds(pod, now),
            terminating: pod.metadata.deletion_timestamp.is_some(),
            lifecycle_state: labels
                .get(LIFECYCLE_STATE_LABEL)
                .cloned()
                .unwrap_or_default(),
            specified_delete: labels.contains_key(SPECIFIED_DELETE_LABEL),
            in_place_update_pending: check_in_place_update_completed(pod).is_err(),
            labels,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn maps_labels_status_and_age() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-3", "labels": {
                "controller-revision-hash": "web-abc",
                "apps.kruise.io/specified-delete": "",
                "lifecycle.apps.kruise.io/state": "Normal"}},
            "status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
        }))
        .unwrap_or_default();
        let now: Timestamp = "2025-01-01T00:01:00Z".parse().unwrap_or_default();
        let p = AstsPod::from_pod(&pod, now);
        assert_eq!((p.ordinal(), p.revision.as_str()), (3, "web-abc"));
        assert!(p.specified_delete && p.ready && p.is_healthy());
        assert_eq!(p.ready_for_seconds, Some(60));
        assert!(p.is_running_and_available(60) && !p.is_running_and_available(61));
    }
}
