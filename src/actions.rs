//! The action layer, pure: one typed [`Action`] on one [`Target`] becomes the exact API request
//! that performs it (a JSON patch whose `test` ops pin the values the decision was made on, so
//! a concurrent change is never clobbered), its inverse (for the journal's revert), and the
//! check that, after a conflict, the action still means what the user asked.
//!
//! The console (confirm dialog, keys) and the subcommands (`rollout`, `set image`, `scale`) both
//! go through here; `crate::kube::act` sends the request, retries and journals it.

pub mod guard;
pub mod objects;
mod paths;
mod prepare;
pub mod preview;
pub mod rollout;
pub mod whatif;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_rollout;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use paths::Paths;
pub use prepare::{Recheck, prepare, recheck, template_diff};

use crate::api::kinds::{self, Kind, KindInfo};

/// The object an action is about.
///
/// The journal writes it as `{"kind", "group", "namespace", "name"}` (kind and group as the API
/// names them), as it always has, and reads it back through [`kinds::find`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "TargetRecord", try_from = "TargetRecord")]
pub struct Target {
    /// The kind (one of the constants of `api::kinds`).
    pub kind: &'static KindInfo,
    pub namespace: Option<String>,
    pub name: String,
}

/// [`Target`] as the journal stores it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct TargetRecord {
    kind: String,
    group: String,
    namespace: Option<String>,
    name: String,
}

impl From<Target> for TargetRecord {
    fn from(t: Target) -> Self {
        Self {
            kind: t.kind.kind.to_owned(),
            group: t.kind.group.to_owned(),
            namespace: t.namespace,
            name: t.name,
        }
    }
}

impl TryFrom<TargetRecord> for Target {
    type Error = String;

    fn try_from(r: TargetRecord) -> Result<Self, Self::Error> {
        let kind = kinds::find(&r.group, &r.kind)
            .ok_or_else(|| format!("unknown kind {:?} of group {:?}", r.kind, r.group))?;
        Ok(Self {
            kind,
            namespace: r.namespace,
            name: r.name,
        })
    }
}

impl Target {
    pub fn new(info: &'static KindInfo, namespace: Option<&str>, name: &str) -> Self {
        Self {
            kind: info,
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    /// The object the console watches as `kind` (a SidecarSet revision is a ControllerRevision).
    pub fn watched(kind: Kind, namespace: &str, name: &str) -> Self {
        Self::new(kind.info(), Some(namespace), name)
    }

    /// The API group (`apps.kruise.io`; `""` for core).
    pub fn group(&self) -> &'static str {
        self.kind.group
    }

    /// `CloneSet demo/web`, `Advanced StatefulSet demo/db`, as messages name it.
    pub fn describe(&self) -> String {
        let kind = self.kind.title;
        match &self.namespace {
            Some(ns) => format!("{kind} {ns}/{}", self.name),
            None => format!("{kind} {}", self.name),
        }
    }
}

/// What the user asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum Action {
    /// Set the rollout partition (a number, or a percent for CloneSets).
    Partition { value: IntOrString },
    /// Pause the rollout (pod updates stop; scaling goes on).
    Pause,
    /// Resume a paused rollout.
    Resume,
    /// Roll back: the template of a previous revision (`None`: the one before the current
    /// template) replaces the whole template.
    Undo { to_revision: Option<i64> },
    /// Replace the whole pod template (what an undo does once resolved; the journal's revert of
    /// an undo or an image change).
    SetTemplate {
        template: Value,
        /// Which revision it came from, for messages.
        revision: Option<String>,
    },
    /// Set container images (`container`, `image`).
    SetImage { images: Vec<(String, String)> },
    /// Set the replica count; with `pods`, scale down by deleting exactly those pods
    /// (`scaleStrategy.podsToDelete`, CloneSet).
    Scale { replicas: i32, pods: Vec<String> },
    /// Restart containers of the target pod in place: create a ContainerRecreateRequest
    /// (`containers` empty: every container of the pod). Nothing reverts a restart.
    Restart {
        containers: Vec<String>,
        strategy: RestartStrategy,
    },
    /// Set (`Some`) or remove (`None`) the `policy.kruise.io/delete-protection` label.
    Protect { value: Option<String> },
    /// Delete the target (only the object the user decided on: a uid precondition). Nothing
    /// reverts a delete.
    Delete,
    /// Approve a Kruise Rollout's current step (the step paused waiting for approval): the
    /// status write kubectl-kruise makes (`currentStepState: StepReady`). `step` is the 1-based
    /// step index the user saw; the action is refused when the Rollout is no longer there.
    /// Nothing reverts an approval.
    Approve { step: i32 },
}

/// A ContainerRecreateRequest's strategy and deadlines, as the restart form and
/// `kruise-tui restart` set them. [`Default`] is kubectl-kruise's
/// (`create ContainerRecreateRequest`: failurePolicy Fail, orderedRecreate false,
/// unreadyGracePeriodSeconds 3, minStartedSeconds 3, activeDeadlineSeconds 300,
/// ttlSecondsAfterFinished 1800).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestartStrategy {
    /// `Fail` (stop at the first container that fails) or `Ignore`.
    pub failure_policy: String,
    /// Recreate the next container only after the previous one is ready again.
    pub ordered_recreate: bool,
    /// Seconds the pod is kept not-ready before a container is stopped.
    pub unready_grace_period_seconds: i64,
    /// Seconds a recreated container must run (started and ready) to count as succeeded.
    pub min_started_seconds: i32,
    /// Seconds after which the request fails if not finished.
    pub active_deadline_seconds: i64,
    /// Seconds a finished request is kept before the controller deletes it.
    pub ttl_seconds_after_finished: i32,
}

impl Default for RestartStrategy {
    fn default() -> Self {
        Self {
            failure_policy: "Fail".to_owned(),
            ordered_recreate: false,
            unready_grace_period_seconds: 3,
            min_started_seconds: 3,
            active_deadline_seconds: 300,
            ttl_seconds_after_finished: 1800,
        }
    }
}

impl Action {
    /// A short description: `partition → 3`, `pause`, `image nginx=nginx:1.27`.
    pub fn describe(&self) -> String {
        match self {
            Action::Partition { value } => format!("partition → {}", intstr(value)),
            Action::Pause => "pause".to_owned(),
            Action::Resume => "resume".to_owned(),
            Action::Undo { to_revision: None } => "undo to the previous revision".to_owned(),
            Action::Undo {
                to_revision: Some(n),
            } => format!("undo to revision {n}"),
            Action::SetTemplate { revision, .. } => match revision {
                Some(r) => format!("template of {r}"),
                None => "restore the template".to_owned(),
            },
            Action::SetImage { images } => format!(
                "image {}",
                images
                    .iter()
                    .map(|(c, i)| format!("{c}={i}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            Action::Scale { replicas, pods } if pods.is_empty() => {
                format!("scale → {replicas}")
            }
            Action::Scale { replicas, pods } => {
                format!("scale → {replicas}, deleting {}", pods.join(", "))
            }
            Action::Restart { containers, .. } if containers.is_empty() => {
                "restart every container".to_owned()
            }
            Action::Restart { containers, .. } => format!("restart {}", containers.join(", ")),
            Action::Protect { value: Some(v) } => format!("delete-protection → {v}"),
            Action::Protect { value: None } => "delete-protection → off".to_owned(),
            Action::Delete => "delete".to_owned(),
            Action::Approve { step } => format!("approve step {step}"),
        }
    }
}

/// An int-or-percent as typed.
pub fn intstr(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// The exact API operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiRequest {
    /// `PATCH`, `POST` (create, at the collection's path) or `DELETE`.
    pub verb: String,
    /// `/apis/apps.kruise.io/v1alpha1/namespaces/demo/clonesets/web`.
    pub path: String,
    /// `application/json-patch+json` (PATCH), `application/json` (POST, DELETE).
    pub content_type: String,
    /// The JSON patch; the object to create; the DeleteOptions.
    pub body: Value,
}

impl ApiRequest {
    /// The request as the confirm dialog and `--dry-run` print it.
    pub fn render(&self) -> String {
        format!(
            "{} {}\nContent-Type: {}\n{}",
            self.verb,
            self.path,
            self.content_type,
            serde_json::to_string_pretty(&self.body).unwrap_or_default()
        )
    }
}

/// What the action layer needs to know about the server and the object.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectState {
    /// The served version the object was read at (`v1alpha1`, `v1beta1`).
    pub version: String,
    /// The plural REST name (`clonesets`).
    pub plural: String,
    /// The object as read (JSON, at `version`).
    pub object: Value,
    /// The workload's ControllerRevisions (for an undo), any order.
    pub revisions: Vec<RevisionInfo>,
}

/// One ControllerRevision as an undo sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionInfo {
    pub name: String,
    pub number: i64,
    /// The pod template it holds.
    pub template: Value,
}

/// An action made ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub target: Target,
    pub action: Action,
    pub request: ApiRequest,
    /// The action that undoes this one, where one exists.
    pub inverse: Option<Action>,
    /// What changes, in words (`partition 6 → 3`), one line per field.
    pub changes: Vec<String>,
    /// Facts worth knowing before confirming (e.g. what a partition still holds back).
    pub notes: Vec<String>,
    /// Actions sent after `request` succeeds, in order, each journaled on its own (a Kruise
    /// Rollout's undo: the workload's template first, then the Rollout's resume). Empty for
    /// every single-request action.
    pub then: Vec<Prepared>,
}

/// Why an action cannot be prepared (bad input, or not applicable to the object).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    #[error("{0}")]
    Invalid(String),
    #[error("{kind} has no {what}")]
    NotApplicable { kind: String, what: String },
    #[error("nothing to do: {0}")]
    NoChange(String),
}
