//! `kruise-tui report [--since D] [-o FILE]` and `kruise-tui journal [-o text|json] [--since D]`:
//! the incident record from the journal, the triage record and the clusters' Events
//! (`crate::journal::report` renders; `crate::kube::report` reads the Events). `--context a,b`
//! and `-n NS` narrow both to those contexts and that namespace.

use std::time::Duration;

use anyhow::{Context as _, Result};
use jiff::{Timestamp, tz::TimeZone};

use super::{block_on, emit};
use crate::{
    cli::{JournalArgs, KubeArgs, ReportArgs, TriageOutput},
    config::Paths,
    journal::{Entry, Journal},
};

/// Which contexts and namespace `--context a,b` / `-n` keep (None: all).
struct Scope {
    contexts: Option<Vec<String>>,
    namespace: Option<String>,
}

impl Scope {
    fn of(kube: &KubeArgs) -> Scope {
        Scope {
            contexts: kube.context_list(),
            namespace: kube.namespace.clone(),
        }
    }

    fn keeps(&self, context: &Option<String>, namespace: Option<&str>) -> bool {
        let context_ok = self.contexts.as_ref().is_none_or(|cs| {
            context
                .as_ref()
                .is_some_and(|c| cs.iter().any(|want| want == c))
        });
        let ns_ok = self
            .namespace
            .as_deref()
            .is_none_or(|want| namespace == Some(want));
        context_ok && ns_ok
    }
}

fn window_start(now: Timestamp, since: Duration) -> Result<Timestamp> {
    let span = jiff::SignedDuration::try_from(since).context("the window is too long")?;
    now.checked_sub(span)
        .context("the window reaches before the epoch")
}

/// `kruise-tui report`.
pub fn run(kube: &KubeArgs, args: ReportArgs) -> Result<()> {
    let paths = Paths::resolve()?;
    let until = Timestamp::now();
    let since = window_start(until, args.since)?;
    let scope = Scope::of(kube);
    let text = block_on(crate::kube::report::build(
        kube,
        &paths.journal_file,
        since,
        until,
        |context, namespace| scope.keeps(context, namespace),
    ))?;
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => emit(&text)?,
    }
    Ok(())
}

/// `kruise-tui journal`.
pub fn journal(kube: &KubeArgs, args: JournalArgs) -> Result<()> {
    let paths = Paths::resolve()?;
    let now = Timestamp::now();
    let since = args.since.map(|d| window_start(now, d)).transpose()?;
    let scope = Scope::of(kube);
    let (entries, bad) = Journal::new(&paths.journal_file).read()?;
    let tz = TimeZone::system();
    let mut text = String::new();
    for e in entries
        .iter()
        .filter(|e| since.is_none_or(|s| e.time >= s))
        .filter(|e| scope.keeps(&e.context, e.target.namespace.as_deref()))
    {
        match args.output {
            TriageOutput::Json => {
                text.push_str(&serde_json::to_string(e).context("cannot encode a journal entry")?)
            }
            TriageOutput::Text => text.push_str(&line(e, &tz)),
        }
        text.push('\n');
    }
    emit(&text)?;
    if bad > 0 {
        eprintln!(
            "kruise-tui: {bad} journal line(s) did not parse ({})",
            paths.journal_file.display()
        );
    }
    Ok(())
}

/// One journal entry as a line: when (UTC and local), where, what, on what, how it ended.
fn line(e: &Entry, tz: &TimeZone) -> String {
    let result = if e.result.ok {
        format!("ok {}", e.result.code.unwrap_or(200))
    } else {
        let first = e.result.message.lines().next().unwrap_or_default();
        match e.result.code {
            Some(code) => format!("refused {code}: {first}"),
            None => format!("failed: {first}"),
        }
    };
    format!(
        "{} UTC ({})  {}  {}  {}  {result}",
        e.time.strftime("%Y-%m-%d %H:%M:%S"),
        e.time.to_zoned(tz.clone()).strftime("%H:%M:%S %Z"),
        e.context.as_deref().unwrap_or("-"),
        e.action.describe(),
        e.target.describe(),
    )
}
