//! The conformance contract: every case of every vector file in `tests/conformance/` (and, when
//! `KRUISE_TUI_CONFORMANCE_DIR` is set, every JSON file there too) is evaluated against the
//! embedded Kruise logic. An unknown file, an unknown `op` or a case that cannot be evaluated is a
//! failure, never a skip. The last line is exactly `conformance: N passed, M failed`.

#[path = "conformance_eval/mod.rs"]
mod eval;

use std::{
    panic::{self, AssertUnwindSafe},
    path::{Path, PathBuf},
    process::ExitCode,
};

use serde_json::Value;

fn vector_files() -> Result<Vec<PathBuf>, String> {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")];
    if let Some(extra) = std::env::var_os("KRUISE_TUI_CONFORMANCE_DIR") {
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

fn main() -> ExitCode {
    // Panics inside a case are failures of that case; keep their default output quiet.
    panic::set_hook(Box::new(|_| {}));
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut passed = 0usize;
    let mut failed = 0usize;
    let files = match vector_files() {
        Ok(files) => files,
        Err(err) => {
            eprintln!("{err}");
            println!("conformance: 0 passed, 1 failed");
            return ExitCode::FAILURE;
        }
    };
    for path in files {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let doc: Value = match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(doc) => doc,
            Err(err) => {
                println!("FAIL {}: cannot load: {err}", path.display());
                failed += 1;
                continue;
            }
        };
        let Some(evaluator) = eval::evaluator(&name) else {
            println!("FAIL {}: unknown vector file {name:?}", path.display());
            failed += 1;
            continue;
        };
        let cases = doc
            .get("cases")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if cases.is_empty() {
            println!("FAIL {}: no cases", path.display());
            failed += 1;
            continue;
        }
        for case in &cases {
            let source = case
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or("<no source>");
            if filter
                .as_deref()
                .is_some_and(|f| !source.contains(f) && !name.contains(f))
            {
                continue;
            }
            let op = case.get("op").and_then(Value::as_str);
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| evaluator(op, case)))
                .unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    Err(format!("panicked: {msg}"))
                });
            match outcome {
                Ok(()) => passed += 1,
                Err(diff) => {
                    failed += 1;
                    println!("FAIL [{name}] {source}");
                    if let Some(op) = op {
                        println!("  op: {op}");
                    }
                    for line in diff.lines() {
                        println!("  {line}");
                    }
                }
            }
        }
    }
    println!("conformance: {passed} passed, {failed} failed");
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
