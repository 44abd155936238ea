//! Advanced DaemonSet status (`updateDaemonSetStatus`, `storeDaemonSetStatus`,
//! `isDaemonPodAvailable`, v1.8.4): for every node that should run the daemon pod, its oldest
//! pod's readiness, availability and revision.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Node, Pod},
    jiff::Timestamp,
};

use super::pods::oldest_first;
use crate::{
    api::{DaemonSet, daemonset::DaemonSetStatus, pod::is_ready},
    kruise::{
        cloneset::inplace::IN_PLACE_UPDATE_READY,
        daemonset::{DsPod, node_should_run_daemon_pod},
    },
};

fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a str> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| c.status.as_str())
}

/// Port of `isDaemonPodAvailable`: available for minReadySeconds, and `InPlaceUpdateReady` not
/// False when the pod has that readiness gate.
pub fn is_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    if !DsPod::from_pod(pod, now).is_available(min_ready_seconds) {
        return false;
    }
    let gated = pod
        .spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|g| g.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY));
    !gated || condition(pod, IN_PLACE_UPDATE_READY).is_none_or(|s| s == "True")
}

/// The status numbers for `hash` over `nodes` and the daemon pods by node; `observed` says
/// whether this was a full sync (observedGeneration moves only then). Seconds until a ready pod
/// becomes available are returned when some is waiting for minReadySeconds.
pub fn calculate(
    ds: &DaemonSet,
    nodes: &[Node],
    node_to_pods: &BTreeMap<String, Vec<&Pod>>,
    hash: &str,
    generation: Option<i64>,
    observed: bool,
    now: Timestamp,
) -> (DaemonSetStatus, Option<i64>) {
    let template = ds.spec.template.spec.clone().unwrap_or_default();
    let min_ready = ds.spec.min_ready_seconds.unwrap_or(0);
    let mut st = ds.status.clone().unwrap_or_default();
    let (mut desired, mut current, mut misscheduled, mut ready, mut updated, mut available) =
        (0, 0, 0, 0, 0, 0);
    for node in nodes {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        let should_run = node_should_run_daemon_pod(&template, node).should_run;
        let pods = node_to_pods.get(name).filter(|p| !p.is_empty());
        match (should_run, pods) {
            (true, Some(pods)) => {
                desired += 1;
                current += 1;
                let mut sorted = pods.clone();
                sorted.sort_by(|a, b| oldest_first(a, b));
                let oldest = sorted[0];
                if is_ready(oldest) {
                    ready += 1;
                    if is_available(oldest, min_ready, now) {
                        available += 1;
                    }
                }
                if DsPod::from_pod(oldest, now).is_updated(hash, generation) {
                    updated += 1;
                }
            }
            (true, None) => desired += 1,
            (false, Some(_)) => misscheduled += 1,
            (false, None) => {}
        }
    }
    st.desired_number_scheduled = desired;
    st.current_number_scheduled = current;
    st.number_misscheduled = misscheduled;
    st.number_ready = ready;
    st.updated_number_scheduled = updated;
    st.number_available = available;
    st.number_unavailable = desired - available;
    st.daemon_set_hash = hash.to_owned();
    let generation_now = ds.metadata.generation.unwrap_or(0);
    if observed {
        st.observed_generation = generation_now;
    }
    let requeue = (min_ready > 0 && ready != available).then_some(i64::from(min_ready));
    (st, requeue)
}

/// Port of `storeDaemonSetStatus`'s check: whether `new` is worth writing over the stored one.
pub fn should_write(ds: &DaemonSet, new: &DaemonSetStatus) -> bool {
    let default = DaemonSetStatus::default();
    let old = ds.status.as_ref().unwrap_or(&default);
    !(old.desired_number_scheduled == new.desired_number_scheduled
        && old.current_number_scheduled == new.current_number_scheduled
        && old.number_misscheduled == new.number_misscheduled
        && old.number_ready == new.number_ready
        && old.updated_number_scheduled == new.updated_number_scheduled
        && old.number_available == new.number_available
        && old.number_unavailable == new.number_unavailable
        && old.observed_generation >= ds.metadata.generation.unwrap_or(0)
        && old.daemon_set_hash == new.daemon_set_hash)
}
