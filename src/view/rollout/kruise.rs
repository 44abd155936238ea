//! The rollout view of a workload a Kruise Rollout controls: the Rollout section (its phase and
//! reason, style, message, the steps with replicas raw and resolved and the partition each
//! sets, pause, traffic, the current step and a pending jump, the step state and time left,
//! the batch and the pods grouped by batch) and the batch health panel (the current batch's new
//! pods: ready, restarts, how long ready, latest warning) in place of the next-batch plan.

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    text::{Line, Span},
    widgets::{Paragraph, Widget},
};

use super::block;
use crate::{
    api::rollout::step_state,
    app::{
        App,
        rollout::RolloutView,
        rollouts::{
            Left, RolloutRow,
            health::{self, current_batch, groups},
            hold,
            steps::{Mark, plan},
        },
        route::Fetch,
    },
    config::{Action, Role},
    view::{age, header::role},
};

/// Rows the Rollout section takes (borders included).
pub fn height(row: &RolloutRow) -> u16 {
    let traffic = u16::from(has_traffic(row));
    // phase line, message, hold, step titles, steps, state, batch, pods, traffic, borders.
    3 + 1 + row.steps.max(0) as u16 + 3 + traffic + 2
}

fn has_traffic(row: &RolloutRow) -> bool {
    row.rollout
        .spec
        .strategy
        .canary
        .as_ref()
        .is_some_and(|c| !c.traffic_routings.is_empty())
        || row
            .rollout
            .steps()
            .iter()
            .any(|s| s.traffic.is_some() || !s.matches.is_empty())
}

/// The Rollout section.
pub fn section(app: &App, view: &RolloutView, row: &RolloutRow, area: Rect, buf: &mut Buffer) {
    let key = role(app, Role::HeaderKey);
    let val = role(app, Role::HeaderValue);
    let muted = role(app, Role::Muted);
    let title = format!(" Kruise Rollout {}/{} ", row.namespace, row.name);
    let b = block(app, title).title(
        Line::from(Span::styled(
            format!(" {} ", row.headline(app.now)),
            role(app, Role::Prompt),
        ))
        .right_aligned(),
    );
    let inner = b.inner(area);
    b.render(area, buf);
    let mut lines = Vec::new();
    // Phase, reason, style, paused.
    let mut first = vec![
        Span::styled("phase ", key),
        Span::styled(row.phase_text(), val),
        Span::styled("  style ", key),
        Span::styled(
            match row.rollout.rolling_style() {
                "Partition" => "Partition".to_owned(),
                style if row.rollout.is_real_partition() => {
                    format!("{style} (runs partition-style)")
                }
                style => format!("{style} (shown, not driven here)"),
            },
            val,
        ),
    ];
    if row.paused {
        first.push(Span::styled(
            "  PAUSED (spec.strategy.paused)",
            role(app, Role::StatusWarn),
        ));
    }
    if let Some(ft) = row
        .rollout
        .spec
        .strategy
        .canary
        .as_ref()
        .and_then(|c| c.failure_threshold.as_ref())
    {
        let ft = match ft {
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => n.to_string(),
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
        };
        first.push(Span::styled("  failureThreshold ", key));
        first.push(Span::styled(ft, val));
    }
    lines.push(Line::from(first));
    lines.push(Line::from(vec![
        Span::styled("message ", key),
        Span::raw(if row.message.is_empty() {
            "-".to_owned()
        } else {
            row.message.clone()
        }),
    ]));
    let h = hold(&app.stores, &view.owner);
    let mut held = vec![Span::styled("workload ", key)];
    held.push(Span::styled(
        match (&h.release, h.in_progressing) {
            (Some(br), _) => format!(
                "partition + pause held by BatchRelease {br}{}",
                if h.in_progressing {
                    " · release in progress"
                } else {
                    ""
                }
            ),
            (None, true) => "release in progress".to_owned(),
            (None, false) => {
                "not held now (the Rollout acts on the next template change)".to_owned()
            }
        },
        val,
    ));
    // The executor's guard refuses the workload's own partition and pause keys only while the
    // Rollout holds them (a release in flight).
    if h.release.is_some() || h.in_progressing || row.live() {
        held.push(Span::styled(
            format!(
                "  · {} {} refused here (the Rollout's fields)",
                app.keymap.hint(Action::PrevBatch),
                app.keymap.hint(Action::Partition)
            ),
            muted,
        ));
    }
    lines.push(Line::from(held));
    lines.push(Line::styled(
        format!(
            "  {:<5} {:<16} {:<10} {:<8} {}",
            "STEP", "REPLICAS", "PARTITION", "PAUSE", "TRAFFIC"
        ),
        role(app, Role::TableHeader),
    ));
    for s in plan(row) {
        let (mark, r) = match s.mark {
            Mark::Done => ("✓", Role::StatusOk),
            Mark::Current => ("●", Role::Title),
            Mark::JumpTarget => ("↷", Role::Prompt),
            Mark::Later => ("·", Role::Muted),
        };
        let replicas = match s.pods {
            Some(p) => format!("{} ({p} pod{})", s.replicas, if p == 1 { "" } else { "s" }),
            None => s.replicas.clone(),
        };
        let mut traffic = s.traffic.clone().unwrap_or_else(|| "-".to_owned());
        if s.matches {
            traffic.push_str(" +matches");
        }
        let mut spans = vec![Span::styled(
            format!(
                "{mark} {:<5} {:<16} {:<10} {:<8} {:<10}",
                s.index,
                replicas,
                s.partition.as_deref().unwrap_or("-"),
                s.pause.label(),
                traffic
            ),
            role(app, r),
        )];
        if s.mark == Mark::Current {
            spans.push(Span::styled(
                format!(
                    " ← current ({})",
                    if row.state.is_empty() {
                        "-"
                    } else {
                        &row.state
                    }
                ),
                role(app, state_role(row)),
            ));
        }
        if s.mark == Mark::JumpTarget {
            spans.push(Span::styled(
                " ← jump pending (nextStepIndex)",
                role(app, Role::Prompt),
            ));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::from(vec![
        Span::styled("state    ", key),
        Span::styled(state_words(app, row), role(app, state_role(row))),
    ]));
    lines.push(batch_line(app, row));
    lines.push(pods_line(app, view, row));
    if has_traffic(row) {
        lines.push(traffic_line(app, row));
    }
    Paragraph::new(lines).render(inner, buf);
}

fn state_role(row: &RolloutRow) -> Role {
    if !row.live() {
        Role::Muted
    } else if row.state == step_state::STEP_PAUSED {
        Role::Prompt
    } else {
        Role::StatusProgress
    }
}

/// `StepPaused · 42s left (of 60s) · 18s in step`, `StepPaused · waiting for approval (] )`,
/// or the stale state, dimmed, with why.
fn state_words(app: &App, row: &RolloutRow) -> String {
    let state = if row.state.is_empty() {
        "-"
    } else {
        row.state.as_str()
    };
    if !row.live() {
        return format!(
            "{state} (as last recorded; the Rollout is {})",
            row.phase_text()
        );
    }
    let mut out = state.to_owned();
    match (row.left(app.now), row.pause) {
        (Some(Left::Seconds(s)), Some(crate::app::rollouts::Pause::Seconds(d))) => {
            out.push_str(&format!(" · {s}s left (of {d}s)"));
        }
        (Some(Left::Approval), _) => out.push_str(&format!(
            " · waiting for approval ({} approves)",
            app.keymap.hint(Action::NextBatch)
        )),
        _ => {}
    }
    if let Some(s) = row.in_step(app.now) {
        out.push_str(&format!(
            " · {} in step",
            age(
                app.now,
                jiff::Timestamp::from_second(app.now.as_second() - s).ok()
            )
        ));
    }
    out
}

fn batch_line(app: &App, row: &RolloutRow) -> Line<'static> {
    let key = role(app, Role::HeaderKey);
    let mut text = String::new();
    if let Some(b) = row.batch.filter(|_| row.step > 0) {
        text.push_str(&format!(
            "updated {} · ready {} · planned {}",
            b.updated, b.ready, b.planned
        ));
    } else {
        text.push('-');
    }
    if let Some(br) = row.release.as_ref() {
        let status = br.status.clone().unwrap_or_default();
        let cs = status.canary_status.unwrap_or_default();
        text.push_str(&format!(
            "  · BatchRelease {} batch {}/{} {}",
            status.phase.as_deref().unwrap_or("-"),
            cs.current_batch + 1,
            br.spec.release_plan.batches.len(),
            cs.batch_state.as_deref().unwrap_or("-"),
        ));
    }
    Line::from(vec![Span::styled("batch    ", key), Span::raw(text)])
}

fn pods_line(app: &App, view: &RolloutView, row: &RolloutRow) -> Line<'static> {
    let key = role(app, Role::HeaderKey);
    let mut spans = vec![Span::styled("pods     ", key)];
    let update = view
        .summary
        .as_ref()
        .map(|s| s.update_revision.as_str())
        .unwrap_or_default();
    for (i, g) in groups(view.rows(), row, update).into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", role(app, Role::Muted)));
        }
        let (label, r) = match g.batch {
            Some(b) if b == row.step => (format!("batch {b}: "), Role::RevisionUpdate),
            Some(b) => (format!("batch {b}: "), Role::StatusOk),
            None if g.updated => ("updated, no batch label: ".to_owned(), Role::RevisionUpdate),
            None => ("not updated: ".to_owned(), Role::Muted),
        };
        spans.push(Span::styled(label, role(app, r)));
        spans.push(Span::raw(g.pods.join(" ")));
    }
    Line::from(spans)
}

fn traffic_line(app: &App, row: &RolloutRow) -> Line<'static> {
    let key = role(app, Role::HeaderKey);
    let mut parts = Vec::new();
    if let Some(t) = row
        .rollout
        .spec
        .strategy
        .canary
        .as_ref()
        .and_then(|c| c.traffic_routings.first())
    {
        parts.push(format!("service {}", t.service));
        if let Some(i) = &t.ingress {
            parts.push(format!(
                "ingress {}/{}",
                i.class_type.as_deref().unwrap_or("nginx"),
                i.name
            ));
        }
        if let Some(name) = t.gateway.as_ref().and_then(|g| g.http_route_name.as_ref()) {
            parts.push(format!("httpRoute {name}"));
        }
        if !t.custom_network_refs.is_empty() {
            parts.push(format!("{} custom refs", t.custom_network_refs.len()));
        }
        parts.push(format!("grace {}s", t.grace_period_seconds.unwrap_or(3)));
    }
    Line::from(vec![
        Span::styled("traffic  ", key),
        Span::raw(parts.join(" · ")),
        Span::styled(
            "  (traffic: display only, never acted on)",
            role(app, Role::Muted),
        ),
    ])
}

/// The batch health panel: the current batch's new pods.
pub fn health_panel(app: &App, view: &RolloutView, row: &RolloutRow, area: Rect, buf: &mut Buffer) {
    let update = view
        .summary
        .as_ref()
        .map(|s| s.update_revision.clone())
        .unwrap_or_default();
    let rows: Vec<_> = view.rows().iter().collect();
    let batch = current_batch(&rows, row, &update);
    let events = match &view.events {
        Fetch::Loaded(e) => e.as_slice(),
        _ => &[],
    };
    let pods = health::health(&batch, events);
    let title = if row.step > 0 && row.approvable() {
        format!(
            " Batch health — step {} new pods ({}) · {} approves ",
            row.step_text(),
            pods.len(),
            app.keymap.hint(Action::NextBatch)
        )
    } else if row.step > 0 {
        format!(
            " Batch health — step {} new pods ({}) ",
            row.step_text(),
            pods.len()
        )
    } else {
        " Batch health — no release running ".to_owned()
    };
    let b = block(app, title);
    let inner = b.inner(area);
    b.render(area, buf);
    let name_w = pods
        .iter()
        .map(|p| p.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(3);
    let status_w = pods
        .iter()
        .map(|p| p.status.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut lines = vec![Line::styled(
        format!(
            "{:<name_w$} {:<5} {:>8}  {:<status_w$} {:<9} {}",
            "POD", "READY", "RESTARTS", "STATUS", "READY FOR", "LATEST WARNING"
        ),
        role(app, Role::TableHeader),
    )];
    if pods.is_empty() {
        lines.push(Line::styled(
            "No new pods in this batch yet",
            role(app, Role::Muted),
        ));
    }
    for p in &pods {
        let ok = p.all_ready && p.restarts == 0;
        let since = age(app.now, p.since);
        let ready_for = if p.all_ready {
            since
        } else {
            format!("not {since}")
        };
        let warning = match &p.warning {
            Some((reason, message, when)) => {
                format!("{} {reason}: {message}", age(app.now, *when))
            }
            None => "-".to_owned(),
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:<name_w$} ", p.name),
                role(app, if ok { Role::Text } else { Role::StatusError }),
            ),
            Span::styled(
                format!("{:<5} ", p.ready),
                role(
                    app,
                    if p.all_ready {
                        Role::StatusOk
                    } else {
                        Role::StatusError
                    },
                ),
            ),
            Span::styled(
                format!("{:>8}  ", p.restarts),
                role(
                    app,
                    if p.restarts > 0 {
                        Role::StatusWarn
                    } else {
                        Role::Text
                    },
                ),
            ),
            Span::raw(format!("{:<status_w$} ", p.status)),
            Span::raw(format!("{ready_for:<9} ")),
            Span::styled(
                warning,
                role(
                    app,
                    if p.warning.is_some() {
                        Role::StatusWarn
                    } else {
                        Role::Muted
                    },
                ),
            ),
        ]));
    }
    Paragraph::new(lines).render(inner, buf);
}
