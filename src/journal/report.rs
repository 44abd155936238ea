//! The incident record (`kruise-tui report`, `x` in `:journal`): a Markdown timeline of one
//! window — this tool's journal entries (what was sent, by whom — the user the server
//! authenticated —, from which context, the result), the Events of the objects those entries
//! touched, and the triage rows seen — every time in UTC and local time. Pure: the caller reads the files and the cluster.

use std::collections::BTreeMap;

use jiff::{Timestamp, tz::TimeZone};

use super::{
    Entry,
    triage_log::{Change, TriageNote},
};

/// An Event of an object an action touched (or of its pods).
#[derive(Debug, Clone, PartialEq)]
pub struct ReportEvent {
    pub context: Option<String>,
    pub time: Timestamp,
    /// `CloneSet/checkout`, `Pod/checkout-x7k2p`.
    pub object: String,
    pub namespace: String,
    /// `Normal`, `Warning`.
    pub type_: String,
    pub reason: String,
    pub message: String,
    pub count: i32,
}

/// What a report covers and holds.
#[derive(Debug, Clone)]
pub struct ReportInput<'a> {
    pub since: Timestamp,
    pub until: Timestamp,
    /// Journal entries in the window (and scope), oldest first.
    pub entries: &'a [Entry],
    /// The triage record in scope, oldest first, the window's start included or not: what
    /// was open when the window began is read from before it.
    pub triage: &'a [TriageNote],
    pub events: &'a [ReportEvent],
    /// What could not be read (a context's events, a file), one line each.
    pub gaps: &'a [String],
    /// The local time zone beside UTC.
    pub tz: TimeZone,
}

fn utc(t: Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M:%S").to_string()
}

fn local(t: Timestamp, tz: &TimeZone) -> String {
    t.to_zoned(tz.clone()).strftime("%H:%M:%S %Z").to_string()
}

/// The first line of a text (messages can run to many).
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// A table cell: one line, no pipes.
fn cell(text: &str) -> String {
    first_line(text).replace('|', "\\|")
}

fn context_of(c: &Option<String>) -> &str {
    c.as_deref().unwrap_or("-")
}

/// One timeline row: when, what, detail, context.
struct Line {
    time: Timestamp,
    order: u8,
    what: String,
    detail: String,
    context: String,
}

/// The Markdown report.
pub fn markdown(input: &ReportInput<'_>) -> String {
    let ReportInput {
        since,
        until,
        entries,
        triage,
        events,
        gaps,
        tz,
    } = input;
    let (since, until) = (*since, *until);
    let in_window = |t: Timestamp| t >= since && t <= until;
    // What was open when the window began: the last note of each problem before it.
    let mut open_at_start: BTreeMap<(&str, &str, &str), &TriageNote> = BTreeMap::new();
    for n in triage.iter().filter(|n| n.time < since) {
        let key = (
            context_of(&n.context),
            n.problem.as_str(),
            n.subject.as_str(),
        );
        match n.change {
            Change::Appeared => {
                open_at_start.insert(key, n);
            }
            Change::Cleared => {
                open_at_start.remove(&key);
            }
        }
    }
    let mut lines: Vec<Line> = Vec::new();
    for e in entries.iter().filter(|e| in_window(e.time)) {
        let result = if e.result.ok {
            format!("→ {} OK", e.result.code.unwrap_or(200))
        } else {
            match e.result.code {
                Some(code) => format!("→ {code} refused: {}", first_line(&e.result.message)),
                None => format!("→ failed: {}", first_line(&e.result.message)),
            }
        };
        lines.push(Line {
            time: e.time,
            order: 1,
            what: format!("**action** {}", e.action.describe()),
            detail: format!(
                "{} — `{} {}` {result}",
                e.target.describe(),
                e.request.verb,
                e.request.path
            ),
            context: context_of(&e.context).to_owned(),
        });
    }
    for n in triage.iter().filter(|n| in_window(n.time)) {
        let (what, detail) = match n.change {
            Change::Appeared => (
                format!("triage: {} appeared", n.problem),
                format!("{} — {}", n.subject, first_line(&n.why)),
            ),
            Change::Cleared => (format!("triage: {} cleared", n.problem), n.subject.clone()),
        };
        lines.push(Line {
            time: n.time,
            order: 0,
            what,
            detail,
            context: context_of(&n.context).to_owned(),
        });
    }
    for ev in events.iter().filter(|e| in_window(e.time)) {
        let count = if ev.count > 1 {
            format!(" (×{})", ev.count)
        } else {
            String::new()
        };
        lines.push(Line {
            time: ev.time,
            order: 2,
            what: format!("event {} {}", ev.type_, ev.reason),
            detail: format!(
                "{}/{}: {}{count}",
                ev.namespace,
                ev.object,
                first_line(&ev.message)
            ),
            context: context_of(&ev.context).to_owned(),
        });
    }
    // Events carry whole seconds: within one second, what was seen (triage), then what was
    // sent, then what the cluster said about it.
    lines.sort_by(|a, b| {
        (a.time.as_second(), a.order, a.time).cmp(&(b.time.as_second(), b.order, b.time))
    });

    let mut out = String::new();
    out.push_str("# Incident report\n\n");
    out.push_str(&format!(
        "- Window: {} → {} UTC ({} → {})\n",
        utc(since),
        utc(until),
        local(since, tz),
        local(until, tz)
    ));
    let mut contexts: Vec<&str> = lines.iter().map(|l| l.context.as_str()).collect();
    contexts.sort_unstable();
    contexts.dedup();
    if !contexts.is_empty() {
        out.push_str(&format!("- Contexts: {}\n", contexts.join(", ")));
    }
    let actions: Vec<&Entry> = entries.iter().filter(|e| in_window(e.time)).collect();
    let failed = actions.iter().filter(|e| !e.result.ok).count();
    let appeared = triage
        .iter()
        .filter(|n| in_window(n.time) && n.change == Change::Appeared)
        .count();
    out.push_str(&format!(
        "- {} action{} sent ({failed} refused or failed), {} problem{} appeared, {} open when the window began, {} event{}\n",
        actions.len(),
        if actions.len() == 1 { "" } else { "s" },
        appeared,
        if appeared == 1 { "" } else { "s" },
        open_at_start.len(),
        events.iter().filter(|e| in_window(e.time)).count(),
        if events.len() == 1 { "" } else { "s" },
    ));
    if !open_at_start.is_empty() {
        out.push_str("\n## Open when the window began\n\n");
        for ((context, problem, subject), n) in &open_at_start {
            out.push_str(&format!(
                "- {problem}: {subject} ({context}), since {} UTC — {}\n",
                utc(n.time),
                first_line(&n.why)
            ));
        }
    }
    out.push_str("\n## Timeline\n\n");
    if lines.is_empty() {
        out.push_str("Nothing recorded in this window.\n");
    } else {
        out.push_str("| UTC | local | context | what | detail |\n|---|---|---|---|---|\n");
        for l in &lines {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                utc(l.time),
                local(l.time, tz),
                cell(&l.context),
                cell(&l.what),
                cell(&l.detail)
            ));
        }
    }
    if !actions.is_empty() {
        out.push_str("\n## Actions\n\n");
        for e in &actions {
            out.push_str(&format!(
                "### {} UTC — {} on {}\n\n- by: {}\n- context: {} ({})\n- request: `{} {}` ({})\n- result: {}\n",
                utc(e.time),
                e.action.describe(),
                e.target.describe(),
                e.user.as_deref().unwrap_or("(the server did not say)"),
                context_of(&e.context),
                e.cluster,
                e.request.verb,
                e.request.path,
                e.request.content_type,
                if e.result.ok {
                    format!("OK ({})", e.result.code.unwrap_or(200))
                } else {
                    format!(
                        "{} {}",
                        e.result.code.map_or("failed".to_owned(), |c| c.to_string()),
                        first_line(&e.result.message)
                    )
                },
            ));
            if let Some(inverse) = &e.inverse {
                out.push_str(&format!("- reverts with: {}\n", inverse.describe()));
            }
            out.push_str(&format!(
                "\n```json\n{}\n```\n\n",
                serde_json::to_string_pretty(&e.request.body).unwrap_or_default()
            ));
        }
    }
    if !gaps.is_empty() {
        out.push_str("\n## Not read\n\n");
        for g in gaps.iter() {
            out.push_str(&format!("- {g}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests;
