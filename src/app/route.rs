//! The navigation stack: which view is on screen and the per-view UI state (selection, scroll,
//! filter). `Esc` pops; `Enter`, `y`, `e` and `:` commands push.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::{
    journal::JournalView,
    logs::LogView,
    msg::{EventRow, Kind, ObjectRef},
    rollout::RolloutView,
};

/// One screen on the stack.
#[derive(Debug, Clone)]
pub enum Route {
    /// A table of workloads or pods.
    List(ListView),
    /// The YAML of one object.
    Yaml(TextView),
    /// The events of one object.
    Events(EventsView),
    /// A workload's rollout (Enter on a workload).
    Rollout(Box<RolloutView>),
    /// One pod in detail (Enter on a pod).
    Pod(PodView),
    /// The action journal (`:journal`).
    Journal(JournalView),
    /// Every object carrying the delete-protection label (`:protect`).
    Protect(Box<super::protect::ProtectView>),
    /// What the pending action would do (`w`), simulated; nothing sent.
    WhatIf(Box<super::whatif::WhatIfView>),
    /// A container's log (`l` on a pod).
    Log(Box<LogView>),
    /// Triage and the other on-call views (`:triage :crr :pub :sidecarset :ppm`).
    Oncall(super::oncall::OncallView),
    /// AdvancedCronJobs (`:acj`), or one of them in detail (Enter).
    CronJobs(Box<super::cronjobs::CronJobsView>),
    /// BroadcastJobs (`:bcj`), or one of them in detail with its pods per node (Enter).
    BroadcastJobs(Box<super::broadcastjobs::BroadcastJobsView>),
    /// WorkloadSpreads (`:ws`), or one in detail with its subsets and pods per subset (Enter).
    WorkloadSpreads(Box<super::workloadspreads::WorkloadSpreadsView>),
    /// UnitedDeployments (`:ud`), or one in detail with its subset workloads (Enter).
    UnitedDeployments(Box<super::uniteddeployments::UnitedDeploymentsView>),
    /// ImagePullJobs, ImageListPullJobs or NodeImages (`:imagepulljobs` `:imagelistpulljobs`
    /// `:nodeimages`), or one of them in detail with the pull state per node (Enter).
    Images(Box<super::images::ImagesView>),
    /// PersistentPodStates (`:persistentpodstates`), or one with its pods' kept and current
    /// placement (Enter).
    PersistentPodStates(Box<super::persistentpodstates::PersistentPodStatesView>),
    /// ResourceDistributions (`:distributor`), or one with its target namespaces (Enter).
    Distributions(Box<super::distributions::DistributionsView>),
}

impl Route {
    /// The seed kinds' lists (filtered by object name) and the on-call lists (by what their
    /// rows show), which `/` filters; the workload and pod lists keep their own filter, over
    /// their row caches.
    pub fn filterable(&mut self) -> Option<&mut dyn super::filter::Filterable> {
        match self {
            Route::CronJobs(v) => Some(&mut **v),
            Route::BroadcastJobs(v) => Some(&mut **v),
            Route::WorkloadSpreads(v) => Some(&mut **v),
            Route::UnitedDeployments(v) => Some(&mut **v),
            Route::Images(v) => Some(&mut **v),
            Route::PersistentPodStates(v) => Some(&mut **v),
            Route::Distributions(v) => Some(&mut **v),
            Route::Oncall(v) => Some(v),
            Route::Protect(v) => Some(&mut **v),
            Route::Journal(v) => Some(v),
            _ => None,
        }
    }

    /// The `/` filter text of a seed kind's list ("" when none is typed or the view has none).
    pub fn filter_text(&self) -> &str {
        match self {
            Route::List(v) => &v.filter,
            Route::CronJobs(v) => &v.filter.text,
            Route::BroadcastJobs(v) => &v.filter.text,
            Route::WorkloadSpreads(v) => &v.filter.text,
            Route::UnitedDeployments(v) => &v.filter.text,
            Route::Images(v) => &v.filter.text,
            Route::PersistentPodStates(v) => &v.filter.text,
            Route::Distributions(v) => &v.filter.text,
            Route::Oncall(v) => &v.filter,
            Route::Protect(v) => &v.filter.text,
            Route::Journal(v) => &v.filter.text,
            _ => "",
        }
    }
}

/// The pod detail view: the pod is read live from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct PodView {
    pub namespace: String,
    pub name: String,
    pub scroll: usize,
    /// The container `c` picked (index into the pod's containers) for `l` and `S`.
    pub container: usize,
}

/// Which rows a list shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// CloneSets, Advanced StatefulSets and Advanced DaemonSets together.
    Workloads,
    /// One workload kind (`:cs`, `:asts`, `:ads`).
    WorkloadKind(Kind),
    /// Every pod.
    Pods,
    /// The pods of one workload (Enter on a workload).
    PodsOf(Owner),
}

impl Scope {
    pub fn is_pods(&self) -> bool {
        matches!(self, Scope::Pods | Scope::PodsOf(_))
    }
}

/// The workload whose pods a list shows: matched by controller ownerReference, or by selector
/// for pods that no controller owns.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub selector: LabelSelector,
}

/// A table's UI state. `visible` indexes the app's cached rows (sorted), after scope and filter.
#[derive(Debug, Clone, PartialEq)]
pub struct ListView {
    pub scope: Scope,
    pub filter: String,
    pub visible: Vec<u32>,
    pub selected: usize,
    pub offset: usize,
    /// The identity of the selected row, so a rebuild keeps the selection on the same object.
    pub selected_key: Option<String>,
}

impl ListView {
    pub fn new(scope: Scope) -> ListView {
        ListView {
            scope,
            filter: String::new(),
            visible: Vec::new(),
            selected: 0,
            offset: 0,
            selected_key: None,
        }
    }
}

/// Something fetched through an effect.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetch<T> {
    Loading,
    Loaded(T),
    Failed(String),
}

/// The YAML view.
#[derive(Debug, Clone, PartialEq)]
pub struct TextView {
    pub target: ObjectRef,
    pub lines: Fetch<Vec<String>>,
    pub scroll: usize,
}

/// The Events view.
#[derive(Debug, Clone, PartialEq)]
pub struct EventsView {
    pub target: ObjectRef,
    pub events: Fetch<Vec<EventRow>>,
    pub selected: usize,
    pub offset: usize,
}

/// Moves a cursor over `len` rows by `delta` (clamped), keeping it inside a `page`-row window.
pub fn move_cursor(
    selected: &mut usize,
    offset: &mut usize,
    len: usize,
    delta: isize,
    page: usize,
) {
    if len == 0 {
        *selected = 0;
        *offset = 0;
        return;
    }
    let target = (*selected as isize).saturating_add(delta);
    *selected = target.clamp(0, len as isize - 1) as usize;
    keep_in_window(*selected, offset, len, page);
}

/// Adjusts `offset` so `selected` is visible in a window of `page` rows.
pub fn keep_in_window(selected: usize, offset: &mut usize, len: usize, page: usize) {
    let page = page.max(1);
    if selected < *offset {
        *offset = selected;
    } else if selected >= *offset + page {
        *offset = selected + 1 - page;
    }
    // Never leave blank space at the bottom when rows could fill it.
    let max_offset = len.saturating_sub(page);
    if *offset > max_offset {
        *offset = max_offset;
    }
}
