//! The on-call views: triage, restarts (`:crr`), budgets (`:pub`), SidecarSets and their pods'
//! sidecar versions, probe markers (`:ppm`); and the triage strip over the Workloads view.
//! Rendering only: rows come from `App`'s on-call cache.

mod across;
mod detail;
pub mod rollouts;
pub mod strip;

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
        App,
        oncall::{OncallView, ProblemKind, Screen, shown},
    },
    config::Role,
};

pub fn render(app: &App, view: &OncallView, area: Rect, buf: &mut Buffer) {
    match &view.screen {
        Screen::Triage => triage(app, view, area, buf),
        Screen::TriageAll => across::render(app, view, area, buf),
        Screen::Restarts => restarts(app, view, area, buf),
        Screen::Budgets => budgets(app, view, area, buf),
        Screen::SidecarSets => sidecarsets(app, view, area, buf),
        Screen::ProbeMarkers => probes(app, view, area, buf),
        Screen::Rollouts => rollouts::render(app, view, area, buf),
        Screen::SidecarPods(name) => detail::sidecar_pods(app, view, name, area, buf),
        Screen::Budget { namespace, name } => detail::budget(app, view, namespace, name, area, buf),
    }
}

/// What an empty on-call table says: the refusal (403) of a kind it reads, a failing watch,
/// loading, or that there is nothing.
pub(super) fn empty_state(app: &App, screen: &Screen, nothing: &str) -> Vec<Line<'static>> {
    for kind in screen.kinds() {
        if let Some(denied) = app.forbidden.get(kind) {
            let scope = denied
                .namespace
                .as_deref()
                .map_or("in any namespace".to_owned(), |ns| format!("in {ns}"));
            let who = denied
                .user
                .as_deref()
                .map(|u| format!(" as {u}"))
                .unwrap_or_default();
            return vec![
                Line::styled(
                    format!(
                        "No permission to {} {} {scope}{who}.",
                        denied.verb,
                        kind.plural()
                    ),
                    role(app, Role::StatusError),
                ),
                Line::from(denied.message.clone()),
            ];
        }
    }
    if let Some(kind) = screen.kinds().iter().find(|k| app.failed.contains_key(k)) {
        return vec![Line::from(format!(
            "Cannot list {} yet: the watch is failing (see above)",
            kind.plural()
        ))];
    }
    if screen.kinds().iter().any(|k| !app.ready.contains(k)) {
        return vec![Line::from("Loading…")];
    }
    vec![Line::from(nothing.to_owned())]
}

/// What an empty list screen says: that nothing matches its filter, or its empty state.
fn list_empty(app: &App, view: &OncallView, nothing: &str) -> Vec<Line<'static>> {
    if view.filter.is_empty() {
        empty_state(app, &view.screen, nothing)
    } else {
        vec![table::unmatched(Line::default(), &view.filter)]
    }
}

fn where_(app: &App) -> &str {
    app.namespace.as_deref().unwrap_or("all namespaces")
}

fn phase_role(phase: &str) -> Role {
    match phase {
        "Completed" | "Succeeded" | "Succeed" => Role::StatusOk,
        "Failed" => Role::StatusError,
        "Recreating" => Role::StatusProgress,
        _ => Role::StatusWarn,
    }
}

/// The table of a namespaced on-call screen: a NAMESPACE column (and cell) first when all
/// namespaces are shown, a title with where and how many, and the screen's empty state.
struct TableOf<'s> {
    heading: &'s str,
    hint: &'s str,
    nothing: String,
    columns: Vec<Column>,
    len: usize,
}

fn namespaced_table<'a>(
    app: &'a App,
    view: &OncallView,
    screen: TableOf<'_>,
    area: Rect,
    buf: &mut Buffer,
    namespace_of: impl Fn(usize) -> Option<&'a str>,
    cells: impl Fn(usize) -> Vec<Cell<'a>>,
) {
    let all_ns = app.namespace.is_none();
    let mut columns = Vec::new();
    if all_ns {
        columns.push(Column::new("NAMESPACE", Constraint::Length(12), 3));
    }
    columns.extend(screen.columns);
    let spec = TableSpec {
        title: table::filtered_title(
            &app.theme,
            format!(" {} — {} [{}] ", screen.heading, where_(app), screen.len),
            &view.filter,
        ),
        title_right: Line::from(screen.hint.to_owned()),
        columns,
        len: screen.len,
        selected: view.selected,
        offset: view.offset,
        empty: list_empty(app, view, &screen.nothing),
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(ns) = namespace_of(i) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if all_ns {
            out.push(Cell::from(ns));
        }
        out.extend(cells(i));
        out
    });
}

fn triage(app: &App, view: &OncallView, area: Rect, buf: &mut Buffer) {
    let rows = shown(&app.oncall.triage, &view.filter);
    let spec = TableSpec {
        title: table::filtered_title(
            &app.theme,
            format!(" Triage — {} — worst first [{}] ", where_(app), rows.len()),
            &view.filter,
        ),
        title_right: Line::from(" enter opens · the remedy keys act on the row "),
        columns: vec![
            Column::new("PROBLEM", Constraint::Length(14), 0),
            Column::new("OBJECT", Constraint::Fill(1), 0),
            Column::new("WHY", Constraint::Fill(2), 0),
            Column::new("REMEDY", Constraint::Length(33), 1),
        ],
        len: rows.len(),
        selected: view.selected,
        offset: view.offset,
        empty: list_empty(app, view, "Nothing unhealthy right now ✓"),
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(p) = rows.get(i).copied() else {
            return Vec::new();
        };
        let r = match p.kind {
            ProblemKind::StuckRollout | ProblemKind::CrashLoop => Role::StatusError,
            _ => Role::StatusWarn,
        };
        vec![
            Cell::from(Span::styled(p.kind.label(), role(app, r))),
            Cell::from(p.subject.as_str()),
            Cell::from(p.why.as_str()),
            Cell::from(Span::styled(p.remedy.as_str(), role(app, Role::HelpKey))),
        ]
    });
}

fn restarts(app: &App, view: &OncallView, area: Rect, buf: &mut Buffer) {
    let rows = shown(&app.oncall.restarts, &view.filter);
    let screen = TableOf {
        heading: "Restarts (ContainerRecreateRequests)",
        hint: "",
        nothing: format!("No ContainerRecreateRequests in {}", where_(app)),
        columns: vec![
            Column::new("NAME", Constraint::Fill(1), 0),
            Column::new("PHASE", Constraint::Length(10), 0),
            Column::new("POD", Constraint::Length(18), 0),
            Column::new("NODE", Constraint::Length(12), 2),
            Column::new("CONTAINERS", Constraint::Fill(1), 0),
            Column::new("AGE", Constraint::Length(4), 1),
        ],
        len: rows.len(),
    };
    let namespace_of = |i: usize| rows.get(i).copied().map(|r| r.namespace.as_str());
    namespaced_table(app, view, screen, area, buf, namespace_of, |i| {
        let Some(r) = rows.get(i).copied() else {
            return Vec::new();
        };
        let mut cells = Vec::new();
        let mut containers = Vec::new();
        for (n, (name, phase)) in r.containers.iter().enumerate() {
            if n > 0 {
                containers.push(Span::raw(" "));
            }
            containers.push(Span::raw(format!("{name}:")));
            containers.push(Span::styled(phase.as_str(), role(app, phase_role(phase))));
        }
        let mut phase = vec![Span::styled(
            r.phase.as_str(),
            role(app, phase_role(&r.phase)),
        )];
        if r.failed_or_overdue(app.now).is_some() && r.phase != "Failed" {
            phase.push(Span::styled(" late", role(app, Role::StatusError)));
        }
        cells.extend([
            Cell::from(r.name.as_str()),
            Cell::from(Line::from(phase)),
            Cell::from(r.pod.as_str()),
            Cell::from(if r.node.is_empty() {
                "-"
            } else {
                r.node.as_str()
            }),
            Cell::from(Line::from(containers)),
            Cell::from(age(app.now, r.created)),
        ]);
        cells
    });
}

fn budgets(app: &App, view: &OncallView, area: Rect, buf: &mut Buffer) {
    let rows = shown(&app.oncall.budgets, &view.filter);
    let screen = TableOf {
        heading: "Budgets (PodUnavailableBudgets)",
        hint: " enter: its pods ",
        nothing: format!("No PodUnavailableBudgets in {}", where_(app)),
        columns: vec![
            Column::new("NAME", Constraint::Fill(1), 0),
            Column::new("TARGET", Constraint::Length(20), 2),
            Column::new("ALLOWED", Constraint::Length(7), 0),
            Column::new("DESIRED", Constraint::Length(7), 0),
            Column::new("CURRENT", Constraint::Length(7), 0),
            Column::new("TOTAL", Constraint::Length(5), 0),
            Column::new("DOWN (SINCE)", Constraint::Fill(2), 0),
            Column::new("AGE", Constraint::Length(4), 1),
        ],
        len: rows.len(),
    };
    let namespace_of = |i: usize| rows.get(i).copied().map(|r| r.namespace.as_str());
    namespaced_table(app, view, screen, area, buf, namespace_of, |i| {
        let Some(b) = rows.get(i).copied() else {
            return Vec::new();
        };
        let mut cells = Vec::new();
        let allowed_role = if b.allowed <= 0 {
            Role::StatusError
        } else {
            Role::StatusOk
        };
        let mut down = Vec::new();
        for (label, list) in [
            ("disrupted", &b.disrupted),
            ("unavailable", &b.unavailable),
            ("not ready", &b.not_ready),
        ] {
            for p in list {
                down.push(format!("{} {label} {}", p.pod, age(app.now, p.since)));
            }
        }
        cells.extend([
            Cell::from(b.name.as_str()),
            Cell::from(b.target.as_str()),
            Cell::from(Span::styled(b.allowed.to_string(), role(app, allowed_role))),
            Cell::from(b.desired.to_string()),
            Cell::from(b.current.to_string()),
            Cell::from(b.total.to_string()),
            Cell::from(if down.is_empty() {
                "-".to_owned()
            } else {
                down.join(", ")
            }),
            Cell::from(age(app.now, b.created)),
        ]);
        cells
    });
}

fn sidecarsets(app: &App, view: &OncallView, area: Rect, buf: &mut Buffer) {
    let rows = shown(&app.oncall.sidecarsets, &view.filter);
    let spec = TableSpec {
        title: table::filtered_title(
            &app.theme,
            format!(" SidecarSets [{}] ", rows.len()),
            &view.filter,
        ),
        title_right: Line::from(" enter: per-pod sidecar versions "),
        columns: vec![
            Column::new("NAME", Constraint::Fill(1), 0),
            Column::new("MATCHED", Constraint::Length(7), 0),
            Column::new("UPDATED", Constraint::Length(7), 0),
            Column::new("READY", Constraint::Length(5), 0),
            Column::new("PARTITION", Constraint::Length(9), 0),
            Column::new("PAUSED", Constraint::Length(6), 0),
            Column::new("UPGRADE", Constraint::Length(7), 2),
            Column::new("INJECTION", Constraint::Length(22), 0),
            Column::new("LATEST REVISION", Constraint::Length(22), 1),
        ],
        len: rows.len(),
        selected: view.selected,
        offset: view.offset,
        empty: list_empty(app, view, "No SidecarSets in this cluster"),
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(s) = rows.get(i).copied() else {
            return Vec::new();
        };
        let upd_role = if s.updated < s.matched {
            Role::StatusProgress
        } else {
            Role::StatusOk
        };
        vec![
            Cell::from(s.name.as_str()),
            Cell::from(s.matched.to_string()),
            Cell::from(Span::styled(s.updated.to_string(), role(app, upd_role))),
            Cell::from(s.ready.to_string()),
            Cell::from(s.partition.as_str()),
            if s.paused {
                Cell::from(Span::styled("yes", role(app, Role::StatusWarn)))
            } else {
                Cell::from("-")
            },
            Cell::from(if s.hot { "hot" } else { "cold" }),
            Cell::from(s.injection.as_str()),
            Cell::from(if s.latest_revision.is_empty() {
                "-"
            } else {
                s.latest_revision.as_str()
            }),
        ]
    });
}

fn probes(app: &App, view: &OncallView, area: Rect, buf: &mut Buffer) {
    let rows = shown(&app.oncall.probes, &view.filter);
    let screen = TableOf {
        heading: "Probe markers (PodProbeMarkers × matched pods)",
        hint: "",
        nothing: format!("No PodProbeMarker matches a pod in {}", where_(app)),
        columns: vec![
            Column::new("MARKER/PROBE", Constraint::Length(20), 0),
            Column::new("POD", Constraint::Length(18), 0),
            Column::new("STATE", Constraint::Length(9), 0),
            Column::new("CONDITION", Constraint::Length(28), 2),
            Column::new("APPLIED", Constraint::Fill(1), 1),
            Column::new("PROBED", Constraint::Length(6), 0),
            Column::new("MESSAGE", Constraint::Fill(1), 0),
        ],
        len: rows.len(),
    };
    let namespace_of = |i: usize| rows.get(i).copied().map(|r| r.namespace.as_str());
    namespaced_table(app, view, screen, area, buf, namespace_of, |i| {
        let Some(p) = rows.get(i).copied() else {
            return Vec::new();
        };
        let mut cells = Vec::new();
        let state_role = match p.state.as_str() {
            "Succeeded" => Role::StatusOk,
            "Failed" => Role::StatusError,
            _ => Role::Muted,
        };
        let cond = if p.condition_status.is_empty() {
            format!("{} -", p.condition)
        } else {
            format!("{} {}", p.condition, p.condition_status)
        };
        cells.extend([
            Cell::from(format!("{}/{}", p.marker, p.probe)),
            Cell::from(p.pod.as_str()),
            Cell::from(Span::styled(
                if p.state.is_empty() {
                    "-"
                } else {
                    p.state.as_str()
                },
                role(app, state_role),
            )),
            Cell::from(cond),
            Cell::from(if p.applied.is_empty() {
                "-".to_owned()
            } else {
                p.applied.join(" ")
            }),
            Cell::from(age(app.now, p.last_probe)),
            Cell::from(p.message.as_str()),
        ]);
        cells
    });
}
