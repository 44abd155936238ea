//! Kruise Rollout (`rollouts.kruise.io`, openkruise/rollouts v0.6.2): the `Rollout` that names a
//! workload and its release steps, and the `BatchRelease` its controller creates to move the
//! workload's partition batch by batch. Both are served at v1alpha1 and v1beta1; v1beta1 is the
//! stored version and the one these types model (`api/v1beta1/rollout_types.go`,
//! `batchrelease_types.go`). The v1alpha1 form is reached through [`conversion`].
//!
//! Parts the console only displays and the port never decides on (traffic routing, header
//! matches, blue-green) are kept as they came (`serde_json::Value`), so a read-modify-write
//! loses nothing.

pub mod conversion;

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{ObjectMeta, Time},
    util::intstr::IntOrString,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::null_as_default;

// --- Rollout ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct Rollout {
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: RolloutSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RolloutStatus>,
}
crate::impl_resource!(
    Rollout,
    group = "rollouts.kruise.io",
    version = "v1beta1",
    kind = "Rollout",
    plural = "rollouts",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutSpec {
    /// The workload, in the Rollout's namespace; matched on group + kind + name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub workload_ref: WorkloadRef,
    #[serde(default, deserialize_with = "null_as_default")]
    pub strategy: RolloutStrategy,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
}

/// `apiVersion` + `kind` + `name` of the workload a Rollout (or BatchRelease) drives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRef {
    #[serde(default, deserialize_with = "null_as_default")]
    pub api_version: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub kind: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
}

impl WorkloadRef {
    /// The API group of `apiVersion` (`""` for the core group).
    pub fn group(&self) -> &str {
        match self.api_version.split_once('/') {
            Some((group, _)) => group,
            None => "",
        }
    }

    /// Whether this names the same object as `(group, kind, name)`: upstream compares group,
    /// kind and name, never the version.
    pub fn names(&self, group: &str, kind: &str, name: &str) -> bool {
        self.group() == group && self.kind == kind && self.name == name
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    /// Freezes the step machine (`handleRolloutPaused`); the batch in flight still finishes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryStrategy>,
    /// Blue-green (Deployment and CloneSet only): recognised and shown, never driven here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub blue_green: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanaryStrategy {
    #[serde(default, deserialize_with = "null_as_default")]
    pub steps: Vec<CanaryStep>,
    /// At most one; display only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traffic_routings: Vec<TrafficRoutingRef>,
    /// Unready updated pods a batch tolerates; nil means 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_threshold: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub patch_pod_template_metadata: Option<serde_json::Value>,
    /// Canary style (a separate workload) for `apps/v1 Deployment` only; every other kind still
    /// runs partition style (`IsRealPartition`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub enable_extra_workload_for_canary: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_routing_ref: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_generate_canary_service: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanaryStep {
    /// Pods on the new revision at this step, cumulative: an int or `"p%"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<IntOrString>,
    /// Missing, or `{}`: wait for approval. `duration: N`: go on N seconds after the step's
    /// `lastUpdateTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<RolloutPause>,
    /// A percent of traffic to the new revision (display only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<String>,
    /// Gateway API matches (display only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub matches: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub request_header_modifier: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutPause {
    /// Seconds; `None` waits for approval, `0` goes on at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<i32>,
}

/// One traffic routing (display only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrafficRoutingRef {
    #[serde(default, deserialize_with = "null_as_default")]
    pub service: String,
    /// Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<IngressTrafficRouting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewayTrafficRouting>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Map<String, serde_json::Value>>")]
    pub custom_network_refs: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IngressTrafficRouting {
    /// Default `nginx`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_type: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GatewayTrafficRouting {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_route_name: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Initial`, `Healthy`, `Progressing`, `Terminating`, `Disabling`, `Disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<RolloutCondition>,
    /// Mirror of the sub-status (overwritten by the controller; never the place to approve).
    #[serde(default, deserialize_with = "null_as_default")]
    pub current_step_index: i32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub current_step_state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_status: Option<CanaryStatus>,
    /// Blue-green sub-status (display only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub blue_green_status: Option<serde_json::Value>,
}

/// `CommonStatus` + the canary fields. Fields Go writes without `omitempty` are always written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanaryStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_workload_generation: Option<i64>,
    #[serde(
        default,
        rename = "observedRolloutID",
        skip_serializing_if = "Option::is_none"
    )]
    pub observed_rollout_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_revision: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pod_template_hash: String,
    /// 1-based.
    #[serde(default, deserialize_with = "null_as_default")]
    pub current_step_index: i32,
    /// `current + 1`, or −1 at the last step; written by a user to jump.
    #[serde(default, deserialize_with = "null_as_default")]
    pub next_step_index: i32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub finalising_step: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub current_step_state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The base of the pause timer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub canary_revision: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub canary_replicas: i32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub canary_ready_replicas: i32,
}

/// A Rollout or BatchRelease condition (`lastUpdateTime` is the Initializing grace's base).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub reason: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub message: String,
}

// --- BatchRelease ----------------------------------------------------------------------------

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct BatchRelease {
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: BatchReleaseSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BatchReleaseStatus>,
}
crate::impl_resource!(
    BatchRelease,
    group = "rollouts.kruise.io",
    version = "v1beta1",
    kind = "BatchRelease",
    plural = "batchreleases",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchReleaseSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_ref: Option<WorkloadRef>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub release_plan: ReleasePlan,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReleasePlan {
    /// One per Rollout step: `canaryReplicas = step.replicas`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<ReleaseBatch>,
    /// `currentStepIndex − 1`; `None` means finalize (promote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_partition: Option<i32>,
    #[serde(default, rename = "rolloutID", skip_serializing_if = "Option::is_none")]
    pub rollout_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_threshold: Option<IntOrString>,
    /// `WaitResume` or `Immediate`, set when finalising.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizing_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub patch_pod_template_metadata: Option<serde_json::Value>,
    /// `Partition`, `Canary` or `BlueGreen`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_style: Option<String>,
    /// Required by the CRD (written even when false).
    #[serde(default, deserialize_with = "null_as_default")]
    pub enable_extra_workload_for_canary: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseBatch {
    pub canary_replicas: IntOrString,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchReleaseStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<RolloutCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_status: Option<BatchReleaseCanaryStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(
        default,
        rename = "observedRolloutID",
        skip_serializing_if = "Option::is_none"
    )]
    pub observed_rollout_id: Option<String>,
    /// −1 until Initialize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_workload_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_release_plan_hash: Option<String>,
    /// `Preparing`, `Progressing`, `Finalizing`, `Completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchReleaseCanaryStatus {
    /// `Upgrading`, `Verifying`, `Ready`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_state: Option<String>,
    /// 0-based; required by the CRD.
    #[serde(default, deserialize_with = "null_as_default")]
    pub current_batch: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_ready_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_ready_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_need_update_replicas: Option<i32>,
}

// --- Vocabulary ------------------------------------------------------------------------------

/// `status.phase` of a Rollout.
pub mod phase {
    pub const INITIAL: &str = "Initial";
    pub const HEALTHY: &str = "Healthy";
    pub const PROGRESSING: &str = "Progressing";
    pub const TERMINATING: &str = "Terminating";
    pub const DISABLING: &str = "Disabling";
    pub const DISABLED: &str = "Disabled";
}

/// `currentStepState` values (`CanaryStepState`).
pub mod step_state {
    /// `CanaryStepStateInit`.
    pub const BEFORE_STEP_UPGRADE: &str = "BeforeStepUpgrade";
    pub const STEP_UPGRADE: &str = "StepUpgrade";
    pub const STEP_TRAFFIC_ROUTING: &str = "StepTrafficRouting";
    pub const STEP_METRICS_ANALYSIS: &str = "StepMetricsAnalysis";
    pub const STEP_PAUSED: &str = "StepPaused";
    pub const STEP_READY: &str = "StepReady";
    pub const COMPLETED: &str = "Completed";
}

/// Rollout condition types and the Progressing condition's reasons.
pub mod condition {
    pub const PROGRESSING: &str = "Progressing";
    pub const SUCCEEDED: &str = "Succeeded";
    pub const TERMINATING: &str = "Terminating";

    pub const REASON_INITIALIZING: &str = "Initializing";
    pub const REASON_IN_ROLLING: &str = "InRolling";
    pub const REASON_PAUSED: &str = "Paused";
    pub const REASON_FINALISING: &str = "Finalising";
    pub const REASON_CANCELLING: &str = "Cancelling";
    pub const REASON_COMPLETED: &str = "Completed";
    pub const REASON_IN_TERMINATING: &str = "InTerminating";
}

/// `finalisingStep` values (`FinalisingStepType`).
pub mod finalising_step {
    pub const ROUTE_TRAFFIC_TO_NEW: &str = "FinalisingStepRouteTrafficToNew";
    pub const ROUTE_TRAFFIC_TO_STABLE: &str = "FinalisingStepRouteTrafficToStable";
    pub const RESTORE_STABLE_SERVICE: &str = "RestoreStableService";
    pub const REMOVE_CANARY_SERVICE: &str = "RemoveCanaryService";
    pub const RESUME_WORKLOAD: &str = "ResumeWorkload";
    pub const RELEASE_WORKLOAD_CONTROL: &str = "ReleaseWorkloadControl";
    pub const END: &str = "END";
}

/// BatchRelease `status.phase` and `canaryStatus.batchState`.
pub mod batch {
    pub const PREPARING: &str = "Preparing";
    pub const PROGRESSING: &str = "Progressing";
    pub const FINALIZING: &str = "Finalizing";
    pub const COMPLETED: &str = "Completed";

    pub const UPGRADING: &str = "Upgrading";
    pub const VERIFYING: &str = "Verifying";
    pub const READY: &str = "Ready";
}

impl Rollout {
    /// The canary sub-status, when a run has one.
    pub fn canary_status(&self) -> Option<&CanaryStatus> {
        self.status.as_ref().and_then(|s| s.canary_status.as_ref())
    }

    /// `status.phase`, `""` before the first reconcile.
    pub fn phase(&self) -> &str {
        self.status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .unwrap_or("")
    }

    /// The condition of type `type_`.
    pub fn condition(&self, type_: &str) -> Option<&RolloutCondition> {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
    }

    /// The steps of the canary strategy (empty for blue-green or none).
    pub fn steps(&self) -> &[CanaryStep] {
        self.spec
            .strategy
            .canary
            .as_ref()
            .map(|c| c.steps.as_slice())
            .unwrap_or(&[])
    }

    /// `GetRollingStyle`: `BlueGreen`, `Canary` or `Partition`.
    pub fn rolling_style(&self) -> &'static str {
        let strategy = &self.spec.strategy;
        if strategy.blue_green.is_some() {
            "BlueGreen"
        } else if strategy
            .canary
            .as_ref()
            .is_some_and(|c| c.enable_extra_workload_for_canary)
        {
            "Canary"
        } else {
            "Partition"
        }
    }

    /// `IsRealPartition`: false for an empty strategy, blue-green, or a canary-style
    /// `apps/v1 Deployment`; true otherwise (partition style on every other kind).
    pub fn is_real_partition(&self) -> bool {
        let strategy = &self.spec.strategy;
        if strategy.canary.is_none() && strategy.blue_green.is_none() {
            return false;
        }
        match self.rolling_style() {
            "BlueGreen" => false,
            "Canary" => {
                !(self.spec.workload_ref.api_version == "apps/v1"
                    && self.spec.workload_ref.kind == "Deployment")
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod id_field_names {
    use super::*;

    #[test]
    fn rollout_ids_keep_the_crd_spelling() {
        let plan = ReleasePlan {
            rollout_id: Some("r1".into()),
            ..ReleasePlan::default()
        };
        assert_eq!(serde_json::to_value(&plan).unwrap()["rolloutID"], "r1");
        let cs: CanaryStatus =
            serde_json::from_value(serde_json::json!({"observedRolloutID": "r2"})).unwrap();
        assert_eq!(cs.observed_rollout_id.as_deref(), Some("r2"));
        let st: BatchReleaseStatus =
            serde_json::from_value(serde_json::json!({"observedRolloutID": "r3"})).unwrap();
        assert_eq!(st.observed_rollout_id.as_deref(), Some("r3"));
    }
}
