//! One manager reconcile of a CRR as the list of writes the IO shell performs, in upstream's
//! order: built on [`super::controller::reconcile`] (what to do) and [`super::readiness`] (the
//! pod's not-ready holder).
//!
//! Port of pkg/controller/containerrecreaterequest/crr_controller.go::Reconcile,
//! acquirePodNotReady and releasePodNotReady (v1.8.4). Upstream syncs container statuses and
//! acquires the not-ready key only while the CRR is `Recreating`; [`plan`] keeps that gate.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodStatus};

use super::{
    SYNC_CONTAINER_STATUSES_KEY, UNREADY_ACQUIRED_KEY,
    controller::{Decision, reconcile},
    readiness,
    types::{ContainerRecreateRequest, ContainerRecreateRequestStatus, phase},
};

/// The writes of one reconcile, applied in field order (upstream's: the finalizer before the
/// pod is held, the pod released before the finalizer goes); any failure stops the rest (the
/// next reconcile plans again from what it reads).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Add the `crr.apps.kruise.io/unready-acquired` finalizer (before holding the pod).
    pub add_finalizer: bool,
    /// The pod status to write (the not-ready holder added or released).
    pub pod_status: Option<PodStatus>,
    /// Remove that finalizer (after releasing the pod).
    pub remove_finalizer: bool,
    /// Merge-patch these annotations (`None`: remove).
    pub annotations: BTreeMap<String, Option<String>>,
    /// Merge-patch the `crr.apps.kruise.io/active` label away.
    pub remove_active_label: bool,
    /// Replace the status with this (the CRR is completed by the manager).
    pub status: Option<ContainerRecreateRequestStatus>,
    /// Delete the CRR (ttlSecondsAfterFinished has passed).
    pub delete: bool,
    /// Look again after this many seconds.
    pub requeue_after_seconds: Option<i64>,
    /// Why the CRR was completed or deleted, for the log.
    pub note: Option<String>,
}

impl Plan {
    /// Whether the plan writes nothing.
    pub fn is_idle(&self) -> bool {
        self.pod_status.is_none()
            && !self.remove_finalizer
            && !self.add_finalizer
            && self.annotations.is_empty()
            && !self.remove_active_label
            && self.status.is_none()
            && !self.delete
    }
}

fn has_finalizer(crr: &ContainerRecreateRequest) -> bool {
    crr.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == UNREADY_ACQUIRED_KEY)
}

fn annotation<'a>(crr: &'a ContainerRecreateRequest, key: &str) -> Option<&'a str> {
    crr.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

/// Plans one reconcile of `crr` with its pod (`None`: not found) at `now`.
pub fn plan(crr: &ContainerRecreateRequest, pod: Option<&Pod>, now: Timestamp) -> Plan {
    let d: Decision = reconcile(crr, pod, now);
    let ns = crr.metadata.namespace.as_deref().unwrap_or_default();
    let name = crr.metadata.name.as_deref().unwrap_or_default();
    let holder = readiness::holder(ns, name);
    let mut out = Plan {
        requeue_after_seconds: d.requeue_after_seconds,
        ..Plan::default()
    };
    if d.release_unready {
        out.pod_status = pod
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .and_then(|p| readiness::remove_not_ready_key(p, &holder, now));
        out.remove_finalizer = has_finalizer(crr);
    }
    if d.delete {
        out.delete = true;
        out.note = Some("ttlSecondsAfterFinished has passed".to_owned());
    }
    out.remove_active_label = d.remove_active_label;
    if let Some(status) = d.completed_status(crr, now) {
        out.note = Some(status.message.clone());
        out.status = Some(status);
        return out;
    }
    if crr.metadata.deletion_timestamp.is_some() || crr.phase() != phase::RECREATING {
        return out;
    }
    if let Some(entries) = &d.sync_container_statuses {
        let dumped = serde_json::to_string(entries).unwrap_or_else(|_| "[]".to_owned());
        if annotation(crr, SYNC_CONTAINER_STATUSES_KEY) != Some(dumped.as_str()) {
            out.annotations
                .insert(SYNC_CONTAINER_STATUSES_KEY.to_owned(), Some(dumped));
        }
    }
    if d.stamp_unready_acquired {
        if let Some(pod) = pod.filter(|_| d.acquire_unready) {
            out.add_finalizer = !has_finalizer(crr);
            out.pod_status = readiness::add_not_ready_key(pod, &holder, now);
        }
        out.annotations.insert(
            UNREADY_ACQUIRED_KEY.to_owned(),
            Some(
                Timestamp::from_second(now.as_second())
                    .unwrap_or(now)
                    .to_string(),
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    fn crr(v: serde_json::Value) -> ContainerRecreateRequest {
        serde_json::from_value(v).unwrap()
    }

    fn pod(gate: bool) -> Pod {
        let mut v = json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
            "spec": {"containers": [{"name": "app"}]},
            "status": {"conditions": [
                {"type": "ContainersReady", "status": "True"},
                {"type": "Ready", "status": "True"},
                {"type": "KruisePodReady", "status": "True"}],
              "containerStatuses": [{"name": "app", "ready": true, "restartCount": 1, "image": "i", "imageID": "x",
                "containerID": "containerd://new", "state": {"running": {"startedAt": "2023-11-14T22:13:30Z"}}}]}
        });
        if gate {
            v["spec"]["readinessGates"] = json!([{"conditionType": "KruisePodReady"}]);
        }
        serde_json::from_value(v).unwrap()
    }

    fn recreating(strategy: serde_json::Value) -> ContainerRecreateRequest {
        crr(json!({
            "metadata": {"name": "c", "namespace": "ns", "creationTimestamp": "2023-11-14T22:13:20Z",
                         "labels": {"crr.apps.kruise.io/pod-uid": "u1"}},
            "spec": {"podName": "p", "containers": [{"name": "app"}], "strategy": strategy},
            "status": {"phase": "Recreating"}
        }))
    }

    #[test]
    fn a_recreating_crr_syncs_the_pod_container_statuses_once() {
        let c = recreating(json!({}));
        let p = pod(false);
        let out = plan(&c, Some(&p), t(0));
        assert_eq!(
            out.annotations[SYNC_CONTAINER_STATUSES_KEY].as_deref(),
            Some(
                r#"[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://new"}]"#
            )
        );
        let mut synced = c.clone();
        synced.metadata.annotations = Some(
            out.annotations
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().unwrap_or_default()))
                .collect(),
        );
        assert!(
            plan(&synced, Some(&p), t(1)).is_idle(),
            "nothing left to do"
        );
    }

    #[test]
    fn a_container_restarted_in_the_second_the_crr_was_created_is_synced() {
        let c = recreating(json!({}));
        let mut p = pod(false);
        let status = &mut p
            .status
            .as_mut()
            .unwrap()
            .container_statuses
            .as_mut()
            .unwrap()[0];
        status
            .state
            .as_mut()
            .unwrap()
            .running
            .as_mut()
            .unwrap()
            .started_at = c.metadata.creation_timestamp.clone();
        let out = plan(&c, Some(&p), t(0));
        assert!(
            out.annotations[SYNC_CONTAINER_STATUSES_KEY]
                .as_deref()
                .is_some_and(|v| v.contains("containerd://new")),
            "{out:?}"
        );
    }

    #[test]
    fn unready_grace_holds_the_pod_not_ready_while_recreating_and_releases_it_when_completed() {
        let mut c = recreating(json!({"unreadyGracePeriodSeconds": 5}));
        let p = pod(true);
        // Not before the daemon moved it to Recreating.
        c.status.as_mut().unwrap().phase = phase::PENDING.to_owned();
        assert!(plan(&c, Some(&p), t(0)).is_idle());
        c.status.as_mut().unwrap().phase = phase::RECREATING.to_owned();
        let out = plan(&c, Some(&p), t(0));
        assert!(out.add_finalizer);
        let held = out.pod_status.expect("pod held not ready");
        let gate = held
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "KruisePodReady")
            .unwrap();
        assert_eq!(gate.status, "False");
        assert_eq!(
            out.annotations[UNREADY_ACQUIRED_KEY].as_deref(),
            Some("2023-11-14T22:13:20Z")
        );

        let mut held_pod = p.clone();
        held_pod.status = Some(held);
        c.metadata.finalizers = Some(vec![UNREADY_ACQUIRED_KEY.to_owned()]);
        let status = c.status.as_mut().unwrap();
        status.phase = phase::COMPLETED.to_owned();
        status.completion_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(t(3)));
        let out = plan(&c, Some(&held_pod), t(4));
        assert!(out.remove_finalizer);
        let released = out.pod_status.expect("pod released");
        assert!(
            released
                .conditions
                .iter()
                .flatten()
                .any(|c| c.type_ == "KruisePodReady" && c.status == "True")
        );
    }

    #[test]
    fn the_deadline_and_a_gone_pod_complete_the_crr_with_upstream_messages() {
        let mut c = recreating(json!({}));
        c.spec.active_deadline_seconds = Some(5);
        let p = pod(false);
        let out = plan(&c, Some(&p), t(6));
        let status = out.status.expect("completed");
        assert_eq!(status.phase, phase::COMPLETED);
        assert_eq!(
            status.message,
            "recreating has exceeded the activeDeadlineSeconds"
        );
        assert_eq!(status.completion_time.map(|t| t.0), Some(t(6)));
        let out = plan(&c, Some(&p), t(2));
        assert_eq!(out.requeue_after_seconds, Some(3));
        let out = plan(&c, None, t(2));
        assert_eq!(
            out.status.map(|s| s.message).as_deref(),
            Some("pod has gone")
        );
        let mut other = p.clone();
        other.metadata.uid = Some("u2".into());
        let out = plan(&c, Some(&other), t(2));
        assert_eq!(
            out.status.map(|s| s.message).as_deref(),
            Some("pod has gone")
        );
    }
}
