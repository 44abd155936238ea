//! The Pods view: every pod, or the pods of one workload (Enter on a workload). The revision
//! column says whether each pod is on its owner's update revision.

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
        rows::{PodRow, same_revision, short_hash},
    },
    config::Role,
};

pub fn render(app: &App, list: &ListView, area: Rect, buf: &mut Buffer) {
    let all_ns = app.namespace.is_none() && !matches!(list.scope, Scope::PodsOf(_));
    let mut columns = Vec::new();
    if all_ns {
        columns.push(Column::new("NAMESPACE", Constraint::Length(14), 4));
    }
    columns.extend([
        Column::new("NAME", Constraint::Fill(2), 0),
        Column::new("READY", Constraint::Length(5), 0),
        Column::new("STATUS", Constraint::Length(17), 0),
        Column::new("RESTARTS", Constraint::Length(8), 3),
    ]);
    let usage = app.usage.shown();
    if usage {
        columns.extend(super::usage::columns(3, 7));
    }
    columns.extend([
        Column::new("REVISION", Constraint::Length(14), 1),
        Column::new("NODE", Constraint::Fill(1), 5),
        Column::new("AGE", Constraint::Length(4), 2),
    ]);
    let (what, where_) = match &list.scope {
        Scope::PodsOf(o) => (
            format!("Pods of {} {}", o.kind.debug_name(), o.name),
            o.namespace.clone(),
        ),
        _ => (
            "Pods".to_owned(),
            app.namespace
                .clone()
                .unwrap_or_else(|| "all namespaces".into()),
        ),
    };
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
    let empty = empty_state(app, list, &what, &where_);
    let spec = TableSpec {
        title: Line::from(title),
        title_right: Line::default(),
        columns,
        len: list.visible.len(),
        selected: list.selected,
        offset: list.offset,
        empty,
    };
    table::render(spec, &app.theme, area, buf, |i| {
        match list.visible.get(i).and_then(|&r| app.pods.get(r as usize)) {
            Some(pod) => pod_cells(app, pod, all_ns, usage),
            None => Vec::new(),
        }
    });
}

fn empty_state(app: &App, list: &ListView, what: &str, where_: &str) -> Vec<Line<'static>> {
    if !list.filter.is_empty() {
        return vec![Line::from(format!(
            "No pods match /{} (esc clears the filter)",
            list.filter
        ))];
    }
    if app.forbidden.contains_key(&Kind::Pod) {
        return vec![Line::from(format!(
            "You may not list pods in {where_} (see above)."
        ))];
    }
    if app.failed.contains_key(&Kind::Pod) {
        return vec![Line::from(
            "Cannot list pods yet: the watch is failing (see above)",
        )];
    }
    if !app.ready.contains(&Kind::Pod) {
        return vec![Line::from("Loading pods…")];
    }
    vec![Line::from(format!("No {what} in {where_}"))]
}

fn status_role(status: &str, all_ready: bool) -> Role {
    match status {
        "Running" if all_ready => Role::StatusOk,
        "Running" | "Pending" | "ContainerCreating" | "PodInitializing" => Role::StatusProgress,
        "Succeeded" | "Completed" | "Terminating" => Role::Muted,
        _ => Role::StatusError,
    }
}

fn pod_cells<'a>(app: &App, p: &'a PodRow, all_ns: bool, usage: bool) -> Vec<Cell<'a>> {
    let mut cells: Vec<Cell> = Vec::with_capacity(12);
    if all_ns {
        cells.push(Cell::from(p.namespace.as_str()));
    }
    cells.push(Cell::from(p.name.as_str()));
    let ready_role = if p.all_ready {
        Role::StatusOk
    } else {
        Role::StatusWarn
    };
    cells.push(Cell::from(Span::styled(
        p.ready.as_str(),
        role(app, ready_role),
    )));
    cells.push(Cell::from(Span::styled(
        p.status.as_str(),
        role(app, status_role(&p.status, p.all_ready)),
    )));
    let restarts_role = if p.restarts > 0 {
        Role::StatusWarn
    } else {
        Role::Text
    };
    cells.push(Cell::from(Span::styled(
        p.restarts.to_string(),
        role(app, restarts_role),
    )));
    if usage {
        cells.extend(super::usage::cells(
            app,
            app.usage.pod(&p.namespace, &p.name),
        ));
    }
    cells.push(Cell::from(revision(app, p)));
    cells.push(Cell::from(p.node.as_str()));
    cells.push(Cell::from(age(app.now, p.created)));
    cells
}

/// The pod's short hash, marked `✓` when it is its owner's update revision, `old` when not.
fn revision<'a>(app: &App, p: &'a PodRow) -> Line<'a> {
    if p.revision.is_empty() {
        return Line::from("-");
    }
    let hash = short_hash(&p.revision);
    let owner = p
        .owner_uid
        .as_ref()
        .and_then(|uid| app.owners.get(uid))
        .and_then(|&i| app.workloads.get(i));
    match owner {
        Some(w) if same_revision(&p.revision, &w.update_revision) => Line::from(vec![
            Span::styled(hash, role(app, Role::RevisionUpdate)),
            Span::styled(" ✓", role(app, Role::StatusOk)),
        ]),
        Some(_) => Line::from(vec![
            Span::styled(hash, role(app, Role::RevisionCurrent)),
            Span::styled(" old", role(app, Role::StatusWarn)),
        ]),
        None => Line::from(Span::styled(hash, role(app, Role::RevisionCurrent))),
    }
}
