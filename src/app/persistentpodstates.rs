//! `:pps` (`:persistentpodstates`, `:persistentpodstate`; the CRD has no short name): every
//! PersistentPodState with its target workload, the topology keys it keeps (required and
//! preferred), how many pods it keeps and how many of those run elsewhere now. Enter opens one
//! with a row per pod: the node and topology kept, the node the pod runs on now with that node's
//! labels, and whether it runs there (match / moved / pending / pod gone); Enter on a pod opens
//! the pod. Listed (states, the pods they concern and the nodes' labels) through the kube layer
//! every two seconds while the view is on top, so a state created elsewhere shows up without a
//! key press.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    App, Effect, Level,
    route::{PodView, Route, move_cursor},
    seedlist::{self, Seed, SeedList},
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

/// `:pps`: the list, or (with `detail`, the state's `(namespace, name)`) one state of it, whose
/// pod rows have a cursor of their own (`kind.row`).
pub type PersistentPodStatesView = SeedList<PodStates>;

/// The PersistentPodState kind of [`SeedList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodStates {
    /// The pod row under the cursor in the detail.
    pub row: usize,
}

impl Seed for PodStates {
    type Listing = Listing;
    type Key = (String, String);

    fn count(&self, l: &Listing) -> usize {
        l.states.len()
    }

    fn key_at(&self, l: &Listing, i: usize) -> Option<Self::Key> {
        l.states.get(i).map(key)
    }

    fn retain(&self, l: &mut Listing, shown: &dyn Fn(&ObjectMeta) -> bool) {
        l.states.retain(|s| shown(&s.metadata));
    }

    /// The list's cursor stays on its state, the detail's within the state's pods.
    fn show(view: &mut PersistentPodStatesView, result: Result<Listing, String>, page: usize) {
        view.show_list(result, page);
        let rows = view.current().map_or(0, |s| view.rows(s).len());
        view.kind.row = view.kind.row.min(rows.saturating_sub(1));
    }
}

impl PersistentPodStatesView {
    pub fn states(&self) -> &[PersistentPodState] {
        self.loaded().map_or(&[], |l| &l.states)
    }

    /// The state under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&PersistentPodState> {
        self.states().get(self.index()?)
    }

    /// A row per pod of `state`: every pod it keeps a state for and every pod of its target,
    /// by name (so by ordinal).
    pub fn rows<'a>(&'a self, state: &'a PersistentPodState) -> Vec<PodRow<'a>> {
        let Some(l) = self.loaded() else {
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
    seedlist::open(
        app,
        PodStates::default(),
        view_of,
        Route::PersistentPodStates,
    )
}

/// Enter: on the list, that state's pods; on a pod row of the detail, the pod.
pub fn enter(app: &mut App) {
    let Some(Route::PersistentPodStates(view)) = app.stack.last() else {
        return;
    };
    let none = "no PersistentPodState selected";
    if view.detail.is_none() {
        return seedlist::enter(app, view_of, Route::PersistentPodStates, none);
    }
    let Some(state) = view.current() else {
        app.set_status(Level::Info, none);
        return;
    };
    let rows = view.rows(state);
    let route = match rows.get(view.kind.row) {
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
}

/// Moves the list cursor, or the pod cursor of the detail.
pub fn navigate(view: &mut PersistentPodStatesView, delta: isize, page: usize) {
    if view.detail.is_none() {
        view.move_list(delta, page);
    } else {
        let len = view.current().map_or(0, |s| view.rows(s).len());
        let mut offset = 0;
        move_cursor(&mut view.kind.row, &mut offset, len, delta, page);
    }
}

/// The kube layer's answer: every PersistentPodStates view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let result = result.map(|mut l| {
        l.states.sort_by_key(key);
        l
    });
    seedlist::loaded(app, result, view_of);
}

fn view_of(route: &mut Route) -> Option<&mut PersistentPodStatesView> {
    match route {
        Route::PersistentPodStates(v) => Some(v),
        _ => None,
    }
}

/// Invalidates the last answer (namespace switch): the next tick asks again.
pub fn invalidate(view: &mut PersistentPodStatesView) {
    view.fetched = None;
}
