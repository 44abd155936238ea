//! The header (context, cluster, namespace), the banners under it (failing watches, Kruise
//! missing, config warnings) and the status line (command/filter input, messages, key hints).

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    style::Style,
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use crate::{
    app::{App, Banner, Kind, Level, Mode, keys::selection, msg::ListMode, route::Route},
    config::{Action, Role},
};

pub fn render_header(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let key = t.style(Role::HeaderKey);
    let val = t.style(Role::HeaderValue);
    let mut spans = vec![
        Span::styled(" kruise-tui ", t.style(Role::Title)),
        Span::styled(" context ", key),
        Span::styled(app.context.as_deref().unwrap_or("-").to_owned(), val),
    ];
    // Which Kruise release the cluster runs, once told.
    if let Some(release) = app.kruise_release.as_ref().filter(|_| !app.kruise_missing) {
        spans.push(Span::styled("  kruise ", key));
        spans.push(Span::styled(release.label(), val));
    }
    spans.extend([
        Span::styled("  cluster ", key),
        Span::styled(
            if app.cluster_url.is_empty() {
                "-".to_owned()
            } else {
                app.cluster_url.clone()
            },
            val,
        ),
        Span::styled("  namespace ", key),
        Span::styled(app.namespace.as_deref().unwrap_or("all").to_owned(), val),
    ]);
    if app.kruise_missing {
        spans.push(Span::styled("  no OpenKruise", t.style(Role::StatusWarn)));
    }
    // How the big lists are loading, while they are.
    for text in loading(app) {
        spans.push(Span::styled(
            format!("  {text}"),
            t.style(Role::StatusProgress),
        ));
    }
    if app.readonly {
        spans.push(Span::styled("  READ-ONLY", t.style(Role::StatusWarn)));
    }
    // The Rollout that owns the workload on screen (or under the cursor), in one line.
    if let Some(row) = crate::app::rollouts::keys::workload(app).and_then(|o| app.rollout_of(&o)) {
        spans.push(Span::styled(
            format!("  {}", row.headline(app.now)),
            t.style(Role::Prompt),
        ));
    }
    Paragraph::new(Line::from(spans)).render(area, buf);
}

/// The kinds whose initial list can be long: their loading mode is shown until they are ready.
const SLOW_KINDS: [Kind; 4] = [
    Kind::Pod,
    Kind::CloneSet,
    Kind::StatefulSet,
    Kind::DaemonSet,
];

/// `pods loading · streaming list`, one text per mode, for the slow kinds still loading.
pub fn loading(app: &App) -> Vec<String> {
    [ListMode::Streaming, ListMode::Paged]
        .into_iter()
        .filter_map(|mode| {
            let kinds: Vec<&str> = SLOW_KINDS
                .iter()
                .filter(|k| {
                    app.list_modes.get(k) == Some(&mode)
                        && !app.ready.contains(k)
                        && !app.failed.contains_key(k)
                })
                .map(|k| k.info().plural)
                .collect();
            (!kinds.is_empty()).then(|| {
                let how = match mode {
                    ListMode::Streaming => "streaming list",
                    ListMode::Paged => "paged list (server refused streaming)",
                };
                format!("{} loading · {how}", kinds.join(", "))
            })
        })
        .collect()
}

pub fn render_banners(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let lines: Vec<Line> = app
        .banners()
        .into_iter()
        .map(|(kind, text)| {
            let role = match kind {
                Banner::Error => Role::BannerError,
                Banner::Warn => Role::BannerWarn,
                Banner::Info => Role::BannerInfo,
            };
            Line::from(text).style(t.style(role))
        })
        .collect();
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(area, buf);
}

pub fn render_status(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let prompt = t.style(Role::Prompt);
    let muted = t.style(Role::Muted);
    let left: Line = match &app.mode {
        Mode::Command { input, hint } => Line::from(vec![
            Span::styled(format!(":{input}"), prompt),
            Span::styled("█", prompt),
            Span::styled(
                if hint.is_empty() {
                    "   enter run · esc cancel · tab complete".to_owned()
                } else {
                    format!("   {hint}")
                },
                muted,
            ),
        ]),
        Mode::Filter => {
            let filter = app.top().filter_text();
            Line::from(vec![
                Span::styled(format!("/{filter}"), prompt),
                Span::styled("█", prompt),
                Span::styled("   enter keep · esc clear", muted),
            ])
        }
        _ => match &app.status {
            Some(s) => Line::from(Span::styled(
                format!(" {}", s.text),
                match s.level {
                    Level::Info => t.style(Role::StatusProgress),
                    Level::Error => t.style(Role::StatusError),
                },
            )),
            None => hints(app),
        },
    };
    let right = position(app);
    let right_width = right.chars().count() as u16;
    Paragraph::new(left).render(
        Rect {
            width: area.width.saturating_sub(right_width + 1),
            ..area
        },
        buf,
    );
    if right_width < area.width {
        Paragraph::new(Span::styled(right, muted))
            .right_aligned()
            .render(area, buf);
    }
}

/// Key hints for the current view, from the active keymap.
fn hints(app: &App) -> Line<'static> {
    let t = &app.theme;
    let mut actions: Vec<(Action, &'static str)> = vec![(Action::Help, "help")];
    let rollout_keys = [
        (Action::NextBatch, "next"),
        (Action::PrevBatch, "prev"),
        (Action::Partition, "partition"),
        (Action::Pause, "pause"),
        (Action::Undo, "undo"),
        (Action::Image, "image"),
        (Action::Scale, "scale"),
    ];
    // On a workload a Kruise Rollout controls (or a `:rollouts` row), `] P u` are its verbs.
    let kruise = crate::app::rollouts::keys::subject(app).map(|r| {
        [
            (Action::NextBatch, "approve"),
            (
                Action::Pause,
                if r.paused {
                    "resume Rollout"
                } else {
                    "pause Rollout"
                },
            ),
            (Action::Undo, "rollback"),
        ]
    });
    match app.top() {
        Route::List(list) if !list.scope.is_pods() && kruise.is_some() => {
            actions.extend([
                (Action::Command, "command"),
                (Action::Filter, "filter"),
                (Action::Open, "rollout"),
            ]);
            actions.extend(kruise.into_iter().flatten());
            actions.extend([(Action::Protect, "protect"), (Action::WhatIf, "what-if")]);
        }
        Route::Rollout(_) if kruise.is_some() => {
            actions.extend(kruise.into_iter().flatten());
            actions.extend([
                (Action::Image, "image"),
                (Action::Scale, "scale"),
                (Action::Restart, "restart"),
                (Action::Open, "pod"),
            ]);
        }
        Route::Oncall(v) if v.screen == crate::app::oncall::Screen::Rollouts => {
            actions.extend([(Action::Open, "workload"), (Action::Filter, "filter")]);
            actions.extend(kruise.into_iter().flatten());
        }
        Route::List(list) if !list.scope.is_pods() => {
            actions.extend([
                (Action::Command, "command"),
                (Action::Filter, "filter"),
                (Action::Open, "rollout"),
            ]);
            actions.extend(rollout_keys.iter().take(2));
            actions.extend([
                (Action::Pause, "pause"),
                (Action::Undo, "undo"),
                (Action::Protect, "protect"),
                (Action::WhatIf, "what-if"),
            ]);
        }
        Route::List(_) => actions.extend([
            (Action::Command, "command"),
            (Action::Filter, "filter"),
            (Action::Open, "pod"),
            (Action::Restart, "restart"),
            (Action::Delete, "delete"),
            (Action::Logs, "logs"),
            (Action::Shell, "shell"),
        ]),
        Route::Pod(_) => actions.extend([
            (Action::Command, "command"),
            (Action::Logs, "logs"),
            (Action::Shell, "shell"),
            (Action::Container, "container"),
        ]),
        Route::Log(_) => actions.extend([(Action::Command, "command"), (Action::Shell, "shell")]),
        Route::Rollout(_) => {
            actions.extend(rollout_keys);
            actions.extend([
                (Action::WhatIf, "what-if"),
                (Action::Mark, "mark"),
                (Action::Restart, "restart"),
                (Action::Open, "pod"),
            ]);
        }
        Route::Journal(_) => actions.extend([(Action::Undo, "revert"), (Action::Filter, "filter")]),
        Route::Protect(_) => actions.extend([
            (Action::Protect, "protect"),
            (Action::Delete, "delete"),
            (Action::Filter, "filter"),
        ]),
        Route::Oncall(v) if v.screen == crate::app::oncall::Screen::Triage && kruise.is_some() => {
            actions.extend([(Action::Open, "open"), (Action::Filter, "filter")]);
            actions.extend(kruise.into_iter().flatten());
        }
        Route::Oncall(v) if v.screen == crate::app::oncall::Screen::Triage => actions.extend([
            (Action::Open, "open"),
            (Action::Filter, "filter"),
            (Action::Undo, "undo"),
            (Action::PrevBatch, "raise partition"),
            (Action::Pause, "pause"),
        ]),
        Route::Oncall(v) if v.screen.is_list() => actions.extend(list_hints("open")),
        Route::Oncall(_) => actions.push((Action::Open, "open")),
        Route::CronJobs(v) if v.detail.is_none() => actions.extend([
            (Action::Open, "detail"),
            (Action::Filter, "filter"),
            (Action::Pause, "pause/resume"),
        ]),
        Route::CronJobs(_) => actions.push((Action::Pause, "pause/resume")),
        Route::BroadcastJobs(v) if v.detail.is_none() => actions.extend(list_hints("detail")),
        Route::WorkloadSpreads(v) if v.detail.is_none() => actions.extend(list_hints("detail")),
        Route::WorkloadSpreads(_) => actions.push((Action::Open, "pod")),
        Route::UnitedDeployments(v) if v.detail.is_none() => actions.extend(list_hints("detail")),
        Route::UnitedDeployments(_) => actions.push((Action::Open, "rollout")),
        Route::Images(v) if v.detail.is_none() => actions.extend(list_hints("pulls per node")),
        Route::PersistentPodStates(v) if v.detail.is_none() => actions.extend(list_hints("pods")),
        Route::PersistentPodStates(_) => actions.push((Action::Open, "pod")),
        Route::Distributions(v) if v.detail.is_none() => actions.extend(list_hints("namespaces")),
        _ => actions.push((Action::Command, "command")),
    }
    if selection(app).is_some() && !matches!(app.top(), Route::Rollout(_)) {
        actions.extend([(Action::Yaml, "yaml"), (Action::Events, "events")]);
    }
    if app.stack.len() > 1 {
        actions.push((Action::Back, "back"));
    }
    actions.push((Action::Quit, "quit"));
    let mut spans = vec![Span::raw(" ")];
    for (a, name) in actions {
        spans.push(Span::styled(app.keymap.hint(a), t.style(Role::HelpKey)));
        spans.push(Span::styled(format!(" {name}  "), t.style(Role::Muted)));
    }
    Line::from(spans)
}

/// A seed kind's list: Enter opens `open`, `/` filters.
fn list_hints(open: &'static str) -> [(Action, &'static str); 2] {
    [(Action::Open, open), (Action::Filter, "filter")]
}

/// "row 3/120" (or the YAML line range) for the right of the status line.
fn position(app: &App) -> String {
    match app.top() {
        Route::List(list) if !list.visible.is_empty() => {
            format!("{}/{} ", list.selected + 1, list.visible.len())
        }
        Route::Events(v) => match &v.events {
            crate::app::route::Fetch::Loaded(e) if !e.is_empty() => {
                format!("{}/{} ", v.selected + 1, e.len())
            }
            _ => String::new(),
        },
        Route::Rollout(v) if !v.pods.is_empty() => format!("{}/{} ", v.selected + 1, v.pods.len()),
        Route::Journal(v) if !v.is_empty() => format!("{}/{} ", v.selected + 1, v.len()),
        Route::Protect(v) if !v.is_empty() => format!("{}/{} ", v.selected + 1, v.len()),
        Route::Oncall(v) if app.oncall_len(v) > 0 => {
            format!("{}/{} ", v.selected + 1, app.oncall_len(v))
        }
        Route::CronJobs(v) if v.detail.is_none() && !v.is_empty() => {
            format!("{}/{} ", v.selected + 1, v.len())
        }
        Route::BroadcastJobs(v) if v.detail.is_none() && !v.is_empty() => {
            format!("{}/{} ", v.selected + 1, v.len())
        }
        Route::WorkloadSpreads(v) if !v.is_empty() => format!("{}/{} ", v.selected + 1, v.len()),
        Route::UnitedDeployments(v) if !v.is_empty() => {
            format!("{}/{} ", v.selected + 1, v.len())
        }
        Route::Images(v) if v.detail.is_none() && !v.is_empty() => {
            format!("{}/{} ", v.selected + 1, v.len())
        }
        Route::PersistentPodStates(v) if v.detail.is_none() && !v.is_empty() => {
            format!("{}/{} ", v.selected + 1, v.len())
        }
        Route::Distributions(v) if v.detail.is_none() && !v.is_empty() => {
            format!("{}/{} ", v.selected + 1, v.len())
        }
        _ => String::new(),
    }
}

/// A style that only sets what the role sets, for spans inside a styled row.
pub fn role(app: &App, role: Role) -> Style {
    app.theme.style(role)
}
