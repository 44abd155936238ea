//! The rollout view: a header block (revisions, strategy, gauges, the batch plan with the
//! current step), the pod grid beside the next step's ordered pods (from the plan API, each
//! with its blocker), and the recent events of the workload and its pods.

mod grid;
mod kruise;
mod next;
mod progress;

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Layout, Rect},
    text::{Line, Span},
    widgets::{Block, Paragraph, Widget},
};

use super::{age, header::role};
use crate::{
    app::{
        App,
        rollout::{RolloutView, StepState, Summary},
        route::Fetch,
        rows::short_hash,
    },
    config::{Action, Role},
};

pub fn render(app: &App, view: &RolloutView, area: Rect, buf: &mut Buffer) {
    let events_height = (area.height / 4).clamp(4, 10);
    let extra = view
        .summary
        .as_ref()
        .map_or(0, |s| progress::lines(&s.conditions));
    // A workload a Kruise Rollout controls shows the Rollout's steps and the batch health
    // panel; the console's own batch plan does not apply there.
    let controlled = app.rollout_of(&view.owner);
    let section = controlled.map_or(0, kruise::height);
    let [top, rollout, middle, bottom] = Layout::vertical([
        Constraint::Length(8 + extra),
        Constraint::Length(section),
        Constraint::Fill(1),
        Constraint::Length(events_height),
    ])
    .areas(area);
    header(app, view, top, buf);
    // The batch health panel's columns want more room than the next-batch plan.
    let split = if controlled.is_some() { 40 } else { 52 };
    let [left, right] = Layout::horizontal([
        Constraint::Percentage(split),
        Constraint::Percentage(100 - split),
    ])
    .areas(middle);
    grid::render(app, view, left, buf);
    match controlled {
        Some(row) => {
            kruise::section(app, view, row, rollout, buf);
            kruise::health_panel(app, view, row, right, buf);
        }
        None => next::render(app, view, right, buf),
    }
    events(app, view, bottom, buf);
}

pub(super) fn block<'a>(app: &App, title: impl Into<Line<'a>>) -> Block<'a> {
    Block::bordered()
        .border_style(role(app, Role::Border))
        .title(title.into().style(role(app, Role::Title)))
}

fn header(app: &App, view: &RolloutView, area: Rect, buf: &mut Buffer) {
    let o = &view.owner;
    let mut title = vec![Span::raw(format!(
        " Rollout · {} {}/{} ",
        o.kind.title(),
        o.namespace,
        o.name
    ))];
    if !view.marked.is_empty() {
        title.push(Span::styled(
            format!("{} marked ", view.marked.len()),
            role(app, Role::Prompt),
        ));
    }
    let Some(s) = &view.summary else {
        let b = block(app, Line::from(title));
        let inner = b.inner(area);
        b.render(area, buf);
        Paragraph::new(format!(
            "{} {}/{} is not in the cluster (deleted, or not listed yet)",
            o.kind.title(),
            o.namespace,
            o.name
        ))
        .style(role(app, Role::Muted))
        .render(inner, buf);
        return;
    };
    let b = block(app, Line::from(title)).title(revisions(app, s).right_aligned());
    let inner = b.inner(area);
    b.render(area, buf);
    let mut lines = vec![strategy(app, s)];
    let width = inner.width.saturating_sub(24).clamp(10, 60) as usize;
    let gauges = [
        ("updated", s.updated, Role::RevisionUpdate),
        ("expected", s.expected_updated, Role::Muted),
        ("ready", s.ready, Role::StatusOk),
        ("available", s.available, Role::StatusOk),
    ];
    for (label, value, r) in gauges {
        lines.push(gauge(app, label, value, s.replicas, width, r, s));
    }
    match app.rollout_of(&view.owner) {
        Some(row) => lines.push(Line::from(vec![
            Span::styled(format!("{:<10}", "batches"), role(app, Role::HeaderKey)),
            Span::styled(
                format!(
                    "Rollout {}'s steps below · {} approve · {} pause/resume · {} rollback",
                    row.name,
                    app.keymap.hint(Action::NextBatch),
                    app.keymap.hint(Action::Pause),
                    app.keymap.hint(Action::Undo)
                ),
                role(app, Role::Muted),
            ),
        ])),
        None => lines.push(batches(app, s)),
    }
    lines.extend(progress::render(app, &s.conditions));
    Paragraph::new(lines).render(inner, buf);
}

fn revisions(app: &App, s: &Summary) -> Line<'static> {
    let update = short_hash(&s.update_revision).to_owned();
    if s.current_revision.is_empty() || s.current_revision == s.update_revision {
        return Line::from(vec![
            Span::raw(" revision "),
            Span::styled(update, role(app, Role::RevisionUpdate)),
            Span::raw(" "),
        ]);
    }
    Line::from(vec![
        Span::raw(" revision "),
        Span::styled(
            short_hash(&s.current_revision).to_owned(),
            role(app, Role::RevisionCurrent),
        ),
        Span::raw(" → "),
        Span::styled(update, role(app, Role::RevisionUpdate)),
        Span::raw(" "),
    ])
}

fn strategy(app: &App, s: &Summary) -> Line<'static> {
    let key = role(app, Role::HeaderKey);
    let val = role(app, Role::HeaderValue);
    let partition = match &s.partition {
        Some(p) => format!("{p} ({} held)", s.partition_pods),
        None => "unset".to_owned(),
    };
    let mut spans = vec![
        Span::styled("strategy ", key),
        Span::styled(s.strategy.clone(), val),
        Span::styled("  partition ", key),
        Span::styled(partition, val),
        Span::styled("  maxUnavailable ", key),
        Span::styled(s.max_unavailable.clone(), val),
        Span::styled("  maxSurge ", key),
        Span::styled(s.max_surge.clone(), val),
        Span::raw("  "),
    ];
    spans.push(if s.paused {
        Span::styled("PAUSED", role(app, Role::StatusWarn))
    } else {
        Span::styled("running", role(app, Role::StatusOk))
    });
    Line::from(spans)
}

fn gauge(
    app: &App,
    label: &str,
    value: i32,
    of: i32,
    width: usize,
    r: Role,
    s: &Summary,
) -> Line<'static> {
    let filled = if of > 0 {
        ((value.clamp(0, of) as usize) * width).div_ceil(of as usize)
    } else {
        0
    };
    let mut spans = vec![
        Span::styled(format!("{label:<10}"), role(app, Role::HeaderKey)),
        Span::styled("█".repeat(filled), role(app, r)),
        Span::styled(
            "░".repeat(width - filled.min(width)),
            role(app, Role::Border),
        ),
        Span::raw(format!(" {value:>3}/{of}")),
    ];
    match label {
        "updated" => {
            if let Some(ur) = s.updated_ready {
                spans.push(Span::styled(
                    format!("  ({ur} of them ready)"),
                    role(app, Role::Muted),
                ));
            }
        }
        "expected" => spans.push(Span::styled(
            "  (the partition lets these update)",
            role(app, Role::Muted),
        )),
        _ => {}
    }
    Line::from(spans)
}

fn batches(app: &App, s: &Summary) -> Line<'static> {
    let mut spans = vec![Span::styled(
        format!("{:<10}", "batches"),
        role(app, Role::HeaderKey),
    )];
    let steps = s.steps(&app.rollout);
    for step in &steps {
        let text = format!("{} ({})", step.batch, step.pods);
        let (mark, r) = match step.state {
            StepState::Done => ("✓ ", Role::StatusOk),
            StepState::Current => ("● ", Role::Title),
            StepState::Next => ("▶ ", Role::Prompt),
            StepState::Later => ("· ", Role::Muted),
        };
        spans.push(Span::styled(format!("{mark}{text}"), role(app, r)));
        spans.push(Span::raw("  "));
    }
    let hint = match steps.iter().find(|s| s.state == StepState::Next) {
        Some(next) => format!(
            "{} → partition {}",
            app.keymap.hint(Action::NextBatch),
            next.partition
        ),
        None => "every pod is meant to be updated".to_owned(),
    };
    spans.push(Span::styled(hint, role(app, Role::Muted)));
    Line::from(spans)
}

fn events(app: &App, view: &RolloutView, area: Rect, buf: &mut Buffer) {
    let b = block(app, " Events of the workload and its pods ");
    let inner = b.inner(area);
    b.render(area, buf);
    let lines: Vec<Line> = match &view.events {
        Fetch::Loading => vec![Line::styled("Loading events…", role(app, Role::Muted))],
        Fetch::Failed(err) => vec![Line::styled(err.clone(), role(app, Role::StatusError))],
        Fetch::Loaded(events) if events.is_empty() => {
            vec![Line::styled("No recent events", role(app, Role::Muted))]
        }
        Fetch::Loaded(events) => events
            .iter()
            .rev()
            .take(inner.height as usize)
            .map(|e| {
                let ev = &e.event;
                let type_role = if ev.type_ == "Normal" {
                    Role::Muted
                } else {
                    Role::StatusWarn
                };
                Line::from(vec![
                    Span::raw(format!("{:>4} ", age(app.now, ev.last_seen))),
                    Span::styled(format!("{:<7} ", ev.type_), role(app, type_role)),
                    Span::styled(format!("{:<26} ", ev.reason), role(app, Role::Text)),
                    Span::styled(format!("{:<22} ", e.object), role(app, Role::HeaderKey)),
                    Span::raw(ev.message.clone()),
                ])
            })
            .collect(),
    };
    Paragraph::new(lines).render(inner, buf);
}
