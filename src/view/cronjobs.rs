//! The `:acj` view: AdvancedCronJobs with their schedule, time zone, the next run in that zone,
//! active jobs, last schedule and pause state; and one job in detail (Enter).

use jiff::Timestamp;
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
    api::AdvancedCronJob,
    app::{
        App,
        cronjobs::{CronJobsView, CronRow, row},
    },
    config::Role,
};

pub fn render(app: &App, view: &CronJobsView, area: Rect, buf: &mut Buffer) {
    if view.detail.is_some() {
        return detail(app, view, area, buf);
    }
    let jobs = view.loaded().map_or(&[][..], Vec::as_slice);
    let rows: Vec<CronRow> = jobs.iter().map(|j| row(j, app.now)).collect();
    let columns = vec![
        Column::new("NAMESPACE", Constraint::Length(12), 2),
        Column::new("NAME", Constraint::Fill(1), 0),
        Column::new("SCHEDULE", Constraint::Length(14), 0),
        Column::new("TIMEZONE", Constraint::Length(16), 1),
        Column::new("NEXT RUN (ZONE)", Constraint::Length(22), 0),
        Column::new("IN", Constraint::Length(5), 1),
        Column::new("ACTIVE", Constraint::Length(6), 0),
        Column::new("LAST", Constraint::Length(5), 1),
        Column::new("PAUSED", Constraint::Length(6), 0),
        Column::new("TYPE", Constraint::Length(12), 2),
    ];
    let hint = "P pauses/resumes · enter details";
    let none = "No AdvancedCronJob here";
    let spec = list_table(app, view, ("AdvancedCronJobs", none), hint, columns);
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(r) = rows.get(i) else {
            return Vec::new();
        };
        let (next, until) = next_cells(app, r);
        vec![
            Cell::from(r.namespace.clone()),
            Cell::from(r.name.clone()),
            Cell::from(r.schedule.clone()),
            Cell::from(r.zone.clone()),
            next,
            Cell::from(until),
            Cell::from(r.active.to_string()),
            Cell::from(age(app.now, r.last_schedule)),
            paused_cell(app, r.paused),
            Cell::from(r.template),
        ]
    });
}

fn next_cells<'a>(app: &App, r: &CronRow) -> (Cell<'a>, String) {
    match &r.next {
        Ok(z) if r.paused => (
            Cell::from(Span::styled(
                z.strftime("%Y-%m-%d %H:%M %Z").to_string(),
                role(app, Role::Muted),
            )),
            "-".to_owned(),
        ),
        Ok(z) => (
            Cell::from(z.strftime("%Y-%m-%d %H:%M %Z").to_string()),
            until(app.now, z.timestamp()),
        ),
        Err(_) => (
            Cell::from(Span::styled("invalid", role(app, Role::StatusError))),
            "-".to_owned(),
        ),
    }
}

fn paused_cell<'a>(app: &App, paused: bool) -> Cell<'a> {
    if paused {
        Cell::from(Span::styled("yes", role(app, Role::StatusWarn)))
    } else {
        Cell::from("no")
    }
}

/// Time until `then`, kubectl-age style (`in 5m` is shown as `5m`).
fn until(now: Timestamp, then: Timestamp) -> String {
    let secs = (then.as_second() - now.as_second()).max(0);
    let later = Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH);
    age(later, Some(Timestamp::UNIX_EPOCH))
}

fn detail(app: &App, view: &CronJobsView, area: Rect, buf: &mut Buffer) {
    let (ns, name) = view.detail.clone().unwrap_or_default();
    let block = detail_block(app, format!("AdvancedCronJob {ns}/{name}"));
    let lines = match detail_object(app, &view.listing, view.current(), "AdvancedCronJob") {
        Ok((_, job)) => detail_lines(app, job),
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

fn detail_lines<'a>(app: &App, job: &AdvancedCronJob) -> Vec<Line<'a>> {
    let r = row(job, app.now);
    let mut lines = vec![
        field(app, "Schedule", r.schedule.clone()),
        field(app, "Time zone", r.zone.clone()),
    ];
    let next = match &r.next {
        Ok(z) => {
            let utc = z.timestamp().strftime("%Y-%m-%d %H:%M UTC").to_string();
            let when = format!(
                "{}  ({utc}, in {})",
                z.strftime("%Y-%m-%d %H:%M %Z"),
                until(app.now, z.timestamp())
            );
            if r.paused {
                Span::styled(
                    format!("{when}: paused, no job will start"),
                    role(app, Role::StatusWarn),
                )
            } else {
                Span::raw(when)
            }
        }
        Err(e) => Span::styled(e.clone(), role(app, Role::StatusError)),
    };
    lines.push(field(app, "Next run", next));
    lines.push(field(
        app,
        "Paused",
        if r.paused {
            Span::styled("yes (P resumes)", role(app, Role::StatusWarn))
        } else {
            Span::raw("no (P pauses)")
        },
    ));
    lines.push(field(
        app,
        "Last schedule",
        match r.last_schedule {
            Some(t) => format!(
                "{} ({} ago)",
                t.strftime("%Y-%m-%d %H:%M UTC"),
                age(app.now, Some(t))
            ),
            None => "never".to_owned(),
        },
    ));
    lines.push(field(app, "Concurrency", r.concurrency.clone()));
    lines.push(field(app, "Creates", r.template));
    let limits = format!(
        "{} succeeded, {} failed",
        job.spec.successful_jobs_history_limit.unwrap_or(3),
        job.spec.failed_jobs_history_limit.unwrap_or(1)
    );
    lines.push(field(app, "History kept", limits));
    if let Some(d) = job.spec.starting_deadline_seconds {
        lines.push(field(app, "Starting deadline", format!("{d}s")));
    }
    lines.push(Line::from(""));
    let active = job
        .status
        .as_ref()
        .map(|s| s.active.as_slice())
        .unwrap_or_default();
    lines.push(Line::styled(
        format!(" Active jobs ({})", active.len()),
        role(app, Role::Title),
    ));
    if active.is_empty() {
        lines.push(Line::styled("   none", role(app, Role::Muted)));
    }
    for a in active {
        lines.push(Line::from(format!(
            "   {} {}",
            a.kind.as_deref().unwrap_or(r.template),
            a.name.as_deref().unwrap_or("?")
        )));
    }
    lines
}
