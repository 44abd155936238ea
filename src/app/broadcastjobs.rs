//! `:broadcastjobs` (`:bcj`): every BroadcastJob with desired/active/succeeded/failed pods, phase,
//! parallelism, completion policy and age; Enter opens one job's detail with its pods per node.
//! Listed (jobs and the pods they own) through the kube layer every two seconds while the view is
//! on top, so a job created elsewhere shows up without a key press.

use jiff::Timestamp;

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    route::{Fetch, Route, keep_in_window, move_cursor},
};
use crate::api::BroadcastJob;

/// A pod a BroadcastJob owns (its controller owner reference), as the detail shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPod {
    pub namespace: String,
    /// The owning BroadcastJob's name.
    pub owner: String,
    pub name: String,
    /// `spec.nodeName`, empty while unscheduled.
    pub node: String,
    pub phase: String,
    pub ready: bool,
}

/// The kube layer's answer: the jobs and the pods they own.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing {
    pub jobs: Vec<BroadcastJob>,
    pub pods: Vec<JobPod>,
}

/// The list, or (with `detail`) one job of it.
#[derive(Debug, Clone, PartialEq)]
pub struct BroadcastJobsView {
    /// Jobs sorted by namespace and name; pods by node.
    pub listing: Fetch<Listing>,
    pub selected: usize,
    pub offset: usize,
    /// `(namespace, name)` of the job the detail view shows.
    pub detail: Option<(String, String)>,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by `namespace/name`).
    pub filter: ListFilter<Listing>,
}

impl BroadcastJobsView {
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

    pub fn jobs(&self) -> &[BroadcastJob] {
        match &self.listing {
            Fetch::Loaded(l) => &l.jobs,
            _ => &[],
        }
    }

    pub fn len(&self) -> usize {
        self.jobs().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The job under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&BroadcastJob> {
        match &self.detail {
            Some((ns, name)) => self
                .jobs()
                .iter()
                .find(|j| key(j) == (ns.clone(), name.clone())),
            None => self.jobs().get(self.selected),
        }
    }

    /// The pods `job` owns, by node.
    pub fn pods_of(&self, job: &BroadcastJob) -> Vec<&JobPod> {
        let Fetch::Loaded(l) = &self.listing else {
            return Vec::new();
        };
        let (ns, name) = key(job);
        l.pods
            .iter()
            .filter(|p| p.namespace == ns && p.owner == name)
            .collect()
    }
}

impl Default for BroadcastJobsView {
    fn default() -> Self {
        Self::new()
    }
}

fn key(job: &BroadcastJob) -> (String, String) {
    (
        job.metadata.namespace.clone().unwrap_or_default(),
        job.metadata.name.clone().unwrap_or_default(),
    )
}

/// `:bcj`.
pub fn open(app: &mut App) -> Vec<Effect> {
    if !matches!(app.top(), Route::BroadcastJobs(v) if v.detail.is_none()) {
        app.stack.push(Route::BroadcastJobs(Box::default()));
    }
    super::poll::due(app, true)
}

/// Enter on a row: that job's detail, sharing the list's last answer.
pub fn enter(app: &mut App) {
    let Some(Route::BroadcastJobs(view)) = app.stack.last() else {
        return;
    };
    if view.detail.is_some() {
        return;
    }
    let Some(job) = view.current() else {
        app.set_status(Level::Info, "no BroadcastJob selected");
        return;
    };
    let mut detail = (**view).clone();
    detail.detail = Some(key(job));
    detail.selected = 0;
    detail.offset = 0;
    app.stack.push(Route::BroadcastJobs(Box::new(detail)));
}

/// Moves the list cursor.
pub fn navigate(view: &mut BroadcastJobsView, delta: isize, page: usize) {
    if view.detail.is_none() {
        let len = view.len();
        move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
    }
}

/// The kube layer's answer: every BroadcastJobs view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let (now, page) = (app.now, app.page());
    let result = result.map(|mut l| {
        l.jobs.sort_by_key(key);
        l.pods
            .sort_by(|a, b| (&a.node, &a.name).cmp(&(&b.node, &b.name)));
        l
    });
    for route in &mut app.stack {
        let Route::BroadcastJobs(view) = route else {
            continue;
        };
        view.in_flight = false;
        view.fetched = Some(now);
        show(view, result.clone(), page);
    }
}

/// Puts a listing (or why it failed) into the view, filtered, the cursor kept on its object.
fn show(view: &mut BroadcastJobsView, result: Result<Listing, String>, page: usize) {
    let keep = view.current().map(key);
    view.listing = match result {
        Ok(l) => Fetch::Loaded(
            view.filter
                .keep(l, |l, shown| l.jobs.retain(|j| shown(&j.metadata))),
        ),
        Err(e) => Fetch::Failed(e),
    };
    if let Some(keep) = keep
        && let Some(i) = view.jobs().iter().position(|j| key(j) == keep)
    {
        view.selected = i;
    }
    let len = view.len();
    view.selected = view.selected.min(len.saturating_sub(1));
    keep_in_window(view.selected, &mut view.offset, len, page);
}

impl Filterable for BroadcastJobsView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.detail.is_none().then_some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            show(self, Ok(all), page);
        }
    }
}
