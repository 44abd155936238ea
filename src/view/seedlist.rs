//! The list table every seed kind's view draws (`:acj`, `:bcj`, `:ws`, `:ud`, the image lists,
//! `:pps`, `:distributor`): its title counts the objects shown and names the `/` filter, and an
//! empty list says why (still listing, the error, none, none matching the filter). And the frame
//! of their details: the titled block, what shows while the object is missing, the head above a
//! detail's own table.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Layout, Rect},
    text::Line,
    widgets::{Block, Borders, Paragraph, Widget, Wrap},
};

use super::{
    header::role,
    widgets::table::{self, Column, TableSpec},
};
use crate::{
    app::{
        App,
        route::Fetch,
        seedlist::{Seed, SeedList},
    },
    config::Role,
};

/// The table of `view`'s list: `plural` titles it, `none` is what an empty list says (unless the
/// filter hides what there is), `hint` stands at the title's right.
pub fn list_table<K: Seed>(
    app: &App,
    view: &SeedList<K>,
    (plural, none): (&str, &str),
    hint: &str,
    columns: Vec<Column>,
) -> TableSpec<'static> {
    let empty = match &view.listing {
        Fetch::Loading => Line::from(format!("Listing {plural}…")),
        Fetch::Failed(e) => Line::styled(e.clone(), role(app, Role::StatusError)),
        Fetch::Loaded(_) => table::unmatched(Line::from(none.to_owned()), &view.filter.text),
    };
    TableSpec {
        title: table::filtered_title(
            &app.theme,
            format!(" {plural} [{}] ", view.listed()),
            &view.filter.text,
        ),
        title_right: Line::from(format!(" {hint} ")),
        columns,
        len: view.listed(),
        selected: view.selected,
        offset: view.offset,
        empty: vec![empty],
    }
}

/// The frame of a seed kind's detail, titled ` {title} `.
pub fn detail_block(app: &App, title: String) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(role(app, Role::Border))
        .title(Line::from(format!(" {title} ")))
}

/// The listing and the object a seed kind's detail shows, or the line it shows instead: still
/// reading, why the listing failed, or that the object (a `singular`) is gone.
pub fn detail_object<'v, L, T>(
    app: &App,
    listing: &'v Fetch<L>,
    current: Option<T>,
    singular: &str,
) -> Result<(&'v L, T), Line<'static>> {
    match (listing, current) {
        (Fetch::Failed(e), _) => Err(Line::styled(e.clone(), role(app, Role::StatusError))),
        (Fetch::Loading, _) => Err(Line::from("Reading…")),
        (Fetch::Loaded(_), None) => Err(Line::styled(
            format!("This {singular} no longer exists"),
            role(app, Role::StatusWarn),
        )),
        (Fetch::Loaded(l), Some(t)) => Ok((l, t)),
    }
}

/// Draws a detail's head (`lines` in `block`, as tall as they need while leaving the table
/// below at least a few rows) and returns the area left for the detail's table.
pub fn detail_head(lines: Vec<Line<'_>>, block: Block<'_>, area: Rect, buf: &mut Buffer) -> Rect {
    let top = (lines.len() as u16 + 2).min(area.height.saturating_sub(5).max(3));
    let [head, rest] = Layout::vertical([Constraint::Length(top), Constraint::Fill(1)]).areas(area);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block)
        .render(head, buf);
    rest
}

/// Where a detail's table, drawn in `area`, scrolls to keep `selected` in view: it scrolls with
/// its own height, which is less than a page.
pub fn table_offset(selected: usize, offset: usize, area: Rect) -> usize {
    let rows = usize::from(area.height.saturating_sub(3)).max(1);
    if selected >= offset + rows {
        selected + 1 - rows
    } else {
        offset.min(selected)
    }
}
