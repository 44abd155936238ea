//! The action layer, pure: one typed [`Action`] on one [`Target`] becomes the exact API request
//! that performs it (a JSON patch whose `test` ops pin the values the decision was made on, so
//! a concurrent change is never clobbered), its inverse (for the journal's revert), and the
//! check that, after a conflict, the action still means what the user asked.
//!
//! The console (confirm dialog, keys) and the subcommands (`rollout`, `set image`, `scale`) both
//! go through here; `crate::kube::act` sends the request, retries and journals it.

mod paths;
mod prepare;
pub mod preview;

#[cfg(test)]
mod tests;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use paths::Paths;
pub use prepare::{Recheck, prepare, recheck, template_diff};

use crate::api::kinds::{self, KindInfo};

/// The object an action is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The kind's Kubernetes name (`CloneSet`, `StatefulSet` of apps.kruise.io, ...).
    pub kind: String,
    /// API group (`apps.kruise.io`; `""` for core).
    pub group: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl Target {
    pub fn new(info: &KindInfo, namespace: Option<&str>, name: &str) -> Self {
        Self {
            kind: info.kind.to_owned(),
            group: info.group.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    /// The kind's description (names, versions, scope).
    pub fn info(&self) -> Option<&'static KindInfo> {
        kinds::KINDS
            .iter()
            .find(|k| k.kind == self.kind && k.group == self.group)
    }

    /// `CloneSet demo/web`, `Advanced StatefulSet demo/db`, as messages name it.
    pub fn describe(&self) -> String {
        let kind = match (self.kind.as_str(), self.group.as_str()) {
            ("StatefulSet", "apps.kruise.io") => "Advanced StatefulSet",
            ("DaemonSet", "apps.kruise.io") => "Advanced DaemonSet",
            (kind, _) => kind,
        };
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
    /// `PATCH`.
    pub verb: String,
    /// `/apis/apps.kruise.io/v1alpha1/namespaces/demo/clonesets/web`.
    pub path: String,
    /// `application/json-patch+json`.
    pub content_type: String,
    /// The JSON patch.
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
