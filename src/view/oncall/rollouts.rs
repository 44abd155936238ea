//! `:rollouts`: each Kruise Rollout with its workload, phase (and Progressing reason), step
//! `i/N`, step state (dim unless Progressing: it may be stale, rollouts#339), the current batch
//! (updated / ready / planned), the time in the step and the time left in a timed pause.

use ratatui::{buffer::Buffer, layout::Constraint, layout::Rect, text::Span};

use super::{TableOf, namespaced_table, where_};
use crate::{
    api::rollout::{phase, step_state},
    app::{
        App,
        oncall::{OncallView, shown},
        rollouts::{Left, RolloutRow},
    },
    config::Role,
    view::{
        header::role,
        widgets::table::{Cell, Column},
    },
};

fn phase_role(r: &RolloutRow) -> Role {
    match r.phase.as_str() {
        phase::HEALTHY => Role::StatusOk,
        phase::PROGRESSING if r.paused => Role::StatusWarn,
        phase::PROGRESSING => Role::StatusProgress,
        phase::DISABLED | phase::INITIAL | "" => Role::Muted,
        _ => Role::StatusWarn,
    }
}

/// The LEFT cell: seconds left in a timed pause, `approval`, or `-`.
pub fn left_text(r: &RolloutRow, now: jiff::Timestamp) -> (String, Role) {
    match r.left(now) {
        Some(Left::Seconds(s)) => (format!("{s}s"), Role::StatusProgress),
        Some(Left::Approval) => ("approval".to_owned(), Role::Prompt),
        None => ("-".to_owned(), Role::Muted),
    }
}

/// The BATCH cell: `updated/ready/planned`.
pub fn batch_text(r: &RolloutRow) -> String {
    match r.batch {
        Some(b) if r.step > 0 => format!("{}/{}/{}", b.updated, b.ready, b.planned),
        _ => "-".to_owned(),
    }
}

pub fn render(app: &App, view: &OncallView, area: Rect, buf: &mut Buffer) {
    let rows = shown(&app.oncall.rollouts, &view.filter);
    let screen = TableOf {
        heading: "Rollouts (rollouts.kruise.io)",
        hint: " enter: its workload · ] approve · P pause · u rollback ",
        nothing: format!("No Kruise Rollouts in {}", where_(app)),
        columns: vec![
            Column::new("NAME", Constraint::Fill(1), 0),
            Column::new("WORKLOAD", Constraint::Fill(1), 2),
            Column::new("PHASE", Constraint::Length(26), 0),
            Column::new("STEP", Constraint::Length(5), 0),
            Column::new("STATE", Constraint::Length(19), 0),
            Column::new("UPD/RDY/PLAN", Constraint::Length(12), 1),
            Column::new("IN STEP", Constraint::Length(7), 1),
            Column::new("LEFT", Constraint::Length(8), 0),
            Column::new("MESSAGE", Constraint::Fill(2), 3),
        ],
        len: rows.len(),
    };
    let namespace_of = |i: usize| rows.get(i).copied().map(|r| r.namespace.as_str());
    namespaced_table(app, view, screen, area, buf, namespace_of, |i| {
        let Some(r) = rows.get(i).copied() else {
            return Vec::new();
        };
        let state_role = match r.state.as_str() {
            _ if !r.live() => Role::Muted,
            step_state::STEP_PAUSED => Role::Prompt,
            step_state::COMPLETED => Role::StatusOk,
            _ => Role::StatusProgress,
        };
        let (left, left_role) = left_text(r, app.now);
        let phase_text = r.phase_text();
        vec![
            Cell::from(r.name.as_str()),
            Cell::from(r.workload.as_str()),
            Cell::from(Span::styled(phase_text, role(app, phase_role(r)))),
            Cell::from(r.step_text()),
            Cell::from(Span::styled(
                if r.state.is_empty() {
                    "-"
                } else {
                    r.state.as_str()
                },
                role(app, state_role),
            )),
            Cell::from(batch_text(r)),
            Cell::from(match r.in_step(app.now).filter(|_| r.live()) {
                Some(s) => crate::view::age(
                    app.now,
                    jiff::Timestamp::from_second(app.now.as_second() - s).ok(),
                ),
                None => "-".to_owned(),
            }),
            Cell::from(Span::styled(left, role(app, left_role))),
            Cell::from(r.message.as_str()),
        ]
    });
}
