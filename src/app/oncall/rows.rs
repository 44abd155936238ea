//! Row models of the on-call views, built from the stores (pure; rebuilt when a store changes,
//! never per frame). Sorted by namespace then name.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use jiff::Timestamp;

use super::super::{
    podindex::{find, in_namespace},
    rows::{PodRow, WorkloadRow},
    stores::Stores,
};
use crate::{
    api::{ContainerRecreateRequest, PodUnavailableBudget},
    kruise::selector,
};

fn in_scope(namespace: Option<&str>, ns: &str) -> bool {
    namespace.is_none_or(|n| n == ns)
}

fn time(t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> Option<Timestamp> {
    t.map(|t| t.0)
}

/// One ContainerRecreateRequest.
#[derive(Debug, Clone, PartialEq)]
pub struct CrrRow {
    pub namespace: String,
    pub name: String,
    /// Pending | Recreating | Succeeded | Failed | Completed.
    pub phase: String,
    pub pod: String,
    /// The pod's node ("" when the pod is gone).
    pub node: String,
    /// (container, its phase).
    pub containers: Vec<(String, String)>,
    pub message: String,
    pub created: Option<Timestamp>,
    /// When `activeDeadlineSeconds` runs out, if set.
    pub deadline: Option<Timestamp>,
}

impl CrrRow {
    pub fn finished(&self) -> bool {
        matches!(self.phase.as_str(), "Completed" | "Succeeded" | "Failed")
    }

    /// Failed, or still running past its deadline at `now`.
    pub fn failed_or_overdue(&self, now: Timestamp) -> Option<String> {
        if self.phase == "Failed" {
            let why = if self.message.is_empty() {
                "failed".to_owned()
            } else {
                format!("failed: {}", self.message)
            };
            return Some(why);
        }
        match self.deadline {
            Some(d) if !self.finished() && now >= d => Some(format!(
                "still {} past its deadline",
                self.phase.to_lowercase()
            )),
            _ => None,
        }
    }
}

/// A CRR's row; `pods` are the sorted pod rows (for the pod's node).
pub fn crr_row(crr: &ContainerRecreateRequest, pods: &[Arc<PodRow>]) -> CrrRow {
    let namespace = crr.metadata.namespace.clone().unwrap_or_default();
    let pod = crr.spec.pod_name.clone();
    let node = find(pods, &namespace, &pod)
        .map(|p| p.node.clone())
        .unwrap_or_default();
    let status = crr.status.clone().unwrap_or_default();
    let states: BTreeMap<&str, &str> = status
        .container_recreate_states
        .iter()
        .map(|s| (s.name.as_str(), s.phase.as_str()))
        .collect();
    let containers = crr
        .spec
        .containers
        .iter()
        .map(|c| {
            let phase = states.get(c.name.as_str()).copied().unwrap_or("Pending");
            (c.name.clone(), phase.to_owned())
        })
        .collect();
    let created = time(crr.metadata.creation_timestamp.as_ref());
    let deadline = crr
        .spec
        .active_deadline_seconds
        .zip(created)
        .and_then(|(s, c)| c.checked_add(jiff::SignedDuration::from_secs(s)).ok());
    let phase = if status.phase.is_empty() {
        "Pending".to_owned()
    } else {
        status.phase
    };
    CrrRow {
        namespace,
        name: crr.metadata.name.clone().unwrap_or_default(),
        phase,
        pod,
        node,
        containers,
        message: status.message,
        created,
        deadline,
    }
}

pub fn build_restarts(
    stores: &Stores,
    namespace: Option<&str>,
    pods: &[Arc<PodRow>],
) -> Vec<CrrRow> {
    let mut rows: Vec<CrrRow> = stores
        .oncall
        .restarts
        .state()
        .iter()
        .map(|c| crr_row(c, pods))
        .filter(|r| in_scope(namespace, &r.namespace))
        .collect();
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    rows
}

/// A pod a budget counts against, and since when.
#[derive(Debug, Clone, PartialEq)]
pub struct PodSince {
    pub pod: String,
    pub since: Option<Timestamp>,
}

/// One PodUnavailableBudget.
#[derive(Debug, Clone, PartialEq)]
pub struct PubRow {
    pub namespace: String,
    pub name: String,
    /// `CloneSet/checkout` or `selector app=web`.
    pub target: String,
    pub allowed: i32,
    pub desired: i32,
    pub current: i32,
    pub total: i32,
    /// Deletions/evictions the webhook let through, not yet seen by the controller.
    pub disrupted: Vec<PodSince>,
    /// Updates the webhook let through, not yet seen by the controller.
    pub unavailable: Vec<PodSince>,
    /// Pods the budget selects that are not ready now (since their Ready condition changed).
    pub not_ready: Vec<PodSince>,
    /// UIDs of the workloads whose pods it selects.
    pub workloads: Vec<String>,
    pub created: Option<Timestamp>,
}

impl PubRow {
    /// No budget left while pods are down: nothing more may be disrupted.
    pub fn exhausted(&self) -> bool {
        self.allowed <= 0
            && (!self.disrupted.is_empty()
                || !self.unavailable.is_empty()
                || !self.not_ready.is_empty())
    }
}

fn since_map(map: &BTreeMap<String, String>) -> Vec<PodSince> {
    map.iter()
        .map(|(pod, t)| PodSince {
            pod: pod.clone(),
            since: t.parse().ok(),
        })
        .collect()
}

/// Whether a PUB's `targetRef` names this workload (same namespace, kind and API group).
fn targets(p: &PodUnavailableBudget, w: &WorkloadRow) -> bool {
    let Some(r) = &p.spec.target_ref else {
        return false;
    };
    let info = w.kind.info();
    info.workload.is_some()
        && crate::api::kinds::find_by_api_version(&r.api_version, &r.kind) == Some(info)
        && r.name == w.name
}

pub fn pub_row(
    p: &PodUnavailableBudget,
    workloads: &[WorkloadRow],
    owners: &HashMap<String, usize>,
    pods: &[Arc<PodRow>],
) -> PubRow {
    let namespace = p.metadata.namespace.clone().unwrap_or_default();
    let status = p.status.clone();
    let mut selected: Vec<&Arc<PodRow>> = Vec::new();
    let mut uids: Vec<String> = Vec::new();
    let target = if let Some(r) = &p.spec.target_ref {
        for w in workloads
            .iter()
            .filter(|w| w.namespace == namespace && targets(p, w))
        {
            uids.push(w.uid.clone());
            let owner = w.owner();
            selected.extend(
                in_namespace(pods, &namespace)
                    .iter()
                    .filter(|pod| pod.belongs_to(&owner)),
            );
        }
        format!("{}/{}", r.kind, r.name)
    } else if let Some(sel) = &p.spec.selector {
        if !selector::is_empty(sel) {
            for pod in in_namespace(pods, &namespace) {
                if selector::matches(sel, &pod.pod.metadata.labels).unwrap_or(false) {
                    selected.push(pod);
                    if let Some(i) = pod.owner_uid.as_ref().and_then(|u| owners.get(u))
                        && let Some(w) = workloads.get(*i)
                        && !uids.contains(&w.uid)
                    {
                        uids.push(w.uid.clone());
                    }
                }
            }
        }
        let labels: Vec<String> = sel
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("selector {}", labels.join(","))
    } else {
        "-".to_owned()
    };
    let disrupted = since_map(&status.disrupted_pods);
    let unavailable = since_map(&status.unavailable_pods);
    let listed = |name: &str| disrupted.iter().chain(&unavailable).any(|p| p.pod == name);
    let not_ready = selected
        .iter()
        .filter(|pod| !pod.all_ready && !listed(&pod.name))
        .map(|pod| PodSince {
            pod: pod.name.clone(),
            since: pod
                .pod
                .status
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .and_then(|c| time(c.last_transition_time.as_ref())),
        })
        .collect();
    PubRow {
        namespace,
        name: p.metadata.name.clone().unwrap_or_default(),
        target,
        allowed: status.unavailable_allowed,
        desired: status.desired_available,
        current: status.current_available,
        total: status.total_replicas,
        disrupted,
        unavailable,
        not_ready,
        workloads: uids,
        created: time(p.metadata.creation_timestamp.as_ref()),
    }
}

pub fn build_budgets(
    stores: &Stores,
    namespace: Option<&str>,
    workloads: &[WorkloadRow],
    owners: &HashMap<String, usize>,
    pods: &[Arc<PodRow>],
) -> Vec<PubRow> {
    let mut rows: Vec<PubRow> = stores
        .oncall
        .budgets
        .state()
        .iter()
        .filter(|p| {
            in_scope(
                namespace,
                p.metadata.namespace.as_deref().unwrap_or_default(),
            )
        })
        .map(|p| pub_row(p, workloads, owners, pods))
        .collect();
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    rows
}

/// Budget left per workload UID (the smallest when several PUBs select it).
pub fn budget_left(budgets: &[PubRow]) -> HashMap<String, i32> {
    let mut left: HashMap<String, i32> = HashMap::new();
    for b in budgets {
        for uid in &b.workloads {
            let v = left.entry(uid.clone()).or_insert(b.allowed);
            *v = (*v).min(b.allowed);
        }
    }
    left
}

impl super::Search for CrrRow {
    fn search(&self) -> String {
        format!(
            "{}/{} {} {} {}",
            self.namespace, self.name, self.pod, self.node, self.phase
        )
    }
}

impl super::Search for PubRow {
    fn search(&self) -> String {
        format!("{}/{} {}", self.namespace, self.name, self.target)
    }
}
