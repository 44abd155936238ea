//! `:pps` (`:persistentpodstates`, `:persistentpodstate`; the CRD has no short name): every
//! PersistentPodState with its target workload, the topology keys it keeps (required and
//! preferred), how many pods it keeps and how many of those run elsewhere now. Enter opens one
//! with a row per pod: the node and topology kept, the node the pod runs on now with that node's
//! labels, and whether it runs there (match / moved / pending / pod gone); Enter on a pod opens
//! the pod. Listed (states, the pods they concern and the nodes' labels) through the kube layer
//! every two seconds while the view is on top, so a state created elsewhere shows up without a
//! key press.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    route::{Fetch, PodView, Route, keep_in_window, move_cursor},
};
use crate::{
    api::{PersistentPodState, persistentpodstate::PodState},
    kruise::persistent_pod_state::{Placement, Running, placement},
};

/// A pod a PersistentPodState concerns, where it runs now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodPlace {
    pub namespace: String,
    pub name: String,
    /// The kind and name of its controller (`StatefulSet`, `db`); empty without one.
    pub owner_kind: String,
    pub owner: String,
    /// `spec.nodeName`, empty while unscheduled.
    pub node: String,
    pub phase: String,
    pub ready: bool,
}

/// The kube layer's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub states: Vec<PersistentPodState>,
    pub pods: Vec<PodPlace>,
    /// Node labels by node name, or why the nodes could not be read.
    pub nodes: Result<BTreeMap<String, BTreeMap<String, String>>, String>,
}

/// One pod row of the detail.
#[derive(Debug, Clone, PartialEq)]
pub struct PodRow<'a> {
    pub name: String,
    pub kept: Option<&'a PodState>,
    pub pod: Option<&'a PodPlace>,
    /// The labels of the node the pod runs on now.
    pub node_labels: Option<&'a BTreeMap<String, String>>,
    pub placement: Placement,
}

/// The list, or (with `detail`) one state of it.
#[derive(Debug, Clone, PartialEq)]
pub struct PersistentPodStatesView {
    pub listing: Fetch<Listing>,
    pub selected: usize,
    pub offset: usize,
    /// `(namespace, name)` of the state the detail view shows.
    pub detail: Option<(String, String)>,
    /// The pod row under the cursor in the detail.
    pub row: usize,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by `namespace/name`).
    pub filter: ListFilter<Listing>,
}

impl PersistentPodStatesView {
    pub fn new() -> Self {
        Self {
            listing: Fetch::Loading,
            selected: 0,
            offset: 0,
            detail: None,
            row: 0,
            fetched: None,
            in_flight: false,
            filter: ListFilter::default(),
        }
    }

    pub fn states(&self) -> &[PersistentPodState] {
        match &self.listing {
            Fetch::Loaded(l) => &l.states,
            _ => &[],
        }
    }

    pub fn len(&self) -> usize {
        self.states().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The state under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&PersistentPodState> {
        match &self.detail {
            Some(k) => self.states().iter().find(|s| key(s) == *k),
            None => self.states().get(self.selected),
        }
    }

    /// A row per pod of `state`: every pod it keeps a state for and every pod of its target,
    /// by name (so by ordinal).
    pub fn rows<'a>(&'a self, state: &'a PersistentPodState) -> Vec<PodRow<'a>> {
        let Fetch::Loaded(l) = &self.listing else {
            return Vec::new();
        };
        let (ns, _) = key(state);
        let target = &state.spec.target_ref;
        let kept: BTreeMap<&str, &PodState> = state
            .status
            .iter()
            .flat_map(|s| s.pod_states.iter().map(|(k, v)| (k.as_str(), v)))
            .collect();
        let pods: BTreeMap<&str, &PodPlace> = l
            .pods
            .iter()
            .filter(|p| p.namespace == ns)
            .filter(|p| {
                kept.contains_key(p.name.as_str())
                    || (p.owner_kind == target.kind && p.owner == target.name)
            })
            .map(|p| (p.name.as_str(), p))
            .collect();
        let required: BTreeSet<String> = state
            .spec
            .required_persistent_topology
            .iter()
            .flat_map(|t| t.node_topology_keys.iter().cloned())
            .collect();
        let mut names: Vec<&str> = kept.keys().chain(pods.keys()).copied().collect();
        names.sort_by_key(|n| ordinal_key(n));
        names.dedup();
        names
            .into_iter()
            .map(|name| {
                let kept = kept.get(name).copied();
                let pod = pods.get(name).copied();
                let node_labels = pod.and_then(|p| l.nodes.as_ref().ok()?.get(&p.node));
                let running = pod.map(|p| Running {
                    node: &p.node,
                    node_labels,
                });
                PodRow {
                    name: name.to_owned(),
                    kept,
                    pod,
                    node_labels,
                    placement: placement(kept, running.as_ref(), &required),
                }
            })
            .collect()
    }
}

impl Default for PersistentPodStatesView {
    fn default() -> Self {
        Self::new()
    }
}

/// Pod names sort by their ordinal suffix, then by name (`db-2` before `db-10`).
fn ordinal_key(name: &str) -> (String, u64, String) {
    match name.rsplit_once('-') {
        Some((base, n)) if n.parse::<u64>().is_ok() => {
            (base.to_owned(), n.parse().unwrap_or(0), name.to_owned())
        }
        _ => (name.to_owned(), 0, name.to_owned()),
    }
}

fn key(s: &PersistentPodState) -> (String, String) {
    (
        s.metadata.namespace.clone().unwrap_or_default(),
        s.metadata.name.clone().unwrap_or_default(),
    )
}

/// `:persistentpodstates`.
pub fn open(app: &mut App) -> Vec<Effect> {
    if !matches!(app.top(), Route::PersistentPodStates(v) if v.detail.is_none()) {
        app.stack.push(Route::PersistentPodStates(Box::default()));
    }
    super::poll::due(app, true)
}

/// Enter: on the list, that state's pods; on a pod row of the detail, the pod.
pub fn enter(app: &mut App) {
    let Some(Route::PersistentPodStates(view)) = app.stack.last() else {
        return;
    };
    let Some(state) = view.current() else {
        app.set_status(Level::Info, "no PersistentPodState selected");
        return;
    };
    if view.detail.is_some() {
        let rows = view.rows(state);
        let route = match rows.get(view.row) {
            Some(PodRow { pod: Some(p), .. }) => Route::Pod(PodView {
                namespace: p.namespace.clone(),
                name: p.name.clone(),
                scroll: 0,
                container: 0,
            }),
            Some(row) => {
                let msg = format!("pod {} does not exist", row.name);
                app.set_status(Level::Info, msg);
                return;
            }
            None => return,
        };
        app.stack.push(route);
        return;
    }
    let mut detail = (**view).clone();
    detail.detail = Some(key(state));
    detail.row = 0;
    app.stack.push(Route::PersistentPodStates(Box::new(detail)));
}

/// Moves the list cursor, or the pod cursor of the detail.
pub fn navigate(view: &mut PersistentPodStatesView, delta: isize, page: usize) {
    if view.detail.is_none() {
        let len = view.len();
        move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
    } else {
        let len = view.current().map_or(0, |s| view.rows(s).len());
        let mut offset = 0;
        move_cursor(&mut view.row, &mut offset, len, delta, page);
    }
}

/// The kube layer's answer: every PersistentPodStates view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let (now, page) = (app.now, app.page());
    let result = result.map(|mut l| {
        l.states.sort_by_key(key);
        l
    });
    for route in &mut app.stack {
        let Route::PersistentPodStates(view) = route else {
            continue;
        };
        view.in_flight = false;
        view.fetched = Some(now);
        show(view, result.clone(), page);
        let rows = view.current().map_or(0, |s| view.rows(s).len());
        view.row = view.row.min(rows.saturating_sub(1));
    }
}

/// Puts a listing (or why it failed) into the view, filtered, the cursor kept on its object.
fn show(view: &mut PersistentPodStatesView, result: Result<Listing, String>, page: usize) {
    let keep = view.current().map(key);
    view.listing = match result {
        Ok(l) => Fetch::Loaded(
            view.filter
                .keep(l, |l, shown| l.states.retain(|s| shown(&s.metadata))),
        ),
        Err(e) => Fetch::Failed(e),
    };
    if let Some(keep) = keep
        && let Some(i) = view.states().iter().position(|s| key(s) == keep)
    {
        view.selected = i;
    }
    let len = view.len();
    view.selected = view.selected.min(len.saturating_sub(1));
    keep_in_window(view.selected, &mut view.offset, len, page);
}

impl Filterable for PersistentPodStatesView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.detail.is_none().then_some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            show(self, Ok(all), page);
        }
    }
}

/// Invalidates the last answer (namespace switch): the next tick asks again.
pub fn invalidate(view: &mut PersistentPodStatesView) {
    view.fetched = None;
}
