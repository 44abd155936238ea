//! One PodUnavailableBudget controller pass, sans IO: the pods the PUB protects and the total
//! it counts over (by `targetRef` through the workload, or by `selector` through the pods'
//! controllers), the pods to annotate with `kruise.io/related-pub`, the status (expired
//! `disruptedPods` / `unavailablePods` entries dropped) and upstream's events.
//!
//! Port of pkg/controller/podunavailablebudget/podunavailablebudget_controller.go::
//! syncPodUnavailableBudget, pkg/control/pubcontrol/pub_control.go::GetPodsForPub and
//! pkg/util/controllerfinder GetPodsForRef / GetExpectedScaleForPods (v1.8.4).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;

use super::{
    PodUnavailableBudget, PodUnavailableBudgetStatus, RELATED_PUB_ANNOTATION,
    pod::is_pod_active,
    resolve::{OwnedPod, WorkloadFact, resolve_selector_total, resolve_target_ref},
    status::{PriorRecords, PubPod, pub_status},
};
use crate::{
    api::kinds::group_of,
    kruise::{events::EventRecord, selector},
};

/// A workload of the PUB's namespace, as the controller finder sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workload {
    /// `group/version` (`v1` for the core group).
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    /// `spec.replicas` ([`super::resolve::REPLICAS_UNKNOWN`] for a kind without one).
    pub replicas: i32,
    pub deleting: bool,
    /// The UID of its controller, when that is a workload too (a ReplicaSet's Deployment).
    pub controller_uid: Option<String>,
}

impl Workload {
    fn fact(&self) -> WorkloadFact {
        WorkloadFact {
            uid: self.uid.clone(),
            replicas: self.replicas,
            deleting: self.deleting,
            controller_uid: self.controller_uid.clone(),
        }
    }

    fn is(&self, group: &str, kind: &str) -> bool {
        group_of(&self.api_version) == group && self.kind == kind
    }
}

/// The kinds whose pods the controller finder lists by owner: `(group, kind)`.
const DIRECT_OWNERS: [(&str, &str); 5] = [
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("", "ReplicationController"),
    ("apps.kruise.io", "CloneSet"),
    ("apps.kruise.io", "StatefulSet"),
];

/// The PUB's pods (indexes into the namespace's pods) and the total they are counted over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    pub pods: Vec<usize>,
    pub expected: i32,
}

fn controller_uid(pod: &Pod) -> Option<&str> {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.as_str())
}

/// Finds the PUB's pods among `pods` (the PUB's namespace) and its expected count.
///
/// Port of pub_control.go::GetPodsForPub with controllerfinder.GetPodsForRef and
/// GetExpectedScaleForPods (v1.8.4). A `targetRef` to a workload that is missing, being
/// deleted, at 0 replicas or of a kind without a known replica count protects nothing; a
/// selected pod whose controller is not a known workload adds nothing to the total.
pub fn resolve(
    pub_: &PodUnavailableBudget,
    pods: &[&Pod],
    workloads: &[Workload],
) -> Result<Resolved, String> {
    let active: Vec<usize> = (0..pods.len())
        .filter(|&i| is_pod_active(pods[i]))
        .collect();
    if let Some(target) = &pub_.spec.target_ref {
        let group = group_of(&target.api_version);
        let found = workloads
            .iter()
            .find(|w| w.is(group, &target.kind) && w.name == target.name);
        let known = DIRECT_OWNERS.contains(&(group, target.kind.as_str()))
            || (group, target.kind.as_str()) == ("apps", "Deployment");
        let Some(workload) = found.filter(|_| known) else {
            return Ok(Resolved {
                pods: Vec::new(),
                expected: pub_.total_replicas(0),
            });
        };
        let mut uids = BTreeSet::from([workload.uid.as_str()]);
        if workload.is("apps", "Deployment") {
            let sets: BTreeSet<&str> = workloads
                .iter()
                .filter(|w| w.is("apps", "ReplicaSet") && !w.deleting)
                .filter(|w| w.controller_uid.as_deref() == Some(workload.uid.as_str()))
                .map(|w| w.uid.as_str())
                .collect();
            if !sets.is_empty() {
                uids = sets;
            }
        }
        let owned: Vec<usize> = active
            .into_iter()
            .filter(|&i| controller_uid(pods[i]).is_some_and(|u| uids.contains(u)))
            .collect();
        let names: Vec<String> = owned
            .iter()
            .map(|&i| pods[i].metadata.name.clone().unwrap_or_default())
            .collect();
        let (expected, kept) = resolve_target_ref(pub_, &workload.fact(), &names);
        let kept: BTreeSet<&String> = kept.iter().collect();
        return Ok(Resolved {
            pods: owned
                .into_iter()
                .zip(&names)
                .filter(|(_, name)| kept.contains(name))
                .map(|(i, _)| i)
                .collect(),
            expected,
        });
    }
    let Some(sel) = &pub_.spec.selector else {
        return Ok(Resolved::default());
    };
    let mut selected = Vec::new();
    for i in active {
        let labels = pods[i].metadata.labels.clone().unwrap_or_default();
        match selector::matches(sel, &labels) {
            Ok(true) => selected.push(i),
            Ok(false) => {}
            // An invalid selector selects nothing (upstream logs it and returns no pods).
            Err(_) => return Ok(Resolved::default()),
        }
    }
    let by_uid: BTreeMap<&str, &Workload> = workloads.iter().map(|w| (w.uid.as_str(), w)).collect();
    let owned: Vec<OwnedPod> = selected
        .iter()
        .map(|&i| OwnedPod {
            name: pods[i].metadata.name.clone().unwrap_or_default(),
            controller_uid: controller_uid(pods[i])
                .filter(|u| by_uid.contains_key(u))
                .map(str::to_owned),
        })
        .collect();
    let facts: Vec<WorkloadFact> = workloads.iter().map(Workload::fact).collect();
    let expected = resolve_selector_total(pub_, &owned, &facts)?;
    Ok(Resolved {
        pods: selected,
        expected,
    })
}

/// The status a pass writes over the resolved pods, from the PUB as read (`pub_` may be a
/// fresher copy than the one the pods were resolved for, after a write conflict).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusPass {
    pub status: PodUnavailableBudgetStatus,
    /// Whether it differs from the PUB's status.
    pub changed: bool,
    /// Pods the webhook let go whose deletion never came within the timeout.
    pub not_deleted: Vec<String>,
    /// Seconds until the first kept record expires.
    pub recheck_after_seconds: Option<i64>,
}

fn age(recorded: &str, now: jiff::Timestamp) -> i64 {
    recorded
        .parse::<jiff::Timestamp>()
        .map_or(i64::MAX, |t| now.as_second() - t.as_second())
}

/// The status over `resolved` at `now`.
///
/// Port of syncPodUnavailableBudget's status part with buildDisruptedAndUnavailablePods,
/// countAvailablePods, getDesiredAvailableForPub and updatePubStatus (v1.8.4).
pub fn status_pass(
    pub_: &PodUnavailableBudget,
    pods: &[&Pod],
    resolved: &Resolved,
    now: jiff::Timestamp,
) -> Result<StatusPass, String> {
    let counted: Vec<PubPod> = resolved
        .pods
        .iter()
        .map(|&i| PubPod::from_pod(pods[i]))
        .collect();
    let prior = PriorRecords {
        disrupted: pub_
            .status
            .disrupted_pods
            .iter()
            .map(|(k, v)| (k.clone(), age(v, now)))
            .collect(),
        unavailable: pub_
            .status
            .unavailable_pods
            .iter()
            .map(|(k, v)| (k.clone(), age(v, now)))
            .collect(),
    };
    let calc = pub_status(&pub_.spec, resolved.expected, &counted, &prior)?;
    let keep = |kept: &BTreeMap<String, i64>, recorded: &BTreeMap<String, String>| {
        kept.keys()
            .filter_map(|k| recorded.get(k).map(|v| (k.clone(), v.clone())))
            .collect::<BTreeMap<String, String>>()
    };
    let status = PodUnavailableBudgetStatus {
        observed_generation: pub_.metadata.generation.unwrap_or_default(),
        disrupted_pods: keep(&calc.disrupted_pods, &pub_.status.disrupted_pods),
        unavailable_pods: keep(&calc.unavailable_pods, &pub_.status.unavailable_pods),
        unavailable_allowed: calc.unavailable_allowed,
        current_available: calc.current_available,
        desired_available: calc.desired_available,
        total_replicas: calc.total_replicas,
    };
    let not_deleted = counted
        .iter()
        .filter(|p| p.active && prior.disrupted.contains_key(&p.name))
        .filter(|p| !status.disrupted_pods.contains_key(&p.name))
        .map(|p| p.name.clone())
        .collect();
    Ok(StatusPass {
        changed: status != pub_.status,
        status,
        not_deleted,
        recheck_after_seconds: calc.recheck_after_seconds,
    })
}

/// What one pass decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub resolved: Resolved,
    /// Protected pods without the `kruise.io/related-pub` annotation (names).
    pub annotate: Vec<String>,
    /// Events about the PUB.
    pub events: Vec<EventRecord>,
    /// Events about pods: `(pod name, event)`.
    pub pod_events: Vec<(String, EventRecord)>,
    pub status: StatusPass,
}

/// A failed pass: the events to record and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub events: Vec<EventRecord>,
    pub message: String,
}

/// The pod event for a disruption that never happened.
pub fn not_deleted_event(pub_: &PodUnavailableBudget) -> EventRecord {
    EventRecord::warning(
        "NotDeleted",
        format!(
            "Pod was expected by PUB {}/{} to be deleted but it wasn't",
            pub_.metadata.namespace.as_deref().unwrap_or_default(),
            pub_.name()
        ),
    )
}

/// One pass over the PUB's namespace (`pods`, `workloads`) at `now`. Pods are borrowed: a
/// namespace may hold thousands and the controller reads them from its cache.
pub fn sync(
    pub_: &PodUnavailableBudget,
    pods: &[&Pod],
    workloads: &[Workload],
    now: jiff::Timestamp,
) -> Result<Outcome, Failure> {
    let resolved = resolve(pub_, pods, workloads).map_err(|message| Failure {
        events: Vec::new(),
        message,
    })?;
    let mut events = Vec::new();
    let mut annotate = Vec::new();
    if resolved.pods.is_empty() {
        events.push(EventRecord::normal("NoPods", "No matching pods found"));
    } else {
        annotate = resolved
            .pods
            .iter()
            .map(|&i| &pods[i])
            .filter(|p| {
                p.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(RELATED_PUB_ANNOTATION))
                    .is_none_or(String::is_empty)
            })
            .filter_map(|p| p.metadata.name.clone())
            .collect();
    }
    let status = status_pass(pub_, pods, &resolved, now).map_err(|err| {
        events.push(EventRecord::warning(
            "CalculateExpectedPodCountFailed",
            format!("Failed to calculate the number of expected pods: {err}"),
        ));
        Failure {
            events: events.clone(),
            message: err,
        }
    })?;
    let pod_events = status
        .not_deleted
        .iter()
        .map(|name| (name.clone(), not_deleted_event(pub_)))
        .collect();
    Ok(Outcome {
        resolved,
        annotate,
        events,
        pod_events,
        status,
    })
}

#[cfg(test)]
mod tests;
