//! The YAML view: the text the executor fetched (`Effect::FetchYaml`), scrollable; only the
//! lines in the window are styled and drawn.

use ratatui::{
    buffer::Buffer,
    layout::{Margin, Rect},
    text::{Line, Span},
    widgets::{Block, Paragraph, Widget},
};

use super::header::role;
use crate::{
    app::{
        App,
        msg::ObjectRef,
        route::{Fetch, TextView},
    },
    config::Role,
};

pub fn title(prefix: &str, target: &ObjectRef) -> String {
    match &target.namespace {
        Some(ns) => format!(
            " {prefix} — {} {ns}/{} ",
            target.kind.debug_name(),
            target.name
        ),
        None => format!(" {prefix} — {} {} ", target.kind.debug_name(), target.name),
    }
}

pub fn render(app: &App, view: &TextView, area: Rect, buf: &mut Buffer) {
    let height = area.height.saturating_sub(2) as usize;
    let mut block = Block::bordered()
        .border_style(role(app, Role::Border))
        .title(Line::from(title("YAML", &view.target)).style(role(app, Role::Title)));
    let lines: Vec<Line> = match &view.lines {
        Fetch::Loading => vec![Line::from(Span::styled(
            "Loading YAML…",
            role(app, Role::Muted),
        ))],
        Fetch::Failed(err) => vec![Line::from(Span::styled(
            format!("Could not fetch the YAML: {err}"),
            role(app, Role::StatusError),
        ))],
        Fetch::Loaded(lines) => {
            let start = view.scroll.min(lines.len());
            let end = (start + height).min(lines.len());
            block = block.title(
                Line::from(format!(" lines {}-{} of {} ", start + 1, end, lines.len()))
                    .right_aligned()
                    .style(role(app, Role::Muted)),
            );
            lines[start..end]
                .iter()
                .map(|l| yaml_line(app, l))
                .collect()
        }
    };
    let inner = block.inner(area);
    block.render(area, buf);
    Paragraph::new(lines)
        .style(role(app, Role::Text))
        .render(inner.inner(Margin::new(1, 0)), buf);
}

/// Colours the key of a `key: value` line.
fn yaml_line<'a>(app: &App, line: &'a str) -> Line<'a> {
    let body = line.trim_start_matches([' ', '-']);
    let indent = line.len() - body.len();
    match body.find(':') {
        Some(colon) if !body.starts_with(['"', '\'', '#']) && !body[..colon].contains(' ') => {
            let (key, rest) = line.split_at(indent + colon);
            let (lead, key) = key.split_at(indent);
            Line::from(vec![
                Span::raw(lead),
                Span::styled(key, role(app, Role::YamlKey)),
                Span::raw(rest),
            ])
        }
        _ => Line::from(line),
    }
}
