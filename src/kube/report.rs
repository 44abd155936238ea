//! What `kruise-tui report` (and `x` in `:journal`) reads from the clusters: the Events of the
//! objects the journal's entries touched — the object itself and, for a workload, its pods
//! (named `<workload>-…`) — in each entry's context and namespace, within the window. A
//! context that cannot be reached, or whose Events may not be listed, becomes one line of the
//! report's "Not read" section rather than an error.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

use anyhow::{Context as _, Result};
use jiff::{Timestamp, tz::TimeZone};
use k8s_openapi::api::core::v1::Event as CoreEvent;
use kube::{Api, api::ListParams};

use super::{connect::connect, errors::Plain as _, exec::last_seen};
use crate::{
    cli::KubeArgs,
    config::Paths,
    journal::{
        Entry, Journal,
        report::{ReportEvent, ReportInput, markdown},
        triage_log::{TriageLog, TriageNote},
    },
};

/// The incident report of `since..=until` as Markdown: the journal at `journal` and the
/// triage record beside it, narrowed by `keep(context, namespace)`, and the Events of what the
/// kept entries touched.
pub async fn build(
    kube: &KubeArgs,
    journal: &Path,
    since: Timestamp,
    until: Timestamp,
    keep: impl Fn(&Option<String>, Option<&str>) -> bool,
) -> Result<String> {
    let (entries, bad) = Journal::new(journal).read()?;
    let entries: Vec<Entry> = entries
        .into_iter()
        .filter(|e| e.time >= since && e.time <= until)
        .filter(|e| keep(&e.context, e.target.namespace.as_deref()))
        .collect();
    let (notes, bad_notes) = TriageLog::beside(journal).read()?;
    let notes: Vec<TriageNote> = notes
        .into_iter()
        .filter(|n| n.time <= until && keep(&n.context, n.namespace.as_deref()))
        .collect();
    let (events, mut gaps) = events(kube, &entries, since, until).await;
    if bad > 0 {
        gaps.push(format!("{bad} journal line(s) did not parse"));
    }
    if bad_notes > 0 {
        gaps.push(format!("{bad_notes} triage record line(s) did not parse"));
    }
    Ok(markdown(&ReportInput {
        since,
        until,
        entries: &entries,
        triage: &notes,
        events: &events,
        gaps: &gaps,
        tz: TimeZone::system(),
    }))
}

/// `R` in the console: the report of the window, every context, written to
/// `<state dir>/reports/incident-<until>.md`; returns the path.
pub async fn export(
    kube: KubeArgs,
    journal: Option<Journal>,
    since: Timestamp,
    until: Timestamp,
) -> Result<String> {
    let journal = journal.context("no journal: the state directory is not available")?;
    let text = build(&kube, journal.path(), since, until, |_, _| true).await?;
    let dir = match Paths::resolve() {
        Ok(paths) => paths.state_dir.join("reports"),
        Err(_) => journal
            .path()
            .parent()
            .map(|p| p.join("reports"))
            .context("no state directory")?,
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!("incident-{}.md", until.strftime("%Y%m%dT%H%M%SZ")));
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path.display().to_string())
}

/// The Events of what `entries` touched, oldest first, and what could not be read.
pub async fn events(
    kube: &KubeArgs,
    entries: &[Entry],
    since: Timestamp,
    until: Timestamp,
) -> (Vec<ReportEvent>, Vec<String>) {
    // context → namespace → names touched.
    let mut touched: BTreeMap<Option<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for e in entries {
        if let Some(ns) = &e.target.namespace {
            touched
                .entry(e.context.clone())
                .or_default()
                .entry(ns.clone())
                .or_default()
                .insert(e.target.name.clone());
        }
    }
    let mut out = Vec::new();
    let mut gaps = Vec::new();
    for (context, namespaces) in touched {
        let mut args = kube.clone();
        args.context = context.clone();
        let shown = context.as_deref().unwrap_or("(current)");
        let conn = match connect(&args.source(), None).await {
            Ok(conn) => conn,
            Err(err) => {
                gaps.push(format!("context {shown}: {err:#}"));
                continue;
            }
        };
        for (ns, names) in namespaces {
            let list = Api::<CoreEvent>::namespaced(conn.client.clone(), &ns)
                .list(&ListParams::default())
                .await
                .plain();
            let list = match list {
                Ok(list) => list,
                Err(err) => {
                    gaps.push(format!("context {shown}, namespace {ns}: events: {err:#}"));
                    continue;
                }
            };
            for ev in list.items {
                let o = &ev.involved_object;
                let name = o.name.as_deref().unwrap_or_default();
                let kind = o.kind.as_deref().unwrap_or_default();
                let ours = names.contains(name)
                    || (kind == "Pod" && names.iter().any(|n| is_pod_of(name, n)));
                let Some(time) = last_seen(&ev).filter(|t| *t >= since && *t <= until) else {
                    continue;
                };
                if !ours {
                    continue;
                }
                out.push(ReportEvent {
                    context: context.clone(),
                    time,
                    object: format!("{kind}/{name}"),
                    namespace: ns.clone(),
                    type_: ev.type_.clone().unwrap_or_default(),
                    reason: ev.reason.clone().unwrap_or_default(),
                    message: ev.message.clone().unwrap_or_default(),
                    count: ev.count.unwrap_or(1),
                });
            }
        }
    }
    out.sort_by_key(|e| e.time);
    (out, gaps)
}

/// Whether `pod` is named as a pod of workload `name` is: `<name>-<suffix>` with a suffix of
/// letters and digits only (a CloneSet's `web-x7k2p`, an Advanced StatefulSet's `db-0`), so
/// `web`'s pods are not `web-api`'s.
fn is_pod_of(pod: &str, name: &str) -> bool {
    pod.strip_prefix(name)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|suffix| {
            !suffix.is_empty() && suffix.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

#[cfg(test)]
mod tests {
    use super::is_pod_of;

    #[test]
    fn pods_of_a_workload_are_named_after_it_with_one_suffix() {
        assert!(is_pod_of("web-x7k2p", "web"));
        assert!(is_pod_of("db-0", "db"));
        assert!(!is_pod_of("web-api-x7k2p", "web"));
        assert!(!is_pod_of("web", "web"));
        assert!(!is_pod_of("webx-1", "web"));
    }
}
