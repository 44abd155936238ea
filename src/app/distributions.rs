//! `:resourcedistributions` (`:resourcedistribution`, `:distributor`): every
//! ResourceDistribution (cluster-scoped) with the Secret or ConfigMap it copies, a summary of its
//! targets, desired/succeeded/failed and age. Enter opens one: the namespaces its targets match
//! in this cluster (evaluated as upstream's controller does), per namespace whether the copy
//! exists and is in sync, copies it still owns in namespaces no longer matched, and the failures
//! its status reports. Listed (distributions, namespaces, and the objects of each copied name)
//! every two seconds while the view is on top.

use jiff::Timestamp;
use serde_json::Value;

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    route::{Fetch, Route, keep_in_window, move_cursor},
};
use crate::{
    api::ResourceDistribution,
    kruise::distribution::{self, CopyCheck, Namespace, check_copy, controlled_by},
};

/// An object of a copied kind and name, as the API server holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CopyObject {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub body: Value,
}

/// The kube layer's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub distributions: Vec<ResourceDistribution>,
    /// The cluster's namespaces, or why they could not be listed.
    pub namespaces: Result<Vec<Namespace>, String>,
    /// Every object of each `(kind, name)` a distribution copies, in any namespace.
    pub copies: Vec<CopyObject>,
    /// Kinds whose objects could not be listed (`secrets: forbidden`).
    pub copy_errors: Vec<String>,
}

/// One namespace of a distribution's detail.
#[derive(Debug, Clone, PartialEq)]
pub struct NamespaceRow {
    pub namespace: String,
    /// `false`: a copy the distribution still controls in a namespace its targets no longer
    /// match (upstream deletes it).
    pub matched: bool,
    pub check: CopyCheck,
}

/// The resource a distribution copies: `(kind, name)`.
pub fn copied(rd: &ResourceDistribution) -> (String, String) {
    let r = &rd.spec.resource;
    (
        r["kind"].as_str().unwrap_or_default().to_owned(),
        r["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// The namespaces of `rd` with their copies, or why the targets cannot be evaluated.
pub fn namespace_rows(rd: &ResourceDistribution, l: &Listing) -> Result<Vec<NamespaceRow>, String> {
    let namespaces = l
        .namespaces
        .as_ref()
        .map_err(|e| format!("cannot match the targets: {e}"))?;
    let name = rd.metadata.name.clone().unwrap_or_default();
    let matched = distribution::matched_namespaces(&rd.spec.targets, namespaces)
        .map_err(|e| format!("spec.targets.namespaceLabelSelector: {e}"))?;
    let (kind, object) = copied(rd);
    let copy_in = |ns: &str| {
        l.copies
            .iter()
            .find(|c| c.kind == kind && c.name == object && c.namespace == ns)
    };
    let mut rows: Vec<NamespaceRow> = matched
        .iter()
        .map(|ns| NamespaceRow {
            namespace: ns.clone(),
            matched: true,
            check: check_copy(
                &name,
                &rd.spec.resource,
                namespaces.iter().find(|n| &n.name == ns),
                copy_in(ns).map(|c| &c.body),
            ),
        })
        .collect();
    for c in &l.copies {
        if c.kind == kind
            && c.name == object
            && !matched.contains(&c.namespace)
            && controlled_by(&c.body, &name)
        {
            rows.push(NamespaceRow {
                namespace: c.namespace.clone(),
                matched: false,
                check: check_copy(
                    &name,
                    &rd.spec.resource,
                    namespaces.iter().find(|n| n.name == c.namespace),
                    Some(&c.body),
                ),
            });
        }
    }
    Ok(rows)
}

/// The list, or (with `detail`) one distribution of it.
#[derive(Debug, Clone, PartialEq)]
pub struct DistributionsView {
    pub listing: Fetch<Listing>,
    pub selected: usize,
    pub offset: usize,
    /// The name of the distribution the detail view shows.
    pub detail: Option<String>,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by `namespace/name`).
    pub filter: ListFilter<Listing>,
}

impl DistributionsView {
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

    pub fn distributions(&self) -> &[ResourceDistribution] {
        match &self.listing {
            Fetch::Loaded(l) => &l.distributions,
            _ => &[],
        }
    }

    pub fn len(&self) -> usize {
        self.distributions().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The distribution under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&ResourceDistribution> {
        match &self.detail {
            Some(name) => self.distributions().iter().find(|d| key(d) == *name),
            None => self.distributions().get(self.selected),
        }
    }
}

impl Default for DistributionsView {
    fn default() -> Self {
        Self::new()
    }
}

fn key(d: &ResourceDistribution) -> String {
    d.metadata.name.clone().unwrap_or_default()
}

/// `:resourcedistributions`.
pub fn open(app: &mut App) -> Vec<Effect> {
    if !matches!(app.top(), Route::Distributions(v) if v.detail.is_none()) {
        app.stack.push(Route::Distributions(Box::default()));
    }
    super::poll::due(app, true)
}

/// Enter on a row: that distribution's namespaces, sharing the list's last answer.
pub fn enter(app: &mut App) {
    let Some(Route::Distributions(view)) = app.stack.last() else {
        return;
    };
    if view.detail.is_some() {
        return;
    }
    let Some(d) = view.current() else {
        app.set_status(Level::Info, "no ResourceDistribution selected");
        return;
    };
    let mut detail = (**view).clone();
    detail.detail = Some(key(d));
    app.stack.push(Route::Distributions(Box::new(detail)));
}

/// Moves the list cursor.
pub fn navigate(view: &mut DistributionsView, delta: isize, page: usize) {
    if view.detail.is_none() {
        let len = view.len();
        move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
    }
}

/// The kube layer's answer: every distributions view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let (now, page) = (app.now, app.page());
    let result = result.map(|mut l| {
        l.distributions.sort_by_key(key);
        l
    });
    for route in &mut app.stack {
        let Route::Distributions(view) = route else {
            continue;
        };
        view.in_flight = false;
        view.fetched = Some(now);
        show(view, result.clone(), page);
    }
}

/// Puts a listing (or why it failed) into the view, filtered, the cursor kept on its object.
fn show(view: &mut DistributionsView, result: Result<Listing, String>, page: usize) {
    let keep = view.current().map(key);
    view.listing = match result {
        Ok(l) => Fetch::Loaded(
            view.filter
                .keep(l, |l, shown| l.distributions.retain(|d| shown(&d.metadata))),
        ),
        Err(e) => Fetch::Failed(e),
    };
    if let Some(keep) = keep
        && let Some(i) = view.distributions().iter().position(|d| key(d) == keep)
    {
        view.selected = i;
    }
    let len = view.len();
    view.selected = view.selected.min(len.saturating_sub(1));
    keep_in_window(view.selected, &mut view.offset, len, page);
}

impl Filterable for DistributionsView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.detail.is_none().then_some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            show(self, Ok(all), page);
        }
    }
}
