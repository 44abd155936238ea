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

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::{
    App, Effect, Kind, Level,
    rollout::RolloutView,
    route::{Owner, Route, move_cursor},
    seedlist::{self, Seed, SeedList},
};
use crate::api::{
    UnitedDeployment,
    kinds::{self, KindInfo},
};

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

    /// The kind of the workloads this template makes.
    pub fn info(self) -> &'static KindInfo {
        match self {
            TemplateKind::CloneSet => &kinds::CLONESET,
            TemplateKind::AdvancedStatefulSet => &kinds::ADVANCED_STATEFULSET,
            TemplateKind::StatefulSet => &kinds::STATEFULSET,
            TemplateKind::Deployment => &kinds::DEPLOYMENT,
        }
    }

    /// The console's kind for workloads it has a rollout view of.
    pub fn rollout_kind(self) -> Option<Kind> {
        self.info().workload.and(Kind::of(self.info()))
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

/// `:ud`: the list, or (with `detail`, its `(namespace, name)`) one UnitedDeployment, whose
/// cursor walks its subsets.
pub type UnitedDeploymentsView = SeedList<UnitedDeployments>;

/// The UnitedDeployment kind of [`SeedList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UnitedDeployments;

impl Seed for UnitedDeployments {
    type Listing = Listing;
    type Key = (String, String);

    fn count(&self, l: &Listing) -> usize {
        l.deployments.len()
    }

    fn key_at(&self, l: &Listing, i: usize) -> Option<Self::Key> {
        l.deployments.get(i).map(key)
    }

    fn retain(&self, l: &mut Listing, shown: &dyn Fn(&ObjectMeta) -> bool) {
        l.deployments.retain(|u| shown(&u.metadata));
    }

    /// UnitedDeployments in the list, subsets in the detail.
    fn rows(view: &UnitedDeploymentsView) -> usize {
        match view.detail {
            Some(_) => view.current().map_or(0, |ud| view.subsets_of(ud).len()),
            None => view.listed(),
        }
    }

    /// In the detail the cursor stays on its subset.
    fn show(view: &mut UnitedDeploymentsView, result: Result<Listing, String>, page: usize) {
        if view.detail.is_none() {
            return view.show_list(result, page);
        }
        let keep = view.selected_subset().map(|r| r.name);
        view.put(result);
        let found = keep.and_then(|keep| {
            let ud = view.current()?;
            view.subsets_of(ud).iter().position(|r| r.name == keep)
        });
        view.reselect(found, page);
    }
}

impl UnitedDeploymentsView {
    pub fn deployments(&self) -> &[UnitedDeployment] {
        self.loaded().map_or(&[], |l| &l.deployments)
    }

    /// The UnitedDeployment under the cursor, or the one the detail shows.
    pub fn current(&self) -> Option<&UnitedDeployment> {
        self.deployments().get(self.index()?)
    }

    /// The workloads `ud` controls.
    pub fn workloads_of(&self, ud: &UnitedDeployment) -> Vec<&SubsetWorkload> {
        let Some(l) = self.loaded() else {
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

pub fn key(ud: &UnitedDeployment) -> (String, String) {
    (
        ud.metadata.namespace.clone().unwrap_or_default(),
        ud.metadata.name.clone().unwrap_or_default(),
    )
}

/// `:ud`.
pub fn open(app: &mut App) -> Vec<Effect> {
    seedlist::open(app, UnitedDeployments, view_of, Route::UnitedDeployments)
}

/// Enter: on a UnitedDeployment, its detail; on a subset whose workload is a CloneSet or an
/// Advanced StatefulSet, that workload's rollout view.
pub fn enter(app: &mut App) {
    let Some(Route::UnitedDeployments(view)) = app.stack.last() else {
        return;
    };
    if view.detail.is_none() {
        let none = "no UnitedDeployment selected";
        return seedlist::enter(app, view_of, Route::UnitedDeployments, none);
    }
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
                w.kind.info().kind
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
}

/// Moves the cursor (UnitedDeployments in the list, subsets in the detail).
pub fn navigate(view: &mut UnitedDeploymentsView, delta: isize, page: usize) {
    let len = view.len();
    move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
}

/// The kube layer's answer: every UnitedDeployments view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let result = result.map(|mut l| {
        l.deployments.sort_by_key(key);
        l.workloads.sort_by(|a, b| a.name.cmp(&b.name));
        l
    });
    seedlist::loaded(app, result, view_of);
}

fn view_of(route: &mut Route) -> Option<&mut UnitedDeploymentsView> {
    match route {
        Route::UnitedDeployments(v) => Some(v),
        _ => None,
    }
}
