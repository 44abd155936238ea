//! The console side of `l`, `S` and `c`: which pod and container the keys mean in each view,
//! the Log view's keys within the console's, and stopping streams whose view went away.

use std::collections::BTreeSet;

use crossterm::event::KeyEvent;

use super::{Handled, LogView};
use crate::{
    api::SlimPod,
    app::{
        App, Effect, Level,
        keys::selection,
        msg::Kind,
        route::Route,
        shell::{ShellRequest, default_container, shell_container},
    },
};

/// The pod the keys mean in the current view, and the container chosen there (pod detail,
/// Log view), if any.
fn target(app: &App) -> Option<(String, String, Option<String>)> {
    match app.top() {
        Route::Log(view) => Some((
            view.namespace.clone(),
            view.pod.clone(),
            Some(view.container.clone()),
        )),
        Route::Pod(view) => {
            let chosen = pod(app, &view.namespace, &view.name).and_then(|p| {
                p.spec
                    .containers
                    .get(view.container)
                    .map(|c| c.name.to_string())
            });
            Some((view.namespace.clone(), view.name.clone(), chosen))
        }
        _ => {
            let sel = selection(app)?;
            (sel.kind == Kind::Pod).then(|| (sel.namespace.unwrap_or_default(), sel.name, None))
        }
    }
}

fn pod(app: &App, namespace: &str, name: &str) -> Option<std::sync::Arc<SlimPod>> {
    app.stores.pods.get(namespace, name)
}

fn next_id(app: &mut App) -> u64 {
    app.next_id += 1;
    app.next_id
}

/// The Log view's text area: rows and columns inside its border.
pub fn text_area(app: &App) -> (usize, usize) {
    (app.page() + 1, usize::from(app.size.0.saturating_sub(2)))
}

/// `l`: the Log view of the selected pod (the chosen container, else the default one).
pub fn open_logs(app: &mut App) -> Vec<Effect> {
    let Some((namespace, name, chosen)) = target(app) else {
        app.set_status(Level::Info, "select a pod to read its log");
        return Vec::new();
    };
    if matches!(app.top(), Route::Log(_)) {
        app.set_status(Level::Info, "this is the log; c switches the container");
        return Vec::new();
    }
    let Some(p) = pod(app, &namespace, &name) else {
        app.set_status(Level::Error, format!("pod {namespace}/{name} is gone"));
        return Vec::new();
    };
    let containers: Vec<String> = p
        .spec
        .init_containers
        .iter()
        .chain(&p.spec.containers)
        .map(|c| c.name.to_string())
        .collect();
    let Some(container) = chosen.or_else(|| default_container(&p)) else {
        app.set_status(Level::Error, format!("pod {name} has no containers"));
        return Vec::new();
    };
    let id = next_id(app);
    let view = LogView::new(
        namespace,
        name,
        containers,
        container,
        app.logs.buffer_lines,
        id,
    );
    let request = view.request();
    app.stack.push(Route::Log(Box::new(view)));
    vec![Effect::StreamLogs(request)]
}

/// `S`: a shell in the selected pod (the chosen container; a hot-upgrade sidecar's working
/// twin).
pub fn open_shell(app: &mut App) -> Vec<Effect> {
    let Some((namespace, name, chosen)) = target(app) else {
        app.set_status(Level::Info, "select a pod to open a shell in");
        return Vec::new();
    };
    let Some(p) = pod(app, &namespace, &name) else {
        app.set_status(Level::Error, format!("pod {namespace}/{name} is gone"));
        return Vec::new();
    };
    let Some((container, note)) = shell_container(&p, chosen.as_deref()) else {
        app.set_status(Level::Error, format!("pod {name} has no containers"));
        return Vec::new();
    };
    app.set_status(
        Level::Info,
        format!("shell in {name}/{container} (exit to come back)"),
    );
    vec![Effect::Shell(ShellRequest {
        namespace,
        pod: name,
        container,
        context: app.context.clone(),
        note,
    })]
}

/// `c`: the next container (pod detail: the one `l`/`S` use; Log view: its log).
pub fn next_container(app: &mut App) -> Vec<Effect> {
    let id = app.next_id + 1;
    let count = match app.top() {
        Route::Pod(view) => pod(app, &view.namespace, &view.name).map(|p| p.spec.containers.len()),
        _ => None,
    };
    match app.stack.last_mut() {
        Some(Route::Log(view)) => {
            if view.containers.len() < 2 {
                app.set_status(Level::Info, "this pod has one container");
                return Vec::new();
            }
            app.next_id = id;
            view.next_container(id)
        }
        Some(Route::Pod(view)) => {
            match count {
                Some(n) if n > 1 => view.container = (view.container + 1) % n,
                _ => app.set_status(Level::Info, "this pod has one container"),
            }
            Vec::new()
        }
        _ => {
            app.set_status(
                Level::Info,
                "c picks a container in the pod detail or a log",
            );
            Vec::new()
        }
    }
}

/// The Log view's own keys (f w t p n N and the search line); None: the keymap decides.
pub fn log_key(app: &mut App, ev: &KeyEvent) -> Option<Vec<Effect>> {
    let (rows, width) = text_area(app);
    let mut id = app.next_id;
    let Some(Route::Log(view)) = app.stack.last_mut() else {
        return None;
    };
    let handled = view.key(
        ev,
        &mut || {
            id += 1;
            id
        },
        rows,
        width,
    );
    app.next_id = id;
    match handled {
        Handled::Yes(effects) => Some(effects),
        Handled::No => None,
    }
}

/// Scrolls the Log view on top.
pub fn scroll(app: &mut App, delta: isize) {
    let (rows, width) = text_area(app);
    if let Some(Route::Log(view)) = app.stack.last_mut() {
        view.scroll(delta, rows, width);
    }
}

/// The streams the Log views on the stack read.
pub fn streams(app: &App) -> BTreeSet<u64> {
    app.stack
        .iter()
        .filter_map(|r| match r {
            Route::Log(v) if v.open() => Some(v.stream),
            _ => None,
        })
        .collect()
}

/// A stream's report, to the Log view it fills.
pub fn apply(app: &mut App, event: super::LogEvent) {
    let hit = app.stack.iter_mut().any(|route| match route {
        Route::Log(view) => view.apply(event.clone()),
        _ => false,
    });
    if hit {
        app.mark_dirty();
    }
}
