//! The layers of the workspace, held by Cargo: a crate can only import the crates its manifest
//! lists, so these tests read the manifests. The pure core (`crates/core`: the API types, the
//! Kruise port, the simulated kubelet's decisions) lists no IO crate, so no source of it can
//! import one; each crate lists only the crates below it, so no import runs back up. What a
//! manifest cannot forbid, the standard library's IO and clock, is checked in the core's
//! sources.

use std::path::{Path, PathBuf};

/// The workspace's crates, bottom up, with the crates of the workspace each may depend on.
const LAYERS: &[(&str, &[&str])] = &[
    ("crates/core", &[]),
    ("crates/client", &["kruise-tui-core"]),
    (
        "crates/controllers",
        &["kruise-tui-core", "kruise-tui-client"],
    ),
    (
        "crates/cluster",
        &[
            "kruise-tui-core",
            "kruise-tui-client",
            "kruise-tui-controllers",
        ],
    ),
    (
        ".",
        &[
            "kruise-tui-core",
            "kruise-tui-client",
            "kruise-tui-controllers",
            "kruise-tui-cluster",
        ],
    ),
];

/// Crates that mean IO, a runtime or a terminal: the core may list none of them.
const IO_CRATES: &[&str] = &[
    "kube",
    "kube-client",
    "kube-runtime",
    "tokio",
    "tokio-util",
    "futures",
    "hyper",
    "hyper-util",
    "http-body-util",
    "rustls",
    "tokio-rustls",
    "ratatui",
    "crossterm",
    "tracing-subscriber",
    "directories",
    "getrandom",
];

/// What the standard library offers that the core must not use: files, sockets, processes,
/// threads and the clock (time is a parameter there).
const FORBIDDEN_STD: &[&str] = &[
    "std::fs",
    "std::net",
    "std::process",
    "std::thread",
    "std::env",
    "SystemTime",
    "Instant::now",
    "Timestamp::now",
    "Zoned::now",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The names of the `[dependencies]` of the manifest in `dir` (not dev- or build-dependencies:
/// tests and build scripts may do IO).
fn dependencies(dir: &str) -> Vec<String> {
    let path = root().join(dir).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let manifest: toml::Table = text.parse().unwrap_or_else(|e| panic!("{path:?}: {e}"));
    manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|deps| deps.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn each_crate_depends_only_on_the_crates_below_it() {
    let workspace: Vec<&str> = [
        "kruise-tui-core",
        "kruise-tui-client",
        "kruise-tui-controllers",
        "kruise-tui-cluster",
    ]
    .to_vec();
    for (dir, allowed) in LAYERS {
        let deps = dependencies(dir);
        let upward: Vec<&String> = deps
            .iter()
            .filter(|d| workspace.contains(&d.as_str()) && !allowed.contains(&d.as_str()))
            .collect();
        assert!(
            upward.is_empty(),
            "{dir} depends on {upward:?}, which are not below it"
        );
    }
    assert!(dependencies("crates/cluster").contains(&"kruise-tui-core".to_owned()));
}

#[test]
fn the_core_lists_no_io_crate() {
    let deps = dependencies("crates/core");
    assert!(
        deps.contains(&"k8s-openapi".to_owned()),
        "read the core's manifest: {deps:?}"
    );
    let io: Vec<&String> = deps
        .iter()
        .filter(|d| IO_CRATES.contains(&d.as_str()))
        .collect();
    assert!(
        io.is_empty(),
        "crates/core must stay sans-IO, but lists {io:?}"
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir:?}: {e}"))
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
            FORBIDDEN_STD
                .iter()
                .filter(move |p| line.contains(**p))
                .map(move |p| (i + 1, *p))
        })
        .collect()
}

#[test]
fn the_core_reads_no_clock_and_does_no_io() {
    let mut files = Vec::new();
    rust_files(&root().join("crates/core/src"), &mut files);
    assert!(
        files.len() > 100,
        "found the core's files ({})",
        files.len()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        for (line, pattern) in violations(&text) {
            found.push(format!("{}:{line}: {pattern}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "crates/core must stay sans-IO:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_catches_an_io_use() {
    assert_eq!(
        violations("let t = std::time::SystemTime::now();"),
        [(1, "SystemTime")]
    );
    assert_eq!(
        violations("let now = Timestamp::now();"),
        [(1, "Timestamp::now")]
    );
    assert_eq!(violations("std::fs::read(p)"), [(1, "std::fs")]);
    assert!(violations("// Timestamp::now is not used here\nlet x = 1;").is_empty());
    // Pure crates the core uses (SidecarSet hash, whitelist regexes) are no IO.
    assert!(violations("use sha2::{Digest, Sha256};").is_empty());
    assert!(violations("let r = regex::Regex::new(expr);").is_empty());
}
