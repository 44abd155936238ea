//! Evaluators for `rollout-batch.json` (ops: batch arithmetic, readiness, labels, partition
//! control, step → partition) and `rollout-batch-executor.json` (the BatchRelease executor).

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use kruise_tui::api::CloneSet;
use kruise_tui::api::keys;
use kruise_tui::api::rollout::{BatchRelease, ReleasePlan};
use kruise_tui::kruise::rollout::batchrelease::{self as brp, BatchContext, labels};
use kruise_tui::kruise::rollout::workload::{TargetKind, WorkloadInfo};
use kruise_tui::kruise::rollout::{calculate_batch_replicas, hash_release_plan, scale};

use super::common::{expect_eq, expect_subset, expected, input, parse};

fn int(v: &Value, field: &str) -> Result<i32, String> {
    v.get(field)
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| format!("input.{field} is not an int32"))
}

fn ios(v: &Value, what: &str) -> Result<IntOrString, String> {
    parse(what, v)
}

fn ios_json(v: &IntOrString) -> Value {
    match v {
        IntOrString::Int(i) => json!(i),
        IntOrString::String(s) => json!(s),
    }
}

fn kind(v: &Value) -> Result<TargetKind, String> {
    Ok(match v.get("kind").and_then(Value::as_str) {
        Some("CloneSet") => TargetKind::CloneSet,
        Some("StatefulSet") => TargetKind::StatefulSet,
        Some("AdvancedStatefulSet") => TargetKind::AdvancedStatefulSet,
        Some("AdvancedDaemonSet") => TargetKind::AdvancedDaemonSet,
        other => return Err(format!("unknown kind {other:?}")),
    })
}

fn batches(v: &Value) -> Result<Vec<IntOrString>, String> {
    v.get("batches")
        .and_then(Value::as_array)
        .ok_or("input.batches is missing")?
        .iter()
        .map(|b| ios(b, "batch"))
        .collect()
}

/// A BatchRelease at `currentBatch` (uid `br-uid`, name `release-demo`) of a workload input.
fn release(v: &Value, kind: TargetKind) -> Result<BatchRelease, String> {
    let (group, k) = kind.group_kind();
    let api_version = if group == "apps" {
        "apps/v1".to_owned()
    } else {
        format!("{group}/v1alpha1")
    };
    parse(
        "release",
        &json!({
            "metadata": {"name": "release-demo", "namespace": "default", "uid": "br-uid"},
            "spec": {"workloadRef": {"apiVersion": api_version, "kind": k, "name": "sample"},
                     "releasePlan": {
                        "batches": batches(v)?.iter().map(|b| json!({"canaryReplicas": ios_json(b)})).collect::<Vec<_>>(),
                        "batchPartition": v.get("batchPartition").cloned().unwrap_or(Value::Null)}},
            "status": {"canaryStatus": {
                "currentBatch": v.get("currentBatch").cloned().unwrap_or(json!(0)),
                "noNeedUpdateReplicas": v.get("noNeedUpdateReplicas").cloned().unwrap_or(Value::Null)}}
        }),
    )
}

fn workload(v: &Value, kind: TargetKind) -> Result<WorkloadInfo, String> {
    Ok(WorkloadInfo {
        kind: Some(kind),
        name: "sample".into(),
        replicas: int(v, "replicas")?,
        status_replicas: int(v, "replicas")?,
        updated_replicas: v
            .get("updatedReplicas")
            .and_then(Value::as_i64)
            .unwrap_or(0) as i32,
        updated_ready_replicas: v
            .get("updatedReadyReplicas")
            .and_then(Value::as_i64)
            .unwrap_or(0) as i32,
        partition: match v.get("partition") {
            None | Some(Value::Null) => None,
            Some(p) => Some(ios(p, "partition")?),
        },
        paused: v.get("paused").and_then(Value::as_bool).unwrap_or(false),
        unordered_update: v
            .get("unorderedUpdate")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..WorkloadInfo::default()
    })
}

/// The control-info annotation's string, read as the JSON it holds (key order aside).
fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| {
                    let x = match (k.as_str(), x) {
                        (keys::BATCH_RELEASE_CONTROL_INFO, Value::String(s)) => {
                            serde_json::from_str(s).unwrap_or(x.clone())
                        }
                        _ => normalize(x),
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

pub fn batch(op: Option<&str>, case: &Value) -> Result<(), String> {
    let i = input(case)?;
    let want = expected(case)?;
    let got = match op.ok_or("rollout-batch.json cases need an op")? {
        "calculate_batch_replicas" => {
            json!({"value": calculate_batch_replicas(&ios(&i["value"], "value")?, int(i, "replicas")?)})
        }
        "parse_integer_as_percentage" => {
            let p = brp::parse_integer_as_percentage_if_possible(
                int(i, "stable")?,
                int(i, "replicas")?,
                &ios(&i["batch"], "batch")?,
            );
            json!({"partition": ios_json(&p)})
        }
        "parse_integer_as_percentage_property" => {
            json!({"holds": percentage_property(int(i, "maxReplicas")?)?})
        }
        "is_current_ge_desired" => {
            json!({"result": brp::is_current_more_than_or_equal_to_desired(&ios(&i["current"], "current")?, &ios(&i["desired"], "desired")?)})
        }
        "batch_context" => {
            let k = kind(i)?;
            let ctx = brp::calculate_batch_context(&release(i, k)?, &workload(i, k)?, &[]);
            json!({"plannedUpdatedReplicas": ctx.planned_updated_replicas, "desiredUpdatedReplicas": ctx.desired_updated_replicas,
                   "desiredPartition": ios_json(&ctx.desired_partition), "currentPartition": ios_json(&ctx.current_partition)})
        }
        "control_patches" => {
            let k = kind(i)?;
            let br = release(i, k)?;
            let w = workload(i, k)?;
            let ctx = brp::calculate_batch_context(&br, &w, &[]);
            json!({"initialize": brp::initialize_patch(&br, &w), "upgrade": brp::upgrade_patch(k, &ctx),
                   "finalize": brp::finalize_patch(&br, k)})
        }
        "step_partitions" => step_partitions(i)?,
        "is_batch_ready" => {
            let ctx = BatchContext {
                planned_updated_replicas: int(i, "plannedUpdatedReplicas")?,
                desired_updated_replicas: int(i, "desiredUpdatedReplicas")?,
                updated_replicas: int(i, "updatedReplicas")?,
                updated_ready_replicas: int(i, "updatedReadyReplicas")?,
                failure_threshold: match &i["failureThreshold"] {
                    Value::Null => None,
                    v => Some(ios(v, "failureThreshold")?),
                },
                rollout_id: i
                    .get("rolloutID")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                ..BatchContext::default()
            };
            let labelled = i.get("labelledPods").and_then(Value::as_u64).unwrap_or(0);
            let total = i.get("pods").and_then(Value::as_u64).unwrap_or(0);
            let pods: Vec<Pod> = (0..total)
                .map(|n| {
                    let labels = if n < labelled {
                        json!({keys::ROLLOUT_ID: ctx.rollout_id})
                    } else {
                        json!({})
                    };
                    parse(
                        "pod",
                        &json!({"metadata": {"name": format!("p{n}"), "labels": labels}}),
                    )
                })
                .collect::<Result<_, _>>()?;
            json!({"ready": brp::is_batch_ready(&ctx, &pods).is_ok()})
        }
        "label_patcher" => label_patcher(i)?,
        other => return Err(format!("unknown op {other}")),
    };
    expect_subset(&normalize(want), &normalize(&got))
}

/// Upstream's property: for every R and p, the partition written for `R − scale(p%)` kept pods
/// resolves back to within 1% of R of it, keeps all at 0%, none at 100%, and updates at least
/// one pod for any p > 0.
fn percentage_property(max: i32) -> Result<bool, String> {
    for r in 1..=max {
        for p in 0..=100 {
            let canary_pct = IntOrString::String(format!("{p}%"));
            let canary = scale(&canary_pct, r).map_err(|e| e.to_string())?;
            let partition =
                brp::parse_integer_as_percentage_if_possible(r - canary, r, &canary_pct);
            let stable = scale(&partition, r).map_err(|e| e.to_string())?;
            let ok = match p {
                0 => stable == r,
                100 => stable == 0,
                _ => r - stable > 0,
            } && stable <= r
                && f64::from((r - canary - stable).abs()) <= f64::from(r) * 0.01;
            if !ok {
                return Err(format!(
                    "R={r} p={p}: partition {partition:?} keeps {stable}"
                ));
            }
        }
    }
    Ok(true)
}

fn pod(n: usize, updated: bool, rollout: Option<&str>, batch: Option<&str>) -> Result<Pod, String> {
    let mut labels =
        json!({"controller-revision-hash": if updated { "sample-v2" } else { "sample-v1" }});
    if let Some(b) = batch {
        labels[keys::ROLLOUT_ID] = json!(rollout.unwrap_or("r1"));
        labels[keys::ROLLOUT_BATCH_ID] = json!(b);
    }
    parse(
        "pod",
        &json!({"metadata": {"name": format!("p{n:02}"), "labels": labels}}),
    )
}

fn label_patcher(i: &Value) -> Result<Value, String> {
    let b = labels::batches(&batches(i)?);
    let ctx = BatchContext {
        rollout_id: i["rolloutID"].as_str().unwrap_or("").to_owned(),
        current_batch: int(i, "currentBatch")?,
        replicas: int(i, "replicas")?,
        ..BatchContext::default()
    };
    let mut pods = Vec::new();
    for (n, p) in i["pods"]
        .as_array()
        .ok_or("input.pods is missing")?
        .iter()
        .enumerate()
    {
        pods.push(pod(
            n,
            p["updated"].as_bool().unwrap_or(false),
            None,
            p["batchID"].as_str(),
        )?);
    }
    let patches = brp::batch_label_patches(&b, &ctx, &pods, "sample-v2");
    for patch in &patches {
        let target = pods
            .iter_mut()
            .find(|p| p.metadata.name.as_deref() == Some(patch.name.as_str()))
            .ok_or("patch of an unknown pod")?;
        let labels = target.metadata.labels.get_or_insert_with(Default::default);
        for (k, v) in patch.body["metadata"]["labels"]
            .as_object()
            .ok_or("patch without labels")?
        {
            labels.insert(k.clone(), v.as_str().unwrap_or("").to_owned());
        }
    }
    let mut counts = vec![0; b.len()];
    for p in &pods {
        let id = p
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(keys::ROLLOUT_BATCH_ID))
            .and_then(|v| v.parse::<usize>().ok());
        if let Some(id) = id.filter(|id| *id >= 1 && *id <= counts.len()) {
            counts[id - 1] += 1;
        }
    }
    Ok(json!({"batchCounts": counts}))
}

fn now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
}

/// A CloneSet (controller caught up at once) driven through each step, as the Rollout would
/// (`batchPartition = step − 1`): the partition after each step and the updated pods.
fn step_partitions(i: &Value) -> Result<Value, String> {
    let r = int(i, "replicas")?;
    let steps: Vec<IntOrString> = i["steps"]
        .as_array()
        .ok_or("input.steps")?
        .iter()
        .map(|s| ios(s, "step"))
        .collect::<Result<_, _>>()?;
    let mut br = release(
        &json!({"batches": steps.iter().map(ios_json).collect::<Vec<_>>(), "batchPartition": 0}),
        TargetKind::CloneSet,
    )?;
    br.metadata.finalizers = Some(vec![keys::BATCH_RELEASE_FINALIZER.into()]);
    br.spec.release_plan.rollout_id = Some("r1".into());
    br.status = None;
    let follow = |partition: Option<IntOrString>, annotations| {
        let kept = partition
            .as_ref()
            .map(|p| kruise_tui::kruise::intstr::scaled_value_kruise(p, r, true).unwrap_or(0))
            .unwrap_or(0)
            .clamp(0, r);
        WorkloadInfo {
            kind: Some(TargetKind::CloneSet),
            name: "sample".into(),
            replicas: r,
            status_replicas: r,
            updated_replicas: r - kept,
            updated_ready_replicas: r - kept,
            current_revision: "sample-v1".into(),
            update_revision: "sample-v2".into(),
            partition,
            annotations,
            ..WorkloadInfo::default()
        }
    };
    let mut w = follow(None, Default::default());
    let mut pods: Vec<Pod> = Vec::new();
    let (mut partitions, mut updated) = (Vec::new(), Vec::new());
    for step in 0..steps.len() {
        br.spec.release_plan.batch_partition = Some(step as i32);
        for _ in 0..20 {
            // Pods: the first `updated` names on v2, keeping the labels already written.
            let n = usize::try_from(w.updated_replicas).unwrap_or(0);
            for k in 0..usize::try_from(r).unwrap_or(0) {
                if k >= pods.len() {
                    pods.push(pod(k, false, None, None)?);
                }
                let labels = pods[k].metadata.labels.get_or_insert_with(Default::default);
                labels.insert(
                    "controller-revision-hash".into(),
                    if k < n { "sample-v2" } else { "sample-v1" }.into(),
                );
            }
            let out = brp::reconcile(&br, Some(&w), &pods, now());
            if let Some(patch) = &out.workload_patch {
                let mut annotations = w.annotations.clone();
                if let Some(Value::String(c)) = patch
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(keys::BATCH_RELEASE_CONTROL_INFO))
                {
                    annotations.insert(keys::BATCH_RELEASE_CONTROL_INFO.into(), c.clone());
                }
                let partition = match patch.pointer("/spec/updateStrategy/partition") {
                    Some(p) => Some(ios(p, "partition")?),
                    None => w.partition.clone(),
                };
                w = follow(partition, annotations);
            }
            for p in &out.pod_patches {
                let target = pods
                    .iter_mut()
                    .find(|x| x.metadata.name.as_deref() == Some(p.name.as_str()))
                    .ok_or("unknown pod")?;
                let labels = target.metadata.labels.get_or_insert_with(Default::default);
                for (k, v) in p.body["metadata"]["labels"]
                    .as_object()
                    .ok_or("no labels")?
                {
                    labels.insert(k.clone(), v.as_str().unwrap_or("").to_owned());
                }
            }
            br.status = Some(out.status);
        }
        let st = br
            .status
            .clone()
            .unwrap_or_default()
            .canary_status
            .unwrap_or_default();
        if st.batch_state.as_deref() != Some("Ready") || st.current_batch != step as i32 {
            return Err(format!(
                "step {}: batch {} is {:?}, not Ready",
                step + 1,
                st.current_batch,
                st.batch_state
            ));
        }
        partitions.push(w.partition.as_ref().map(ios_json).unwrap_or(Value::Null));
        updated.push(w.updated_replicas);
    }
    Ok(json!({"partitions": partitions, "updated": updated}))
}

/// `"$hash"` → the hash of the release's plan; `"$hash:batchPartition=N"` → of the plan with
/// that batchPartition.
fn hashes(v: &mut Value, plan: &ReplacePlan) {
    match v {
        Value::String(s) if s.starts_with("$hash") => {
            let mut p = plan.0.clone();
            if let Some(n) = s
                .strip_prefix("$hash:batchPartition=")
                .and_then(|n| n.parse().ok())
            {
                p.batch_partition = Some(n);
            }
            *s = hash_release_plan(&p);
        }
        Value::Object(map) => map.values_mut().for_each(|x| hashes(x, plan)),
        Value::Array(a) => a.iter_mut().for_each(|x| hashes(x, plan)),
        _ => {}
    }
}

struct ReplacePlan(ReleasePlan);

pub fn executor(_op: Option<&str>, case: &Value) -> Result<(), String> {
    let i = input(case)?;
    let mut raw = i["release"].clone();
    let br0: BatchRelease = parse("release", &raw)?;
    let plan = ReplacePlan(br0.spec.release_plan.clone());
    hashes(&mut raw, &plan);
    let br: BatchRelease = parse("release", &raw)?;
    let w = match &i["cloneset"] {
        Value::Null => None,
        v => Some(WorkloadInfo::from_cloneset(&parse::<CloneSet>(
            "cloneset", v,
        )?)),
    };
    let out = brp::reconcile(&br, w.as_ref(), &[], now());
    let c = out.status.canary_status.clone().unwrap_or_default();
    let got = json!({
        "phase": out.status.phase,
        "batchState": c.batch_state,
        "currentBatch": c.current_batch,
        "batchReadyTime": c.batch_ready_time.is_some(),
        "updatedReplicas": c.updated_replicas,
        "observedWorkloadReplicas": out.status.observed_workload_replicas,
        "stableRevision": out.status.stable_revision,
        "updateRevision": out.status.update_revision,
        "observedReleasePlanHash": out.status.observed_release_plan_hash,
        "workloadPatch": out.workload_patch,
        "finalizer": format!("{:?}", out.finalizer),
        "statusChanged": out.status_changed,
        "requeueAfterSeconds": out.requeue_after_seconds,
    });
    let mut want = expected(case)?.clone();
    hashes(&mut want, &plan);
    expect_subset(&normalize(&want), &normalize(&got))?;
    let _ = expect_eq;
    Ok(())
}
