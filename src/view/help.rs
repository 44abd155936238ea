//! The help overlay, generated from the active keymap (rebinding a key changes what help says).
//! Keys are listed in two columns when the screen is wide enough, one otherwise.

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

/// Width of one key column: keys, two spaces, the description.
const KEYS: usize = 14;
const COLUMN: usize = KEYS + 2 + 38;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let key_style = role(app, Role::HelpKey);
    let entries: Vec<(String, &str)> = app
        .keymap
        .iter()
        .map(|(action, keys)| {
            let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
            (keys.join(" "), action.description())
        })
        .collect();
    let two = usize::from(area.width) >= 2 * COLUMN + 6;
    let cell = |(keys, what): &(String, &str)| {
        vec![
            Span::styled(format!("{keys:>KEYS$}  "), key_style),
            Span::raw(format!("{what:<38}")),
        ]
    };
    let mut lines = Vec::new();
    if two {
        let half = entries.len().div_ceil(2);
        for i in 0..half {
            let mut spans = cell(&entries[i]);
            if let Some(right) = entries.get(i + half) {
                spans.push(Span::raw("  "));
                spans.extend(cell(right));
            }
            lines.push(Line::from(spans));
        }
    } else {
        lines.extend(entries.iter().map(|e| Line::from(cell(e))));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Commands", role(app, Role::Title))));
    let commands = [
        (
            ":cs :asts :ads",
            "CloneSets / Advanced StatefulSets / DaemonSets",
        ),
        (":workloads", "all three kinds together"),
        (":pods", "all pods (in a rollout view: its pods)"),
        (":journal", "every action sent; u reverts one"),
        (":protect", "delete-protected objects, verdict now"),
        (":triage", "what is unhealthy, worst first, with its remedy"),
        (":crr :pub", "container restarts / disruption budgets"),
        (
            ":sidecarset :ppm",
            "sidecar versions per pod / probe markers",
        ),
        (":acj", "AdvancedCronJobs: next run in their zone, P pause"),
        (":bcj", "BroadcastJobs: pods per node, completion policy"),
        (":ns NAME", "switch namespace (:ns all for every namespace)"),
        (":ctx NAME", "switch kubeconfig context"),
        (":q", "quit"),
    ];
    for (cmd, what) in commands {
        lines.push(Line::from(vec![
            Span::styled(format!("{cmd:>KEYS$}  "), key_style),
            Span::raw(what),
        ]));
    }
    lines.push(Line::from(Span::styled(
        "In : and / — enter run/keep · esc cancel · tab complete",
        role(app, Role::Muted),
    )));
    lines.push(Line::from(Span::styled(
        format!(
            "In a log — f follow · w wrap · t timestamps · p previous run · {} search, n/N \
             next/prev match",
            app.keymap.hint(Action::Filter),
        ),
        role(app, Role::Muted),
    )));
    lines.push(Line::from(Span::styled(
        "In a confirm dialog — y confirm · n/esc cancel · enter the focused button (Cancel first)",
        role(app, Role::Muted),
    )));
    let height = (lines.len() as u16 + 2).min(area.height);
    let width = if two { 2 * COLUMN + 6 } else { COLUMN + 4 } as u16;
    let width = width.min(area.width);
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
