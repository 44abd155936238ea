//! `src/kruise` is a sans-IO port: it must not import an IO crate, read a clock or reach into
//! the IO layers of this crate. This test reads the sources and fails on any such reference.

use std::path::{Path, PathBuf};

/// Patterns that mean IO, a clock, or a dependency on an IO layer.
const FORBIDDEN: &[&str] = &[
    "kube::",
    "kube_runtime",
    "tokio",
    "ratatui",
    "crossterm",
    "hyper",
    "http_body",
    "rustls",
    "std::fs",
    "std::net",
    "std::process",
    "std::thread",
    "SystemTime",
    "Instant::now",
    "Timestamp::now",
    "Utc::now",
    "crate::cluster",
    "crate::kube",
    "crate::app",
    "crate::view",
    "crate::runtime",
    "crate::config",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("src/kruise is readable")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The forbidden references in one source text, as (line number, pattern).
fn violations(source: &str) -> Vec<(usize, &'static str)> {
    source
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .flat_map(|(i, line)| {
            FORBIDDEN
                .iter()
                .filter(move |p| line.contains(**p))
                .map(move |p| (i + 1, *p))
        })
        .collect()
}

#[test]
fn kruise_port_imports_no_io_crate_and_reads_no_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![root.join("kruise.rs")];
    rust_files(&root.join("kruise"), &mut files);
    assert!(files.len() > 20, "found the port's files ({})", files.len());
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source is readable");
        for (line, pattern) in violations(&text) {
            found.push(format!("{}:{line}: {pattern}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "src/kruise must stay sans-IO:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_catches_an_io_import() {
    assert_eq!(violations("use tokio::time::sleep;"), [(1, "tokio")]);
    assert_eq!(
        violations("let t = std::time::SystemTime::now();"),
        [(1, "SystemTime")]
    );
    assert_eq!(
        violations("use crate::kube::connect;"),
        [(1, "kube::"), (1, "crate::kube")]
    );
    assert!(violations("// tokio is not used here\nlet x = 1;").is_empty());
    // Pure crates the port uses (SidecarSet hash, whitelist regexes) are allowed.
    assert!(violations("use sha2::{Digest, Sha256};").is_empty());
    assert!(violations("let r = regex::Regex::new(expr);").is_empty());
}
