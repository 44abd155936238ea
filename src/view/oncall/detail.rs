//! The on-call detail views: one SidecarSet's matched pods with each sidecar container's
//! version, and one budget's pods.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
};

use super::{super::age, empty_state};
use crate::{
    app::{App, oncall::OncallView},
    config::Role,
    view::{
        header::role,
        widgets::table::{self, Cell, Column, TableSpec},
    },
};

pub fn sidecar_pods(app: &App, view: &OncallView, name: &str, area: Rect, buf: &mut Buffer) {
    let rows = app.sidecar_pods(name);
    let set = app.oncall.sidecarsets.iter().find(|s| s.name == name);
    let right = set.map_or_else(String::new, |s| {
        format!(
            " updated {}/{} · partition {} · injection {} ",
            s.updated, s.matched, s.partition, s.injection
        )
    });
    let spec = TableSpec {
        title: Line::from(format!(
            " SidecarSet {name} — sidecars of its pods [{}] ",
            rows.len()
        )),
        title_right: Line::from(right),
        columns: vec![
            Column::new("POD", Constraint::Fill(1), 0),
            Column::new("CONTAINER", Constraint::Length(14), 0),
            Column::new("IMAGE", Constraint::Length(20), 1),
            Column::new("HASH", Constraint::Length(12), 2),
            Column::new("REVISION", Constraint::Fill(1), 0),
            Column::new("VERSION", Constraint::Length(8), 3),
            Column::new("UPDATED", Constraint::Length(7), 0),
            Column::new("READY", Constraint::Length(5), 0),
            Column::new("HOT", Constraint::Length(7), 0),
        ],
        len: rows.len(),
        selected: view.selected,
        offset: view.offset,
        empty: if set.is_none() && app.ready.contains(&crate::app::Kind::SidecarSet) {
            vec![Line::from(format!(
                "SidecarSet {name} is not in the cluster any more"
            ))]
        } else {
            empty_state(app, &view.screen, "No pod matches this SidecarSet")
        },
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(r) = rows.get(i) else {
            return Vec::new();
        };
        let short = |h: &str| h.chars().take(10).collect::<String>();
        vec![
            Cell::from(r.pod.clone()),
            Cell::from(r.container.clone()),
            Cell::from(r.image.clone()),
            Cell::from(if r.hash.is_empty() {
                "-".to_owned()
            } else {
                short(&r.hash)
            }),
            Cell::from(if r.revision.is_empty() {
                "-".to_owned()
            } else {
                r.revision.clone()
            }),
            Cell::from(if r.version.is_empty() {
                "-".to_owned()
            } else {
                r.version.clone()
            }),
            if r.updated {
                Cell::from(Span::styled("yes", role(app, Role::StatusOk)))
            } else {
                Cell::from(Span::styled("no", role(app, Role::StatusProgress)))
            },
            Cell::from(if r.ready { "yes" } else { "no" }),
            Cell::from(if r.hot.is_empty() { "-" } else { r.hot }),
        ]
    });
}

pub fn budget(
    app: &App,
    view: &OncallView,
    namespace: &str,
    name: &str,
    area: Rect,
    buf: &mut Buffer,
) {
    let b = app.budget(namespace, name);
    let rows: Vec<(&str, &str, Option<jiff::Timestamp>)> = b
        .map(|b| {
            let mut rows = Vec::new();
            for (label, list) in [
                ("disrupted (deleted/evicted)", &b.disrupted),
                ("unavailable (updating)", &b.unavailable),
                ("not ready", &b.not_ready),
            ] {
                rows.extend(list.iter().map(|p| (p.pod.as_str(), label, p.since)));
            }
            rows
        })
        .unwrap_or_default();
    let right = b.map_or_else(String::new, |b| {
        format!(
            " {} · allowed {} · available {}/{} (desired {}) ",
            b.target, b.allowed, b.current, b.total, b.desired
        )
    });
    let empty = match b {
        None if app.ready.contains(&crate::app::Kind::PodUnavailableBudget) => {
            vec![Line::from(format!(
                "PodUnavailableBudget {namespace}/{name} is not in the cluster any more"
            ))]
        }
        None => empty_state(app, &view.screen, ""),
        Some(_) => vec![Line::from("Every pod it counts is available")],
    };
    let spec = TableSpec {
        title: Line::from(format!(
            " PodUnavailableBudget {namespace}/{name} — pods down [{}] ",
            rows.len()
        )),
        title_right: Line::from(right),
        columns: vec![
            Column::new("POD", Constraint::Fill(1), 0),
            Column::new("WHY", Constraint::Length(28), 0),
            Column::new("SINCE", Constraint::Length(6), 0),
        ],
        len: rows.len(),
        selected: view.selected,
        offset: view.offset,
        empty,
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some((pod, why, since)) = rows.get(i) else {
            return Vec::new();
        };
        vec![
            Cell::from(pod.to_string()),
            Cell::from(Span::styled(why.to_string(), role(app, Role::StatusWarn))),
            Cell::from(age(app.now, *since)),
        ]
    });
}
