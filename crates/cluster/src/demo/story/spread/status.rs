//! The status the WorkloadSpread and UnitedDeployment controllers write, from what the cluster
//! holds (pure: the caller lists and writes).

use std::collections::BTreeMap;

use anyhow::Result;
use k8s_openapi::api::core::v1::Pod;
use kube::api::DynamicObject;
use serde_json::{Value, json};

use crate::api::{
    WorkloadSpread,
    keys::{MATCHED_WORKLOADSPREAD, SUBSET_NAME, UNITED_DEPLOYMENT_REVISION_HASH},
    pod::is_ready,
};
use crate::kruise::workloadspread::subset_statuses;

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// `status` of a WorkloadSpread: per subset the active pods matched to it, the replicas it
/// still takes, and its pods being deleted (with when their deletion began).
pub(super) fn spread(ws: &DynamicObject, pods: &[Pod], workload_replicas: i32) -> Result<Value> {
    let typed: WorkloadSpread = serde_json::from_value(serde_json::to_value(ws)?)?;
    let name = typed.metadata.name.clone().unwrap_or_default();
    let mut active: BTreeMap<String, i32> = BTreeMap::new();
    let mut deleting: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
    for pod in pods {
        let Some(m) = pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(MATCHED_WORKLOADSPREAD))
            .and_then(|a| crate::kruise::workloadspread::parse(a))
        else {
            continue;
        };
        if m.name != name {
            continue;
        }
        let finished = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .is_some_and(|p| p == "Succeeded" || p == "Failed");
        match &pod.metadata.deletion_timestamp {
            Some(t) => {
                deleting
                    .entry(m.subset)
                    .or_default()
                    .insert(pod.metadata.name.clone().unwrap_or_default(), json!(t));
            }
            None if !finished => *active.entry(m.subset).or_insert(0) += 1,
            None => {}
        }
    }
    let subsets: Vec<Value> = subset_statuses(&typed, &active, workload_replicas)
        .into_iter()
        .map(|s| {
            let mut v = json!({"name": s.name, "replicas": s.replicas,
                               "missingReplicas": s.missing_replicas});
            if let Some(d) = deleting.get(&s.name) {
                v["deletingPods"] = json!(d);
            }
            v
        })
        .collect();
    Ok(json!({"status": {
        "observedGeneration": typed.metadata.generation.unwrap_or(0),
        "subsetStatuses": subsets,
    }}))
}

/// `status` of a UnitedDeployment from its subset CloneSets (those it controls, by their
/// subset-name label) and their pods, as `calculateStatus` sums them.
pub(super) fn united(ud: &DynamicObject, sets: &[DynamicObject], pods: &[Pod], rev: &str) -> Value {
    let uid = ud.metadata.uid.clone().unwrap_or_default();
    let name = ud.metadata.name.clone().unwrap_or_default();
    let mut totals = (0, 0, 0, 0);
    let mut subset_replicas = BTreeMap::new();
    let mut partitions = BTreeMap::new();
    for set in sets {
        let owned = set
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.controller == Some(true) && o.uid == uid);
        let Some(subset) = set
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SUBSET_NAME))
        else {
            continue;
        };
        if !owned {
            continue;
        }
        let status = &set.data["status"];
        let selector = set.data["spec"]["selector"]["matchLabels"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let count = |k: &str| status[k].as_i64().unwrap_or(0);
        let subset_pods: Vec<&Pod> = pods
            .iter()
            .filter(|p| {
                selector.iter().all(|(k, v)| label(p, k) == v.as_str())
                    && p.metadata.deletion_timestamp.is_none()
            })
            .collect();
        let updated: Vec<&&Pod> = subset_pods
            .iter()
            .filter(|p| label(p, UNITED_DEPLOYMENT_REVISION_HASH) == Some(rev))
            .collect();
        totals.0 += count("replicas");
        totals.1 += count("readyReplicas");
        totals.2 += updated.len() as i64;
        totals.3 += updated.iter().filter(|p| is_ready(p)).count() as i64;
        subset_replicas.insert(
            subset.clone(),
            set.data["spec"]["replicas"].as_i64().unwrap_or(0),
        );
        partitions.insert(
            subset.clone(),
            set.data["spec"]["updateStrategy"]["partition"]
                .as_i64()
                .unwrap_or(0),
        );
    }
    json!({"status": {
        "observedGeneration": ud.metadata.generation.unwrap_or(0),
        "replicas": totals.0,
        "readyReplicas": totals.1,
        "updatedReplicas": totals.2,
        "updatedReadyReplicas": totals.3,
        "currentRevision": rev,
        "subsetReplicas": subset_replicas,
        "updateStatus": {"updatedRevision": rev, "currentPartitions": partitions},
        "labelSelector": format!("app={name}"),
    }})
}
