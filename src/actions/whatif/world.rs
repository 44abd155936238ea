//! The in-memory world the what-if runs in: the pods (with the writes a controller makes applied
//! as the API server would: uid, creation time, graceful deletion), the simulated scheduler and
//! kubelet (`crate::cluster::sim`'s pure decisions), and what every workload kind shares:
//! counting pods and telling why a rollout stopped.

use std::collections::HashMap;

use jiff::Timestamp;
use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Node, Pod},
    },
    apimachinery::pkg::apis::meta::v1::Time,
};
use serde_json::Value;

use super::{Counts, Settings, Stop};
use crate::{
    actions::ApiRequest,
    api::pod::is_ready,
    cluster::sim::{
        kubelet::{self, PodAction, Timing},
        schedule,
    },
    kruise::revision::{CONTROLLER_REVISION_HASH_LABEL, equal_to_revision_hash},
};

/// What one controller turn did.
#[derive(Debug, Default)]
pub struct Round {
    pub created: Vec<String>,
    pub deleted: Vec<String>,
    pub in_place: Vec<String>,
    pub recreated: Vec<String>,
    /// Anything written (pods, status, revisions): another turn may do more.
    pub wrote: bool,
    pub requeue_after: Option<i64>,
}

/// One workload kind's controller, run on the copy.
pub trait Controller {
    /// One reconcile at `now` (unix seconds), its writes applied to `pods` and the workload.
    fn reconcile(&mut self, pods: &mut Pods, now: i64, settings: &Settings) -> Round;
    fn counts(&self, pods: &Pods) -> Counts;
    fn min_ready_seconds(&self) -> i64;
    fn why_stopped(&self, pods: &Pods, end: &Counts) -> Stop;
    /// The workload (at the version it was read) and its revisions as they are now.
    fn snapshot(&self) -> (Value, Vec<ControllerRevision>);
}

/// Applies the action's JSON patch (its `test` pins included) to the object as read.
pub fn apply_request(object: &mut Value, request: &ApiRequest) -> Result<(), String> {
    let patch: json_patch::Patch = serde_json::from_value(request.body.clone())
        .map_err(|e| format!("the action's patch is not a JSON patch: {e}"))?;
    let spec_before = object.get("spec").cloned();
    json_patch::patch(object, &patch)
        .map_err(|e| format!("the action does not apply to the object as read: {e}"))?;
    // The API server counts spec changes in metadata.generation.
    if object.get("spec") != spec_before.as_ref()
        && let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut)
    {
        let generation = meta.get("generation").and_then(Value::as_i64).unwrap_or(0);
        meta.insert("generation".to_owned(), Value::from(generation + 1));
    }
    Ok(())
}

/// The pods of the copy, and the nodes they run on.
pub struct Pods {
    pub all: Vec<Pod>,
    nodes: Vec<Node>,
    timing: Timing,
    next_id: u64,
}

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn node_ip(node: Option<&Node>) -> String {
    node.and_then(|n| n.status.as_ref())
        .and_then(|s| s.addresses.as_ref())
        .and_then(|a| a.iter().find(|a| a.type_ == "InternalIP"))
        .map(|a| a.address.clone())
        .unwrap_or_else(|| "10.240.0.1".to_owned())
}

impl Pods {
    pub fn new(pods: Vec<Pod>, nodes: Vec<Node>, timing: Timing) -> Self {
        Self {
            all: pods,
            nodes,
            timing,
            next_id: 0,
        }
    }

    pub fn into_parts(self) -> (Vec<Pod>, Vec<Node>) {
        (self.all, self.nodes)
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The pods `uid` controls.
    pub fn owned(&self, uid: &str) -> Vec<Pod> {
        self.all
            .iter()
            .filter(|p| controlled_by(p, uid))
            .cloned()
            .collect()
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A pod created as the API server would: named (generateName), uid, creation time.
    /// Returns its name.
    pub fn create(&mut self, mut pod: Pod, now: i64) -> String {
        let taken = |all: &[Pod], name: &str, uid: &str| {
            all.iter().any(|p| {
                p.metadata.name.as_deref() == Some(name) || p.metadata.uid.as_deref() == Some(uid)
            })
        };
        let generated = pod.metadata.name.as_deref().is_none_or(str::is_empty);
        let prefix = pod.metadata.generate_name.clone().unwrap_or_default();
        let mut id = self.id();
        loop {
            let name = if generated {
                format!("{prefix}whatif{id}")
            } else {
                pod.metadata.name.clone().unwrap_or_default()
            };
            let uid = format!("whatif-pod-{id}");
            // A named pod replaces a deleted one of that name: only its uid must be new.
            if !taken(&self.all, if generated { &name } else { "" }, &uid) {
                pod.metadata.name = Some(name);
                pod.metadata.uid = Some(uid);
                break;
            }
            id = self.id();
        }
        pod.metadata.creation_timestamp = Some(Time(ts(now)));
        pod.metadata.resource_version = Some(format!("whatif-{id}"));
        let name = pod.metadata.name.clone().unwrap_or_default();
        self.all
            .retain(|p| p.metadata.name.as_deref() != Some(name.as_str()));
        self.all.push(pod);
        name
    }

    /// A status and/or pod write (each computed by the controller from the pod it read).
    pub fn update(&mut self, name: &str, status: Option<&Pod>, pod: Option<&Pod>) {
        let Some(target) = self
            .all
            .iter_mut()
            .find(|p| p.metadata.name.as_deref() == Some(name))
        else {
            return;
        };
        if let Some(s) = status {
            target.status = s.status.clone();
        }
        if let Some(p) = pod {
            target.metadata = p.metadata.clone();
            target.spec = p.spec.clone();
        }
    }

    /// A delete: an unbound pod goes at once; a bound one terminates for its grace period
    /// (the kubelet removes it then).
    pub fn delete(&mut self, name: &str, now: i64) {
        let Some(i) = self
            .all
            .iter()
            .position(|p| p.metadata.name.as_deref() == Some(name))
        else {
            return;
        };
        let pod = &mut self.all[i];
        let bound = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty());
        let grace = pod
            .spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
            .unwrap_or(30);
        if !bound || grace <= 0 {
            self.all.remove(i);
        } else if pod.metadata.deletion_timestamp.is_none() {
            pod.metadata.deletion_timestamp = Some(Time(ts(now + grace)));
        }
    }

    /// The scheduler and every kubelet at `now`: unbound pods are placed, statuses advance,
    /// terminated pods go. Returns whether anything changed and when something changes next.
    pub fn kubelet(&mut self, now: i64) -> (bool, Option<i64>) {
        let mut changed = false;
        let mut wake: Option<i64> = None;
        let mut load: HashMap<String, usize> = HashMap::new();
        for p in &self.all {
            if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.clone()) {
                *load.entry(n).or_default() += 1;
            }
        }
        let mut gone = Vec::new();
        for (i, pod) in self.all.iter_mut().enumerate() {
            if schedule::wants_scheduling(pod)
                && let Ok(node) = schedule::pick_node(pod, &self.nodes, &load)
            {
                let node = node.to_owned();
                *load.entry(node.clone()).or_default() += 1;
                if let Some(spec) = pod.spec.as_mut() {
                    spec.node_name = Some(node);
                    changed = true;
                }
            }
            let Some(node) = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .filter(|n| !n.is_empty())
            else {
                continue;
            };
            let host = node_ip(
                self.nodes
                    .iter()
                    .find(|n| n.metadata.name.as_deref() == Some(node.as_str())),
            );
            let decision = kubelet::decide(pod, &host, ts(now), &self.timing);
            match decision.action {
                PodAction::Nothing => {}
                PodAction::WriteStatus(status) => {
                    pod.status = Some(*status);
                    changed = true;
                }
                PodAction::Delete => {
                    gone.push(i);
                    changed = true;
                }
            }
            if let Some(at) = decision.wake_at.map(|t| t.as_second()) {
                wake = Some(wake.map_or(at, |w| w.min(at)));
            }
        }
        for i in gone.into_iter().rev() {
            self.all.remove(i);
        }
        (changed, wake)
    }
}

pub fn controlled_by(pod: &Pod, uid: &str) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && r.uid == uid)
}

fn revision_label(pod: &Pod) -> &str {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(CONTROLLER_REVISION_HASH_LABEL))
        .map(String::as_str)
        .unwrap_or_default()
}

/// Whether the pod is on `update` (a revision name, or a DaemonSet's hash).
pub fn is_updated(pod: &Pod, update: &str) -> bool {
    !update.is_empty() && equal_to_revision_hash(revision_label(pod), update)
}

fn is_active(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && !matches!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        )
}

/// The active pods `uid` controls, by name.
pub fn active<'a>(pods: &'a Pods, uid: &str) -> Vec<&'a Pod> {
    let mut out: Vec<&Pod> = pods
        .all
        .iter()
        .filter(|p| controlled_by(p, uid) && is_active(p))
        .collect();
    out.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    out
}

/// The counts of the active pods `uid` controls against the update revision.
pub fn counts(pods: &Pods, uid: &str, update: &str, desired: i32) -> Counts {
    let mut c = Counts {
        desired,
        ..Counts::default()
    };
    for pod in active(pods, uid) {
        let (updated, ready) = (is_updated(pod, update), is_ready(pod));
        c.pods += 1;
        c.updated += i32::from(updated);
        c.ready += i32::from(ready);
        c.updated_ready += i32::from(updated && ready);
    }
    c
}

fn name(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

/// Why a rollout that stopped moving stopped, from the pods at the end.
pub fn why_stopped(pods: &Pods, uid: &str, update: &str, end: &Counts, paused: bool) -> Stop {
    let active = active(pods, uid);
    let unscheduled: Vec<String> = active
        .iter()
        .filter(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_none_or(str::is_empty)
        })
        .map(|p| name(p))
        .collect();
    if !unscheduled.is_empty() {
        return Stop::Unschedulable { pods: unscheduled };
    }
    if end.updated_ready == end.desired && end.pods == end.desired {
        return Stop::Converged;
    }
    let never_ready: Vec<String> = active
        .iter()
        .filter(|p| is_updated(p, update) && !is_ready(p))
        .map(|p| name(p))
        .collect();
    if !never_ready.is_empty() {
        return Stop::NeverReady {
            pods: never_ready,
            kept: end.pods - end.updated,
        };
    }
    let unready: Vec<String> = active
        .iter()
        .filter(|p| !is_ready(p))
        .map(|p| name(p))
        .collect();
    if !unready.is_empty() {
        return Stop::MaxUnavailable { unready };
    }
    if paused {
        return Stop::Paused;
    }
    Stop::Partition {
        held: end.pods - end.updated,
    }
}

/// Applies what the revision decision settled to the simulated history, as the controller's
/// writes would: a new update revision is stored (with a simulated uid and `now` as its creation
/// time), a re-numbered one replaces its older self. Returns the update and current revisions
/// as the reconcile sees them, and whether anything was written.
pub fn store_settled(
    history: &mut Vec<ControllerRevision>,
    settled: &crate::kruise::cloneset::reconcile::revisions::ActiveRevisions,
    now: i64,
) -> (ControllerRevision, ControllerRevision, bool) {
    let mut update = settled.update.clone();
    let mut wrote = false;
    if settled.create {
        update.metadata.uid = Some(format!("whatif-rev-{}", history.len() + 1));
        update.metadata.creation_timestamp = Some(Time(
            Timestamp::from_second(now).unwrap_or(Timestamp::UNIX_EPOCH),
        ));
        history.push(update.clone());
        wrote = true;
    } else if settled.renumber {
        if let Some(r) = history
            .iter_mut()
            .find(|r| r.metadata.name == update.metadata.name)
        {
            *r = update.clone();
        }
        wrote = true;
    }
    let current = if settled.current.metadata.name == update.metadata.name {
        update.clone()
    } else {
        settled.current.clone()
    };
    (update, current, wrote)
}
