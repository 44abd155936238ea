//! Key handling per mode: normal keys go through the keymap to an [`Action`]; the command line
//! and the filter take text; help closes on `Esc`/`?`. `ctrl-c` always quits, whatever the keymap.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{
    App, Effect, Level, Mode, act, command, dialog, filter,
    msg::ObjectRef,
    oncall,
    rollout::RolloutView,
    route::{EventsView, Fetch, PodView, Route, TextView, move_cursor},
};
use crate::config::{Action, Key};

/// How far the help overlay scrolls at most (it is shorter than this on any screen it scrolls
/// on; the view stops at its last line).
const HELP_SCROLL_MAX: i32 = 60;

pub fn handle(app: &mut App, ev: KeyEvent) -> Vec<Effect> {
    if ev.kind == KeyEventKind::Release {
        return Vec::new();
    }
    if ev.code == KeyCode::Char('c') && ev.modifiers.contains(KeyModifiers::CONTROL) {
        app.request_quit();
        return vec![Effect::Quit];
    }
    app.mark_dirty();
    if app.overlay.is_some() {
        return dialog::key(app, ev);
    }
    match app.mode.clone() {
        Mode::Help { scroll } => {
            let step = |delta: i32| Mode::Help {
                scroll: (i32::from(scroll) + delta).clamp(0, HELP_SCROLL_MAX) as u16,
            };
            match app.keymap.action(&Key::from_event(&ev)) {
                Some(Action::Quit) => {
                    app.request_quit();
                    return vec![Effect::Quit];
                }
                Some(Action::Back | Action::Help) => app.mode = Mode::Normal,
                _ if ev.code == KeyCode::Esc => app.mode = Mode::Normal,
                // The view clamps the scroll to what the overlay holds.
                Some(Action::Down) => app.mode = step(1),
                Some(Action::Up) => app.mode = step(-1),
                Some(Action::PageDown) => app.mode = step(10),
                Some(Action::PageUp) => app.mode = step(-10),
                _ => {}
            }
            Vec::new()
        }
        Mode::Command { input, .. } => command_key(app, input, ev),
        Mode::Filter => {
            filter_key(app, ev);
            Vec::new()
        }
        Mode::Normal => {
            // The Log view's own keys (f w t p n N, its search line) come first.
            if let Some(effects) = super::logs::open::log_key(app, &ev) {
                return effects;
            }
            match app.keymap.action(&Key::from_event(&ev)) {
                Some(action) => normal(app, action),
                None => Vec::new(),
            }
        }
    }
}

fn is_text(ev: &KeyEvent) -> Option<char> {
    match ev.code {
        KeyCode::Char(c)
            if !ev
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(c)
        }
        _ => None,
    }
}

fn command_key(app: &mut App, mut input: String, ev: KeyEvent) -> Vec<Effect> {
    match ev.code {
        KeyCode::Esc => app.mode = Mode::Normal,
        KeyCode::Enter => {
            app.mode = Mode::Normal;
            return command::run(app, &input);
        }
        KeyCode::Backspace if input.is_empty() => app.mode = Mode::Normal,
        KeyCode::Backspace => {
            input.pop();
            app.mode = Mode::Command {
                input,
                hint: String::new(),
            };
        }
        KeyCode::Tab | KeyCode::BackTab => {
            let (input, hint) = command::complete(&input, &app.namespaces, &app.contexts);
            app.mode = Mode::Command { input, hint };
        }
        _ => {
            if let Some(c) = is_text(&ev) {
                input.push(c);
                app.mode = Mode::Command {
                    input,
                    hint: String::new(),
                };
            }
        }
    }
    Vec::new()
}

fn filter_key(app: &mut App, ev: KeyEvent) {
    if !matches!(app.top(), Route::List(_)) {
        return seed_filter_key(app, ev);
    }
    let page = app.page();
    let (workloads, pods) = (&app.workloads, &app.pods);
    let Some(Route::List(list)) = app.stack.last_mut() else {
        app.mode = Mode::Normal;
        return;
    };
    match ev.code {
        KeyCode::Enter => app.mode = Mode::Normal,
        KeyCode::Esc => {
            list.filter.clear();
            app.mode = Mode::Normal;
        }
        KeyCode::Backspace => {
            if list.filter.pop().is_none() {
                app.mode = Mode::Normal;
            }
        }
        KeyCode::Up | KeyCode::Down => {
            let delta = if ev.code == KeyCode::Up { -1 } else { 1 };
            move_cursor(
                &mut list.selected,
                &mut list.offset,
                list.visible.len(),
                delta,
                page,
            );
            filter::remember_selection(list, workloads, pods);
            return;
        }
        _ => match is_text(&ev) {
            Some(c) => list.filter.push(c),
            None => return,
        },
    }
    filter::refresh(list, workloads, pods, page);
}

/// A key while typing the `/` filter of a seed kind's list: the list narrows as it is typed.
fn seed_filter_key(app: &mut App, ev: KeyEvent) {
    let page = app.page();
    let Some(view) = app.stack.last_mut().and_then(Route::filterable) else {
        app.mode = Mode::Normal;
        return;
    };
    let Some(text) = view.filter_mut() else {
        app.mode = Mode::Normal;
        return;
    };
    match ev.code {
        KeyCode::Enter => app.mode = Mode::Normal,
        KeyCode::Esc => {
            text.clear();
            app.mode = Mode::Normal;
        }
        KeyCode::Backspace => {
            if text.pop().is_none() {
                app.mode = Mode::Normal;
            }
        }
        KeyCode::Up | KeyCode::Down => {
            let delta = if ev.code == KeyCode::Up { -1 } else { 1 };
            return navigate(app, delta);
        }
        _ => match is_text(&ev) {
            Some(c) => text.push(c),
            None => return,
        },
    }
    view.refilter(page);
}

fn normal(app: &mut App, action: Action) -> Vec<Effect> {
    let page = app.page();
    match action {
        Action::Quit => {
            app.request_quit();
            return vec![Effect::Quit];
        }
        Action::Help => app.mode = Mode::Help { scroll: 0 },
        Action::Command => {
            app.mode = Mode::Command {
                input: String::new(),
                hint: String::new(),
            }
        }
        Action::Filter => {
            // A seed kind's list filters; its detail does not.
            let seed_list = (app.stack.last_mut().and_then(Route::filterable))
                .is_some_and(|v| v.filter_mut().is_some());
            match app.stack.last_mut() {
                Some(Route::List(_)) => app.mode = Mode::Filter,
                Some(Route::Log(view)) => view.start_search(),
                Some(_) if seed_list => app.mode = Mode::Filter,
                _ => app.set_status(Level::Info, "nothing to filter in this view"),
            }
        }
        Action::Up => navigate(app, -1),
        Action::Down => navigate(app, 1),
        Action::PageUp => navigate(app, -(page as isize)),
        Action::PageDown => navigate(app, page as isize),
        Action::Top => navigate(app, isize::MIN / 2),
        Action::Bottom => navigate(app, isize::MAX / 2),
        Action::Back => back(app),
        Action::Open if matches!(app.top(), Route::Oncall(_)) => return oncall::open(app),
        Action::Open => open(app),
        Action::Yaml => return fetch(app, true),
        Action::Events => return fetch(app, false),
        Action::Pause if matches!(app.top(), Route::CronJobs(_)) => {
            return super::cronjobs::pause(app);
        }
        Action::NextBatch
        | Action::PrevBatch
        | Action::Partition
        | Action::Pause
        | Action::Undo
        | Action::Image
        | Action::Scale
        | Action::Mark => return act::key(app, action),
        Action::Restart => return super::restart::key(app),
        Action::Protect => return super::protect::cycle(app),
        Action::Delete => return super::protect::delete(app),
        Action::WhatIf => return super::whatif::key(app),
        Action::Logs => return super::logs::open::open_logs(app),
        Action::Shell => return super::logs::open::open_shell(app),
        Action::Container => return super::logs::open::next_container(app),
        Action::Report => return super::journal::export(app),
    }
    Vec::new()
}

fn navigate(app: &mut App, delta: isize) {
    let page = app.page();
    let (workloads, pods) = (&app.workloads, &app.pods);
    match app.stack.last_mut() {
        Some(Route::List(list)) => {
            move_cursor(
                &mut list.selected,
                &mut list.offset,
                list.visible.len(),
                delta,
                page,
            );
            filter::remember_selection(list, workloads, pods);
        }
        Some(Route::Events(view)) => {
            let len = match &view.events {
                Fetch::Loaded(rows) => rows.len(),
                _ => 0,
            };
            move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
        }
        Some(Route::Yaml(view)) => {
            let len = match &view.lines {
                Fetch::Loaded(lines) => lines.len(),
                _ => 0,
            };
            // Scrolling stops when the last line reaches the bottom of the view (which has no
            // column-title row, hence one line more than a table page).
            let max = len.saturating_sub(page + 1);
            view.scroll = (view.scroll as isize)
                .saturating_add(delta)
                .clamp(0, max as isize) as usize;
        }
        Some(Route::Rollout(view)) => view.move_cursor(delta),
        Some(Route::Pod(view)) => {
            view.scroll = (view.scroll as isize).saturating_add(delta).clamp(0, 200) as usize;
        }
        Some(Route::Journal(view)) => {
            let len = view.len();
            move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
        }
        Some(Route::Protect(view)) => {
            let len = view.len();
            move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
        }
        Some(Route::CronJobs(view)) => super::cronjobs::navigate(view, delta, page),
        Some(Route::BroadcastJobs(view)) => super::broadcastjobs::navigate(view, delta, page),
        Some(Route::WorkloadSpreads(view)) => super::workloadspreads::navigate(view, delta, page),
        Some(Route::UnitedDeployments(view)) => {
            super::uniteddeployments::navigate(view, delta, page)
        }
        Some(Route::Images(view)) => super::images::navigate(view, delta, page),
        Some(Route::PersistentPodStates(view)) => {
            super::persistentpodstates::navigate(view, delta, page)
        }
        Some(Route::Distributions(view)) => super::distributions::navigate(view, delta, page),
        Some(Route::WhatIf(view)) => {
            view.scroll = (view.scroll as isize).saturating_add(delta).clamp(0, 500) as usize;
        }
        Some(Route::Log(_)) => super::logs::open::scroll(app, delta),
        Some(Route::Oncall(_)) => oncall::navigate(app, delta),
        None => {}
    }
}

fn back(app: &mut App) {
    if let Some(Route::Log(view)) = app.stack.last_mut()
        && view.escape()
    {
        return;
    }
    if let Some(Route::List(list)) = app.stack.last_mut()
        && !list.filter.is_empty()
    {
        list.filter.clear();
        app.refresh_lists();
        return;
    }
    let page = app.page();
    if let Some(view) = app.stack.last_mut().and_then(Route::filterable)
        && let Some(text) = view.filter_mut()
        && !text.is_empty()
    {
        text.clear();
        view.refilter(page);
        return;
    }
    if matches!(app.top(), Route::WhatIf(_)) {
        super::whatif::back(app);
    } else if app.stack.len() > 1 {
        app.stack.pop();
    } else if !app.warnings.is_empty() {
        app.warnings.clear();
        app.refresh_lists();
    }
}

/// The object under the cursor (or the object a YAML/Events view is about).
pub fn selection(app: &App) -> Option<ObjectRef> {
    match app.top() {
        Route::List(list) => {
            let i = *list.visible.get(list.selected)? as usize;
            if list.scope.is_pods() {
                let row = app.pods.get(i)?;
                Some(ObjectRef {
                    kind: super::Kind::Pod,
                    namespace: Some(row.namespace.clone()),
                    name: row.name.clone(),
                })
            } else {
                let row = app.workloads.get(i)?;
                Some(ObjectRef {
                    kind: row.kind,
                    namespace: Some(row.namespace.clone()),
                    name: row.name.clone(),
                })
            }
        }
        Route::Yaml(v) => Some(v.target.clone()),
        Route::Events(v) => Some(v.target.clone()),
        Route::Rollout(v) => Some(match v.selected_pod() {
            Some(pod) => ObjectRef {
                kind: super::Kind::Pod,
                namespace: Some(pod.namespace.clone()),
                name: pod.name.clone(),
            },
            None => v.workload(),
        }),
        Route::Pod(v) => Some(ObjectRef {
            kind: super::Kind::Pod,
            namespace: Some(v.namespace.clone()),
            name: v.name.clone(),
        }),
        Route::Journal(_) | Route::WhatIf(_) | Route::CronJobs(_) | Route::BroadcastJobs(_) => None,
        Route::WorkloadSpreads(v) => v.selected_pod().map(|p| ObjectRef {
            kind: super::Kind::Pod,
            namespace: Some(p.namespace.clone()),
            name: p.name.clone(),
        }),
        Route::UnitedDeployments(v) => {
            let w = v.selected_subset()?.workload?;
            Some(ObjectRef {
                kind: w.kind.rollout_kind()?,
                namespace: Some(w.namespace.clone()),
                name: w.name.clone(),
            })
        }
        Route::Images(_) | Route::PersistentPodStates(_) | Route::Distributions(_) => None,
        Route::Oncall(v) => oncall::selection(app, v),
        Route::Protect(v) => {
            let t = &v.selected_row()?.target;
            t.kind.workload?;
            let kind = super::Kind::of(t.kind)?;
            Some(ObjectRef {
                kind,
                namespace: t.namespace.clone(),
                name: t.name.clone(),
            })
        }
        Route::Log(v) => Some(ObjectRef {
            kind: super::Kind::Pod,
            namespace: Some(v.namespace.clone()),
            name: v.pod.clone(),
        }),
    }
}

fn open(app: &mut App) {
    let pod = |namespace: &str, name: &str| {
        Route::Pod(PodView {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            scroll: 0,
            container: 0,
        })
    };
    // The seed kinds' views open their own detail (or what a detail row governs).
    let enter: Option<fn(&mut App)> = match app.top() {
        Route::CronJobs(_) => Some(super::cronjobs::enter),
        Route::BroadcastJobs(_) => Some(super::broadcastjobs::enter),
        Route::WorkloadSpreads(_) => Some(super::workloadspreads::enter),
        Route::UnitedDeployments(_) => Some(super::uniteddeployments::enter),
        Route::Images(_) => Some(super::images::enter),
        Route::PersistentPodStates(_) => Some(super::persistentpodstates::enter),
        Route::Distributions(_) => Some(super::distributions::enter),
        _ => None,
    };
    if let Some(enter) = enter {
        enter(app);
        return;
    }
    let route = match app.top() {
        Route::List(list) => {
            let Some(&i) = list.visible.get(list.selected) else {
                return;
            };
            if list.scope.is_pods() {
                match app.pods.get(i as usize) {
                    Some(row) => pod(&row.namespace, &row.name),
                    None => return,
                }
            } else {
                let Some(row) = app.workloads.get(i as usize) else {
                    return;
                };
                let mut view = RolloutView::new(row.owner());
                let summary = super::rollout::summary::summary(&app.stores, &view.owner);
                view.refresh(summary, &app.pods);
                Route::Rollout(Box::new(view))
            }
        }
        Route::Rollout(view) => match view.selected_pod() {
            Some(row) => pod(&row.namespace, &row.name),
            None => {
                app.set_status(Level::Info, "no pod selected");
                return;
            }
        },
        _ => return,
    };
    app.stack.push(route);
}

fn fetch(app: &mut App, yaml: bool) -> Vec<Effect> {
    let Some(target) = selection(app) else {
        app.set_status(Level::Info, "nothing selected");
        return Vec::new();
    };
    // From a YAML or Events view, replace it rather than stacking views of the same object.
    if matches!(app.top(), Route::Yaml(_) | Route::Events(_)) {
        app.stack.pop();
    }
    if yaml {
        app.stack.push(Route::Yaml(TextView {
            target: target.clone(),
            lines: Fetch::Loading,
            scroll: 0,
        }));
        vec![Effect::FetchYaml(target)]
    } else {
        app.stack.push(Route::Events(EventsView {
            target: target.clone(),
            events: Fetch::Loading,
            selected: 0,
            offset: 0,
        }));
        vec![Effect::FetchEvents(target)]
    }
}
