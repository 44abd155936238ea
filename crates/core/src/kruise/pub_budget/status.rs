//! The PUB controller's status arithmetic (`syncPodUnavailableBudget`, v1.8.4).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;

use super::{
    PodUnavailableBudgetSpec,
    pod::{is_pod_active, is_pod_ready, is_pod_state_consistent},
};
use crate::kruise::intstr::scaled_value_apimachinery;

/// How long a `disruptedPods` entry is kept (`DeletionTimeout`).
pub const DELETION_TIMEOUT_SECONDS: i64 = 20;
/// How long an `unavailablePods` entry is kept (`UpdatedDelayCheckTime`).
pub const UPDATED_DELAY_CHECK_SECONDS: i64 = 10;

/// One pod counted by the PUB (already resolved from the selector or targetRef).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PubPod {
    /// Pod name.
    pub name: String,
    /// Not Succeeded/Failed and not terminating.
    pub active: bool,
    /// [`super::pod::is_pod_ready`].
    pub ready: bool,
    /// [`super::pod::is_pod_state_consistent`].
    pub consistent: bool,
}

impl PubPod {
    /// The PUB's view of `pod`.
    pub fn from_pod(pod: &Pod) -> Self {
        Self {
            name: pod.metadata.name.clone().unwrap_or_default(),
            active: is_pod_active(pod),
            ready: is_pod_ready(pod),
            consistent: is_pod_state_consistent(pod),
        }
    }
}

/// The recorded pods of the prior status, by name, with their age in seconds at reconcile time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PriorRecords {
    /// `status.disruptedPods` ages.
    pub disrupted: BTreeMap<String, i64>,
    /// `status.unavailablePods` ages.
    pub unavailable: BTreeMap<String, i64>,
}

/// The computed status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PubStatusCalc {
    /// `max(0, currentAvailable - desiredAvailable)`.
    pub unavailable_allowed: i32,
    /// Active, unrecorded, ready and consistent pods.
    pub current_available: i32,
    /// See [`desired_available`].
    pub desired_available: i32,
    /// The total the budget was computed over.
    pub total_replicas: i32,
    /// `disruptedPods` entries kept (name → age).
    pub disrupted_pods: BTreeMap<String, i64>,
    /// `unavailablePods` entries kept (name → age).
    pub unavailable_pods: BTreeMap<String, i64>,
    /// Seconds until the first kept entry expires (the controller requeues then).
    pub recheck_after_seconds: Option<i64>,
}

/// Port of pkg/controller/podunavailablebudget/pub_controller.go::getDesiredAvailableForPub
/// (v1.8.4): maxUnavailable gives `max(0, total - ceil)`, an int minAvailable is taken as is (not
/// capped at total), a percent minAvailable rounds up; neither set gives 0.
pub fn desired_available(spec: &PodUnavailableBudgetSpec, total: i32) -> Result<i32, String> {
    let scaled_value =
        |v, total| scaled_value_apimachinery(v, total, true).map_err(|e| e.to_string());
    if let Some(max) = &spec.max_unavailable {
        let max = scaled_value(max, total)?;
        return Ok(total.saturating_sub(max).max(0));
    }
    match &spec.min_available {
        Some(min) => scaled_value(min, total),
        None => Ok(0),
    }
}

/// Port of pkg/controller/podunavailablebudget/pub_controller.go::syncPodUnavailableBudget
/// (v1.8.4) with buildDisruptedAndUnavailablePods and countAvailablePods, given the resolved
/// pods and total.
///
/// Entries of active pods are kept until they expire (disrupted after 20 s, unavailable after
/// 10 s); pods listed in either map are not counted available.
pub fn pub_status(
    spec: &PodUnavailableBudgetSpec,
    total_replicas: i32,
    pods: &[PubPod],
    prior: &PriorRecords,
) -> Result<PubStatusCalc, String> {
    let desired = desired_available(spec, total_replicas)?;
    let mut out = PubStatusCalc {
        desired_available: desired,
        total_replicas,
        ..Default::default()
    };
    let mut recheck: Option<i64> = None;
    let mut keep = |age: i64, timeout: i64| {
        let left = timeout - age;
        if left >= 0 {
            recheck = Some(recheck.map_or(left, |r| r.min(left)));
        }
        left >= 0
    };
    for pod in pods.iter().filter(|p| p.active) {
        if let Some(&age) = prior.disrupted.get(&pod.name)
            && keep(age, DELETION_TIMEOUT_SECONDS)
        {
            out.disrupted_pods.insert(pod.name.clone(), age);
        }
        if let Some(&age) = prior.unavailable.get(&pod.name)
            && keep(age, UPDATED_DELAY_CHECK_SECONDS)
        {
            out.unavailable_pods.insert(pod.name.clone(), age);
        }
    }
    let available = pods
        .iter()
        .filter(|p| p.active && p.ready && p.consistent)
        .filter(|p| !out.disrupted_pods.contains_key(&p.name))
        .filter(|p| !out.unavailable_pods.contains_key(&p.name))
        .count();
    out.current_available = i32::try_from(available).unwrap_or(i32::MAX);
    out.unavailable_allowed = out.current_available.saturating_sub(desired).max(0);
    out.recheck_after_seconds = recheck;
    Ok(out)
}
