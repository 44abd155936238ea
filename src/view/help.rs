//! The help overlay, generated from the active keymap (rebinding a key changes what help says).

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Flex, Layout, Margin, Rect},
    text::{Line, Span},
    widgets::{Block, Clear, Paragraph, Widget},
};

use super::header::role;
use crate::{
    app::App,
    config::{Action, Role},
};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let key_style = role(app, Role::HelpKey);
    let mut lines = Vec::new();
    for (action, keys) in app.keymap.iter() {
        let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
        lines.push(Line::from(vec![
            Span::styled(format!("{:>14}  ", keys.join(" ")), key_style),
            Span::raw(action.description()),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Commands", role(app, Role::Title))));
    for (cmd, what) in [
        (
            ":cs :asts :ads",
            "CloneSets / Advanced StatefulSets / DaemonSets",
        ),
        (":workloads", "all three kinds together"),
        (":pods", "all pods"),
        (":ns NAME", "switch namespace (:ns all for every namespace)"),
        (":ctx NAME", "switch kubeconfig context"),
        (":q", "quit"),
    ] {
        lines.push(Line::from(vec![
            Span::styled(format!("{cmd:>14}  "), key_style),
            Span::raw(what),
        ]));
    }
    lines.push(Line::from(Span::styled(
        "In : and / — enter run/keep · esc cancel · tab complete",
        role(app, Role::Muted),
    )));
    let height = (lines.len() as u16 + 2).min(area.height);
    let width = 72.min(area.width);
    let [popup] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::horizontal([Constraint::Length(width)])
        .flex(Flex::Center)
        .areas(popup);
    Clear.render(popup, buf);
    let block = Block::bordered()
        .border_style(role(app, Role::Border))
        .title(
            Line::from(format!(" Help — keymap {} ", app.keymap.name))
                .style(role(app, Role::Title)),
        )
        .title_bottom(
            Line::from(format!(
                " {}/{} close ",
                app.keymap.hint(Action::Back),
                app.keymap.hint(Action::Help)
            ))
            .right_aligned()
            .style(role(app, Role::Muted)),
        );
    let inner = block.inner(popup);
    block.render(popup, buf);
    Paragraph::new(lines)
        .style(role(app, Role::Text))
        .render(inner.inner(Margin::new(1, 0)), buf);
}
