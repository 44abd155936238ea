//! `:resourcedistributions` (`:resourcedistribution`, `:distributor`): every
//! ResourceDistribution (cluster-scoped) with the Secret or ConfigMap it copies, a summary of its
//! targets, desired/succeeded/failed and age. Enter opens one: the namespaces its targets match
//! in this cluster (evaluated as upstream's controller does), per namespace whether the copy
//! exists and is in sync, copies it still owns in namespaces no longer matched, and the failures
//! its status reports. Listed (distributions, namespaces, and the objects of each copied name)
//! every two seconds while the view is on top.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::{
    App, Effect,
    route::Route,
    seedlist::{self, Seed, SeedList},
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

/// `:distributor`: the list, or (with `detail`, the distribution's name) one distribution of it.
pub type DistributionsView = SeedList<Distributions>;

/// The ResourceDistribution kind of [`SeedList`] (cluster-scoped: keyed by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Distributions;

impl Seed for Distributions {
    type Listing = Listing;
    type Key = String;

    fn count(&self, l: &Listing) -> usize {
        l.distributions.len()
    }

    fn key_at(&self, l: &Listing, i: usize) -> Option<String> {
        l.distributions.get(i).map(key)
    }

    fn retain(&self, l: &mut Listing, shown: &dyn Fn(&ObjectMeta) -> bool) {
        l.distributions.retain(|d| shown(&d.metadata));
    }
}

impl DistributionsView {
    pub fn distributions(&self) -> &[ResourceDistribution] {
        self.loaded().map_or(&[], |l| &l.distributions)
    }

    /// The distribution under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&ResourceDistribution> {
        self.distributions().get(self.index()?)
    }
}

fn key(d: &ResourceDistribution) -> String {
    d.metadata.name.clone().unwrap_or_default()
}

/// `:resourcedistributions`.
pub fn open(app: &mut App) -> Vec<Effect> {
    seedlist::open(app, Distributions, view_of, Route::Distributions)
}

/// Enter on a row: that distribution's namespaces, sharing the list's last answer.
pub fn enter(app: &mut App) {
    seedlist::enter(
        app,
        view_of,
        Route::Distributions,
        "no ResourceDistribution selected",
    );
}

/// Moves the list cursor.
pub fn navigate(view: &mut DistributionsView, delta: isize, page: usize) {
    view.move_list(delta, page);
}

/// The kube layer's answer: every distributions view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let result = result.map(|mut l| {
        l.distributions.sort_by_key(key);
        l
    });
    seedlist::loaded(app, result, view_of);
}

fn view_of(route: &mut Route) -> Option<&mut DistributionsView> {
    match route {
        Route::Distributions(v) => Some(v),
        _ => None,
    }
}
