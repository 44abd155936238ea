//! The JSON files a data-driven test reads: those of its directory in the repository, then
//! those of the directory an environment variable names (more vectors kept elsewhere), each
//! directory's in name order.

use std::path::{Path, PathBuf};

/// `tests/<dir>/*.json`, then `$<var>/*.json` when `var` is set.
pub fn json_files(dir: &str, var: &str) -> Result<Vec<PathBuf>, String> {
    let mut dirs = vec![
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(dir),
    ];
    if let Some(extra) = std::env::var_os(var) {
        dirs.push(PathBuf::from(extra));
    }
    let mut files = Vec::new();
    for dir in dirs {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        found.sort();
        files.extend(found);
    }
    Ok(files)
}
