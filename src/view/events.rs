//! The Events view: events involving one object (`Effect::FetchEvents`), oldest first.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
};

use super::{
    age,
    header::role,
    widgets::table::{self, Cell, Column, TableSpec},
    yaml::title,
};
use crate::{
    app::{
        App,
        route::{EventsView, Fetch},
    },
    config::Role,
};

pub fn render(app: &App, view: &EventsView, area: Rect, buf: &mut Buffer) {
    let (events, empty): (&[_], Vec<Line>) = match &view.events {
        Fetch::Loading => (&[], vec![Line::from("Loading events…")]),
        Fetch::Failed(err) => (
            &[],
            vec![Line::from(Span::styled(
                format!("Could not fetch the events: {err}"),
                role(app, Role::StatusError),
            ))],
        ),
        Fetch::Loaded(rows) => (
            rows.as_slice(),
            vec![Line::from("No events for this object")],
        ),
    };
    let spec = TableSpec {
        title: Line::from(title("Events", &view.target)),
        title_right: Line::default(),
        columns: vec![
            Column::new("LAST SEEN", Constraint::Length(9), 0),
            Column::new("TYPE", Constraint::Length(7), 0),
            Column::new("REASON", Constraint::Length(26), 0),
            Column::new("COUNT", Constraint::Length(5), 2),
            Column::new("SOURCE", Constraint::Length(16), 1),
            Column::new("MESSAGE", Constraint::Fill(1), 0),
        ],
        len: events.len(),
        selected: view.selected,
        offset: view.offset,
        empty,
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(e) = events.get(i) else {
            return Vec::new();
        };
        let type_role = if e.type_ == "Normal" {
            Role::Text
        } else {
            Role::StatusWarn
        };
        vec![
            Cell::from(age(app.now, e.last_seen)),
            Cell::from(Span::styled(e.type_.clone(), role(app, type_role))),
            Cell::from(e.reason.clone()),
            Cell::from(e.count.to_string()),
            Cell::from(e.source.clone()),
            Cell::from(e.message.clone()),
        ]
    });
}
