//! `:triage all`: every kubeconfig context's triage in one worst-first table with a CONTEXT
//! column; contexts that could not be read first.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
};

use super::super::{
    age,
    header::role,
    widgets::table::{self, Cell, Column, TableSpec},
};
use crate::{
    app::{
        App,
        oncall::{
            OncallView, ProblemKind,
            across::{AcrossRow, What},
            shown,
        },
    },
    config::Role,
};

pub fn render(app: &App, view: &OncallView, area: Rect, buf: &mut Buffer) {
    let across = app.oncall.across.as_ref();
    let contexts = across.map_or(0, |a| a.contexts.len());
    let all: &[AcrossRow] = across.and_then(|a| a.rows.as_deref()).unwrap_or_default();
    let rows = shown(all, &view.filter);
    let when = across
        .and_then(|a| a.at)
        .map(|at| format!(" · {} ago", age(app.now, Some(at))))
        .unwrap_or_default();
    let empty = match across.and_then(|a| a.rows.as_ref()) {
        None => vec![Line::from(format!(
            "Reading {contexts} context{}…",
            if contexts == 1 { "" } else { "s" }
        ))],
        Some(_) if !view.filter.is_empty() => {
            vec![table::unmatched(Line::default(), &view.filter)]
        }
        Some(_) => vec![Line::from(format!(
            "Nothing unhealthy in {} ✓",
            if contexts == 1 {
                "the one context".to_owned()
            } else {
                format!("any of {contexts} contexts")
            }
        ))],
    };
    let spec = TableSpec {
        title: table::filtered_title(
            &app.theme,
            format!(
                " Triage — {contexts} context{} — worst first [{}] ",
                if contexts == 1 { "" } else { "s" },
                rows.len()
            ),
            &view.filter,
        ),
        title_right: Line::from(format!(
            " enter opens (in its context) · :triage all reads again{when} "
        )),
        columns: vec![
            Column::new("CONTEXT", Constraint::Length(18), 0),
            Column::new("PROBLEM", Constraint::Length(14), 0),
            Column::new("OBJECT", Constraint::Fill(1), 0),
            Column::new("WHY", Constraint::Fill(2), 0),
        ],
        len: rows.len(),
        selected: view.selected,
        offset: view.offset,
        empty,
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(r) = rows.get(i).copied() else {
            return Vec::new();
        };
        let label_role = match &r.what {
            What::Problem(p)
                if matches!(p.kind, ProblemKind::StuckRollout | ProblemKind::CrashLoop) =>
            {
                Role::StatusError
            }
            What::Problem(_) => Role::StatusWarn,
            What::Unreachable(_) | What::Forbidden(_) => Role::StatusError,
        };
        let here = app.context.as_deref() == Some(r.context.as_str());
        let context = if here {
            Span::styled(format!("{} ●", r.context), role(app, Role::HeaderValue))
        } else {
            Span::raw(r.context.as_str())
        };
        vec![
            Cell::from(context),
            Cell::from(Span::styled(r.label(), role(app, label_role))),
            Cell::from(r.subject()),
            Cell::from(r.why()),
        ]
    });
}
