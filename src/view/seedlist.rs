//! The list table every seed kind's view draws (`:acj`, `:bcj`, `:ws`, `:ud`, the image lists,
//! `:pps`, `:distributor`): its title counts the objects shown and names the `/` filter, and an
//! empty list says why (still listing, the error, none, none matching the filter).

use ratatui::text::Line;

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
