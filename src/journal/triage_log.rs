//! The triage record: when each problem the console's triage listed appeared and cleared,
//! appended as JSON lines to `triage.jsonl` beside the journal. `kruise-tui report` reads it to
//! say what was broken during an incident window.

use std::path::{Path, PathBuf};

use anyhow::Result;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// Whether a problem appeared or cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Change {
    Appeared,
    Cleared,
}

/// One line of the triage record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TriageNote {
    pub time: Timestamp,
    pub context: Option<String>,
    /// The API server URL.
    pub cluster: String,
    /// The namespace of the problem's object (None: cluster-scoped or none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub change: Change,
    /// `stuck rollout`, `crash loop`…
    pub problem: String,
    /// `CloneSet demo/checkout`.
    pub subject: String,
    /// Why, as triage said it when it appeared (empty when it cleared).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

/// The triage record file.
#[derive(Debug, Clone)]
pub struct TriageLog {
    path: PathBuf,
}

impl TriageLog {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The record beside the journal at `journal` (same directory).
    pub fn beside(journal: &Path) -> Self {
        Self::new(journal.with_file_name("triage.jsonl"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends notes (creating the file, readable by the user only).
    pub fn append(&self, notes: &[TriageNote]) -> Result<()> {
        super::jsonl::append(&self.path, notes, "triage record")
    }

    /// Every note, oldest first; lines that do not parse are skipped and counted.
    pub fn read(&self) -> Result<(Vec<TriageNote>, usize)> {
        super::jsonl::read(&self.path, "triage record")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_beside_the_journal_and_a_bad_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = TriageLog::beside(&dir.path().join("state").join("journal.jsonl"));
        assert_eq!(log.path(), dir.path().join("state").join("triage.jsonl"));
        assert_eq!(log.read().expect("empty").0, Vec::new());
        let note = TriageNote {
            time: Timestamp::from_second(1_700_000_000).expect("time"),
            context: Some("demo".into()),
            cluster: "https://127.0.0.1:6443".into(),
            namespace: Some("demo".into()),
            change: Change::Appeared,
            problem: "crash loop".into(),
            subject: "CloneSet demo/checkout".into(),
            why: "1 pod crash-looping".into(),
        };
        let cleared = TriageNote {
            change: Change::Cleared,
            why: String::new(),
            ..note.clone()
        };
        log.append(std::slice::from_ref(&note)).expect("append");
        std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"{not json\n"))
            .expect("garbage");
        log.append(std::slice::from_ref(&cleared)).expect("append");
        let (notes, bad) = log.read().expect("read");
        assert_eq!(notes, vec![note, cleared]);
        assert_eq!(bad, 1);
    }
}
