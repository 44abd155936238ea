//! The conformance contract: every case of every vector file in `tests/conformance/` (and, when
//! `KRUISE_TUI_CONFORMANCE_DIR` is set, every JSON file there too) is evaluated against the
//! embedded Kruise logic. An unknown file, an unknown `op` or a case that cannot be evaluated is a
//! failure, never a skip. The last line is exactly `conformance: N passed, M failed`.

#[path = "conformance_eval/mod.rs"]
mod eval;
#[path = "support/json_files.rs"]
mod json_files;

use std::{
    panic::{self, AssertUnwindSafe},
    path::PathBuf,
    process::ExitCode,
};

use serde_json::Value;

fn vector_files() -> Result<Vec<PathBuf>, String> {
    json_files::json_files("conformance", "KRUISE_TUI_CONFORMANCE_DIR")
}

/// The command line, read as libtest reads it (`cargo test --test conformance -- ARGS`):
/// positional arguments are filters (a case runs when its source or file name contains one, or
/// equals one with `--exact`), `--skip X` leaves out what matches X, and the values of libtest's
/// other options (`--test-threads 2`, `--format pretty`, ...) are consumed, never taken for
/// filters. Flags this runner has no use for (`--nocapture`, `--quiet`, ...) are ignored.
#[derive(Debug, Default)]
struct Args {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
    list: bool,
}

/// libtest options that take a value.
const VALUE_OPTIONS: &[&str] = &[
    "--test-threads",
    "--skip",
    "--logfile",
    "--format",
    "--color",
    "--shuffle-seed",
    "-Z",
];

impl Args {
    fn parse(args: impl IntoIterator<Item = String>) -> Self {
        let mut out = Self::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) if n.starts_with('-') => (n.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            if VALUE_OPTIONS.contains(&name.as_str()) {
                let value = inline.or_else(|| args.next()).unwrap_or_default();
                if name == "--skip" {
                    out.skips.push(value);
                }
            } else if name == "--exact" {
                out.exact = true;
            } else if name == "--list" {
                out.list = true;
            } else if !arg.starts_with('-') {
                out.filters.push(arg);
            }
        }
        out
    }

    fn matches(&self, pattern: &str, source: &str, file: &str) -> bool {
        if self.exact {
            source == pattern || file == pattern
        } else {
            source.contains(pattern) || file.contains(pattern)
        }
    }

    /// Whether the case `source` of vector file `file` runs.
    fn selects(&self, source: &str, file: &str) -> bool {
        (self.filters.is_empty() || self.filters.iter().any(|f| self.matches(f, source, file)))
            && !self.skips.iter().any(|s| self.matches(s, source, file))
    }
}

fn main() -> ExitCode {
    // Panics inside a case are failures of that case; keep their default output quiet.
    panic::set_hook(Box::new(|_| {}));
    let args = Args::parse(std::env::args().skip(1));
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
            if !args.selects(source, &name) {
                continue;
            }
            if args.list {
                println!("{name}/{source}: test");
                passed += 1;
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
    if args.list {
        println!("{passed} tests");
        return if failed > 0 {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        };
    }
    println!("conformance: {passed} passed, {failed} failed");
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
