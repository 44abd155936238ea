//! The usage columns the Workloads and Pods views add when `metrics.k8s.io` answers: CPU and
//! memory used, each with the request/limit beside it (`100m/500m`, `-` where not set). Usage
//! near the limit (else the request) is coloured; figures from an earlier read (the last one
//! failed) are muted.

use ratatui::{layout::Constraint, text::Span};

use super::{header::role, widgets::table::Cell};
use crate::{
    app::{
        App,
        usage::{Figures, format_cpu, format_memory},
    },
    config::Role,
};

/// The four columns, `drop_usage` for the figures and `drop_bounds` for the requests/limits
/// (higher numbers go first on a narrow terminal).
pub fn columns(drop_usage: u8, drop_bounds: u8) -> [super::widgets::table::Column; 4] {
    use super::widgets::table::Column;
    [
        Column::new("CPU", Constraint::Length(6), drop_usage),
        Column::new("CPU R/L", Constraint::Length(11), drop_bounds),
        Column::new("MEM", Constraint::Length(7), drop_usage),
        Column::new("MEM R/L", Constraint::Length(13), drop_bounds),
    ]
}

/// The four cells of one row (`-` without figures: a pod not yet measured).
pub fn cells<'a>(app: &App, figures: Option<&Figures>) -> [Cell<'a>; 4] {
    let Some(f) = figures else {
        return [
            Cell::from("-"),
            Cell::from("-"),
            Cell::from("-"),
            Cell::from("-"),
        ];
    };
    let b = &f.bounds;
    let pair = |req: Option<i64>, lim: Option<i64>, fmt: fn(i64) -> String| match (req, lim) {
        (None, None) => "-".to_owned(),
        (r, l) => format!(
            "{}/{}",
            r.map_or_else(|| "-".to_owned(), fmt),
            l.map_or_else(|| "-".to_owned(), fmt)
        ),
    };
    let used = |text: String, percent: Option<i64>| {
        let r = if app.usage.stale {
            Role::Muted
        } else {
            pressure(percent)
        };
        Cell::from(Span::styled(text, role(app, r)))
    };
    let muted = |text: String| {
        if app.usage.stale {
            Cell::from(Span::styled(text, role(app, Role::Muted)))
        } else {
            Cell::from(text)
        }
    };
    [
        used(format_cpu(f.cpu), f.cpu_percent()),
        muted(pair(b.cpu_request, b.cpu_limit, format_cpu)),
        used(format_memory(f.memory), f.memory_percent()),
        muted(pair(b.memory_request, b.memory_limit, format_memory)),
    ]
}

/// The colour of a usage at this share of its limit (else request).
fn pressure(percent: Option<i64>) -> Role {
    match percent {
        Some(p) if p >= 90 => Role::StatusError,
        Some(p) if p >= 75 => Role::StatusWarn,
        _ => Role::Text,
    }
}
