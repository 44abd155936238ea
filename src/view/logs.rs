//! The Log view: the lines of the buffer that fit, from the top line the state says (or glued
//! to the newest), wrapped or cut at the edge, with every match of the search highlighted and
//! the current match's line marked. The border says which container, which run, which lines
//! of how many (and how many older ones were dropped), the toggles and the stream's state.

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    style::{Modifier, Style},
    text::{Line, Span},
    widgets::{Block, Paragraph, Widget, Wrap},
};

use super::header::role;
use crate::{
    app::{
        App,
        logs::{LogView, StreamState},
    },
    config::{Action, Role},
};

pub fn render(app: &App, view: &LogView, area: Rect, buf: &mut Buffer) {
    let rows = usize::from(area.height.saturating_sub(2));
    let width = usize::from(area.width.saturating_sub(2));
    let mut title = format!(
        " Log — Pod {}/{} · {}",
        view.namespace, view.pod, view.container
    );
    if view.containers.len() > 1 {
        let at = view
            .containers
            .iter()
            .position(|c| *c == view.container)
            .map_or(0, |i| i + 1);
        title.push_str(&format!(" ({at}/{})", view.containers.len()));
    }
    if view.previous {
        title.push_str(" · previous run");
    }
    title.push(' ');
    let first = view.first_shown(rows, width);
    let shown = shown_lines(view, first, rows, width);
    let mut range = if view.lines.is_empty() {
        " no lines ".to_owned()
    } else {
        format!(
            " {}-{}/{} ",
            first + 1,
            first + shown.max(1),
            view.lines.len()
        )
    };
    if view.dropped > 0 {
        range.push_str(&format!(
            "· {} older lines dropped (buffer {}) ",
            view.dropped, view.limit
        ));
    }
    let block = Block::bordered()
        .border_style(role(app, Role::Border))
        .title(Line::from(title).style(role(app, Role::Title)))
        .title(
            Line::from(range)
                .right_aligned()
                .style(role(app, Role::Muted)),
        )
        .title_bottom(toggles(app, view))
        .title_bottom(state_line(app, view).right_aligned());
    let inner = block.inner(area);
    block.render(area, buf);
    let body: Vec<Line> = if view.lines.is_empty() {
        vec![empty_line(app, view)]
    } else if view.wrap {
        // Cut at the width exactly as `rows_of` counts (not at words), so the view glued to
        // the bottom shows the last line whole.
        view.lines
            .iter()
            .enumerate()
            .skip(first)
            .flat_map(|(i, line)| cut(log_line(app, view, i, line), width))
            .take(rows)
            .collect()
    } else {
        view.lines
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, line)| log_line(app, view, i, line))
            .collect()
    };
    let mut text = Paragraph::new(body).style(role(app, Role::Text));
    if view.lines.is_empty() {
        text = text.wrap(Wrap { trim: false });
    }
    text.render(inner, buf);
}

/// A styled line cut into rows of `width` characters, styles kept.
fn cut(line: Line<'_>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for span in line.spans {
        let mut text = String::new();
        for c in span.content.chars() {
            if used == width {
                if !text.is_empty() {
                    row.push(Span::styled(std::mem::take(&mut text), span.style));
                }
                rows.push(Line::from(std::mem::take(&mut row)).style(line.style));
                used = 0;
            }
            text.push(c);
            used += 1;
        }
        if !text.is_empty() {
            row.push(Span::styled(text, span.style));
        }
    }
    rows.push(Line::from(row).style(line.style));
    rows
}

/// How many buffer lines fit from `first`.
fn shown_lines(view: &LogView, first: usize, rows: usize, width: usize) -> usize {
    let mut used = 0;
    let mut n = 0;
    for line in view.lines.iter().skip(first) {
        let need = crate::app::logs::rows_of(line, width, view.wrap);
        if used + need > rows && n > 0 {
            break;
        }
        used += need;
        n += 1;
        if used >= rows {
            break;
        }
    }
    n
}

fn empty_line(app: &App, view: &LogView) -> Line<'static> {
    match &view.state {
        StreamState::Connecting => Line::styled("Reading the log…", role(app, Role::Muted)),
        StreamState::Failed(why) => Line::styled(
            format!("Cannot read the log: {why}"),
            role(app, Role::StatusError),
        ),
        StreamState::Streaming => Line::styled(
            "Nothing logged yet; new lines appear here.",
            role(app, Role::Muted),
        ),
        StreamState::Ended | StreamState::Stopped => {
            Line::styled("The log is empty.", role(app, Role::Muted))
        }
    }
}

/// One log line: the timestamp muted (when shown), matches highlighted, the current match's
/// line marked in the first column.
fn log_line<'a>(app: &App, view: &LogView, index: usize, line: &'a str) -> Line<'a> {
    let current = view.search.current == Some(index);
    let hit = role(app, Role::StatusWarn).add_modifier(Modifier::REVERSED);
    let hit_current = role(app, Role::RowSelected).add_modifier(Modifier::BOLD);
    let stamp_end = if view.timestamps {
        line.find(' ').map_or(0, |i| i + 1)
    } else {
        0
    };
    let mut spans = Vec::new();
    let mut at = 0;
    let plain = |spans: &mut Vec<Span<'a>>, from: usize, to: usize| {
        // The timestamp part of a plain run is muted.
        if from < stamp_end {
            let cut = stamp_end.min(to);
            spans.push(Span::styled(&line[from..cut], role(app, Role::Muted)));
            if cut < to {
                spans.push(Span::raw(&line[cut..to]));
            }
        } else if from < to {
            spans.push(Span::raw(&line[from..to]));
        }
    };
    for (start, end) in view.search.ranges(line) {
        plain(&mut spans, at, start);
        spans.push(Span::styled(
            &line[start..end],
            if current { hit_current } else { hit },
        ));
        at = end;
    }
    plain(&mut spans, at, line.len());
    let mut out = Line::from(spans);
    if current {
        out = out.style(Style::default().add_modifier(Modifier::UNDERLINED));
    }
    out
}

/// The toggles with their keys: `f follow ● · w wrap ○ …`.
fn toggles(app: &App, view: &LogView) -> Line<'static> {
    let key = role(app, Role::HelpKey);
    let muted = role(app, Role::Muted);
    let mut spans = vec![Span::raw(" ")];
    let mut flag = |k: &str, name: &str, on: bool| {
        spans.push(Span::styled(k.to_owned(), key));
        spans.push(Span::styled(
            format!(" {name} {} ", if on { "●" } else { "○" }),
            muted,
        ));
    };
    flag("f", "follow", view.follow && !view.previous);
    flag("w", "wrap", view.wrap);
    flag("t", "timestamps", view.timestamps);
    flag("p", "previous", view.previous);
    spans.push(Span::styled(app.keymap.hint(Action::Filter), key));
    spans.push(Span::styled(" search  ".to_owned(), muted));
    if view.containers.len() > 1 {
        spans.push(Span::styled(app.keymap.hint(Action::Container), key));
        spans.push(Span::styled(" container ".to_owned(), muted));
    }
    Line::from(spans)
}

/// The search line while typing, the match position, or the stream's state.
fn state_line(app: &App, view: &LogView) -> Line<'static> {
    if let Some(input) = &view.search.input {
        return Line::from(vec![
            Span::styled(format!(" /{input}"), role(app, Role::Prompt)),
            Span::styled("▏ ", role(app, Role::Prompt)),
        ]);
    }
    if !view.search.query.is_empty() {
        let (at, total) = view.search.position(&view.lines);
        let text = match (at, total) {
            (_, 0) => format!(" no match for \"{}\" ", view.search.query),
            (Some(at), total) => format!(
                " \"{}\" match {at}/{total} · n/N next/prev ",
                view.search.query
            ),
            (None, total) => format!(" \"{}\" {total} matching lines · n/N ", view.search.query),
        };
        let style = if total == 0 {
            role(app, Role::StatusWarn)
        } else {
            role(app, Role::Prompt)
        };
        return Line::styled(text, style);
    }
    let (text, r) = match &view.state {
        StreamState::Connecting => (" connecting… ".to_owned(), Role::Muted),
        StreamState::Streaming if view.follow && !view.previous => {
            if view.stick {
                (" following ".to_owned(), Role::StatusOk)
            } else {
                (
                    " following (scrolled up; G to the end) ".to_owned(),
                    Role::StatusProgress,
                )
            }
        }
        StreamState::Streaming => (" reading… ".to_owned(), Role::Muted),
        StreamState::Ended if view.follow && !view.previous => (
            " the stream ended (the container stopped); f follows again ".to_owned(),
            Role::StatusWarn,
        ),
        StreamState::Ended => (" end of log ".to_owned(), Role::Muted),
        StreamState::Stopped => (" not following; f follows again ".to_owned(), Role::Muted),
        StreamState::Failed(why) => (format!(" {why} "), Role::StatusError),
    };
    Line::styled(text, role(app, r))
}
