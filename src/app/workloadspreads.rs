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

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    App, Effect, Level,
    route::{PodView, Route, move_cursor},
    seedlist::{self, Seed, SeedList},
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

/// `:ws`: the list, or (with `detail`, the spread's `(namespace, name)`) one spread of it, whose
/// cursor walks its pods. Spreads are sorted by namespace and name; pods by subset order, then
/// name.
pub type WorkloadSpreadsView = SeedList<WorkloadSpreads>;

/// The WorkloadSpread kind of [`SeedList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkloadSpreads;

impl Seed for WorkloadSpreads {
    type Listing = Listing;
    type Key = (String, String);

    fn count(&self, l: &Listing) -> usize {
        l.spreads.len()
    }

    fn key_at(&self, l: &Listing, i: usize) -> Option<Self::Key> {
        l.spreads.get(i).map(key)
    }

    fn retain(&self, l: &mut Listing, shown: &dyn Fn(&ObjectMeta) -> bool) {
        l.spreads.retain(|s| shown(&s.metadata));
    }

    /// Spreads in the list, the spread's pods in the detail.
    fn rows(view: &WorkloadSpreadsView) -> usize {
        match view.detail {
            Some(_) => view.current().map_or(0, |s| view.pods_of(s).len()),
            None => view.listed(),
        }
    }

    /// In the detail the cursor stays on its pod.
    fn show(view: &mut WorkloadSpreadsView, result: Result<Listing, String>, page: usize) {
        if view.detail.is_none() {
            return view.show_list(result, page);
        }
        let pod_key = |p: &SpreadPod| (p.namespace.clone(), p.name.clone());
        let keep = view.selected_pod().map(pod_key);
        view.put(result);
        let found = keep.and_then(|keep| {
            let spread = view.current()?;
            view.pods_of(spread).iter().position(|p| pod_key(p) == keep)
        });
        view.reselect(found, page);
    }
}

impl WorkloadSpreadsView {
    pub fn spreads(&self) -> &[WorkloadSpread] {
        self.loaded().map_or(&[], |l| &l.spreads)
    }

    /// The spread under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&WorkloadSpread> {
        self.spreads().get(self.index()?)
    }

    /// The pods `spread` matched, in the order of its subsets (pods naming a subset the spread
    /// no longer has last), then by name.
    pub fn pods_of(&self, spread: &WorkloadSpread) -> Vec<&SpreadPod> {
        let Some(l) = self.loaded() else {
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

pub fn key(spread: &WorkloadSpread) -> (String, String) {
    (
        spread.metadata.namespace.clone().unwrap_or_default(),
        spread.metadata.name.clone().unwrap_or_default(),
    )
}

/// `:ws`.
pub fn open(app: &mut App) -> Vec<Effect> {
    seedlist::open(app, WorkloadSpreads, view_of, Route::WorkloadSpreads)
}

/// Enter: on a spread, its detail (sharing the list's last answer); on a pod of the detail, the
/// pod view as `:pods` opens it.
pub fn enter(app: &mut App) {
    let Some(Route::WorkloadSpreads(view)) = app.stack.last() else {
        return;
    };
    if view.detail.is_none() {
        return seedlist::enter(
            app,
            view_of,
            Route::WorkloadSpreads,
            "no WorkloadSpread selected",
        );
    }
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
}

/// Moves the cursor (spreads in the list, pods in the detail).
pub fn navigate(view: &mut WorkloadSpreadsView, delta: isize, page: usize) {
    let len = view.len();
    move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
}

/// The kube layer's answer: every WorkloadSpreads view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let result = result.map(|mut l| {
        l.spreads.sort_by_key(key);
        l
    });
    seedlist::loaded(app, result, view_of);
}

fn view_of(route: &mut Route) -> Option<&mut WorkloadSpreadsView> {
    match route {
        Route::WorkloadSpreads(v) => Some(v),
        _ => None,
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
