//! `:uniteddeployments` (`:ud`): every UnitedDeployment with its template kind, replicas,
//! ready, updated and subsets; Enter opens one: per subset the replicas upstream's controller
//! allotted (`status.subsetReplicas`), the subset workload it made and that workload's update
//! status (replicas, ready, updated, partition). Enter on a subset whose workload is a CloneSet
//! or Advanced StatefulSet opens that workload's rollout view, as `:workloads` does.
//!
//! Upstream's controller (`pkg/controller/uniteddeployment`, `ApplySubsetTemplate` in each
//! adapter) names a subset workload `<ud>-<subset>-` + a generated suffix, labels it with
//! `apps.kruise.io/subset-name` and makes the UnitedDeployment its controller owner: that is
//! how the kube layer finds them.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::{
    App, Effect, Kind, Level,
    filter::{Filterable, ListFilter},
    rollout::RolloutView,
    route::{Fetch, Owner, Route, keep_in_window, move_cursor},
};
use crate::api::UnitedDeployment;

/// The kind of workload a UnitedDeployment's template makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateKind {
    CloneSet,
    AdvancedStatefulSet,
    StatefulSet,
    Deployment,
}

impl TemplateKind {
    /// As the list's TEMPLATE column shows it.
    pub fn short(self) -> &'static str {
        match self {
            TemplateKind::CloneSet => "CloneSet",
            TemplateKind::AdvancedStatefulSet => "ASTS",
            TemplateKind::StatefulSet => "StatefulSet",
            TemplateKind::Deployment => "Deployment",
        }
    }

    /// `(apiVersion, kind)` of the workloads this template makes.
    pub fn api(self) -> (&'static str, &'static str) {
        match self {
            TemplateKind::CloneSet => ("apps.kruise.io/v1alpha1", "CloneSet"),
            TemplateKind::AdvancedStatefulSet => ("apps.kruise.io/v1beta1", "StatefulSet"),
            TemplateKind::StatefulSet => ("apps/v1", "StatefulSet"),
            TemplateKind::Deployment => ("apps/v1", "Deployment"),
        }
    }

    /// The console's kind for workloads it has a rollout view of.
    pub fn rollout_kind(self) -> Option<Kind> {
        match self {
            TemplateKind::CloneSet => Some(Kind::CloneSet),
            TemplateKind::AdvancedStatefulSet => Some(Kind::StatefulSet),
            TemplateKind::StatefulSet | TemplateKind::Deployment => None,
        }
    }
}

/// The template a UnitedDeployment sets (upstream checks exactly one is).
pub fn template_kind(ud: &UnitedDeployment) -> Option<TemplateKind> {
    let t = &ud.spec.template;
    if t.clone_set_template.is_some() {
        Some(TemplateKind::CloneSet)
    } else if t.advanced_stateful_set_template.is_some() {
        Some(TemplateKind::AdvancedStatefulSet)
    } else if t.stateful_set_template.is_some() {
        Some(TemplateKind::StatefulSet)
    } else if t.deployment_template.is_some() {
        Some(TemplateKind::Deployment)
    } else {
        None
    }
}

/// A workload a UnitedDeployment controls, as the detail shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubsetWorkload {
    pub kind: TemplateKind,
    pub namespace: String,
    /// The owning UnitedDeployment's name.
    pub owner: String,
    /// Its `apps.kruise.io/subset-name` label.
    pub subset: String,
    pub name: String,
    pub uid: String,
    pub selector: LabelSelector,
    /// `spec.replicas`.
    pub desired: i32,
    pub replicas: i32,
    pub ready: i32,
    pub updated: i32,
    /// The partition its update strategy holds (as written: a number or a percentage).
    pub partition: Option<String>,
}

/// The kube layer's answer: the UnitedDeployments and the workloads they control.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing {
    pub deployments: Vec<UnitedDeployment>,
    pub workloads: Vec<SubsetWorkload>,
}

/// One subset of a UnitedDeployment in the detail: its spec and its workload, if made.
#[derive(Debug, Clone, PartialEq)]
pub struct SubsetRow<'a> {
    pub name: String,
    pub spec: Option<&'a crate::api::uniteddeployment::Subset>,
    /// `status.subsetReplicas[name]`.
    pub allotted: Option<i32>,
    pub workload: Option<&'a SubsetWorkload>,
}

/// The list, or (with `detail`) one UnitedDeployment, whose cursor walks its subsets.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitedDeploymentsView {
    pub listing: Fetch<Listing>,
    pub selected: usize,
    pub offset: usize,
    /// `(namespace, name)` of the UnitedDeployment the detail shows.
    pub detail: Option<(String, String)>,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by `namespace/name`).
    pub filter: ListFilter<Listing>,
}

impl UnitedDeploymentsView {
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

    pub fn deployments(&self) -> &[UnitedDeployment] {
        match &self.listing {
            Fetch::Loaded(l) => &l.deployments,
            _ => &[],
        }
    }

    /// Rows under the cursor: UnitedDeployments in the list, subsets in the detail.
    pub fn len(&self) -> usize {
        match self.detail {
            Some(_) => self.current().map_or(0, |ud| self.subsets_of(ud).len()),
            None => self.deployments().len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The UnitedDeployment under the cursor, or the one the detail shows.
    pub fn current(&self) -> Option<&UnitedDeployment> {
        match &self.detail {
            Some(k) => self.deployments().iter().find(|u| key(u) == *k),
            None => self.deployments().get(self.selected),
        }
    }

    /// The workloads `ud` controls.
    pub fn workloads_of(&self, ud: &UnitedDeployment) -> Vec<&SubsetWorkload> {
        let Fetch::Loaded(l) = &self.listing else {
            return Vec::new();
        };
        let (ns, name) = key(ud);
        l.workloads
            .iter()
            .filter(|w| w.namespace == ns && w.owner == name)
            .collect()
    }

    /// The subsets of `ud` in topology order, then any workload of a subset no longer in the
    /// topology (upstream deletes those; until it has, they are shown).
    pub fn subsets_of<'a>(&'a self, ud: &'a UnitedDeployment) -> Vec<SubsetRow<'a>> {
        let workloads = self.workloads_of(ud);
        let allotted = |name: &str| {
            ud.status
                .as_ref()
                .and_then(|s| s.subset_replicas.get(name).copied())
        };
        let mut rows: Vec<SubsetRow<'a>> = ud
            .spec
            .topology
            .subsets
            .iter()
            .map(|s| SubsetRow {
                name: s.name.clone(),
                spec: Some(s),
                allotted: allotted(&s.name),
                workload: workloads.iter().find(|w| w.subset == s.name).copied(),
            })
            .collect();
        for w in workloads {
            if !rows.iter().any(|r| r.name == w.subset) {
                rows.push(SubsetRow {
                    name: w.subset.clone(),
                    spec: None,
                    allotted: allotted(&w.subset),
                    workload: Some(w),
                });
            }
        }
        rows
    }

    /// The subset under the detail's cursor.
    pub fn selected_subset(&self) -> Option<SubsetRow<'_>> {
        self.detail.as_ref()?;
        let ud = self.current()?;
        self.subsets_of(ud).into_iter().nth(self.selected)
    }
}

impl Default for UnitedDeploymentsView {
    fn default() -> Self {
        Self::new()
    }
}

pub fn key(ud: &UnitedDeployment) -> (String, String) {
    (
        ud.metadata.namespace.clone().unwrap_or_default(),
        ud.metadata.name.clone().unwrap_or_default(),
    )
}

/// `:ud`.
pub fn open(app: &mut App) -> Vec<Effect> {
    if !matches!(app.top(), Route::UnitedDeployments(v) if v.detail.is_none()) {
        app.stack.push(Route::UnitedDeployments(Box::default()));
    }
    super::poll::due(app, true)
}

/// Enter: on a UnitedDeployment, its detail; on a subset whose workload is a CloneSet or an
/// Advanced StatefulSet, that workload's rollout view.
pub fn enter(app: &mut App) {
    let Some(Route::UnitedDeployments(view)) = app.stack.last() else {
        return;
    };
    if view.detail.is_some() {
        let Some(row) = view.selected_subset() else {
            app.set_status(Level::Info, "no subset selected");
            return;
        };
        let Some(w) = row.workload else {
            app.set_status(
                Level::Info,
                format!("subset {} has no workload yet", row.name),
            );
            return;
        };
        let Some(kind) = w.kind.rollout_kind() else {
            app.set_status(
                Level::Info,
                format!(
                    "{} {} is a {}: no rollout view for that kind",
                    w.kind.short(),
                    w.name,
                    w.kind.api().1
                ),
            );
            return;
        };
        let owner = Owner {
            kind,
            namespace: w.namespace.clone(),
            name: w.name.clone(),
            uid: w.uid.clone(),
            selector: w.selector.clone(),
        };
        let mut rollout = RolloutView::new(owner);
        let summary = super::rollout::summary::summary(&app.stores, &rollout.owner);
        rollout.refresh(summary, &app.pods);
        app.stack.push(Route::Rollout(Box::new(rollout)));
        return;
    }
    let Some(ud) = view.current() else {
        app.set_status(Level::Info, "no UnitedDeployment selected");
        return;
    };
    let mut detail = (**view).clone();
    detail.detail = Some(key(ud));
    detail.selected = 0;
    detail.offset = 0;
    app.stack.push(Route::UnitedDeployments(Box::new(detail)));
}

/// Moves the cursor (UnitedDeployments in the list, subsets in the detail).
pub fn navigate(view: &mut UnitedDeploymentsView, delta: isize, page: usize) {
    let len = view.len();
    move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
}

/// The kube layer's answer: every UnitedDeployments view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let (now, page) = (app.now, app.page());
    let result = result.map(|mut l| {
        l.deployments.sort_by_key(key);
        l.workloads.sort_by(|a, b| a.name.cmp(&b.name));
        l
    });
    for route in &mut app.stack {
        let Route::UnitedDeployments(view) = route else {
            continue;
        };
        view.in_flight = false;
        view.fetched = Some(now);
        show(view, result.clone(), page);
    }
}

/// Puts a listing (or why it failed) into the view, filtered, the cursor kept on its object.
fn show(view: &mut UnitedDeploymentsView, result: Result<Listing, String>, page: usize) {
    let keep = match &view.detail {
        Some(_) => view.selected_subset().map(|r| r.name),
        None => view.current().map(|u| key(u).1),
    };
    let keep_ns = view.current().map(|u| key(u).0);
    view.listing = match result {
        Ok(l) => Fetch::Loaded(
            view.filter
                .keep(l, |l, shown| l.deployments.retain(|u| shown(&u.metadata))),
        ),
        Err(e) => Fetch::Failed(e),
    };
    let found = match (&view.detail, keep) {
        (Some(_), Some(keep)) => view
            .current()
            .and_then(|ud| view.subsets_of(ud).iter().position(|r| r.name == keep)),
        (None, Some(keep)) => view
            .deployments()
            .iter()
            .position(|u| Some(key(u)) == keep_ns.clone().map(|ns| (ns, keep.clone()))),
        (_, None) => None,
    };
    if let Some(i) = found {
        view.selected = i;
    }
    let len = view.len();
    view.selected = view.selected.min(len.saturating_sub(1));
    keep_in_window(view.selected, &mut view.offset, len, page);
}

impl Filterable for UnitedDeploymentsView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.detail.is_none().then_some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            show(self, Ok(all), page);
        }
    }
}
