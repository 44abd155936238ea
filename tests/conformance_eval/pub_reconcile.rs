//! `op:"pubReconcile"`: one PUB controller pass from objects, as upstream's TestPubReconcile
//! builds them: the PUB, the Deployment and ReplicaSets of its namespace (as workload facts) and
//! the pods. The port resolves the counted pods and the total (`resolve_target_ref` /
//! `resolve_selector_total`), derives each pod's view (`PubPod::from_pod`) and computes the
//! status (`pub_status`); the harness only lists pods the way the fake client's owner-UID index
//! and label selector do.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::kruise::{pub_budget as pubb, selector};
use serde_json::{Value, json};

use super::common::{list, parse};

fn field<'a>(v: &'a Value, name: &str) -> Result<&'a Value, String> {
    v.get(name).ok_or_else(|| format!("missing field {name}"))
}

/// A workload of the namespace: `{kind, name, uid, replicas, deleting?, controllerUid?}`.
struct Workload {
    kind: String,
    name: String,
    fact: pubb::resolve::WorkloadFact,
}

fn workloads(input: &Value) -> Result<Vec<Workload>, String> {
    list(field(input, "workloads")?, "input.workloads")?
        .iter()
        .map(|w| {
            let s = |k: &str| -> Result<String, String> {
                Ok(field(w, k)?
                    .as_str()
                    .ok_or_else(|| format!("workload {k} is not a string"))?
                    .to_owned())
            };
            Ok(Workload {
                kind: s("kind")?,
                name: s("name")?,
                fact: pubb::resolve::WorkloadFact {
                    uid: s("uid")?,
                    replicas: field(w, "replicas")?
                        .as_i64()
                        .and_then(|r| i32::try_from(r).ok())
                        .ok_or("workload replicas is not an int32")?,
                    deleting: w.get("deleting").and_then(Value::as_bool).unwrap_or(false),
                    controller_uid: w
                        .get("controllerUid")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                },
            })
        })
        .collect()
}

/// `podTemplate` copied once per index of each `podGroups` entry `{from, to, ownerUid|null,
/// ready?, deleting?}`, named `test-pod-<i>`: a controller ownerReference to `ownerUid` (none
/// when null), the Ready condition, and a deletionTimestamp with a finalizer when deleting.
fn pods(input: &Value) -> Result<Vec<Pod>, String> {
    let template = field(input, "podTemplate")?;
    let mut out = Vec::new();
    for g in list(field(input, "podGroups")?, "input.podGroups")? {
        let idx = |k: &str| field(g, k)?.as_u64().ok_or(format!("podGroups {k}"));
        for i in idx("from")?..=idx("to")? {
            let mut p = template.clone();
            p["metadata"]["name"] = json!(format!("test-pod-{i}"));
            p["metadata"]["ownerReferences"] = match field(g, "ownerUid")? {
                Value::Null => json!(null),
                uid => json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "owner", "uid": uid, "controller": true}]),
            };
            if g.get("ready") == Some(&json!(false)) {
                p["status"]["conditions"] = json!([{"type": "Ready", "status": "False"}]);
            }
            if g.get("deleting") == Some(&json!(true)) {
                p["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
                p["metadata"]["finalizers"] = json!(["finalizers.sigs.k8s.io/test"]);
            }
            out.push(parse("pod", &p)?);
        }
    }
    Ok(out)
}

fn owner_uids(pod: &Pod) -> impl Iterator<Item = &str> {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .map(|o| o.uid.as_str())
}

/// The counted pods and the total, as GetPodsForPub finds them.
fn resolve<'a>(
    pub_: &pubb::PodUnavailableBudget,
    workloads: &[Workload],
    pods: &'a [Pod],
) -> Result<(i32, Vec<&'a Pod>), String> {
    let active = pods.iter().filter(|p| pubb::pod::is_pod_active(p));
    if let Some(target) = &pub_.spec.target_ref {
        let Some(w) = workloads
            .iter()
            .find(|w| w.kind == target.kind && w.name == target.name)
        else {
            return Ok((pub_.total_replicas(0), Vec::new()));
        };
        // GetPodsForRef lists by the owner-UID index: a Deployment's live ReplicaSets, or the
        // Deployment itself when it has none; any other kind by its own UID.
        let mut uids: BTreeSet<&str> = BTreeSet::new();
        if target.kind == "Deployment" {
            uids.extend(
                workloads
                    .iter()
                    .filter(|rs| rs.kind == "ReplicaSet" && !rs.fact.deleting)
                    .filter(|rs| rs.fact.controller_uid.as_deref() == Some(w.fact.uid.as_str()))
                    .map(|rs| rs.fact.uid.as_str()),
            );
        }
        if uids.is_empty() {
            uids.insert(&w.fact.uid);
        }
        let owned: Vec<&Pod> = active
            .filter(|p| owner_uids(p).any(|u| uids.contains(u)))
            .collect();
        let names: Vec<String> = owned
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect();
        let (total, kept) = pubb::resolve::resolve_target_ref(pub_, &w.fact, &names);
        let kept: BTreeSet<&String> = kept.iter().collect();
        let counted = owned
            .into_iter()
            .filter(|p| p.metadata.name.as_ref().is_some_and(|n| kept.contains(n)))
            .collect();
        return Ok((total, counted));
    }
    let Some(sel) = &pub_.spec.selector else {
        return Ok((0, Vec::new()));
    };
    let mut counted = Vec::new();
    for p in active {
        let labels = p.metadata.labels.clone().unwrap_or_default();
        if selector::matches(sel, &labels).map_err(|e| e.to_string())? {
            counted.push(p);
        }
    }
    let owned: Vec<pubb::resolve::OwnedPod> = counted
        .iter()
        .map(|p| pubb::resolve::OwnedPod {
            name: p.metadata.name.clone().unwrap_or_default(),
            controller_uid: p
                .metadata
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.controller == Some(true))
                .map(|o| o.uid.clone()),
        })
        .collect();
    let facts: Vec<pubb::resolve::WorkloadFact> =
        workloads.iter().map(|w| w.fact.clone()).collect();
    let total = pubb::resolve::resolve_selector_total(pub_, &owned, &facts)?;
    Ok((total, counted))
}

/// The status the pass writes: the four counts and the names kept in each record.
pub fn pub_reconcile(input: &Value) -> Result<Value, String> {
    let pub_: pubb::PodUnavailableBudget = parse("pub", field(input, "pub")?)?;
    let workloads = workloads(input)?;
    let pods = pods(input)?;
    let (total, counted) = resolve(&pub_, &workloads, &pods)?;
    let counted: Vec<pubb::PubPod> = counted.into_iter().map(pubb::PubPod::from_pod).collect();
    let prior = field(input, "priorStatus")?;
    let ages = |k: &str| -> Result<_, String> {
        prior
            .get(k)
            .map(|m| parse::<std::collections::BTreeMap<String, i64>>(k, m))
            .transpose()
            .map(Option::unwrap_or_default)
    };
    let prior = pubb::PriorRecords {
        disrupted: ages("disruptedPods")?,
        unavailable: ages("unavailablePods")?,
    };
    let st = pubb::pub_status(&pub_.spec, total, &counted, &prior)?;
    let names = |m: &std::collections::BTreeMap<String, i64>| -> Vec<String> {
        let mut v: Vec<String> = m.keys().cloned().collect();
        v.sort_by_key(|n| {
            n.rsplit('-')
                .next()
                .and_then(|i| i.parse::<u32>().ok())
                .unwrap_or(u32::MAX)
        });
        v
    };
    Ok(json!({
        "unavailableAllowed": st.unavailable_allowed,
        "currentAvailable": st.current_available,
        "desiredAvailable": st.desired_available,
        "totalReplicas": st.total_replicas,
        "disruptedPods": names(&st.disrupted_pods),
        "unavailablePods": names(&st.unavailable_pods),
    }))
}
