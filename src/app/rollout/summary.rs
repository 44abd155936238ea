//! The rollout view's header numbers, read from the workload in the store: revisions, strategy
//! (with upstream's defaults where a field is unset), and the counts the gauges show.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::runtime::reflector::ObjectRef as StoreRef;

use crate::{
    api::{CloneSet, DaemonSet, StatefulSet, kinds::WorkloadKind},
    app::{msg::Kind, route::Owner, stores::Stores},
    kruise::{
        KruiseVersion,
        daemonset::resolve_partition,
        intstr::{calculate_partition_replicas, expected_updated_replicas},
    },
};

/// The workload kinds, for their upstream defaults.
const CS: WorkloadKind = WorkloadKind::CloneSet;
const ASTS: WorkloadKind = WorkloadKind::AdvancedStatefulSet;
const ADS: WorkloadKind = WorkloadKind::AdvancedDaemonSet;

/// What the rollout view's header and gauges show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Desired pods (`spec.replicas`; the nodes that should run it for a DaemonSet).
    pub replicas: i32,
    /// Empty for an Advanced DaemonSet (it reports only the hash of its current template).
    pub current_revision: String,
    pub update_revision: String,
    /// `ReCreate`, `InPlaceIfPossible`, `RollingUpdate (InPlaceIfPossible)`...
    pub strategy: String,
    /// The partition as written (`6`, `40%`), if set.
    pub partition: Option<String>,
    /// The partition in pods.
    pub partition_pods: i32,
    pub max_unavailable: String,
    pub max_surge: String,
    pub paused: bool,
    pub updated: i32,
    /// Pods the partition lets update (`replicas − partition`), from the spec as it is now.
    pub expected_updated: i32,
    pub ready: i32,
    pub available: i32,
    /// Updated and ready (not reported by an Advanced DaemonSet).
    pub updated_ready: Option<i32>,
    /// The template's containers and images, for `i`.
    pub containers: Vec<(String, String)>,
    /// Whether the kind has a replica count (not a DaemonSet).
    pub scalable: bool,
    /// Whether the partition may be a percent (CloneSet).
    pub partition_percent: bool,
    /// The CloneSet's Progressing condition, deadline and past failures (Kruise v1.9).
    pub conditions: super::progress::Conditions,
}

fn text(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

fn containers(template: &k8s_openapi::api::core::v1::PodTemplateSpec) -> Vec<(String, String)> {
    template
        .spec
        .iter()
        .flat_map(|s| &s.containers)
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect()
}

/// The summary of `owner` as the stores hold it now; None when it is not there.
pub fn summary(stores: &Stores, owner: &Owner) -> Option<Summary> {
    let key = |kind| (kind, &owner.namespace, &owner.name);
    match key(owner.kind) {
        (Kind::CloneSet, ns, name) => stores
            .clonesets
            .get(&StoreRef::new(name).within(ns))
            .map(|cs| cloneset(&cs)),
        (Kind::StatefulSet, ns, name) => stores
            .statefulsets
            .get(&StoreRef::new(name).within(ns))
            .map(|s| statefulset(&s)),
        (Kind::DaemonSet, ns, name) => stores
            .daemonsets
            .get(&StoreRef::new(name).within(ns))
            .map(|d| daemonset(&d)),
        _ => None,
    }
}

fn cloneset(cs: &CloneSet) -> Summary {
    let s = &cs.spec.update_strategy;
    let status = cs.status.clone().unwrap_or_default();
    let replicas = cs.spec.replicas.unwrap_or(1);
    Summary {
        replicas,
        current_revision: status.current_revision,
        update_revision: status.update_revision,
        strategy: s
            .type_
            .clone()
            .unwrap_or_else(|| CS.default_strategy().to_owned()),
        partition: s.partition.as_ref().map(text),
        partition_pods: calculate_partition_replicas(s.partition.as_ref(), Some(replicas))
            .unwrap_or(0),
        max_unavailable: s
            .max_unavailable
            .as_ref()
            .map_or_else(|| CS.default_max_unavailable().to_owned(), text),
        max_surge: s
            .max_surge
            .as_ref()
            .map_or_else(|| CS.default_max_surge().unwrap_or("0").to_owned(), text),
        paused: s.paused,
        updated: status.updated_replicas,
        expected_updated: expected_updated_replicas(s.partition.as_ref(), replicas),
        ready: status.ready_replicas,
        available: status.available_replicas,
        updated_ready: Some(status.updated_ready_replicas),
        containers: containers(&cs.spec.template),
        scalable: CS.scalable(),
        partition_percent: CS.partition_percent(),
        conditions: super::progress::Conditions::of(cs),
    }
}

fn statefulset(sts: &StatefulSet) -> Summary {
    let strategy = sts.spec.update_strategy.clone().unwrap_or_default();
    let rolling = strategy.rolling_update.clone().unwrap_or_default();
    let status = sts.status.clone().unwrap_or_default();
    let replicas = sts.spec.replicas.unwrap_or(1);
    let partition = rolling.partition.unwrap_or(0).clamp(0, replicas.max(0));
    let policy = rolling
        .pod_update_policy
        .clone()
        .unwrap_or_else(|| ASTS.default_update_policy().unwrap_or_default().to_owned());
    Summary {
        replicas,
        current_revision: status.current_revision,
        update_revision: status.update_revision,
        strategy: format!(
            "{} ({policy})",
            strategy.type_.as_deref().unwrap_or(ASTS.default_strategy())
        ),
        partition: rolling.partition.map(|p| p.to_string()),
        partition_pods: partition,
        max_unavailable: rolling
            .max_unavailable
            .as_ref()
            .map_or_else(|| ASTS.default_max_unavailable().to_owned(), text),
        max_surge: "-".to_owned(),
        paused: rolling.paused,
        updated: status.updated_replicas,
        expected_updated: (replicas - partition).max(0),
        ready: status.ready_replicas,
        available: status.available_replicas,
        updated_ready: Some(status.updated_ready_replicas),
        containers: containers(&sts.spec.template),
        scalable: ASTS.scalable(),
        partition_percent: ASTS.partition_percent(),
        ..Summary::default()
    }
}

fn daemonset(ds: &DaemonSet) -> Summary {
    let strategy = ds.spec.update_strategy.clone().unwrap_or_default();
    let rolling = strategy.rolling_update.clone().unwrap_or_default();
    let status = ds.status.clone().unwrap_or_default();
    let desired = status.desired_number_scheduled;
    // A percent (v1.9.0) is of the last desired node count, rounded down, as the controller
    // reads it; one that does not resolve holds nothing back.
    let partition = rolling
        .partition
        .as_ref()
        .map_or(0, |p| {
            resolve_partition(p, desired, KruiseVersion::V1_9).unwrap_or(0)
        })
        .clamp(0, desired.max(0));
    Summary {
        replicas: desired,
        current_revision: String::new(),
        update_revision: status.daemon_set_hash,
        strategy: format!(
            "{} ({})",
            strategy.type_.as_deref().unwrap_or(ADS.default_strategy()),
            rolling
                .rolling_update_type
                .as_deref()
                .unwrap_or(ADS.default_update_policy().unwrap_or_default())
        ),
        partition: rolling.partition.as_ref().map(text),
        partition_pods: partition,
        max_unavailable: rolling
            .max_unavailable
            .as_ref()
            .map_or_else(|| ADS.default_max_unavailable().to_owned(), text),
        max_surge: rolling
            .max_surge
            .as_ref()
            .map_or_else(|| ADS.default_max_surge().unwrap_or("0").to_owned(), text),
        paused: rolling.paused,
        updated: status.updated_number_scheduled,
        expected_updated: (desired - partition).max(0),
        ready: status.number_ready,
        available: status.number_available,
        updated_ready: None,
        containers: containers(&ds.spec.template),
        scalable: ADS.scalable(),
        partition_percent: ADS.partition_percent(),
        ..Summary::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ads(partition: serde_json::Value, desired: i32) -> DaemonSet {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "agent", "namespace": "demo"},
            "spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}},
            "status": {"desiredNumberScheduled": desired, "currentNumberScheduled": desired,
                       "numberMisscheduled": 0, "numberReady": desired,
                       "updatedNumberScheduled": 1, "daemonSetHash": "abc"}
        }))
        .expect("an Advanced DaemonSet")
    }

    #[test]
    fn an_ads_percent_partition_shows_as_written_and_counts_nodes_rounded_down() {
        let s = daemonset(&ads(serde_json::json!("25%"), 4));
        assert_eq!(s.partition.as_deref(), Some("25%"));
        assert_eq!((s.partition_pods, s.expected_updated), (1, 3));
        assert!(s.partition_percent);
        // 25% of 3 is 0.75: no node held back.
        let s = daemonset(&ads(serde_json::json!("25%"), 3));
        assert_eq!((s.partition_pods, s.expected_updated), (0, 3));
        let s = daemonset(&ads(serde_json::json!(2), 4));
        assert_eq!(s.partition.as_deref(), Some("2"));
        assert_eq!((s.partition_pods, s.expected_updated), (2, 2));
    }
}
