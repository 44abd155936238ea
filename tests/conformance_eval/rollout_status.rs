//! rollout-status.json: `calculateRolloutStatus` (the phase machine), the plan hash
//! (`calculateRolloutHash`, as equal/different checks: only stable within the port) and whole
//! reconciles of the Rollout port (`reconcile`).

use std::collections::BTreeMap;

use kruise_tui::api::rollout::{BatchRelease, Rollout};
use kruise_tui::kruise::rollout::WorkloadInfo;
use kruise_tui::kruise::rollout::controller::{
    calculate_rollout_hash, calculate_rollout_status, reconcile,
};
use kruise_tui::kruise::rollout::workload::TargetKind;
use serde_json::{Value, json};

use crate::eval::common::{expect_subset, expected, input, parse};

fn now() -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_767_225_600).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

/// `{kind, replicas, stableRevision, canaryRevision, inRollback, generation,
/// observedGeneration, labels, annotations}` → a WorkloadInfo; null → missing.
fn workload(v: &Value) -> Result<Option<WorkloadInfo>, String> {
    if v.is_null() {
        return Ok(None);
    }
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
    let n = |k: &str, d: i64| v[k].as_i64().unwrap_or(d);
    let kind = match v["kind"].as_str().unwrap_or("CloneSet") {
        "CloneSet" => TargetKind::CloneSet,
        "AdvancedStatefulSet" => TargetKind::AdvancedStatefulSet,
        "StatefulSet" => TargetKind::StatefulSet,
        "AdvancedDaemonSet" => TargetKind::AdvancedDaemonSet,
        other => return Err(format!("unknown workload kind {other}")),
    };
    let labels: BTreeMap<String, String> = parse("labels", &v["labels"])?;
    let annotations: BTreeMap<String, String> = parse("annotations", &v["annotations"])?;
    let replicas = i32::try_from(n("replicas", 10)).map_err(|e| e.to_string())?;
    Ok(Some(WorkloadInfo {
        kind: Some(kind),
        name: s("name"),
        replicas,
        generation: n("generation", 1),
        observed_generation: n("observedGeneration", 1),
        labels,
        annotations,
        stable_revision: s("stableRevision"),
        canary_revision: s("canaryRevision"),
        in_rollback: v["inRollback"].as_bool().unwrap_or(false),
        ..WorkloadInfo::default()
    }))
}

pub fn status(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let exp = expected(case)?;
    match op.ok_or("case has no op")? {
        "calculateRolloutStatus" => {
            let rollout: Rollout = parse("rollout", &inp["rollout"])?;
            let w = workload(&inp["workload"])?;
            let (retry, s) = calculate_rollout_status(&rollout, "hash", w.as_ref(), now());
            let actual = json!({"retry": retry, "status": s});
            expect_subset(exp, &actual)
        }
        "rolloutHash" => {
            let a: Rollout = parse("a", &inp["a"])?;
            let b: Rollout = parse("b", &inp["b"])?;
            let equal = calculate_rollout_hash(&a) == calculate_rollout_hash(&b);
            expect_subset(exp, &json!({"equal": equal}))
        }
        "reconcile" => {
            let rollout: Rollout = parse("rollout", &inp["rollout"])?;
            let w = workload(&inp["workload"])?;
            let br: Option<BatchRelease> = parse("batchRelease", &inp["batchRelease"])?;
            let out = reconcile(&rollout, w.as_ref(), br.as_ref(), now());
            let actual = json!({
                "unsupported": out.unsupported,
                "finalizer": out.finalizer.map(|f| format!("{f:?}")),
                "workloadPatches": out.workload_patches,
                "events": out.events,
                "status": out.status,
                "requeueInSeconds": out.requeue_at.map(|t| (t - now()).get_seconds()),
                "batchRelease": out.batch_release.iter().map(|a| format!("{a:?}").split('(').next().unwrap_or_default().to_owned()).collect::<Vec<_>>(),
            });
            expect_subset(exp, &actual)
        }
        other => Err(format!("unknown op {other:?}")),
    }
}
