//! The CRR webhook (mutating; it also validates): CREATE defaulting, checks and pod
//! injection; UPDATE immutability.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};

use crate::kruise::{
    admission::Verdict,
    features::{FeatureGates, KruiseVersion},
};

use super::{
    NODE_NAME_KEY, POD_UID_KEY, UNREADY_ACQUIRED_KEY,
    types::{
        ContainerRecreateRequest, ContainerRecreateRequestContainerContext,
        ContainerRecreateRequestStrategy, FAILURE_POLICY_FAIL, FAILURE_POLICY_IGNORE, ProbeHandler,
    },
};

/// How a CREATE looked up the target pod.
#[derive(Debug, Clone, Copy)]
pub enum Lookup<'a, T> {
    Found(&'a T),
    NotFound,
    /// Any other client error (its text).
    Failed(&'a str),
}

/// The CREATE result: the verdict and, when allowed, the object to store (to be returned as
/// a JSON patch against the request).
#[derive(Debug, Clone, PartialEq)]
pub struct CreateOutcome {
    pub verdict: Verdict,
    pub patched: Option<ContainerRecreateRequest>,
}

fn is_pod_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none()
        && phase != Some("Succeeded")
        && phase != Some("Failed")
}

/// Defaults, validates and injects a CRR being created.
///
/// Port of pkg/webhook/containerrecreaterequest/mutating/crr_mutating_handler.go::Handle, CREATE
/// (v1.8.4 and v1.9.0; see [`inject_pod_into_crr`] for the one difference).
pub fn admit_create(
    version: KruiseVersion,
    gates: &FeatureGates,
    crr: &ContainerRecreateRequest,
    pod: Lookup<'_, Pod>,
    node: impl FnOnce(&str) -> Result<Option<Node>, String>,
) -> CreateOutcome {
    let deny = |code, msg: String| CreateOutcome {
        verdict: Verdict::deny(code, msg),
        patched: None,
    };
    if !gates.enabled("KruiseDaemon") {
        return deny(403, "feature-gate KruiseDaemon is not enabled".to_owned());
    }
    let mut obj = crr.clone();
    if obj.spec.pod_name.is_empty() {
        return deny(400, "podName can not be empty".to_owned());
    }
    let strategy = obj
        .spec
        .strategy
        .get_or_insert_with(ContainerRecreateRequestStrategy::default);
    obj.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(super::ACTIVE_KEY.to_owned(), "true".to_owned());
    if obj.spec.containers.is_empty() {
        return deny(400, "containers list can not be null".to_owned());
    }
    if obj.spec.active_deadline_seconds.is_some_and(|s| s < 3) {
        return deny(
            400,
            "activeDeadlineSeconds can not be less than 3s".to_owned(),
        );
    }
    if strategy
        .termination_grace_period_seconds
        .is_some_and(|s| s < 0)
    {
        return deny(
            400,
            "terminationGracePeriodSeconds must be non-negative integer".to_owned(),
        );
    }
    if strategy.unready_grace_period_seconds.is_some_and(|s| s < 0) {
        return deny(
            400,
            "unreadyGracePeriodSeconds must be non-negative integer".to_owned(),
        );
    }
    match strategy.failure_policy.as_str() {
        "" => strategy.failure_policy = FAILURE_POLICY_FAIL.to_owned(),
        FAILURE_POLICY_FAIL | FAILURE_POLICY_IGNORE => {}
        other => return deny(400, format!("unknown failurePolicy {other}")),
    }
    let pod = match pod {
        Lookup::Found(p) => p,
        Lookup::NotFound => return deny(400, format!("no found Pod named {}", obj.spec.pod_name)),
        Lookup::Failed(e) => {
            return deny(
                500,
                format!("failed to find Pod {}: {e}", obj.spec.pod_name),
            );
        }
    };
    let sidecar_terminated = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "SidecarTerminated"));
    let node_name = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default();
    if !is_pod_active(pod) && !sidecar_terminated {
        return deny(
            400,
            "not allowed to recreate containers in an inactive Pod".to_owned(),
        );
    } else if node_name.is_empty() {
        return deny(
            400,
            "not allowed to recreate containers in a pending Pod".to_owned(),
        );
    }
    let node = match node(&node_name) {
        Ok(Some(n)) => n,
        Ok(None) => {
            return deny(
                400,
                format!("failed to get Node {node_name}: nodes \"{node_name}\" not found"),
            );
        }
        Err(e) => return deny(500, format!("failed to get Node {node_name}: {e}")),
    };
    if let Err(e) = inject_pod_into_crr(version, &mut obj, pod, Some(&node)) {
        return deny(400, e);
    }
    CreateOutcome {
        verdict: Verdict::allow(),
        patched: Some(obj),
    }
}

/// Labels the CRR with the pod's node and UID (and `type=virtual-kubelet` from the node, when
/// there is one), copies the grace period, and fills each container's preStop, ports and status
/// context. A container is looked up among the init containers first, then the containers.
///
/// A container named twice: in v1.8.4 and at the v1.9.0 tag upstream's duplicate check ("can not
/// recreate X multi times") never fires, as it tests a set it never adds to, so
/// [`KruiseVersion::V1_8`] accepts it and fills it twice. Upstream fixed the check on main
/// (`22b250ac0`, `restartNames.Insert`); [`KruiseVersion::V1_9`] denies with that message, as the
/// issue asks (edge class B): recreating one container twice in one request is never meant.
///
/// Port of pkg/webhook/containerrecreaterequest/mutating/crr_mutating_handler.go::injectPodIntoContainerRecreateRequest.
pub fn inject_pod_into_crr(
    version: KruiseVersion,
    obj: &mut ContainerRecreateRequest,
    pod: &Pod,
    node: Option<&Node>,
) -> Result<(), String> {
    let spec = pod.spec.clone().unwrap_or_default();
    let labels = obj.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(
        NODE_NAME_KEY.to_owned(),
        spec.node_name.clone().unwrap_or_default(),
    );
    labels.insert(
        POD_UID_KEY.to_owned(),
        pod.metadata.uid.clone().unwrap_or_default(),
    );
    let virtual_kubelet = node
        .and_then(|n| n.metadata.labels.as_ref())
        .and_then(|l| l.get("type"))
        .is_some_and(|t| t == "virtual-kubelet");
    if virtual_kubelet {
        labels.insert("type".to_owned(), "virtual-kubelet".to_owned());
    }
    let strategy = obj
        .spec
        .strategy
        .get_or_insert_with(ContainerRecreateRequestStrategy::default);
    if strategy.termination_grace_period_seconds.is_none() {
        strategy.termination_grace_period_seconds = spec.termination_grace_period_seconds;
    }
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.clone())
        .unwrap_or_default();
    let mut restart_names = std::collections::BTreeSet::new();
    for c in &mut obj.spec.containers {
        if restart_names.contains(&c.name) {
            return Err(format!("can not recreate {} multi times", c.name));
        }
        if version == KruiseVersion::V1_9 {
            restart_names.insert(c.name.clone());
        }
        if c.pre_stop.is_some() || c.ports.is_some() || c.status_context.is_some() {
            return Err(
                "preStop, ports, statusContext in container are ready-only fields".to_owned(),
            );
        }
        let pod_container = spec
            .init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
            .find(|pc| pc.name == c.name)
            .ok_or_else(|| format!("container {} not found in Pod", c.name))?;
        if let Some(pre_stop) = pod_container
            .lifecycle
            .as_ref()
            .and_then(|l| l.pre_stop.as_ref())
        {
            c.pre_stop = Some(ProbeHandler {
                exec: pre_stop.exec.clone(),
                http_get: pre_stop.http_get.clone(),
                tcp_socket: pre_stop.tcp_socket.clone(),
            });
        }
        if c.pre_stop.as_ref().is_some_and(|p| p.http_get.is_some()) {
            c.ports = pod_container.ports.clone();
        }
        let status = statuses
            .iter()
            .find(|s| s.name == c.name)
            .ok_or_else(|| format!("not found {} containerStatus in Pod Status", c.name))?;
        let id = status.container_id.clone().unwrap_or_default();
        if id.is_empty() {
            return Err(format!(
                "no containerID in {} containerStatus, maybe the container has not been initialized",
                c.name
            ));
        }
        c.status_context = Some(ContainerRecreateRequestContainerContext {
            container_id: id,
            restart_count: status.restart_count,
        });
    }
    Ok(())
}

/// UPDATE: the spec, the pod-uid and node-name labels, and a set unready-acquired annotation
/// are immutable (403).
///
/// Port of pkg/webhook/containerrecreaterequest/mutating/crr_mutating_handler.go::Handle, UPDATE (v1.8.4).
pub fn admit_update(
    gates: &FeatureGates,
    old: &ContainerRecreateRequest,
    new: &ContainerRecreateRequest,
) -> Verdict {
    if !gates.enabled("KruiseDaemon") {
        return Verdict::deny(403, "feature-gate KruiseDaemon is not enabled");
    }
    if old.spec != new.spec {
        return Verdict::deny(403, "spec of ContainerRecreateRequest is immutable");
    }
    for key in [POD_UID_KEY, NODE_NAME_KEY] {
        if old.label(key) != new.label(key) {
            return Verdict::deny(403, format!("not allowed to update immutable label {key}"));
        }
    }
    let annotation = |c: &ContainerRecreateRequest| {
        c.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(UNREADY_ACQUIRED_KEY))
            .cloned()
    };
    if let Some(v) = annotation(old).filter(|v| !v.is_empty())
        && annotation(new).as_deref() != Some(v.as_str())
    {
        return Verdict::deny(
            403,
            format!("not allowed to update immutable annotation {UNREADY_ACQUIRED_KEY}"),
        );
    }
    Verdict::allow()
}
