//! The pod grid: one cell per pod, its glyph coloured by revision (update / current / other),
//! shaped by readiness and lifecycle state, the name red when failing; marked pods carry a `+`.
//! A legend under it names the colours and glyphs. When the nodes' NodeImages are listed, a `⇣`
//! after a pod's name says its next image is not on its node yet (pulling, or nobody asked).

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    style::Style,
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use super::block;
use crate::{
    app::{
        App,
        images::pulls::{Missing, next_image_missing},
        rollout::RolloutView,
        rows::{PodRow, same_revision, short_hash},
    },
    config::Role,
    view::header::role,
};

/// What a pod's glyph says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodState {
    Ready,
    NotReady,
    Failing,
    /// A lifecycle state other than Normal (a hook holds it, or it is being updated).
    Lifecycle,
    Terminating,
}

impl PodState {
    pub fn of(pod: &PodRow) -> PodState {
        let lifecycle = pod
            .pod
            .metadata
            .labels
            .get(crate::api::keys::LIFECYCLE_STATE);
        match pod.status.as_str() {
            "Terminating" => PodState::Terminating,
            "CrashLoopBackOff"
            | "Error"
            | "ErrImagePull"
            | "ImagePullBackOff"
            | "Failed"
            | "OOMKilled"
            | "CreateContainerError"
            | "InvalidImageName" => PodState::Failing,
            _ if lifecycle.is_some_and(|l| !l.is_empty() && l != "Normal") => PodState::Lifecycle,
            _ if pod.all_ready => PodState::Ready,
            _ => PodState::NotReady,
        }
    }

    /// The glyph: its shape tells the revision too (round: the update revision; square:
    /// another), so the grid reads without colours.
    pub fn glyph(self, on_update: bool) -> &'static str {
        match (self, on_update) {
            (PodState::Ready, true) => "●",
            (PodState::NotReady, true) => "○",
            (PodState::Ready, false) => "■",
            (PodState::NotReady, false) => "□",
            (PodState::Failing, _) => "✖",
            (PodState::Lifecycle, _) => "◐",
            (PodState::Terminating, _) => "⊘",
        }
    }
}

/// The part of a pod name after its workload's name.
fn short<'a>(pod: &'a str, owner: &str) -> &'a str {
    pod.strip_prefix(owner)
        .and_then(|rest| rest.strip_prefix('-'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(pod)
}

pub fn render(app: &App, view: &RolloutView, area: Rect, buf: &mut Buffer) {
    let rows = view.rows();
    let title = format!(
        " Pods {}{} ",
        rows.len(),
        if view.marked.is_empty() {
            String::new()
        } else {
            format!(" · {} marked", view.marked.len())
        }
    );
    let b = block(app, title);
    let inner = b.inner(area);
    b.render(area, buf);
    if rows.is_empty() {
        Paragraph::new("No pods")
            .style(role(app, Role::Muted))
            .render(inner, buf);
        return;
    }
    let update = view
        .summary
        .as_ref()
        .map(|s| s.update_revision.as_str())
        .unwrap_or_default();
    let current = view
        .summary
        .as_ref()
        .map(|s| s.current_revision.as_str())
        .unwrap_or_default();
    // The next image per pod, from the NodeImages (nothing when they are not listed).
    let missing: Vec<Option<Missing>> = rows
        .iter()
        .map(|pod| {
            view.summary
                .as_ref()
                .and_then(|s| next_image_missing(&view.node_images, s, pod, rows))
        })
        .collect();
    let images_known = view.node_images.images.is_some();
    let mut legend = legend(app, update, current);
    if images_known {
        legend.push(image_legend(app, &missing));
    }
    let width = usize::from(inner.width.max(1));
    let needed: usize = legend
        .iter()
        .map(|l| l.width().div_ceil(width).max(1))
        .sum();
    let legend_height = (needed as u16).min(inner.height.saturating_sub(1));
    let grid_height = inner.height.saturating_sub(legend_height) as usize;
    let name_width = rows
        .iter()
        .map(|r| short(&r.name, &view.owner.name).chars().count())
        .max()
        .unwrap_or(1);
    let cell = name_width + 3 + usize::from(images_known);
    let cols = (inner.width as usize / cell).max(1);
    let selected_row = view.selected / cols;
    let first_row = (selected_row + 1).saturating_sub(grid_height.max(1));
    let mut lines = Vec::new();
    for (r, chunk) in rows
        .chunks(cols)
        .enumerate()
        .skip(first_row)
        .take(grid_height)
    {
        let mut spans = Vec::new();
        for (c, pod) in chunk.iter().enumerate() {
            let i = r * cols + c;
            let state = PodState::of(pod);
            let on_update = !update.is_empty() && same_revision(&pod.revision, update);
            let revision_role = if on_update {
                Role::RevisionUpdate
            } else if !current.is_empty() && same_revision(&pod.revision, current) {
                Role::RevisionCurrent
            } else {
                Role::StatusWarn
            };
            let name_role = match state {
                PodState::Failing => Role::StatusError,
                PodState::Terminating => Role::Muted,
                _ => Role::Text,
            };
            let mark = if view.marked.contains(&pod.name) {
                "+"
            } else {
                " "
            };
            let name = format!("{:<name_width$}", short(&pod.name, &view.owner.name));
            let selected = i == view.selected;
            let pick = |s: Style| {
                if selected {
                    role(app, Role::RowSelected)
                } else {
                    s
                }
            };
            spans.push(Span::styled(
                state.glyph(on_update),
                pick(role(app, revision_role)),
            ));
            spans.push(Span::styled(mark, pick(role(app, Role::Prompt))));
            spans.push(Span::styled(name, pick(role(app, name_role))));
            if images_known {
                spans.push(match missing.get(i).copied().flatten() {
                    Some(Missing::Failed) => Span::styled("⇣", role(app, Role::StatusError)),
                    Some(_) => Span::styled("⇣", role(app, Role::StatusWarn)),
                    None => Span::raw(" "),
                });
            }
            spans.push(Span::raw(" "));
        }
        lines.push(Line::from(spans));
    }
    let grid_area = Rect {
        height: grid_height as u16,
        ..inner
    };
    Paragraph::new(lines).render(grid_area, buf);
    let legend_area = Rect {
        y: inner.y + grid_height as u16,
        height: legend_height,
        ..inner
    };
    Paragraph::new(legend)
        .wrap(Wrap { trim: true })
        .render(legend_area, buf);
}

/// `⇣ next image not on the node: 2 pulling, 1 pull failed`, from the NodeImages.
fn image_legend(app: &App, missing: &[Option<Missing>]) -> Line<'static> {
    let muted = role(app, Role::Muted);
    let count = |m: Missing| missing.iter().filter(|x| **x == Some(m)).count();
    if missing.iter().all(Option::is_none) {
        return Line::styled("NodeImages: every next image is on its node", muted);
    }
    let mut parts = Vec::new();
    for (m, what) in [
        (Missing::Pulling, "pulling"),
        (Missing::Failed, "pull failed"),
        (Missing::Absent, "not asked"),
    ] {
        let n = count(m);
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    let failed = count(Missing::Failed) > 0;
    Line::from(vec![
        Span::styled(
            "⇣",
            role(
                app,
                if failed {
                    Role::StatusError
                } else {
                    Role::StatusWarn
                },
            ),
        ),
        Span::styled(
            format!(" next image not on the node: {}", parts.join(", ")),
            muted,
        ),
    ])
}

fn legend(app: &App, update: &str, current: &str) -> Vec<Line<'static>> {
    let muted = role(app, Role::Muted);
    let mut revs = vec![
        Span::styled("●○", role(app, Role::RevisionUpdate)),
        Span::styled(format!(" {} update  ", short_hash(update)), muted),
    ];
    if !current.is_empty() && current != update {
        revs.push(Span::styled("■□", role(app, Role::RevisionCurrent)));
        revs.push(Span::styled(
            format!(" {} current  ", short_hash(current)),
            muted,
        ));
    }
    revs.push(Span::styled("■□", role(app, Role::StatusWarn)));
    revs.push(Span::styled(" other  (filled: ready)", muted));
    vec![
        Line::from(revs),
        Line::from(vec![Span::styled(
            "✖ failing  ◐ lifecycle hook  ⊘ terminating  + marked",
            muted,
        )]),
    ]
}
