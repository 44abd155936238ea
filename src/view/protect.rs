//! The `:protect` view: every object carrying `policy.kruise.io/delete-protection`, its value,
//! and what a delete would meet now; the header says whether the cluster enforces it.

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
    actions::guard::Verdict,
    app::{App, protect::ProtectView, route::Fetch},
    config::Role,
};

pub fn render(app: &App, view: &ProtectView, area: Rect, buf: &mut Buffer) {
    let [head, list] = Layout::vertical([Constraint::Length(2), Constraint::Fill(1)]).areas(area);
    let (rows, empty, enforcement, errors) = match &view.report {
        Fetch::Loading => (
            &[][..],
            vec![Line::from("Listing protected objects…")],
            None,
            &[][..],
        ),
        Fetch::Failed(e) => (
            &[][..],
            vec![Line::styled(e.clone(), role(app, Role::StatusError))],
            None,
            &[][..],
        ),
        Fetch::Loaded(r) => (
            r.rows.as_slice(),
            vec![table::unmatched(
                Line::from(
                    "No object carries policy.kruise.io/delete-protection: x on a workload sets it",
                ),
                &view.filter.text,
            )],
            Some(&r.enforcement),
            r.errors.as_slice(),
        ),
    };
    let mut lines = Vec::new();
    if let Some(e) = enforcement {
        let style = if e.confirmed {
            role(app, Role::StatusOk)
        } else {
            role(app, Role::StatusWarn)
        };
        lines.push(Line::from(vec![
            Span::styled(" Deletion protection is ", role(app, Role::Muted)),
            Span::styled(e.text.clone(), style),
        ]));
    }
    if !errors.is_empty() {
        lines.push(Line::styled(
            format!(" not listed: {}", errors.join("; ")),
            role(app, Role::StatusWarn),
        ));
    }
    Paragraph::new(lines)
        .wrap(Wrap { trim: true })
        .render(head, buf);
    let spec = TableSpec {
        title: table::filtered_title(
            &app.theme,
            format!(" Protected objects [{}] ", rows.len()),
            &view.filter.text,
        ),
        title_right: Line::from(" x cycles · ctrl-d deletes (after a confirm) "),
        columns: vec![
            Column::new("KIND", Constraint::Length(22), 0),
            Column::new("NAMESPACE", Constraint::Length(14), 0),
            Column::new("NAME", Constraint::Fill(1), 0),
            Column::new("PROTECTION", Constraint::Length(11), 0),
            Column::new("A DELETE NOW", Constraint::Fill(2), 1),
        ],
        len: rows.len(),
        selected: view.selected,
        offset: view.offset,
        empty,
    };
    table::render(spec, &app.theme, list, buf, |i| {
        let Some(r) = rows.get(i) else {
            return Vec::new();
        };
        let style = match r.verdict {
            Verdict::Denied(_) => role(app, Role::StatusError),
            Verdict::Allowed(_) => role(app, Role::StatusOk),
            Verdict::Unguarded(_) => role(app, Role::Muted),
        };
        vec![
            Cell::from(r.target.kind.title),
            Cell::from(r.target.namespace.clone().unwrap_or_else(|| "-".to_owned())),
            Cell::from(r.target.name.clone()),
            Cell::from(r.value.clone()),
            Cell::from(Span::styled(r.verdict.text(), style)),
        ]
    });
}
