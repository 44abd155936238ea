//! The rollout header's condition lines (a CloneSet on Kruise v1.9): the `Progressing`
//! condition with the deadline left (from the app's clock), and `FailedScale` /
//! `FailedUpdate` as history: v1.9.0 keeps the first failure forever, so they say since when,
//! not that something is failing now.

use ratatui::text::{Line, Span};

use super::super::{age, header::role};
use crate::{
    app::{App, rollout::progress::Conditions},
    config::Role,
};

/// How many lines [`render`] adds to the header.
pub fn lines(c: &Conditions) -> u16 {
    let progress = u16::from(c.progressing.is_some() || c.deadline_seconds.is_some());
    progress + u16::try_from(c.failures.len()).unwrap_or(u16::MAX)
}

fn key(app: &App, text: &str) -> Span<'static> {
    Span::styled(format!("{text:<10}"), role(app, Role::HeaderKey))
}

pub fn render(app: &App, c: &Conditions) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    match (&c.progressing, c.deadline_seconds) {
        (Some(p), _) => {
            let state = if c.exceeded() {
                Role::StatusError
            } else if p.status == "True" {
                Role::StatusOk
            } else {
                Role::StatusWarn
            };
            let mut spans = vec![
                key(app, "progress"),
                Span::styled(format!("{} {}", p.status, p.reason), role(app, state)),
                Span::raw(format!("  {}", p.message)),
            ];
            if let Some(left) = c.deadline_left(app.now) {
                let pds = c.deadline_seconds.unwrap_or_default();
                let text = if left >= 0 {
                    format!("  · deadline in {left}s (of {pds}s)")
                } else {
                    format!("  · deadline passed {}s ago (of {pds}s)", -left)
                };
                spans.push(Span::styled(text, role(app, Role::Muted)));
            }
            out.push(Line::from(spans));
        }
        (None, Some(pds)) => out.push(Line::from(vec![
            key(app, "progress"),
            Span::styled(
                format!("deadline {pds}s; no Progressing condition reported yet"),
                role(app, Role::Muted),
            ),
        ])),
        (None, None) => {}
    }
    for f in &c.failures {
        out.push(Line::from(vec![
            key(app, "history"),
            Span::styled(
                format!(
                    "{} since {} ({} ago): ",
                    f.type_,
                    f.since.map_or_else(
                        || "-".to_owned(),
                        |t| t.strftime("%Y-%m-%d %H:%M:%SZ").to_string()
                    ),
                    age(app.now, f.since)
                ),
                role(app, Role::Muted),
            ),
            Span::styled(f.message.clone(), role(app, Role::Muted)),
        ]));
    }
    out
}
