//! The Events view: events involving one object (`Effect::FetchEvents`), oldest first.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Cell, Row},
};

use super::{
    age,
    header::role,
    widgets::table::{self, TableSpec},
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
        header: vec!["LAST SEEN", "TYPE", "REASON", "COUNT", "SOURCE", "MESSAGE"],
        widths: vec![
            Constraint::Length(9),
            Constraint::Length(7),
            Constraint::Length(18),
            Constraint::Length(5),
            Constraint::Length(16),
            Constraint::Fill(1),
        ],
        len: events.len(),
        selected: view.selected,
        offset: view.offset,
        empty,
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(e) = events.get(i) else {
            return Row::default();
        };
        let type_role = if e.type_ == "Normal" {
            Role::Text
        } else {
            Role::StatusWarn
        };
        Row::new(vec![
            Cell::from(age(app.now, e.last_seen)),
            Cell::from(Span::styled(e.type_.clone(), role(app, type_role))),
            Cell::from(e.reason.clone()),
            Cell::from(e.count.to_string()),
            Cell::from(e.source.clone()),
            Cell::from(e.message.clone()),
        ])
    });
}
