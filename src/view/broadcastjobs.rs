//! The `:bcj` view: BroadcastJobs with desired/active/succeeded/failed pods, phase, parallelism,
//! completion policy and age; and one job in detail with its pods per node (Enter).

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use super::{
    age,
    header::role,
    seedlist::{detail_block, detail_object, list_table},
    widgets::table::{self, Cell, Column},
};
use crate::{
    api::BroadcastJob,
    app::{App, broadcastjobs::BroadcastJobsView},
    config::Role,
};

pub fn render(app: &App, view: &BroadcastJobsView, area: Rect, buf: &mut Buffer) {
    if view.detail.is_some() {
        return detail(app, view, area, buf);
    }
    let jobs = view.jobs();
    let columns = vec![
        Column::new("NAMESPACE", Constraint::Length(12), 2),
        Column::new("NAME", Constraint::Fill(1), 0),
        Column::new("DESIRED", Constraint::Length(7), 0),
        Column::new("ACTIVE", Constraint::Length(6), 0),
        Column::new("SUCCEEDED", Constraint::Length(9), 0),
        Column::new("FAILED", Constraint::Length(6), 0),
        Column::new("PHASE", Constraint::Length(10), 0),
        Column::new("PARALLEL", Constraint::Length(8), 1),
        Column::new("POLICY", Constraint::Length(7), 1),
        Column::new("DEADLINE", Constraint::Length(8), 2),
        Column::new("TTL", Constraint::Length(6), 2),
        Column::new("AGE", Constraint::Length(5), 1),
    ];
    let spec = list_table(
        app,
        view,
        ("BroadcastJobs", "No BroadcastJob here"),
        "enter: pods per node",
        columns,
    );
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(j) = jobs.get(i) else {
            return Vec::new();
        };
        let s = counts(j);
        vec![
            Cell::from(j.metadata.namespace.clone().unwrap_or_default()),
            Cell::from(j.metadata.name.clone().unwrap_or_default()),
            Cell::from(s.desired.to_string()),
            Cell::from(s.active.to_string()),
            Cell::from(s.succeeded.to_string()),
            failed_cell(app, s.failed),
            phase_cell(app, &s.phase),
            Cell::from(parallelism(j)),
            Cell::from(policy_type(j)),
            Cell::from(seconds(deadline(j))),
            Cell::from(seconds(ttl(j))),
            Cell::from(age(app.now, created(j))),
        ]
    });
}

struct Counts {
    desired: i32,
    active: i32,
    succeeded: i32,
    failed: i32,
    phase: String,
}

fn counts(j: &BroadcastJob) -> Counts {
    let s = j.status.as_ref();
    Counts {
        desired: s.map_or(0, |s| s.desired),
        active: s.map_or(0, |s| s.active),
        succeeded: s.map_or(0, |s| s.succeeded),
        failed: s.map_or(0, |s| s.failed),
        phase: s
            .and_then(|s| s.phase.clone())
            .unwrap_or_else(|| "-".to_owned()),
    }
}

fn created(j: &BroadcastJob) -> Option<jiff::Timestamp> {
    j.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

/// `spec.parallelism`, or `all` (upstream: unlimited when unset).
fn parallelism(j: &BroadcastJob) -> String {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match &j.spec.parallelism {
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "all".to_owned(),
    }
}

/// `completionPolicy.type`; upstream defaults it to `Always`.
fn policy_type(j: &BroadcastJob) -> String {
    j.spec
        .completion_policy
        .as_ref()
        .and_then(|p| p.type_.clone())
        .unwrap_or_else(|| "Always".to_owned())
}

fn deadline(j: &BroadcastJob) -> Option<i64> {
    j.spec
        .completion_policy
        .as_ref()
        .and_then(|p| p.active_deadline_seconds)
}

fn ttl(j: &BroadcastJob) -> Option<i64> {
    j.spec
        .completion_policy
        .as_ref()
        .and_then(|p| p.ttl_seconds_after_finished)
        .map(i64::from)
}

fn seconds(s: Option<i64>) -> String {
    s.map_or_else(|| "-".to_owned(), |s| format!("{s}s"))
}

fn failed_cell<'a>(app: &App, failed: i32) -> Cell<'a> {
    if failed > 0 {
        Cell::from(Span::styled(
            failed.to_string(),
            role(app, Role::StatusError),
        ))
    } else {
        Cell::from("0")
    }
}

fn phase_cell<'a>(app: &App, phase: &str) -> Cell<'a> {
    // Upstream writes the phase in lower case (`completed`, `running`, `failed`, `paused`).
    let r = match phase.to_ascii_lowercase().as_str() {
        "completed" => Role::StatusOk,
        "failed" => Role::StatusError,
        "paused" => Role::StatusWarn,
        _ => Role::Text,
    };
    Cell::from(Span::styled(phase.to_owned(), role(app, r)))
}

fn detail(app: &App, view: &BroadcastJobsView, area: Rect, buf: &mut Buffer) {
    let (ns, name) = view.detail.clone().unwrap_or_default();
    let block = detail_block(app, format!("BroadcastJob {ns}/{name}"));
    let lines = match detail_object(app, &view.listing, view.current(), "BroadcastJob") {
        Ok((_, job)) => detail_lines(app, view, job),
        Err(line) => vec![line],
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block)
        .render(area, buf);
}

fn field<'a>(app: &App, name: &str, value: impl Into<Span<'a>>) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!(" {name:<18}"), role(app, Role::Muted)),
        value.into(),
    ])
}

fn detail_lines<'a>(app: &App, view: &BroadcastJobsView, job: &BroadcastJob) -> Vec<Line<'a>> {
    let c = counts(job);
    let status = job.status.as_ref();
    let mut lines = vec![
        field(
            app,
            "Phase",
            if job.spec.paused {
                Span::styled(format!("{} (paused)", c.phase), role(app, Role::StatusWarn))
            } else {
                Span::raw(c.phase.clone())
            },
        ),
        field(
            app,
            "Pods",
            format!(
                "{} desired, {} active, {} succeeded, {} failed",
                c.desired, c.active, c.succeeded, c.failed
            ),
        ),
        field(app, "Parallelism", parallelism(job)),
        field(
            app,
            "Completion",
            format!(
                "{}; active deadline {}; ttl after finished {}",
                policy_type(job),
                seconds(deadline(job)),
                seconds(ttl(job))
            ),
        ),
    ];
    if let Some(f) = &job.spec.failure_policy {
        lines.push(field(
            app,
            "Failure policy",
            format!(
                "{} (restart limit {})",
                f.type_.as_deref().unwrap_or("FailFast"),
                f.restart_limit.unwrap_or(0)
            ),
        ));
    }
    let time = |t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>| {
        t.map_or_else(
            || "-".to_owned(),
            |t| {
                format!(
                    "{} ({} ago)",
                    t.0.strftime("%Y-%m-%d %H:%M UTC"),
                    age(app.now, Some(t.0))
                )
            },
        )
    };
    lines.push(field(
        app,
        "Started",
        time(status.and_then(|s| s.start_time.as_ref())),
    ));
    lines.push(field(
        app,
        "Completed",
        time(status.and_then(|s| s.completion_time.as_ref())),
    ));
    if let Some(cond) = status.and_then(|s| s.conditions.last()) {
        lines.push(field(
            app,
            "Condition",
            format!(
                "{}={} {}",
                cond.type_,
                cond.status,
                cond.message.as_deref().unwrap_or_default()
            ),
        ));
    }
    lines.push(Line::from(""));
    let pods = view.pods_of(job);
    lines.push(Line::styled(
        format!(" Pods per node ({})", pods.len()),
        role(app, Role::Title),
    ));
    if pods.is_empty() {
        lines.push(Line::styled("   none", role(app, Role::Muted)));
    } else {
        lines.push(Line::styled(
            format!("   {:<16} {:<40} {:<10} READY", "NODE", "POD", "PHASE"),
            role(app, Role::Muted),
        ));
    }
    for p in pods {
        let node = if p.node.is_empty() {
            "(unscheduled)"
        } else {
            &p.node
        };
        lines.push(Line::from(format!(
            "   {node:<16} {:<40} {:<10} {}",
            p.name,
            p.phase,
            if p.ready { "yes" } else { "no" }
        )));
    }
    lines
}
