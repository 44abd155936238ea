//! The triage strip over the Workloads view: up to three problems, worst first, each with
//! why and its remedy keys; `:triage` lists them all.

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    text::{Line, Span},
    widgets::{Paragraph, Widget},
};

use crate::{app::App, config::Role, view::header::role};

/// Draws the strip into `area` (as many rows as `App::strip_rows`).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let problems = &app.oncall.triage;
    let rows = usize::from(area.height);
    if rows == 0 || problems.is_empty() {
        return;
    }
    let more = problems.len().saturating_sub(rows);
    let shown = if more > 0 { rows - 1 } else { rows };
    let mut lines: Vec<Line> = problems
        .iter()
        .take(shown)
        .enumerate()
        .map(|(i, p)| {
            let head = if i == 0 {
                format!(" ▲ triage {} ", problems.len())
            } else {
                " ".repeat(format!(" ▲ triage {} ", problems.len()).chars().count())
            };
            Line::from(vec![
                Span::styled(head, role(app, Role::StatusError)),
                Span::styled(format!("{}: ", p.kind.label()), role(app, Role::StatusWarn)),
                Span::styled(format!("{} — ", p.subject), role(app, Role::Text)),
                Span::styled(p.why.clone(), role(app, Role::Muted)),
                Span::styled(format!(" → {}", p.remedy), role(app, Role::HelpKey)),
            ])
        })
        .collect();
    if more > 0 {
        lines.push(Line::from(Span::styled(
            format!("   … {} more: :triage lists them all", more + 1),
            role(app, Role::Muted),
        )));
    }
    Paragraph::new(lines).render(area, buf);
}
