//! `kruise-tui triage [--all-contexts | --context a,b] [-o text|json] [--timeout D]`: what is
//! unhealthy now, worst first, across contexts (`crate::kube::triage_all`: each context loaded
//! headless by the console's own watches and triage). All namespaces unless `-n`.
//!
//! Exit 0 when nothing is unhealthy and every context answered; 1 when a problem is listed or a
//! context could not be read (so a script can page on it); 2 on a usage error.

use anyhow::{Result, bail};
use serde_json::json;

use super::{block_on, emit};
use crate::{
    app::oncall::across::{self, AcrossRow, ContextTriage, Verdict, What},
    cli::{KubeArgs, TriageArgs, TriageOutput},
    config::{self, Paths},
    kube::triage_all,
};

/// `kruise-tui triage`.
pub fn run(kube: &KubeArgs, args: TriageArgs) -> Result<()> {
    let contexts = contexts(kube, args.all_contexts)?;
    let paths = Paths::resolve()?;
    let config = config::load(None, None, &paths);
    let mut base = kube.clone();
    base.all_namespaces = kube.namespace.is_none();
    let results = block_on(async {
        Ok(triage_all::triage_contexts(base, contexts, config, args.timeout).await)
    })?;
    let rows = across::merged(&results);
    let text = match args.output {
        TriageOutput::Text => table(&rows),
        TriageOutput::Json => rows.iter().map(|r| format!("{}\n", row_json(r))).collect(),
    };
    emit(&text)?;
    verdict(&results, rows.len())
}

/// The contexts to triage: every one of the kubeconfig, the `--context` list (comma-separated),
/// or the current one.
fn contexts(kube: &KubeArgs, all: bool) -> Result<Vec<String>> {
    if let Some(names) = kube.context_list() {
        if names.is_empty() {
            bail!("--context names no context");
        }
        return Ok(names);
    }
    let kubeconfig = kruise_client::connect::load_kubeconfig(&kube.source())?;
    if all {
        let names: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
        if names.is_empty() {
            bail!("the kubeconfig has no contexts");
        }
        return Ok(names);
    }
    match kubeconfig.current_context {
        Some(name) => Ok(vec![name]),
        None => bail!("the kubeconfig has no current context; pass --context or --all-contexts"),
    }
}

fn verdict(results: &[ContextTriage], rows: usize) -> Result<()> {
    let unread = results
        .iter()
        .filter(|r| !matches!(r.verdict, Verdict::Problems(_)))
        .count();
    let problems = rows - unread;
    match (problems, unread) {
        (0, 0) => Ok(()),
        (p, 0) => bail!("{p} problem{} found", plural(p)),
        (0, u) => bail!("{u} context{} could not be read", plural(u)),
        (p, u) => bail!(
            "{p} problem{} found; {u} context{} could not be read",
            plural(p),
            plural(u)
        ),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The worst-first table (a line saying so when nothing is unhealthy).
pub fn table(rows: &[AcrossRow]) -> String {
    if rows.is_empty() {
        return "Nothing unhealthy right now.\n".to_owned();
    }
    let header = ["CONTEXT", "PROBLEM", "OBJECT", "WHY"];
    let all: Vec<[&str; 4]> = std::iter::once(header)
        .chain(
            rows.iter()
                .map(|r| [r.context.as_str(), r.label(), r.subject(), r.why()]),
        )
        .collect();
    let widths: Vec<usize> = (0..3)
        .map(|i| all.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &all {
        for (i, width) in widths.iter().enumerate() {
            out.push_str(&format!("{:<width$}   ", r[i]));
        }
        out.push_str(r[3].lines().next().unwrap_or_default());
        out.push('\n');
    }
    out
}

/// One row as a JSON object (one per line with `-o json`).
pub fn row_json(row: &AcrossRow) -> serde_json::Value {
    match &row.what {
        What::Problem(problem) => json!({
            "context": row.context,
            "problem": problem.kind.label(),
            "subject": problem.subject,
            "why": problem.why,
            "remedy": problem.remedy,
            "pods": problem.weight,
            "object": problem.object.as_ref().map(|o| json!({
                "kind": o.kind.info().kind,
                "namespace": o.namespace,
                "name": o.name,
            })),
        }),
        What::Unreachable(why) | What::Forbidden(why) => {
            json!({"context": row.context, "problem": row.label(), "why": why})
        }
    }
}
