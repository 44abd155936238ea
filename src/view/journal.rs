//! The `:journal` view: every mutating request this tool sent, newest first — time, context,
//! target, action, request and result — with the selected entry's request body and revert
//! below.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Layout, Rect},
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use super::{
    header::role,
    widgets::table::{self, Cell, Column, TableSpec},
};
use crate::{
    app::{App, journal::JournalView, route::Fetch},
    config::{Action, Role},
};

pub fn render(app: &App, view: &JournalView, area: Rect, buf: &mut Buffer) {
    let [list, detail] = Layout::vertical([Constraint::Fill(1), Constraint::Length(8)]).areas(area);
    let (entries, empty): (&[crate::journal::Entry], Vec<Line>) = match &view.entries {
        Fetch::Loading => (&[], vec![Line::from("Reading the journal…")]),
        Fetch::Failed(err) => (
            &[],
            vec![Line::styled(err.clone(), role(app, Role::StatusError))],
        ),
        Fetch::Loaded(e) => (
            e.as_slice(),
            vec![table::unmatched(
                Line::from("No actions yet: every mutation this tool sends is recorded here"),
                &view.filter.text,
            )],
        ),
    };
    let right = if view.unreadable > 0 {
        format!(" {} unreadable line(s) skipped ", view.unreadable)
    } else {
        String::new()
    };
    let spec = TableSpec {
        title: table::filtered_title(
            &app.theme,
            format!(" Journal — newest first [{}] ", entries.len()),
            &view.filter.text,
        ),
        title_right: Line::from(right),
        columns: vec![
            Column::new("TIME", Constraint::Length(19), 0),
            Column::new("CONTEXT", Constraint::Length(16), 0),
            Column::new("TARGET", Constraint::Fill(1), 0),
            Column::new("ACTION", Constraint::Fill(1), 0),
            Column::new("REQUEST", Constraint::Fill(2), 1),
            Column::new("RESULT", Constraint::Length(16), 0),
        ],
        len: entries.len(),
        selected: view.selected,
        offset: view.offset,
        empty,
    };
    table::render(spec, &app.theme, list, buf, |i| {
        let Some(e) = entries.get(i) else {
            return Vec::new();
        };
        let result = if e.result.ok {
            Span::styled("ok", role(app, Role::StatusOk))
        } else {
            Span::styled(
                format!(
                    "{} {}",
                    e.result.code.map_or("-".to_owned(), |c| c.to_string()),
                    e.result.message
                ),
                role(app, Role::StatusError),
            )
        };
        vec![
            Cell::from(time(e.time)),
            Cell::from(e.context.clone().unwrap_or_else(|| "-".to_owned())),
            Cell::from(e.target.describe()),
            Cell::from(e.action.describe()),
            Cell::from(format!("{} {}", e.request.verb, e.request.path)),
            Cell::from(result),
        ]
    });
    let b = super::rollout::block(app, " Entry ");
    let inner = b.inner(detail);
    b.render(detail, buf);
    let lines = match view.selected_entry() {
        None => vec![Line::styled(
            "Select an entry to see its request",
            role(app, Role::Muted),
        )],
        Some(e) => {
            let mut lines = vec![
                Line::from(vec![
                    Span::styled("cluster ", role(app, Role::HeaderKey)),
                    Span::raw(e.cluster.clone()),
                    Span::styled("  content-type ", role(app, Role::HeaderKey)),
                    Span::raw(e.request.content_type.clone()),
                ]),
                Line::styled(
                    format!("{} {}", e.request.verb, e.request.path),
                    role(app, Role::HeaderValue),
                ),
            ];
            lines.push(Line::raw(
                serde_json::to_string(&e.request.body).unwrap_or_default(),
            ));
            if !e.result.ok && !e.result.message.is_empty() {
                lines.push(Line::styled(
                    format!("server: {}", e.result.message),
                    role(app, Role::StatusError),
                ));
            }
            lines.push(match &e.inverse {
                Some(inv) => Line::from(vec![
                    Span::styled(app.keymap.hint(Action::Undo), role(app, Role::HelpKey)),
                    Span::styled(
                        format!(" reverts it: {} (confirmed first)", inv.describe()),
                        role(app, Role::Muted),
                    ),
                ]),
                None => Line::styled("nothing to revert", role(app, Role::Muted)),
            });
            lines
        }
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}

/// `2026-01-10 12:00:00` (UTC: the journal's clock).
fn time(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M:%S").to_string()
}
