//! The simulated scheduler, pure: which node an unbound pod goes to.
//!
//! Filters as kube-scheduler's NodeUnschedulable, NodeName, NodeAffinity (nodeSelector and
//! required node affinity) and TaintToleration plugins do; among the nodes left it picks the one
//! holding the fewest pods (ties by name), which spreads pods like the default scoring roughly
//! does. Unfit pods get the scheduler's "0/N nodes are available" message.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::{
    api::core::v1::{Node, Pod, PodCondition, PodSpec, PodStatus, Taint},
    apimachinery::pkg::apis::meta::v1::Time,
};

use crate::kruise::scheduling::{fits_node_affinity, tolerates, untolerated};

/// Why a node does not fit a pod (the scheduler's wording).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unfit {
    Unschedulable,
    NodeName,
    Affinity,
    Taint,
}

impl Unfit {
    fn message(self) -> &'static str {
        match self {
            Unfit::Unschedulable => "node(s) were unschedulable",
            Unfit::NodeName => "node(s) didn't match the requested node name",
            Unfit::Affinity => "node(s) didn't match Pod's node affinity/selector",
            Unfit::Taint => "node(s) had untolerated taint",
        }
    }
}

/// Whether `node` can run `pod`, or the first reason it cannot.
pub fn fits(pod: &PodSpec, node: &Node) -> Result<(), Unfit> {
    let spec = node.spec.as_ref();
    let unschedulable = spec.and_then(|s| s.unschedulable).unwrap_or(false);
    let tolerations = pod.tolerations.as_deref().unwrap_or_default();
    if unschedulable
        && !tolerations.iter().any(|t| {
            tolerates(
                t,
                &Taint {
                    key: "node.kubernetes.io/unschedulable".into(),
                    effect: "NoSchedule".into(),
                    ..Default::default()
                },
            )
        })
    {
        return Err(Unfit::Unschedulable);
    }
    if !fits_node_affinity(pod, node) {
        return Err(Unfit::Affinity);
    }
    let taints = spec.and_then(|s| s.taints.as_deref()).unwrap_or_default();
    if untolerated(taints, tolerations, &["NoSchedule", "NoExecute"]).is_some() {
        return Err(Unfit::Taint);
    }
    Ok(())
}

/// Picks the node for `pod`: the feasible node holding the fewest pods (`load`), ties by name.
/// `Err` carries the scheduler's message for a pod no node fits. The nodes are borrowed (any
/// iterator of them): the simulator places each pod without copying every node.
pub fn pick_node<'a>(
    pod: &Pod,
    nodes: impl IntoIterator<Item = &'a Node>,
    load: &HashMap<String, usize>,
) -> Result<&'a str, String> {
    let default_spec = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&default_spec);
    let mut reasons: BTreeMap<Unfit, usize> = BTreeMap::new();
    let mut best: Option<(usize, &str)> = None;
    let mut count = 0;
    for node in nodes {
        count += 1;
        let name = node.metadata.name.as_deref().unwrap_or_default();
        if node.metadata.deletion_timestamp.is_some() || name.is_empty() {
            continue;
        }
        match fits(spec, node) {
            Ok(()) => {
                let pods = load.get(name).copied().unwrap_or(0);
                if best.is_none_or(|(b, bn)| (pods, name) < (b, bn)) {
                    best = Some((pods, name));
                }
            }
            Err(why) => *reasons.entry(why).or_default() += 1,
        }
    }
    if let Some((_, name)) = best {
        return Ok(name);
    }
    let detail: Vec<String> = reasons
        .iter()
        .map(|(why, n)| format!("{n} {}", why.message()))
        .collect();
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(" {}.", detail.join(", "))
    };
    Err(format!(
        "0/{count} nodes are available:{detail} preemption: not eligible."
    ))
}

/// Whether this scheduler is the one to place `pod`: unbound, not terminating, and asking for
/// the default scheduler.
pub fn wants_scheduling(pod: &Pod) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return false;
    };
    let unbound = spec.node_name.as_deref().is_none_or(str::is_empty);
    let scheduler_ok = spec
        .scheduler_name
        .as_deref()
        .is_none_or(|s| s.is_empty() || s == "default-scheduler");
    let finished = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .is_some_and(|p| p == "Succeeded" || p == "Failed");
    unbound && scheduler_ok && !finished && pod.metadata.deletion_timestamp.is_none()
}

/// The status a pod no node fits gets: PodScheduled False, reason Unschedulable, with the
/// scheduler's message. `None` when the pod already says exactly that.
pub fn unschedulable_status(pod: &Pod, message: &str, now: jiff::Timestamp) -> Option<PodStatus> {
    let mut status = pod.status.clone().unwrap_or_default();
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let existing = conditions.iter_mut().find(|c| c.type_ == "PodScheduled");
    let unchanged = existing.as_ref().is_some_and(|c| {
        c.status == "False"
            && c.reason.as_deref() == Some("Unschedulable")
            && c.message.as_deref() == Some(message)
    });
    if unchanged {
        return None;
    }
    let condition = PodCondition {
        type_: "PodScheduled".into(),
        status: "False".into(),
        reason: Some("Unschedulable".into()),
        message: Some(message.to_owned()),
        last_transition_time: Some(Time(
            jiff::Timestamp::from_second(now.as_second()).unwrap_or(now),
        )),
        ..Default::default()
    };
    match existing {
        Some(c) if c.status == "False" => {
            c.reason = condition.reason;
            c.message = condition.message;
        }
        Some(c) => *c = condition,
        None => conditions.push(condition),
    }
    status.phase.get_or_insert_with(|| "Pending".to_owned());
    Some(status)
}

#[cfg(test)]
mod tests;
