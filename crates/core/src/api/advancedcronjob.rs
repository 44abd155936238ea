//! AdvancedCronJob (advancedcronjobs.apps.kruise.io/v1alpha1, short name `acj`): a cron job whose
//! template is a batch Job or a BroadcastJob.

use k8s_openapi::{
    api::{batch::v1::JobTemplateSpec, core::v1::ObjectReference},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::broadcastjob::BroadcastJobSpec;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct AdvancedCronJob {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: AdvancedCronJobSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AdvancedCronJobStatus>,
}
crate::impl_resource!(
    AdvancedCronJob,
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "AdvancedCronJob",
    plural = "advancedcronjobs",
    scope = NamespaceResourceScope
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedCronJobSpec {
    /// Cron format.
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub schedule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,
    /// Allow (default) | Forbid | Replace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_policy: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_jobs_history_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_jobs_history_limit: Option<i32>,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub template: CronJobTemplate,
}

/// Exactly one of the two templates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobTemplate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_template: Option<JobTemplateSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broadcast_job_template: Option<BroadcastJobTemplateSpec>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BroadcastJobTemplateSpec {
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "crate::api::common::null_as_default")]
    pub spec: BroadcastJobSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedCronJobStatus {
    /// Job | BroadcastJob.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(
        default,
        deserialize_with = "crate::api::common::null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub active: Vec<ObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,
}
