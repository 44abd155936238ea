//! Append-only JSON-lines files readable by the user only: the journal and the triage record.

use std::{
    io::{BufRead as _, Write as _},
    path::Path,
};

use anyhow::{Context as _, Result};
use serde::{Serialize, de::DeserializeOwned};

/// Appends one line per item (creating the file and its directory, mode 0600), in one write.
pub fn append<T: Serialize>(path: &Path, items: &[T], what: &str) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .with_context(|| format!("cannot open the {what} {}", path.display()))?;
    let mut text = String::new();
    for item in items {
        text.push_str(
            &serde_json::to_string(item).with_context(|| format!("cannot encode a {what} line"))?,
        );
        text.push('\n');
    }
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write the {what} {}", path.display()))
}

/// Every line, oldest first; a line that does not parse (a newer or hand-edited file) is
/// skipped and counted. A missing file is empty.
pub fn read<T: DeserializeOwned>(path: &Path, what: &str) -> Result<(Vec<T>, usize)> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read the {what} {}", path.display()));
        }
    };
    let mut items = Vec::new();
    let mut bad = 0;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.with_context(|| format!("cannot read the {what} {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(&line) {
            Ok(item) => items.push(item),
            Err(_) => bad += 1,
        }
    }
    Ok((items, bad))
}
