//! Per-kind partition control: the exact merge-patch bodies of `Initialize`, `UpgradeBatch` and
//! `Finalize` (`control/partitionstyle/{cloneset,statefulset,daemonset}/control.go`).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use super::context::{BatchContext, resolve};
use crate::api::keys::BATCH_RELEASE_CONTROL_INFO;
use crate::api::rollout::BatchRelease;
use crate::kruise::rollout::workload::{TargetKind, WorkloadInfo};

/// `math.MaxInt16`: the StatefulSets' "hold everything" partition.
pub const MAX_PARTITION: i32 = 32767;

/// `BuildReleaseControlInfo`: the BatchRelease's controller owner reference as JSON.
pub fn control_info(br: &BatchRelease) -> String {
    json!({
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "BatchRelease",
        "name": br.metadata.name.clone().unwrap_or_default(),
        "uid": br.metadata.uid.clone().unwrap_or_default(),
        "controller": true,
        "blockOwnerDeletion": true,
    })
    .to_string()
}

/// `Initialize`: `None` when the workload is already controlled by this BatchRelease.
pub fn initialize_patch(br: &BatchRelease, w: &WorkloadInfo) -> Option<Value> {
    if w.controlled_by(br.metadata.uid.as_deref().unwrap_or_default()) {
        return None;
    }
    let meta = json!({"annotations": {BATCH_RELEASE_CONTROL_INFO: control_info(br)}});
    let spec = match w.kind? {
        TargetKind::CloneSet => json!({"updateStrategy": {"paused": false, "partition": "100%"}}),
        TargetKind::AdvancedStatefulSet => {
            json!({"updateStrategy": {"rollingUpdate": {"partition": MAX_PARTITION, "paused": false}}})
        }
        // Upstream sends `paused:false` here too; apps/v1 has no such field and a strict
        // server refuses it, so the port leaves it out (same effect: a real server drops it).
        TargetKind::StatefulSet => {
            json!({"updateStrategy": {"rollingUpdate": {"partition": MAX_PARTITION}}})
        }
        TargetKind::AdvancedDaemonSet => {
            json!({"updateStrategy": {"rollingUpdate": {"paused": false, "partition": w.replicas}}})
        }
    };
    Some(json!({"metadata": meta, "spec": spec}))
}

/// `UpgradeBatch`: only ever lowers the partition (`current <= desired` → no patch).
pub fn upgrade_patch(kind: TargetKind, ctx: &BatchContext) -> Option<Value> {
    match kind {
        TargetKind::CloneSet => {
            let desired = resolve(&ctx.desired_partition, ctx.replicas);
            let current = resolve(&ctx.current_partition, ctx.replicas);
            if current <= desired {
                return None;
            }
            let value = match &ctx.desired_partition {
                IntOrString::Int(i) => json!(i),
                IntOrString::String(s) => json!(s),
            };
            Some(json!({"spec": {"updateStrategy": {"partition": value}}}))
        }
        _ => {
            let int = |p: &IntOrString| match p {
                IntOrString::Int(i) => *i,
                IntOrString::String(_) => resolve(p, ctx.replicas),
            };
            let desired = int(&ctx.desired_partition);
            if int(&ctx.current_partition) <= desired {
                return None;
            }
            Some(json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": desired}}}}))
        }
    }
}

/// `Finalize`: drop control-info; when `batchPartition` is nil also release the partition
/// (CloneSet and ADS: and `paused:false`).
pub fn finalize_patch(br: &BatchRelease, kind: TargetKind) -> Value {
    let mut body = json!({"metadata": {"annotations": {BATCH_RELEASE_CONTROL_INFO: null}}});
    if br.spec.release_plan.batch_partition.is_none() {
        body["spec"] = match kind {
            TargetKind::CloneSet => json!({"updateStrategy": {"partition": null, "paused": false}}),
            TargetKind::StatefulSet | TargetKind::AdvancedStatefulSet => {
                json!({"updateStrategy": {"rollingUpdate": {"partition": null}}})
            }
            TargetKind::AdvancedDaemonSet => {
                json!({"updateStrategy": {"rollingUpdate": {"partition": null, "paused": false}}})
            }
        };
    }
    body
}
