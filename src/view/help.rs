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

/// `scroll`: lines scrolled down (clamped to the last screenful); the bottom border says when
/// there is more above or below.
pub fn render(app: &App, scroll: u16, area: Rect, buf: &mut Buffer) {
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
    // On a workload a Kruise Rollout controls (or a `:rollouts` row), `] P u` are the
    // Rollout's: said first, so the keys below read right.
    let controlled = crate::app::rollouts::keys::subject(app);
    let meanings: Vec<(String, &str)> = crate::app::rollouts::keys::MEANINGS
        .iter()
        .filter(|_| controlled.is_some())
        .map(|(a, what)| (app.keymap.hint(*a), *what))
        .collect();
    let mut lines = Vec::new();
    if let Some(row) = &controlled {
        lines.push(Line::from(Span::styled(
            format!("Here a Kruise Rollout ({}) owns the release", row.name),
            role(app, Role::Title),
        )));
        lines.extend(columns(&meanings, two, &cell));
        lines.push(Line::default());
    }
    lines.extend(columns(&entries, two, &cell));
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Commands", role(app, Role::Title))));
    // Each fits the key column (14) and the description column (38).
    let commands: Vec<(String, &str)> = [
        (":cs :asts :ads", "CloneSets · ASTS · Advanced DaemonSets"),
        (":workloads", "all three kinds together"),
        (":pods", "all pods (rollout view: its pods)"),
        (":journal", "every action sent; u reverts one"),
        (":protect", "delete-protected objects, verdict now"),
        (":triage", "unhealthy first, with the remedy"),
        (":triage all", "every kubeconfig context at once"),
        (":crr :pub", "in-place restarts / disruption budgets"),
        (":sidecarset", "sidecar versions per pod"),
        (":ppm", "probe markers and their results"),
        (":rollouts", "Kruise Rollouts: step, time left"),
        (":acj", "AdvancedCronJobs: next run, P pause"),
        (":bcj", "BroadcastJobs: pods per node"),
        (":ws", "WorkloadSpreads: pods per subset"),
        (":ud", "UnitedDeployments: subset workloads"),
        (":imagepulljobs", "image pre-pulls (+ :imagelistpulljobs)"),
        (":nodeimages", "images per node: pulled, pulling"),
        (":pps", "PersistentPodStates: kept vs now"),
        (":distributor", "ResourceDistributions: copies in sync"),
        (":ns NAME", "switch namespace (:ns all for all)"),
        (":ctx NAME", "switch kubeconfig context"),
        (":q", "quit"),
    ]
    .into_iter()
    .map(|(cmd, what)| (cmd.to_string(), what))
    .collect();
    lines.extend(columns(&commands, two, &cell));
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
    let total = lines.len() as u16;
    let height = (total + 2).min(area.height);
    let scroll = scroll.min(total.saturating_sub(height.saturating_sub(2)));
    let more = total > height.saturating_sub(2);
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
            Line::from(if more {
                format!(
                    " line {}–{} of {total}, {}/{} scroll · {}/{} close ",
                    scroll + 1,
                    scroll + height.saturating_sub(2),
                    app.keymap.hint(Action::Down),
                    app.keymap.hint(Action::Up),
                    app.keymap.hint(Action::Back),
                    app.keymap.hint(Action::Help)
                )
            } else {
                format!(
                    " {}/{} close ",
                    app.keymap.hint(Action::Back),
                    app.keymap.hint(Action::Help)
                )
            })
            .right_aligned()
            .style(role(app, Role::Muted)),
        );
    let inner = block.inner(popup);
    block.render(popup, buf);
    Paragraph::new(lines)
        .scroll((scroll, 0))
        .style(role(app, Role::Text))
        .render(inner.inner(Margin::new(1, 0)), buf);
}

/// `entries` as lines: top to bottom, then in a second column when `two`.
fn columns<'a>(
    entries: &'a [(String, &'a str)],
    two: bool,
    cell: &dyn Fn(&'a (String, &'a str)) -> Vec<Span<'a>>,
) -> Vec<Line<'a>> {
    if !two {
        return entries.iter().map(|e| Line::from(cell(e))).collect();
    }
    let half = entries.len().div_ceil(2);
    (0..half)
        .map(|i| {
            let mut spans = cell(&entries[i]);
            if let Some(right) = entries.get(i + half) {
                spans.push(Span::raw("  "));
                spans.extend(cell(right));
            }
            Line::from(spans)
        })
        .collect()
}
