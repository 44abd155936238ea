//! Deletion protection: `x` cycles `policy.kruise.io/delete-protection` (off → Always →
//! Cascading → off) on the selected workload or `:protect` row; `ctrl-d` deletes the selection
//! after a confirm dialog that shows the protection verdict (and, for a pod, its
//! PodUnavailableBudget verdict); `:protect` lists every object carrying the label with what a
//! delete would meet now, refreshed every two seconds while it is on top.

use jiff::Timestamp;
use kube::runtime::reflector::ObjectRef as StoreRef;

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    keys::selection,
    msg::Kind,
    route::{Fetch, Route, keep_in_window},
};
use crate::actions::{
    Action, Target,
    guard::{Enforcement, Verdict},
    objects::next_protection,
};

/// One object carrying the label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectRow {
    pub target: Target,
    /// The label's value as set.
    pub value: String,
    /// What a delete would meet now.
    pub verdict: Verdict,
}

/// What the kube layer found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectReport {
    pub enforcement: Enforcement,
    pub rows: Vec<ProtectRow>,
    /// Kinds that could not be listed, one line each.
    pub errors: Vec<String>,
}

/// The `:protect` view.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtectView {
    pub report: Fetch<ProtectReport>,
    pub selected: usize,
    pub offset: usize,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by object, label value and verdict).
    pub filter: ListFilter<ProtectReport>,
}

impl ProtectView {
    pub fn new() -> Self {
        Self {
            report: Fetch::Loading,
            selected: 0,
            offset: 0,
            fetched: None,
            in_flight: false,
            filter: ListFilter::default(),
        }
    }

    pub fn len(&self) -> usize {
        match &self.report {
            Fetch::Loaded(r) => r.rows.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn selected_row(&self) -> Option<&ProtectRow> {
        match &self.report {
            Fetch::Loaded(r) => r.rows.get(self.selected),
            _ => None,
        }
    }
}

impl Default for ProtectView {
    fn default() -> Self {
        Self::new()
    }
}

/// `:protect`.
pub fn open(app: &mut App) -> Vec<Effect> {
    if !matches!(app.top(), Route::Protect(_)) {
        app.stack.push(Route::Protect(Box::default()));
    }
    super::poll::due(app, true)
}

/// The kube layer's answer.
pub fn loaded(app: &mut App, result: Result<ProtectReport, String>) {
    let (now, page) = (app.now, app.page());
    for route in &mut app.stack {
        if let Route::Protect(view) = route {
            view.in_flight = false;
            view.fetched = Some(now);
            show(view, result.clone(), page);
        }
    }
}

/// Puts a report (or why it failed) into the view, filtered, the cursor kept on its object
/// across refreshes.
fn show(view: &mut ProtectView, result: Result<ProtectReport, String>, page: usize) {
    let keep = view.selected_row().map(|r| r.target.clone());
    view.report = match result {
        Ok(r) => Fetch::Loaded(view.filter.keep_rows(r, |r, shown| {
            r.rows.retain(|row| {
                shown(&format!(
                    "{} {} {}",
                    row.target.describe(),
                    row.value,
                    row.verdict.text()
                ))
            })
        })),
        Err(e) => Fetch::Failed(e),
    };
    if let (Some(keep), Fetch::Loaded(r)) = (keep, &view.report)
        && let Some(i) = r.rows.iter().position(|row| row.target == keep)
    {
        view.selected = i;
    }
    let len = view.len();
    view.selected = view.selected.min(len.saturating_sub(1));
    keep_in_window(view.selected, &mut view.offset, len, page);
}

impl Filterable for ProtectView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            show(self, Ok(all), page);
        }
    }
}

/// The label's value on a workload, as the stores have it.
fn label_in_store(app: &App, kind: Kind, namespace: &str, name: &str) -> Option<String> {
    let key = crate::kruise::protection::DELETION_PROTECTION_KEY;
    let labels = match kind {
        Kind::CloneSet => app
            .stores
            .clonesets
            .get(&StoreRef::new(name).within(namespace))
            .and_then(|o| o.metadata.labels.clone()),
        Kind::StatefulSet => app
            .stores
            .statefulsets
            .get(&StoreRef::new(name).within(namespace))
            .and_then(|o| o.metadata.labels.clone()),
        Kind::DaemonSet => app
            .stores
            .daemonsets
            .get(&StoreRef::new(name).within(namespace))
            .and_then(|o| o.metadata.labels.clone()),
        // `x` protects workloads; the on-call kinds are not guarded by deletion protection.
        _ => None,
    };
    labels.and_then(|l| l.get(key).cloned())
}

/// `x`.
pub fn cycle(app: &mut App) -> Vec<Effect> {
    let (target, current) = match app.top() {
        Route::Protect(view) => match view.selected_row() {
            Some(row) => (row.target.clone(), Some(row.value.clone())),
            None => {
                app.set_status(Level::Info, "no object selected");
                return Vec::new();
            }
        },
        Route::Rollout(view) => {
            let o = view.owner.clone();
            let current = label_in_store(app, o.kind, &o.namespace, &o.name);
            (Target::watched(o.kind, &o.namespace, &o.name), current)
        }
        Route::List(list) if !list.scope.is_pods() => {
            let Some(sel) = selection(app) else {
                app.set_status(Level::Info, "no workload selected");
                return Vec::new();
            };
            let ns = sel.namespace.clone().unwrap_or_default();
            let current = label_in_store(app, sel.kind, &ns, &sel.name);
            (Target::watched(sel.kind, &ns, &sel.name), current)
        }
        _ => {
            app.set_status(
                Level::Info,
                "x toggles delete protection on a workload (workloads list, rollout view) or a \
                 :protect row (namespaces too)",
            );
            return Vec::new();
        }
    };
    let value = next_protection(current.as_deref());
    app.prepare(target, Action::Protect { value })
}

/// `ctrl-d`.
pub fn delete(app: &mut App) -> Vec<Effect> {
    let target = match app.top() {
        Route::Protect(view) => view.selected_row().map(|r| r.target.clone()),
        Route::Journal(_) => None,
        _ => selection(app).map(|sel| {
            Target::watched(
                sel.kind,
                sel.namespace.as_deref().unwrap_or_default(),
                &sel.name,
            )
        }),
    };
    match target {
        Some(target) => app.prepare(target, Action::Delete),
        None => {
            app.set_status(Level::Info, "nothing selected to delete");
            Vec::new()
        }
    }
}
