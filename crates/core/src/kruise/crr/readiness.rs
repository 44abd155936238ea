//! The pod's `KruisePodReady` condition as a list of not-ready holders: while any holder is in
//! its message the condition is False (and so is Ready, through the readiness gate). The CRR
//! manager holds a pod not-ready for `unreadyGracePeriodSeconds` this way.
//!
//! Port of pkg/util/podreadiness/pod_readiness_utils.go (v1.8.4), as pure functions from the
//! pod to the status to write (`None`: nothing changes).

use jiff::Timestamp;
use k8s_openapi::{
    api::core::v1::{Pod, PodCondition, PodStatus},
    apimachinery::pkg::apis::meta::v1::Time,
};

use crate::api::{
    keys::CONDITION_KRUISE_POD_READY,
    podstate::{PodReadinessHolder, pod_readiness_holders},
};

/// The holder user agent of a CRR.
pub const USER_AGENT: &str = "ContainerRecreateRequest";

/// The holder of CRR `namespace/name`.
///
/// Port of pkg/controller/containerrecreaterequest/crr_controller.go::getReadinessMessage (v1.8.4).
pub fn holder(namespace: &str, name: &str) -> PodReadinessHolder {
    PodReadinessHolder {
        user_agent: USER_AGENT.to_owned(),
        key: format!("{namespace}/{name}"),
    }
}

/// Whether the pod has the `KruisePodReady` readiness gate.
pub fn contains_gate(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|g| {
            g.iter()
                .any(|g| g.condition_type == CONDITION_KRUISE_POD_READY)
        })
}

fn condition<'a>(status: &'a PodStatus, type_: &str) -> Option<&'a PodCondition> {
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == type_)
}

/// The holder list as upstream's `messageList.dump()` writes it: sorted by user agent, then key.
fn dump(mut holders: Vec<PodReadinessHolder>) -> String {
    holders.sort_by(|a, b| (&a.user_agent, &a.key).cmp(&(&b.user_agent, &b.key)));
    serde_json::to_string(&holders).unwrap_or_else(|_| "[]".to_owned())
}

fn time(now: Timestamp) -> Time {
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

/// Adds `holder` to the pod's `KruisePodReady` condition (False), and sets Ready False when a
/// gate is not True. `None` when the pod has no such gate or already lists the holder.
///
/// Port of pkg/util/podreadiness/pod_readiness_utils.go::addNotReadyKey (v1.8.4).
pub fn add_not_ready_key(
    pod: &Pod,
    holder: &PodReadinessHolder,
    now: Timestamp,
) -> Option<PodStatus> {
    if !contains_gate(pod) {
        return None;
    }
    let mut status = pod.status.clone().unwrap_or_default();
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    match conditions
        .iter_mut()
        .find(|c| c.type_ == CONDITION_KRUISE_POD_READY)
    {
        None => conditions.push(PodCondition {
            type_: CONDITION_KRUISE_POD_READY.to_owned(),
            status: "False".to_owned(),
            message: Some(dump(vec![holder.clone()])),
            last_transition_time: Some(time(now)),
            ..PodCondition::default()
        }),
        Some(c) => {
            let mut holders = pod_readiness_holders(c.message.as_deref());
            if holders.contains(holder) {
                return None;
            }
            holders.push(holder.clone());
            c.status = "False".to_owned();
            c.message = Some(dump(holders));
            c.last_transition_time = Some(time(now));
        }
    }
    set_pod_ready_condition(pod, &mut status, now);
    Some(status)
}

/// Removes `holder` from the pod's `KruisePodReady` condition; the condition turns True when no
/// holder is left. `None` when the pod has no such gate or the holder is not listed.
///
/// Port of pkg/util/podreadiness/pod_readiness_utils.go::removeNotReadyKey (v1.8.4).
pub fn remove_not_ready_key(
    pod: &Pod,
    holder: &PodReadinessHolder,
    now: Timestamp,
) -> Option<PodStatus> {
    if !contains_gate(pod) {
        return None;
    }
    let mut status = pod.status.clone().unwrap_or_default();
    let c = status
        .conditions
        .iter_mut()
        .flatten()
        .find(|c| c.type_ == CONDITION_KRUISE_POD_READY)?;
    let holders = pod_readiness_holders(c.message.as_deref());
    if !holders.contains(holder) {
        return None;
    }
    let left: Vec<PodReadinessHolder> = holders.into_iter().filter(|h| h != holder).collect();
    if left.is_empty() {
        c.status = "True".to_owned();
    }
    c.message = Some(dump(left));
    c.last_transition_time = Some(time(now));
    Some(status)
}

/// Sets Ready False (reason ReadinessGatesNotReady) when the containers are ready but a
/// readiness gate is not True, Ready True when every gate is; a pod without Ready or without
/// ready containers is left alone.
///
/// Port of pkg/util/pods.go::SetPodReadyCondition (v1.8.4).
pub fn set_pod_ready_condition(pod: &Pod, status: &mut PodStatus, now: Timestamp) {
    if condition(status, "Ready").is_none()
        || condition(status, "ContainersReady").is_none_or(|c| c.status != "True")
    {
        return;
    }
    let gates = pod
        .spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .map(Vec::as_slice)
        .unwrap_or_default();
    let unready: Vec<String> = gates
        .iter()
        .filter_map(|g| match condition(status, &g.condition_type) {
            None => Some(format!(
                "corresponding condition of pod readiness gate \"{}\" does not exist.",
                g.condition_type
            )),
            Some(c) if c.status != "True" => Some(format!(
                "the status of pod readiness gate \"{}\" is not \"True\", but {}",
                g.condition_type, c.status
            )),
            Some(_) => None,
        })
        .collect();
    let ready = if unready.is_empty() {
        PodCondition {
            type_: "Ready".to_owned(),
            status: "True".to_owned(),
            last_transition_time: Some(time(now)),
            ..PodCondition::default()
        }
    } else {
        PodCondition {
            type_: "Ready".to_owned(),
            status: "False".to_owned(),
            reason: Some("ReadinessGatesNotReady".to_owned()),
            message: Some(unready.join(", ")),
            ..PodCondition::default()
        }
    };
    // SetPodCondition: replaced only when the status changes.
    if let Some(c) = status
        .conditions
        .iter_mut()
        .flatten()
        .find(|c| c.type_ == "Ready")
        && c.status != ready.status
    {
        *c = ready;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(conditions: serde_json::Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "app"}], "readinessGates": [{"conditionType": "KruisePodReady"}]},
            "status": {"conditions": conditions}
        }))
        .unwrap()
    }

    fn cond<'a>(s: &'a PodStatus, t: &str) -> &'a PodCondition {
        condition(s, t).unwrap()
    }

    #[test]
    fn holding_turns_the_gate_and_ready_false_and_releasing_turns_them_back() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let p = pod(json!([
            {"type": "ContainersReady", "status": "True"},
            {"type": "Ready", "status": "True"},
            {"type": "KruisePodReady", "status": "True"}
        ]));
        let h = holder("ns", "crr");
        let held = add_not_ready_key(&p, &h, now).expect("a change");
        assert_eq!(cond(&held, "KruisePodReady").status, "False");
        assert_eq!(
            cond(&held, "KruisePodReady").message.as_deref(),
            Some(r#"[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"}]"#)
        );
        assert_eq!(cond(&held, "Ready").status, "False");
        assert_eq!(
            cond(&held, "Ready").reason.as_deref(),
            Some("ReadinessGatesNotReady")
        );
        let mut p2 = p.clone();
        p2.status = Some(held);
        assert_eq!(add_not_ready_key(&p2, &h, now), None, "idempotent");
        let released = remove_not_ready_key(&p2, &h, now).expect("a change");
        assert_eq!(cond(&released, "KruisePodReady").status, "True");
        assert_eq!(
            cond(&released, "KruisePodReady").message.as_deref(),
            Some("[]")
        );
        p2.status = Some(released);
        assert_eq!(remove_not_ready_key(&p2, &h, now), None, "idempotent");
    }

    #[test]
    fn other_holders_keep_the_pod_not_ready_and_pods_without_the_gate_are_left_alone() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let p = pod(json!([
            {"type": "KruisePodReady", "status": "False",
             "message": r#"[{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#}
        ]));
        let h = holder("ns", "crr");
        let held = add_not_ready_key(&p, &h, now).unwrap();
        assert_eq!(
            cond(&held, "KruisePodReady").message.as_deref(),
            Some(
                r#"[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"},{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#
            )
        );
        let mut p2 = p.clone();
        p2.status = Some(held);
        let released = remove_not_ready_key(&p2, &h, now).unwrap();
        assert_eq!(cond(&released, "KruisePodReady").status, "False");

        let mut plain = p.clone();
        plain.spec.as_mut().unwrap().readiness_gates = None;
        assert_eq!(add_not_ready_key(&plain, &h, now), None);
        assert_eq!(remove_not_ready_key(&plain, &h, now), None);
    }
}
