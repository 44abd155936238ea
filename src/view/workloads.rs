//! The Workloads view: CloneSets, Advanced StatefulSets and Advanced DaemonSets in one table
//! (or one kind after `:cs`/`:asts`/`:ads`), with rollout columns, the protection badge and the
//! budget left by the PodUnavailableBudgets selecting each; the triage strip above when
//! something is unhealthy.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
};

use super::{
    age,
    header::role,
    widgets::table::{self, Cell, Column, TableSpec},
};
use crate::{
    app::{
        App, Kind,
        route::{ListView, Scope},
        rows::{WorkloadRow, short_hash},
    },
    config::Role,
};

pub fn render(app: &App, list: &ListView, area: Rect, buf: &mut Buffer) {
    let strip = app.strip_rows() as u16;
    let [strip_area, area] =
        ratatui::layout::Layout::vertical([Constraint::Length(strip), Constraint::Fill(1)])
            .areas(area);
    super::oncall::strip::render(app, strip_area, buf);
    let kind = match list.scope {
        Scope::WorkloadKind(k) => Some(k),
        _ => None,
    };
    let all_ns = app.namespace.is_none();
    let mut columns = Vec::new();
    if kind.is_none() {
        columns.push(Column::new("KIND", Constraint::Length(4), 0));
    }
    if all_ns {
        columns.push(Column::new("NAMESPACE", Constraint::Length(14), 4));
    }
    columns.extend([
        Column::new("NAME", Constraint::Fill(1), 0),
        Column::new("PROTECT", Constraint::Length(9), 3),
        Column::new("PUB", Constraint::Length(3), 4),
        Column::new("REPLICAS", Constraint::Length(8), 5),
        Column::new("READY", Constraint::Length(5), 0),
        Column::new("UPDATED", Constraint::Length(7), 0),
        Column::new("PARTITION", Constraint::Length(9), 1),
        Column::new("PAUSED", Constraint::Length(6), 6),
    ]);
    let usage = app.usage.shown();
    if usage {
        columns.extend(super::usage::columns(4, 8));
    }
    columns.extend([
        Column::new("REVISION", Constraint::Length(21), 2),
        Column::new("AGE", Constraint::Length(4), 7),
    ]);
    let what = kind.map_or("Workloads", Kind::plural);
    let where_ = app.namespace.as_deref().unwrap_or("all namespaces");
    let mut title = vec![Span::raw(format!(
        " {what} — {where_} [{}] ",
        list.visible.len()
    ))];
    if !list.filter.is_empty() {
        title.push(Span::styled(
            format!("/{} ", list.filter),
            role(app, Role::Prompt),
        ));
    }
    let spec = TableSpec {
        title: Line::from(title),
        title_right: Line::default(),
        columns,
        len: list.visible.len(),
        selected: list.selected,
        offset: list.offset,
        empty: empty_state(app, list, what, where_),
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let row = list
            .visible
            .get(i)
            .and_then(|&r| app.workloads.get(r as usize));
        match row {
            Some(row) => workload_cells(app, row, kind.is_none(), all_ns, usage),
            None => Vec::new(),
        }
    });
}

fn empty_state(app: &App, list: &ListView, what: &str, where_: &str) -> Vec<Line<'static>> {
    if app.kruise_missing {
        return vec![
            Line::from("OpenKruise is not installed in this cluster."),
            Line::from("No apps.kruise.io CRDs are served, so there are no CloneSets,"),
            Line::from("Advanced StatefulSets or Advanced DaemonSets. Pods: :pods"),
        ];
    }
    if !list.filter.is_empty() {
        return vec![Line::from(format!(
            "No {what} match /{} (esc clears the filter)",
            list.filter
        ))];
    }
    let kinds: &[Kind] = match list.scope {
        Scope::WorkloadKind(k) => &[k][..],
        _ => &[Kind::CloneSet, Kind::StatefulSet, Kind::DaemonSet][..],
    };
    if kinds.iter().all(|k| app.forbidden.contains_key(k)) {
        let mut lines = vec![Line::from(format!(
            "You may not list {what} in {where_} (see above)."
        ))];
        if !app.forbidden.contains_key(&Kind::Pod) {
            lines.push(Line::from("Pods: :pods"));
        }
        return lines;
    }
    if kinds.iter().any(|k| app.failed.contains_key(k)) {
        return vec![Line::from(format!(
            "Cannot list {what} yet: the watch is failing (see above)"
        ))];
    }
    if kinds.iter().any(|k| !app.ready.contains(k)) {
        return vec![Line::from(format!("Loading {what}…"))];
    }
    vec![Line::from(format!("No {what} in {where_}"))]
}

fn kind_short(kind: Kind) -> &'static str {
    kind.info().workload.map_or(
        kind.debug_name(),
        crate::api::kinds::WorkloadKind::abbreviation,
    )
}

fn workload_cells<'a>(
    app: &App,
    w: &'a WorkloadRow,
    show_kind: bool,
    all_ns: bool,
    usage: bool,
) -> Vec<Cell<'a>> {
    let mut cells: Vec<Cell> = Vec::with_capacity(15);
    if show_kind {
        cells.push(Cell::from(kind_short(w.kind)));
    }
    if all_ns {
        cells.push(Cell::from(w.namespace.as_str()));
    }
    cells.push(Cell::from(w.name.as_str()));
    cells.push(match &w.protection {
        Some(p) => Cell::from(Span::styled(p.as_str(), role(app, Role::BadgeProtected))),
        None => Cell::from(""),
    });
    cells.push(match app.oncall.budget_left.get(&w.uid) {
        Some(left) if *left <= 0 => {
            Cell::from(Span::styled(left.to_string(), role(app, Role::StatusError)))
        }
        Some(left) => Cell::from(left.to_string()),
        None => Cell::from("-"),
    });
    cells.push(Cell::from(w.desired.to_string()));
    let ready_role = if w.ready >= w.desired {
        Role::StatusOk
    } else {
        Role::StatusWarn
    };
    cells.push(Cell::from(Span::styled(
        w.ready.to_string(),
        role(app, ready_role),
    )));
    let updated = match w.expected {
        Some(e) => format!("{}/{e}", w.updated),
        None => w.updated.to_string(),
    };
    let upd_role = if w.rolling() {
        Role::StatusProgress
    } else {
        Role::Text
    };
    cells.push(Cell::from(Span::styled(updated, role(app, upd_role))));
    cells.push(Cell::from(
        w.partition.clone().unwrap_or_else(|| "-".into()),
    ));
    cells.push(if w.paused {
        Cell::from(Span::styled("yes", role(app, Role::StatusWarn)))
    } else {
        Cell::from("-")
    });
    if usage {
        cells.extend(super::usage::cells(app, app.usage.workload(&w.uid)));
    }
    cells.push(Cell::from(revision(app, w)));
    cells.push(Cell::from(age(app.now, w.created)));
    cells
}

fn revision<'a>(app: &App, w: &'a WorkloadRow) -> Line<'a> {
    let update = short_hash(&w.update_revision);
    if w.current_revision.is_empty() || w.current_revision == w.update_revision {
        let text = if update.is_empty() { "-" } else { update };
        return Line::from(Span::styled(text, role(app, Role::RevisionCurrent)));
    }
    Line::from(vec![
        Span::styled(
            short_hash(&w.current_revision),
            role(app, Role::RevisionCurrent),
        ),
        Span::raw("→"),
        Span::styled(update, role(app, Role::RevisionUpdate)),
    ])
}
