//! Overlays: the confirm dialog (the exact request, what changes, the plan API's prediction,
//! the action layer's notes, [Cancel] [Confirm] with the focus shown), the wait for the kube
//! layer, the input forms and the undo revision picker.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Flex, Layout, Rect},
    style::Style,
    text::{Line, Span},
    widgets::{Block, Clear, Paragraph, Widget, Wrap},
};

use super::{header::role, prediction};
use crate::{
    app::{
        App,
        dialog::{Button, Confirm, Form, Overlay, RevisionPicker},
        restart::RestartPanel,
        route::Fetch,
    },
    config::Role,
};

pub fn render(app: &App, overlay: &Overlay, area: Rect, buf: &mut Buffer) {
    match overlay {
        Overlay::Busy { what, sending, .. } => {
            let hint = if *sending {
                "waiting for the server · esc hides this (the answer shows on the status line)"
            } else {
                "esc stops waiting (nothing is sent)"
            };
            let lines = vec![
                Line::raw(what.clone()),
                Line::styled(hint, role(app, Role::Muted)),
            ];
            let popup = centered(area, 90, 4);
            frame(app, " Working ", popup, buf);
            Paragraph::new(lines)
                .wrap(Wrap { trim: true })
                .render(inner(popup), buf);
        }
        Overlay::Confirm(c) => confirm(app, c, area, buf),
        Overlay::Form(f) => form(app, f, area, buf),
        Overlay::Revisions(p) => revisions(app, p, area, buf),
        Overlay::Restart(p) => restart(app, p, area, buf),
    }
}

/// The restart panel: per pod its request and state, per container its phase, live.
pub fn restart_lines(app: &App, p: &RestartPanel) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        format!("{} — pods go one after another", p.action.describe()),
        role(app, Role::Muted),
    )];
    for step in &p.steps {
        let style = match step.state.as_str() {
            "ready again" => role(app, Role::StatusOk),
            "failed" => role(app, Role::StatusError),
            "queued" => role(app, Role::Muted),
            _ => role(app, Role::StatusWarn),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{:<28}", step.pod), role(app, Role::HeaderValue)),
            Span::styled(format!(" {:<22}", step.state), style),
            Span::styled(
                step.crr.clone().unwrap_or_else(|| "-".to_owned()),
                role(app, Role::Muted),
            ),
        ]));
        for (name, phase, message) in &step.containers {
            let style = match phase.as_str() {
                "Succeeded" => role(app, Role::StatusOk),
                "Failed" => role(app, Role::StatusError),
                _ => role(app, Role::StatusWarn),
            };
            let mut spans = vec![
                Span::raw(format!("    {name:<24}")),
                Span::styled(format!(" {phase}"), style),
            ];
            if !message.is_empty() {
                spans.push(Span::styled(format!("  {message}"), role(app, Role::Muted)));
            }
            lines.push(Line::from(spans));
        }
        if !step.message.is_empty() {
            lines.push(Line::styled(
                format!("    {}", step.message),
                role(app, Role::Muted),
            ));
        }
    }
    match &p.done {
        None if p.stopping => lines.push(Line::styled(
            "stopping after the pod in flight… esc hides this panel",
            role(app, Role::StatusWarn),
        )),
        None if p.steps.len() > 1 => lines.push(Line::styled(
            "running… esc stops after the pod in flight · enter hides this panel (it goes on)",
            role(app, Role::Muted),
        )),
        None => lines.push(Line::styled(
            "running… esc hides this panel (the restart goes on)",
            role(app, Role::Muted),
        )),
        Some(Ok(text)) => lines.push(Line::styled(format!("✔ {text}"), role(app, Role::StatusOk))),
        Some(Err(why)) => lines.push(Line::styled(
            format!("✖ {why}"),
            role(app, Role::StatusError),
        )),
    }
    lines
}

fn restart(app: &App, p: &RestartPanel, area: Rect, buf: &mut Buffer) {
    let lines = restart_lines(app, p);
    let popup = centered(
        area,
        area.width.saturating_sub(4).min(100),
        lines.len() as u16 + 2,
    );
    frame(app, " Restart in place ", popup, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner(popup), buf);
}

/// A box of at most `width` × `height` centred in `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let [v] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [h] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(v);
    h
}

fn frame(app: &App, title: &str, popup: Rect, buf: &mut Buffer) {
    Clear.render(popup, buf);
    Block::bordered()
        .border_style(role(app, Role::Prompt))
        .title(Line::from(title.to_owned()).style(role(app, Role::Title)))
        .render(popup, buf);
}

fn inner(popup: Rect) -> Rect {
    Rect {
        x: popup.x + 2,
        y: popup.y + 1,
        width: popup.width.saturating_sub(4),
        height: popup.height.saturating_sub(2),
    }
}

fn heading(app: &App, text: &str) -> Line<'static> {
    Line::styled(text.to_owned(), role(app, Role::TableHeader))
}

/// The confirm dialog's body (without the buttons).
pub fn confirm_lines(app: &App, c: &Confirm) -> Vec<Line<'static>> {
    let p = &c.preview.prepared;
    let mut lines = vec![heading(app, "Changes")];
    for change in &p.changes {
        lines.push(Line::raw(format!("  {change}")));
    }
    lines.push(heading(app, "Request"));
    lines.push(Line::styled(
        format!("  {} {}", p.request.verb, p.request.path),
        role(app, Role::HeaderValue),
    ));
    lines.push(Line::styled(
        format!("  Content-Type: {}", p.request.content_type),
        role(app, Role::Muted),
    ));
    match p.request.body.as_array() {
        Some(ops) => {
            for (i, op) in ops.iter().enumerate() {
                let open = if i == 0 { "[" } else { " " };
                let close = if i + 1 == ops.len() { "]" } else { "," };
                lines.push(Line::raw(format!(
                    "  {open}{}{close}",
                    serde_json::to_string(op).unwrap_or_default()
                )));
            }
        }
        None => lines.push(Line::raw(format!(
            "  {}",
            serde_json::to_string(&p.request.body).unwrap_or_default()
        ))),
    }
    lines.push(heading(
        app,
        "Predicted effect (plan API, on the objects as read now)",
    ));
    match &c.preview.prediction {
        None => lines.push(Line::styled(
            "  no rollout prediction for this action: the changes above are all it does",
            role(app, Role::Muted),
        )),
        Some(Err(err)) => lines.push(Line::styled(
            format!("  no prediction: {err}"),
            role(app, Role::StatusWarn),
        )),
        Some(Ok(pred)) => {
            for line in prediction::lines(app, pred) {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(line.spans);
                lines.push(Line::from(spans).style(line.style));
            }
        }
    }
    if !p.notes.is_empty() {
        lines.push(heading(app, "Notes"));
        for note in &p.notes {
            lines.push(Line::styled(
                format!("  ⚠ {note}"),
                role(app, Role::StatusWarn),
            ));
        }
    }
    lines
}

fn confirm(app: &App, c: &Confirm, area: Rect, buf: &mut Buffer) {
    let p = &c.preview.prepared;
    let body = confirm_lines(app, c);
    let width = area.width.saturating_sub(4).min(110);
    // Wrapped body lines take more rows on a narrow screen: count roughly.
    let text_width = usize::from(width.saturating_sub(4)).max(1);
    let rows: usize = body
        .iter()
        .map(|l| l.width().div_ceil(text_width).max(1))
        .sum();
    let height = (rows as u16 + 5).min(area.height);
    let popup = centered(area, width, height);
    frame(
        app,
        &format!(
            " Confirm: {} on {} ",
            p.action.describe(),
            p.target.describe()
        ),
        popup,
        buf,
    );
    let inside = inner(popup);
    let [text, buttons, hints] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inside);
    Paragraph::new(body)
        .wrap(Wrap { trim: false })
        .scroll((c.scroll, 0))
        .render(text, buf);
    let button = |label: &str, b: Button| {
        let style = if c.focus == b {
            role(app, Role::RowSelected)
        } else {
            role(app, Role::Text)
        };
        Span::styled(format!("[ {label} ]"), style)
    };
    Paragraph::new(Line::from(vec![
        button("Cancel", Button::Cancel),
        Span::raw("   "),
        button("Confirm", Button::Confirm),
    ]))
    .centered()
    .render(buttons, buf);
    Paragraph::new(Line::styled(
        format!(
            "y confirm · n/esc cancel · {} what-if · enter the focused button · tab/←/→ focus · \
             ↑/↓ scroll",
            app.keymap.hint(crate::config::Action::WhatIf)
        ),
        role(app, Role::Muted),
    ))
    .centered()
    .render(hints, buf);
}

fn form(app: &App, f: &Form, area: Rect, buf: &mut Buffer) {
    let label_width = f
        .fields
        .iter()
        .map(|x| x.label.chars().count())
        .max()
        .unwrap_or(0) as u16;
    let height = f.info.len() as u16 + f.fields.len() as u16 + 6;
    let popup = centered(area, area.width.saturating_sub(4).min(90), height);
    frame(app, &format!(" {} ", f.title), popup, buf);
    let inside = inner(popup);
    let mut y = inside.y;
    for line in &f.info {
        Paragraph::new(Line::styled(line.clone(), role(app, Role::Muted))).render(
            Rect {
                y,
                height: 1,
                ..inside
            },
            buf,
        );
        y += 1;
    }
    y += 1;
    for (i, field) in f.fields.iter().enumerate() {
        if y >= inside.bottom() {
            break;
        }
        let focused = i == f.focus;
        let row = Rect {
            y,
            height: 1,
            ..inside
        };
        let [label, input] =
            Layout::horizontal([Constraint::Length(label_width + 2), Constraint::Fill(1)])
                .areas(row);
        Paragraph::new(Span::styled(
            format!("{}:", field.label),
            role(
                app,
                if focused {
                    Role::Prompt
                } else {
                    Role::HeaderKey
                },
            ),
        ))
        .render(label, buf);
        let mut text = field.input.clone();
        text.set_cursor_line_style(Style::default());
        text.set_style(role(app, Role::HeaderValue));
        text.set_cursor_style(if focused {
            role(app, Role::RowSelected)
        } else {
            role(app, Role::HeaderValue)
        });
        // A focused field's prefilled value is selected: typing replaces it.
        text.set_selection_style(role(app, Role::RowSelected));
        text.render(input, buf);
        y += 1;
    }
    let error = Rect {
        y: (y + 1).min(inside.bottom().saturating_sub(2)),
        height: 1,
        ..inside
    };
    if let Some(err) = &f.error {
        Paragraph::new(Line::styled(
            format!("✖ {err}"),
            role(app, Role::StatusError),
        ))
        .render(error, buf);
    }
    Paragraph::new(Line::styled(
        "enter check and continue (you confirm next) · esc cancel · tab next field",
        role(app, Role::Muted),
    ))
    .render(
        Rect {
            y: inside.bottom().saturating_sub(1),
            height: 1,
            ..inside
        },
        buf,
    );
}

fn revisions(app: &App, p: &RevisionPicker, area: Rect, buf: &mut Buffer) {
    let popup = centered(
        area,
        area.width.saturating_sub(4).min(110),
        area.height.min(24),
    );
    frame(
        app,
        &format!(" Undo {}: pick a revision ", p.target.describe()),
        popup,
        buf,
    );
    let inside = inner(popup);
    let revs = match &p.revisions {
        Fetch::Loading => {
            Paragraph::new(Line::styled(
                "Reading the revisions…",
                role(app, Role::Muted),
            ))
            .render(inside, buf);
            return;
        }
        Fetch::Failed(err) => {
            Paragraph::new(Line::styled(err.clone(), role(app, Role::StatusError)))
                .render(inside, buf);
            return;
        }
        Fetch::Loaded(r) => r,
    };
    let list_height = (revs.revisions.len() as u16 + 1).min(inside.height / 2);
    let [list, diff, hint] = Layout::vertical([
        Constraint::Length(list_height),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(inside);
    let mut lines = vec![heading(app, "REVISION  NAME")];
    let first = (p.selected + 1).saturating_sub(list_height.saturating_sub(1) as usize);
    for (i, rev) in revs.revisions.iter().enumerate().skip(first) {
        let current = rev.template == revs.current;
        let text = format!(
            "{}{:>6}  {}{}",
            if i == p.selected { "▶ " } else { "  " },
            rev.number,
            rev.name,
            if current {
                "  (the current template)"
            } else {
                ""
            }
        );
        let style = if i == p.selected {
            role(app, Role::RowSelected)
        } else if current {
            role(app, Role::Muted)
        } else {
            role(app, Role::Text)
        };
        lines.push(Line::styled(text, style));
    }
    Paragraph::new(lines).render(list, buf);
    let mut body = vec![heading(
        app,
        "Template diff: current → this revision (the whole template is replaced)",
    )];
    let d = p.diff();
    if d.is_empty() {
        body.push(Line::styled(
            "  identical to the current template",
            role(app, Role::Muted),
        ));
    }
    for line in d {
        body.push(Line::raw(format!("  {line}")));
    }
    Paragraph::new(body)
        .wrap(Wrap { trim: false })
        .scroll((p.scroll, 0))
        .render(diff, buf);
    Paragraph::new(Line::styled(
        "enter undo to this revision (you confirm next) · ↑/↓ pick · esc cancel",
        role(app, Role::Muted),
    ))
    .render(hint, buf);
}
