//! Per-file evaluators. Each takes the case's `op` (if any) and the whole case, runs the embedded
//! logic on `input` and compares with `expected`, returning a readable diff on mismatch.

pub mod common;

/// Evaluates one case: Ok on a match, Err(diff or reason) otherwise.
pub type Evaluator = fn(Option<&str>, &serde_json::Value) -> Result<(), String>;

/// The evaluator for a vector file, by file stem. None means the file is unknown (a failure).
pub fn evaluator(file_stem: &str) -> Option<Evaluator> {
    let _ = file_stem;
    None
}
