//! The manager's CRR controller, one reconcile as a decision (the caller performs it).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{
    ACTIVE_KEY, POD_UID_KEY, UNREADY_ACQUIRED_KEY,
    types::{
        ContainerRecreateRequest, ContainerRecreateRequestStatus, CrrSyncContainerStatus, phase,
    },
};

/// How long the manager waits for the daemon to pick a new CRR up.
pub const RESPONSE_TIMEOUT_SECONDS: i64 = 60;

/// What one reconcile does. At most one of `complete`, `delete`, `remove_active_label` is
/// set; the rest describe side work of a running CRR.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// Write `phase=Completed`, `completionTime=now` and this message.
    pub complete: Option<String>,
    /// Delete the CRR (TTL after completion expired).
    pub delete: bool,
    /// Remove the `crr.apps.kruise.io/active` label from a completed CRR.
    pub remove_active_label: bool,
    /// Release the pod's not-ready key (the unready-acquired finalizer is present).
    pub release_unready: bool,
    /// Rewrite the sync-container-statuses annotation with these entries.
    pub sync_container_statuses: Option<Vec<CrrSyncContainerStatus>>,
    /// Force the pod not-ready: add the unready-acquired finalizer and a not-ready key
    /// `{userAgent: ContainerRecreateRequest, key: <ns>/<name>}` to the KruisePodReady
    /// condition (unreadyGracePeriodSeconds set and the pod has that readiness gate).
    pub acquire_unready: bool,
    /// Stamp the unready-acquired annotation with the current time.
    pub stamp_unready_acquired: bool,
    /// Requeue after this many seconds.
    pub requeue_after_seconds: Option<i64>,
}

impl Decision {
    /// The status a `complete` decision writes.
    pub fn completed_status(
        &self,
        crr: &ContainerRecreateRequest,
        now: jiff::Timestamp,
    ) -> Option<ContainerRecreateRequestStatus> {
        let message = self.complete.clone()?;
        let mut status = crr.status.clone().unwrap_or_default();
        status.phase = phase::COMPLETED.to_owned();
        status.completion_time = Some(Time(now));
        status.message = message;
        Some(status)
    }
}

fn seconds_since(t: Option<&Time>, now: jiff::Timestamp) -> i64 {
    t.map_or(0, |t| now.as_second() - t.0.as_second())
}

/// One manager reconcile of `crr` with its pod (None: not found).
///
/// Port of pkg/controller/containerrecreaterequest/crr_controller.go::Reconcile (v1.8.4).
pub fn reconcile(
    crr: &ContainerRecreateRequest,
    pod: Option<&Pod>,
    now: jiff::Timestamp,
) -> Decision {
    let mut d = Decision::default();
    // Upstream tests completionTime (not the phase) to know the CRR is done.
    let completion_time = crr.status.as_ref().and_then(|s| s.completion_time.as_ref());
    if crr.metadata.deletion_timestamp.is_some() || completion_time.is_some() {
        d.release_unready = crr
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == UNREADY_ACQUIRED_KEY);
        if crr.metadata.deletion_timestamp.is_some() {
            return d;
        }
        // The label's presence counts, whatever its value.
        if crr
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(ACTIVE_KEY))
        {
            d.remove_active_label = true;
            return d;
        }
        if let Some(ttl) = crr.spec.ttl_seconds_after_finished {
            let left = i64::from(ttl) - seconds_since(completion_time, now);
            if left <= 0 {
                d.delete = true;
            } else {
                d.requeue_after_seconds = Some(left);
            }
        }
        return d;
    }
    let gone = pod.is_none_or(|p| {
        p.metadata.deletion_timestamp.is_some()
            || p.metadata.uid.as_deref().unwrap_or_default() != crr.label(POD_UID_KEY)
    });
    if gone {
        d.complete = Some("pod has gone".to_owned());
        return d;
    }
    let age = seconds_since(crr.metadata.creation_timestamp.as_ref(), now);
    let mut requeue: Option<i64> = None;
    let mut update = |left: i64| requeue = Some(requeue.map_or(left, |r| r.min(left)));
    if crr.phase().is_empty() {
        let left = RESPONSE_TIMEOUT_SECONDS - age;
        if left <= 0 {
            d.complete = Some("daemon has not responded for a long time".to_owned());
            return d;
        }
        update(left);
    }
    if let Some(deadline) = crr.spec.active_deadline_seconds {
        let left = deadline - age;
        if left <= 0 {
            d.complete = Some("recreating has exceeded the activeDeadlineSeconds".to_owned());
            return d;
        }
        update(left);
    }
    // Only a recreating CRR syncs statuses and makes the pod not ready.
    if let Some(pod) = pod.filter(|_| crr.phase() == phase::RECREATING) {
        d.sync_container_statuses = Some(sync_container_statuses(crr, pod));
        let has_gate = pod
            .spec
            .as_ref()
            .and_then(|s| s.readiness_gates.as_ref())
            .is_some_and(|g| g.iter().any(|g| g.condition_type == "KruisePodReady"));
        let wants_unready = crr
            .spec
            .strategy
            .as_ref()
            .is_some_and(|s| s.unready_grace_period_seconds.is_some());
        // An empty annotation counts as not acquired, as upstream reads it.
        let acquired = crr
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(UNREADY_ACQUIRED_KEY))
            .is_some_and(|v| !v.is_empty());
        d.acquire_unready = wants_unready && has_gate && !acquired;
        d.stamp_unready_acquired = wants_unready && !acquired;
    }
    d.requeue_after_seconds = requeue;
    d
}

/// The CRR's containers that are running and did not start before the CRR was created.
///
/// Port of pkg/controller/containerrecreaterequest/crr_controller.go::syncContainerStatuses (v1.8.4).
pub fn sync_container_statuses(
    crr: &ContainerRecreateRequest,
    pod: &Pod,
) -> Vec<CrrSyncContainerStatus> {
    let created = crr.metadata.creation_timestamp.as_ref().map(|t| t.0);
    let statuses: BTreeMap<&str, _> = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .map(|c| (c.name.as_str(), c))
        .collect();
    crr.spec
        .containers
        .iter()
        .filter_map(|c| {
            let s = statuses.get(c.name.as_str())?;
            let started = s.state.as_ref()?.running.as_ref()?.started_at.as_ref()?.0;
            // metav1.Time.Before: a container started exactly at creation is kept.
            if created.is_some_and(|t| started < t) {
                return None;
            }
            Some(CrrSyncContainerStatus {
                name: c.name.clone(),
                ready: s.ready,
                restart_count: s.restart_count,
                container_id: s.container_id.clone().unwrap_or_default(),
            })
        })
        .collect()
}
