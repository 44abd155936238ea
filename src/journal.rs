//! The action journal: every mutating request this tool sends, appended as one JSON line to
//! `journal.jsonl` in the state dir (`kruise-tui config paths` prints where), with its result
//! and, where one exists, the action that reverts it. The console's `:journal` view reads it.

mod jsonl;
pub mod report;
pub mod triage_log;

use std::path::{Path, PathBuf};

use anyhow::Result;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::actions::{Action, ApiRequest, Target};

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub time: Timestamp,
    pub context: Option<String>,
    /// Who the server took the sender for (its SelfSubjectReview's username), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The API server URL.
    pub cluster: String,
    pub target: Target,
    pub action: Action,
    pub request: ApiRequest,
    pub result: Outcome,
    /// The action that undoes this one (sent against the object as it is then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inverse: Option<Action>,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub ok: bool,
    /// HTTP status, when the server answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// The server's message (or what went wrong before the server answered).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// The journal file.
#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
}

impl Journal {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry (creating the file and its directory, readable by the user only).
    pub fn append(&self, entry: &Entry) -> Result<()> {
        jsonl::append(&self.path, std::slice::from_ref(entry), "journal")
    }

    /// Every entry, oldest first. A line that does not parse (a newer or hand-edited file) is
    /// skipped and counted.
    pub fn read(&self) -> Result<(Vec<Entry>, usize)> {
        jsonl::read(&self.path, "journal")
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;

    #[test]
    fn entries_round_trip_and_a_bad_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = Journal::new(dir.path().join("state").join("journal.jsonl"));
        assert_eq!(journal.read().expect("empty").0.len(), 0);
        let entry = Entry {
            time: Timestamp::from_second(1_700_000_000).expect("time"),
            context: Some("demo".into()),
            user: Some("kubernetes-admin".into()),
            cluster: "https://127.0.0.1:6443".into(),
            target: Target {
                kind: &crate::api::kinds::CLONESET,
                namespace: Some("demo".into()),
                name: "web".into(),
            },
            action: Action::Partition {
                value: IntOrString::Int(3),
            },
            request: ApiRequest {
                verb: "PATCH".into(),
                path: "/apis/apps.kruise.io/v1alpha1/namespaces/demo/clonesets/web".into(),
                content_type: "application/json-patch+json".into(),
                body: serde_json::json!([]),
            },
            result: Outcome {
                ok: true,
                code: Some(200),
                message: String::new(),
            },
            inverse: Some(Action::Partition {
                value: IntOrString::Int(6),
            }),
        };
        journal.append(&entry).expect("append");
        std::fs::OpenOptions::new()
            .append(true)
            .open(journal.path())
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"{not json\n"))
            .expect("garbage");
        journal.append(&entry).expect("append");
        let (entries, bad) = journal.read().expect("read");
        assert_eq!(entries, vec![entry.clone(), entry]);
        assert_eq!(bad, 1);
    }

    /// A line as the previous version wrote it (the target's kind and group as two strings)
    /// reads into the kind's descriptor, and is written back the same way.
    #[test]
    fn a_line_of_the_previous_version_reads_and_writes_the_same_target() {
        let line = r#"{"time":"2026-11-20T10:00:00Z","context":"demo","cluster":"https://127.0.0.1:6443","target":{"kind":"StatefulSet","group":"apps.kruise.io","namespace":"demo","name":"db"},"action":{"action":"pause"},"request":{"verb":"PATCH","path":"/apis/apps.kruise.io/v1beta1/namespaces/demo/statefulsets/db","content_type":"application/json-patch+json","body":[]},"result":{"ok":true,"code":200,"message":""}}"#;
        let entry: Entry = serde_json::from_str(line).expect("the old format reads");
        assert_eq!(entry.target.kind, &crate::api::kinds::ADVANCED_STATEFULSET);
        assert_eq!(entry.target.describe(), "Advanced StatefulSet demo/db");
        let written = serde_json::to_value(&entry.target).expect("target");
        assert_eq!(
            written,
            serde_json::json!({"kind": "StatefulSet", "group": "apps.kruise.io", "namespace": "demo", "name": "db"})
        );
        let apps: Result<Target, _> = serde_json::from_value(serde_json::json!(
            {"kind": "StatefulSet", "group": "apps", "namespace": "demo", "name": "db"}
        ));
        assert_eq!(apps.expect("apps/v1").kind, &crate::api::kinds::STATEFULSET);
        let unknown: Result<Target, _> = serde_json::from_value(serde_json::json!(
            {"kind": "Widget", "group": "example.com", "namespace": null, "name": "w"}
        ));
        assert!(unknown.is_err());
    }
}
