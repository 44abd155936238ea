//! Between Kubernetes Pods and the CloneSet logic's projections: a Pod read as [`PodInfo`] and
//! [`PodModel`], and a changed model written back as the Pod (metadata/spec) and its status.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Pod, PodCondition},
    apimachinery::pkg::apis::meta::v1::Time,
};

use crate::kruise::{
    cloneset::{
        DELETION_COST_ANNOTATION, PodInfo, SPECIFIED_DELETE_LABEL,
        inplace::{self, Condition, Container, PodModel},
    },
    revision,
};

fn secs(t: Option<&Time>) -> Option<i64> {
    t.map(|t| t.0.as_second())
}

/// Whether the pod counts for its controller: not terminating, not Succeeded/Failed
/// (`kubecontroller.IsPodActive`).
pub fn is_active(pod: &Pod) -> bool {
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default();
    pod.metadata.deletion_timestamp.is_none() && phase != "Succeeded" && phase != "Failed"
}

/// The UID of the pod's controller ownerReference.
pub fn controller_uid(pod: &Pod) -> Option<&str> {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str())
}

/// The pod as the counting and ordering logic reads it.
pub fn pod_info(pod: &Pod) -> PodInfo {
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let annotations = pod.metadata.annotations.as_ref();
    let status = pod.status.as_ref();
    let conditions = status.and_then(|s| s.conditions.as_deref()).unwrap_or(&[]);
    let condition = |t: &str| conditions.iter().find(|c| c.type_ == t);
    let ready = crate::api::pod::ready_condition(pod);
    PodInfo {
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        revision: labels
            .get(revision::CONTROLLER_REVISION_HASH_LABEL)
            .cloned()
            .unwrap_or_default(),
        lifecycle_state: labels
            .get(revision::LIFECYCLE_STATE_LABEL)
            .cloned()
            .unwrap_or_default(),
        phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
        node_name: pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        ready: ready.is_some(),
        in_place_update_ready: condition(inplace::IN_PLACE_UPDATE_READY)
            .is_none_or(|c| c.status == "True"),
        ready_since: ready.and_then(|c| secs(c.last_transition_time.as_ref())),
        created: secs(pod.metadata.creation_timestamp.as_ref()),
        restarts: status
            .and_then(|s| s.container_statuses.as_ref())
            .into_iter()
            .flatten()
            .map(|c| c.restart_count)
            .max()
            .unwrap_or(0),
        deletion_cost: annotations.and_then(|a| a.get(DELETION_COST_ANNOTATION).cloned()),
        specified_delete: labels.contains_key(SPECIFIED_DELETE_LABEL),
        in_place_grace: annotations.is_some_and(|a| {
            a.contains_key(inplace::GRACE_KEY) || a.contains_key(inplace::GRACE_KEY_OLD)
        }),
        terminating: pod.metadata.deletion_timestamp.is_some(),
        finalizers: pod.metadata.finalizers.clone().unwrap_or_default(),
        labels,
    }
}

/// The pod as the in-place update and lifecycle logic reads and writes it.
pub fn pod_model(pod: &Pod) -> PodModel {
    let spec = pod.spec.as_ref();
    let status = pod.status.as_ref();
    let statuses = status
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or(&[]);
    PodModel {
        name: pod.metadata.name.clone().unwrap_or_default(),
        node_name: spec.and_then(|s| s.node_name.clone()).unwrap_or_default(),
        phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
        labels: pod.metadata.labels.clone().unwrap_or_default(),
        annotations: pod.metadata.annotations.clone().unwrap_or_default(),
        finalizers: pod.metadata.finalizers.clone().unwrap_or_default(),
        readiness_gates: spec
            .and_then(|s| s.readiness_gates.as_ref())
            .into_iter()
            .flatten()
            .map(|g| g.condition_type.clone())
            .collect(),
        conditions: status
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .map(|c| Condition {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone().unwrap_or_default(),
                last_transition: secs(c.last_transition_time.as_ref()),
            })
            .collect(),
        containers: spec
            .map(|s| s.containers.as_slice())
            .unwrap_or(&[])
            .iter()
            .map(|c| {
                let st = statuses.iter().find(|s| s.name == c.name);
                Container {
                    name: c.name.clone(),
                    image: c.image.clone().unwrap_or_default(),
                    status_image: st.map(|s| s.image.clone()).unwrap_or_default(),
                    image_id: st.map(|s| s.image_id.clone()).unwrap_or_default(),
                }
            })
            .collect(),
        created: secs(pod.metadata.creation_timestamp.as_ref()),
    }
}

/// What writing `model` back onto `pod` takes: the pod's status (conditions) and the pod itself
/// (labels, annotations, finalizers, container images), each `None` when unchanged. Both carry
/// `pod`'s resourceVersion.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodChanges {
    pub status: Option<Pod>,
    pub pod: Option<Pod>,
}

impl PodChanges {
    pub fn is_empty(&self) -> bool {
        self.status.is_none() && self.pod.is_none()
    }
}

fn map_or_none(m: &BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!m.is_empty()).then(|| m.clone())
}

/// Diffs `model` against `pod` and returns the writes that make `pod` say what `model` says.
/// When the `InPlaceUpdateReady` condition turns False, the Ready condition goes False with it
/// (upstream leaves turning it True again to the kubelet).
pub fn changes(pod: &Pod, model: &PodModel) -> PodChanges {
    let before = pod_model(pod);
    let mut out = PodChanges::default();
    if before.conditions != model.conditions {
        let mut updated = pod.clone();
        let status = updated.status.get_or_insert_with(Default::default);
        let mut conditions = status.conditions.clone().unwrap_or_default();
        for c in &model.conditions {
            let unchanged = before.conditions.iter().any(|b| b == c);
            if unchanged {
                continue;
            }
            set_condition(&mut conditions, c);
            if c.type_ == inplace::IN_PLACE_UPDATE_READY && c.status == "False" {
                set_condition(
                    &mut conditions,
                    &Condition {
                        type_: "Ready".to_owned(),
                        status: "False".to_owned(),
                        reason: String::new(),
                        last_transition: c.last_transition,
                    },
                );
            }
        }
        status.conditions = Some(conditions);
        out.status = Some(updated);
    }
    let images_changed = before
        .containers
        .iter()
        .zip(&model.containers)
        .any(|(a, b)| a.image != b.image);
    if before.labels != model.labels
        || before.annotations != model.annotations
        || before.finalizers != model.finalizers
        || images_changed
    {
        let mut updated = pod.clone();
        updated.metadata.labels = map_or_none(&model.labels);
        updated.metadata.annotations = map_or_none(&model.annotations);
        updated.metadata.finalizers =
            (!model.finalizers.is_empty()).then(|| model.finalizers.clone());
        if let Some(spec) = updated.spec.as_mut() {
            for c in &mut spec.containers {
                if let Some(m) = model.containers.iter().find(|m| m.name == c.name) {
                    c.image = Some(m.image.clone());
                }
            }
        }
        out.pod = Some(updated);
    }
    out
}

fn set_condition(conditions: &mut Vec<PodCondition>, c: &Condition) {
    let time = c
        .last_transition
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .map(Time);
    match conditions.iter_mut().find(|x| x.type_ == c.type_) {
        Some(existing) => {
            if existing.status != c.status {
                existing.last_transition_time = time;
            }
            existing.status = c.status.clone();
            existing.reason = (!c.reason.is_empty()).then(|| c.reason.clone());
        }
        None => conditions.push(PodCondition {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: (!c.reason.is_empty()).then(|| c.reason.clone()),
            last_transition_time: time,
            ..PodCondition::default()
        }),
    }
}

fn rebase_map(
    base: Option<&BTreeMap<String, String>>,
    desired: Option<&BTreeMap<String, String>>,
    fresh: Option<&BTreeMap<String, String>>,
) -> Option<BTreeMap<String, String>> {
    let empty = BTreeMap::new();
    let (base, desired) = (base.unwrap_or(&empty), desired.unwrap_or(&empty));
    let mut out = fresh.cloned().unwrap_or_default();
    for (k, v) in desired {
        if base.get(k) != Some(v) {
            out.insert(k.clone(), v.clone());
        }
    }
    for k in base.keys() {
        if !desired.contains_key(k) {
            out.remove(k);
        }
    }
    map_or_none(&out)
}

/// Re-applies to `fresh` (the pod as the server has it now) what changed from `base` (the pod
/// the decision was made on) to `desired`: labels, annotations, finalizers, container images
/// and status conditions. This is upstream's retry-on-conflict (re-read, re-apply the same
/// mutation), so a concurrent change to anything else is kept.
pub fn rebase(base: &Pod, desired: &Pod, fresh: &Pod) -> Pod {
    let mut out = fresh.clone();
    out.metadata.labels = rebase_map(
        base.metadata.labels.as_ref(),
        desired.metadata.labels.as_ref(),
        fresh.metadata.labels.as_ref(),
    );
    out.metadata.annotations = rebase_map(
        base.metadata.annotations.as_ref(),
        desired.metadata.annotations.as_ref(),
        fresh.metadata.annotations.as_ref(),
    );
    let (bf, df) = (
        base.metadata.finalizers.clone().unwrap_or_default(),
        desired.metadata.finalizers.clone().unwrap_or_default(),
    );
    let mut finalizers = fresh.metadata.finalizers.clone().unwrap_or_default();
    finalizers.retain(|f| df.contains(f) || !bf.contains(f));
    for f in &df {
        if !bf.contains(f) && !finalizers.contains(f) {
            finalizers.push(f.clone());
        }
    }
    out.metadata.finalizers = (!finalizers.is_empty()).then_some(finalizers);
    let image = |p: &Pod, name: &str| {
        p.spec
            .as_ref()
            .and_then(|s| s.containers.iter().find(|c| c.name == name))
            .and_then(|c| c.image.clone())
    };
    if let Some(spec) = out.spec.as_mut() {
        for c in &mut spec.containers {
            let wanted = image(desired, &c.name);
            if wanted != image(base, &c.name) {
                c.image = wanted;
            }
        }
    }
    let conditions = |p: &Pod| {
        p.status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default()
    };
    let (bc, dc) = (conditions(base), conditions(desired));
    let changed: Vec<&PodCondition> = dc.iter().filter(|c| !bc.contains(c)).collect();
    if !changed.is_empty() {
        let status = out.status.get_or_insert_with(Default::default);
        let list = status.conditions.get_or_insert_with(Vec::new);
        for c in changed {
            match list.iter_mut().find(|x| x.type_ == c.type_) {
                Some(existing) => *existing = c.clone(),
                None => list.push(c.clone()),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    use super::*;

    fn pod(labels: &[(&str, &str)], image: &str) -> Pod {
        Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "c".into(),
                    image: Some(image.into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: None,
        }
    }

    #[test]
    fn rebase_keeps_concurrent_changes_and_reapplies_ours() {
        let base = pod(&[("rev", "a"), ("drop", "x")], "nginx:1");
        let desired = pod(&[("rev", "b")], "nginx:2");
        // Someone else added a label meanwhile.
        let fresh = pod(&[("rev", "a"), ("drop", "x"), ("theirs", "y")], "nginx:1");
        let out = rebase(&base, &desired, &fresh);
        let labels = out.metadata.labels.unwrap_or_default();
        assert_eq!(labels.get("rev").map(String::as_str), Some("b"));
        assert_eq!(labels.get("theirs").map(String::as_str), Some("y"));
        assert!(!labels.contains_key("drop"));
        assert_eq!(
            out.spec.unwrap().containers[0].image.as_deref(),
            Some("nginx:2")
        );
    }
}
