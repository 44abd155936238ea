//! `:workloadspreads` (`:ws`): every WorkloadSpread with its target workload, subset count, a
//! per-subset summary (current/max replicas) and age; Enter opens one spread: its subsets (node
//! terms, tolerations, maxReplicas, current and missing replicas, pods being created or deleted)
//! and its pods per subset, where Enter opens the pod detail. Listed (spreads and the pods they
//! matched) every two seconds while the view is on top, so a spread created elsewhere shows up
//! without a key press.
//!
//! Which subset a pod belongs to is what upstream's pod webhook recorded in the pod annotation
//! `apps.kruise.io/matched-workloadspread`: `{"name": SPREAD, "subset": SUBSET}`
//! (`pkg/util/workloadspread`, `InjectWorkloadSpread`).

use jiff::Timestamp;

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    route::{Fetch, PodView, Route, keep_in_window, move_cursor},
};
use crate::api::WorkloadSpread;

/// A pod a WorkloadSpread matched, as the detail shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpreadPod {
    pub namespace: String,
    /// The WorkloadSpread named in the pod's annotation.
    pub spread: String,
    pub subset: String,
    pub name: String,
    /// `spec.nodeName`, empty while unscheduled.
    pub node: String,
    pub phase: String,
    pub ready: bool,
    /// The pod is being deleted.
    pub terminating: bool,
}

pub use crate::kruise::workloadspread::{Injected as Matched, parse as matched};

/// The kube layer's answer: the spreads and the pods they matched.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing {
    pub spreads: Vec<WorkloadSpread>,
    pub pods: Vec<SpreadPod>,
}

/// The list, or (with `detail`) one spread of it, whose cursor walks its pods.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSpreadsView {
    /// Spreads sorted by namespace and name; pods by subset order, then name.
    pub listing: Fetch<Listing>,
    pub selected: usize,
    pub offset: usize,
    /// `(namespace, name)` of the spread the detail view shows.
    pub detail: Option<(String, String)>,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by `namespace/name`).
    pub filter: ListFilter<Listing>,
}

impl WorkloadSpreadsView {
    pub fn new() -> Self {
        Self {
            listing: Fetch::Loading,
            selected: 0,
            offset: 0,
            detail: None,
            fetched: None,
            in_flight: false,
            filter: ListFilter::default(),
        }
    }

    pub fn spreads(&self) -> &[WorkloadSpread] {
        match &self.listing {
            Fetch::Loaded(l) => &l.spreads,
            _ => &[],
        }
    }

    /// Rows under the cursor: spreads in the list, the spread's pods in the detail.
    pub fn len(&self) -> usize {
        match self.detail {
            Some(_) => self.current().map_or(0, |s| self.pods_of(s).len()),
            None => self.spreads().len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The spread under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&WorkloadSpread> {
        match &self.detail {
            Some(k) => self.spreads().iter().find(|s| key(s) == *k),
            None => self.spreads().get(self.selected),
        }
    }

    /// The pods `spread` matched, in the order of its subsets (pods naming a subset the spread
    /// no longer has last), then by name.
    pub fn pods_of(&self, spread: &WorkloadSpread) -> Vec<&SpreadPod> {
        let Fetch::Loaded(l) = &self.listing else {
            return Vec::new();
        };
        let (ns, name) = key(spread);
        let order = |subset: &str| {
            spread
                .spec
                .subsets
                .iter()
                .position(|s| s.name == subset)
                .unwrap_or(usize::MAX)
        };
        let mut pods: Vec<&SpreadPod> = l
            .pods
            .iter()
            .filter(|p| p.namespace == ns && p.spread == name)
            .collect();
        pods.sort_by(|a, b| (order(&a.subset), &a.name).cmp(&(order(&b.subset), &b.name)));
        pods
    }

    /// The pod under the detail's cursor.
    pub fn selected_pod(&self) -> Option<&SpreadPod> {
        self.detail.as_ref()?;
        let spread = self.current()?;
        self.pods_of(spread).get(self.selected).copied()
    }
}

impl Default for WorkloadSpreadsView {
    fn default() -> Self {
        Self::new()
    }
}

pub fn key(spread: &WorkloadSpread) -> (String, String) {
    (
        spread.metadata.namespace.clone().unwrap_or_default(),
        spread.metadata.name.clone().unwrap_or_default(),
    )
}

/// `:ws`.
pub fn open(app: &mut App) -> Vec<Effect> {
    if !matches!(app.top(), Route::WorkloadSpreads(v) if v.detail.is_none()) {
        app.stack.push(Route::WorkloadSpreads(Box::default()));
    }
    super::poll::due(app, true)
}

/// Enter: on a spread, its detail (sharing the list's last answer); on a pod of the detail, the
/// pod view as `:pods` opens it.
pub fn enter(app: &mut App) {
    let Some(Route::WorkloadSpreads(view)) = app.stack.last() else {
        return;
    };
    if view.detail.is_some() {
        let Some(pod) = view.selected_pod() else {
            app.set_status(Level::Info, "no pod selected");
            return;
        };
        let route = Route::Pod(PodView {
            namespace: pod.namespace.clone(),
            name: pod.name.clone(),
            scroll: 0,
            container: 0,
        });
        app.stack.push(route);
        return;
    }
    let Some(spread) = view.current() else {
        app.set_status(Level::Info, "no WorkloadSpread selected");
        return;
    };
    let mut detail = (**view).clone();
    detail.detail = Some(key(spread));
    detail.selected = 0;
    detail.offset = 0;
    app.stack.push(Route::WorkloadSpreads(Box::new(detail)));
}

/// Moves the cursor (spreads in the list, pods in the detail).
pub fn navigate(view: &mut WorkloadSpreadsView, delta: isize, page: usize) {
    let len = view.len();
    move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
}

/// The kube layer's answer: every WorkloadSpreads view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let (now, page) = (app.now, app.page());
    let result = result.map(|mut l| {
        l.spreads.sort_by_key(key);
        l
    });
    for route in &mut app.stack {
        let Route::WorkloadSpreads(view) = route else {
            continue;
        };
        view.in_flight = false;
        view.fetched = Some(now);
        show(view, result.clone(), page);
    }
}

/// Puts a listing (or why it failed) into the view, filtered, the cursor kept on its object.
fn show(view: &mut WorkloadSpreadsView, result: Result<Listing, String>, page: usize) {
    let keep = match &view.detail {
        Some(_) => view
            .selected_pod()
            .map(|p| (p.namespace.clone(), p.name.clone())),
        None => view.current().map(key),
    };
    view.listing = match result {
        Ok(l) => Fetch::Loaded(
            view.filter
                .keep(l, |l, shown| l.spreads.retain(|s| shown(&s.metadata))),
        ),
        Err(e) => Fetch::Failed(e),
    };
    let found = match (&view.detail, keep) {
        (Some(_), Some(keep)) => view.current().and_then(|s| {
            view.pods_of(s)
                .iter()
                .position(|p| (p.namespace.clone(), p.name.clone()) == keep)
        }),
        (None, Some(keep)) => view.spreads().iter().position(|s| key(s) == keep),
        (_, None) => None,
    };
    if let Some(i) = found {
        view.selected = i;
    }
    let len = view.len();
    view.selected = view.selected.min(len.saturating_sub(1));
    keep_in_window(view.selected, &mut view.offset, len, page);
}

impl Filterable for WorkloadSpreadsView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.detail.is_none().then_some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            show(self, Ok(all), page);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_annotation_is_read_as_upstreams_webhook_writes_it() {
        let m = matched(r#"{"name":"api-spread","subset":"zone-a","uid":"1"}"#);
        assert_eq!(
            m,
            Some(Matched {
                name: "api-spread".into(),
                subset: "zone-a".into()
            })
        );
        assert_eq!(matched("zone-a"), None);
        assert_eq!(matched(r#"{"name":"x"}"#), None);
    }
}
