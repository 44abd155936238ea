//! The next-step panel: the pods the next batch will update, in order, each with its blocker
//! (the plan API on the objects as the server has them, refreshed as they change).

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    text::Line,
    widgets::{Paragraph, Widget, Wrap},
};

use super::block;
use crate::{
    app::{App, rollout::RolloutView, route::Fetch},
    config::{Action, Role},
    view::{header::role, prediction},
};

pub fn render(app: &App, view: &RolloutView, area: Rect, buf: &mut Buffer) {
    let next = view
        .summary
        .as_ref()
        .and_then(|s| s.next_step(&app.rollout).map(|n| (s, n)));
    let title = match next {
        Some((s, step)) => format!(
            " Next batch ({}): partition {} → {} ",
            app.keymap.hint(Action::NextBatch),
            s.partition.as_deref().unwrap_or("0"),
            step.partition
        ),
        None => " Next: what the controller does as things stand ".to_owned(),
    };
    let b = block(app, title);
    let inner = b.inner(area);
    b.render(area, buf);
    let lines: Vec<Line> = match &view.plan {
        Fetch::Loading => vec![Line::styled("Planning…", role(app, Role::Muted))],
        Fetch::Failed(err) => vec![Line::styled(
            format!("No prediction: {err}"),
            role(app, Role::StatusError),
        )],
        Fetch::Loaded(p) => prediction::lines(app, p),
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}
