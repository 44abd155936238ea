//! The embedded API server answers as a real kube-apiserver does: every case of
//! `tests/apiserver-corpus/` (a real kube-apiserver v1.32.13's recorded answers; format in its
//! README), and of any directory named by `KRUISE_TUI_APISERVER_CORPUS_DIR`, is replayed against
//! an embedded cluster in the reference's shape (`demo-server --no-controllers
//! --no-kruise-webhooks`: Kruise CRDs served, no Kruise webhooks, no controllers) and each answer
//! compared after the README's normalization. The last line is `apiserver-corpus: N passed, M
//! failed`; every failed step is printed with both answers.
//!
//! `cargo test --test apiserver_corpus -- NAME...` runs the cases whose name contains a NAME.

#[path = "support/corpus.rs"]
mod corpus;
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
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apiserver-corpus")];
    if let Some(extra) = std::env::var_os("KRUISE_TUI_APISERVER_CORPUS_DIR") {
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
        })
        .await
        .expect("the embedded cluster starts");
        let server = replay::Server::embedded(demo.cluster());
        let total = cases.len();
        let results: Vec<(String, Result<(), String>)> = futures::stream::iter(cases)
            .map(|(name, case)| {
                let server = &server;
                async move {
                    let r = server.run_case(&case).await;
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
        for (name, _) in &failed {
            println!("failed: {name}");
        }
        println!(
            "apiserver-corpus: {} passed, {} failed",
            total - failed.len(),
            failed.len()
        );
        demo.shutdown().await;
        failed.len()
    });
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
