//! The embedded API server answers as a real kube-apiserver does: every case of
//! `tests/apiserver-corpus/` (a real kube-apiserver v1.32.13's recorded answers; format in its
//! README), and of any directory named by `KRUISE_TUI_APISERVER_CORPUS_DIR`, is replayed against
//! an embedded cluster in the reference's shape (`demo-server --no-controllers
//! --no-kruise-webhooks`: Kruise CRDs served, no Kruise webhooks, no controllers) and each answer
//! compared after the README's normalization. The last line is `apiserver-corpus: N passed, M
//! failed`; every failed step is printed with both answers.
//!
//! `cargo test --test apiserver_corpus -- NAME...` runs the cases whose name contains a NAME.
//!
//! `tests/apiserver-corpus/DIVERGENCES` lists, one `category/case  reason` a line, the cases the
//! embedded server is known not to answer yet. The test fails when any other case fails, and
//! when a listed case passes (take it off the list): the list only shrinks.

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/json_files.rs"]
mod json_files;
#[path = "support/corpus_replay.rs"]
mod replay;

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use futures::StreamExt as _;
use kruise_tui::cluster::demo::{DemoCluster, DemoOptions};
use serde_json::Value;

fn corpus_files() -> Result<Vec<PathBuf>, String> {
    json_files::json_files("apiserver-corpus", "KRUISE_TUI_APISERVER_CORPUS_DIR")
}

/// Positional arguments are name filters; libtest's own flags are ignored.
fn filters() -> Vec<String> {
    let mut out = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if matches!(
            a.as_str(),
            "--test-threads" | "--skip" | "--logfile" | "--format" | "--color" | "-Z"
        ) {
            args.next();
        } else if !a.starts_with('-') {
            out.push(a);
        }
    }
    out
}

/// The listed known divergences (`category/case` at the start of each non-comment line).
fn divergences() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apiserver-corpus/DIVERGENCES");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn main() -> ExitCode {
    let files = match corpus_files() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let filters = filters();
    let mut cases: Vec<(String, Value)> = Vec::new();
    for f in &files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("cannot read {}: {e}", f.display());
                return ExitCode::FAILURE;
            }
        };
        let doc: Value = match serde_json::from_str(&text) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{} is not JSON: {e}", f.display());
                return ExitCode::FAILURE;
            }
        };
        if doc["format"] != 1 {
            eprintln!("{}: unknown format {}", f.display(), doc["format"]);
            return ExitCode::FAILURE;
        }
        let category = doc["category"].as_str().unwrap_or("?").to_string();
        for c in doc["cases"].as_array().into_iter().flatten() {
            let name = format!("{category}/{}", c["name"].as_str().unwrap_or("?"));
            if filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())) {
                cases.push((name, c.clone()));
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let failed = runtime.block_on(async move {
        let dir = tempfile::tempdir().expect("a temp dir");
        let demo = DemoCluster::start(DemoOptions {
            listen: "127.0.0.1:0".parse().expect("an address"),
            kubeconfig_out: dir.path().join("kubeconfig"),
            pods: None,
            seed: false,
            nodes: true,
            controllers: false,
            kruise_webhooks: false,
            remove_kubeconfig: true,
            kruise_version: kruise_tui::kruise::KruiseVersion::V1_8,
            kruise_rollout: false,
            streaming_lists: true,
            metrics: true,
        })
        .await
        .expect("the embedded cluster starts");
        let server = replay::Server::embedded(demo.cluster());
        let total = cases.len();
        let results: Vec<(String, Result<(), String>)> = futures::stream::iter(cases)
            .map(|(name, case)| {
                let server = &server;
                async move {
                    // Some recorded answers depend on timing the real server had too (the
                    // order of managedFields entries written in the same second): a case that
                    // fails is replayed once, in a fresh namespace, and says so.
                    let mut r = server.run_case(&case).await;
                    if let Err(first) = &r {
                        let again = server.run_case(&case).await;
                        if again.is_ok() {
                            println!("passed when replayed: {name}; the first run:\n{first}");
                        }
                        r = again;
                    }
                    (name, r)
                }
            })
            .buffer_unordered(8)
            .collect()
            .await;
        let mut failed: Vec<&(String, Result<(), String>)> =
            results.iter().filter(|(_, r)| r.is_err()).collect();
        failed.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, r) in &failed {
            if let Err(e) = r {
                println!("FAILED {name}\n{e}\n");
            }
        }
        let known = divergences();
        let mut unexpected = 0;
        for (name, _) in &failed {
            let listed = known.iter().any(|k| k == name);
            println!(
                "failed: {name}{}",
                if listed { " (known divergence)" } else { "" }
            );
            unexpected += usize::from(!listed);
        }
        for (name, r) in &results {
            if r.is_ok() && known.iter().any(|k| k == name) {
                println!("passes now, take it off tests/apiserver-corpus/DIVERGENCES: {name}");
                unexpected += 1;
            }
        }
        println!(
            "apiserver-corpus: {} known divergences, {unexpected} unexpected results",
            failed.iter().filter(|(n, _)| known.contains(n)).count()
        );
        println!(
            "apiserver-corpus: {} passed, {} failed",
            total - failed.len(),
            failed.len()
        );
        demo.shutdown().await;
        unexpected
    });
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
