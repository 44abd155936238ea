//! `:broadcastjobs` (`:bcj`): every BroadcastJob with desired/active/succeeded/failed pods, phase,
//! parallelism, completion policy and age; Enter opens one job's detail with its pods per node.
//! Listed (jobs and the pods they own) through the kube layer every two seconds while the view is
//! on top, so a job created elsewhere shows up without a key press.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    App, Effect,
    route::Route,
    seedlist::{self, Seed, SeedList},
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

/// `:bcj`: the list, or (with `detail`, the job's `(namespace, name)`) one job of it. Jobs are
/// sorted by namespace and name; pods by node.
pub type BroadcastJobsView = SeedList<BroadcastJobs>;

/// The BroadcastJob kind of [`SeedList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BroadcastJobs;

impl Seed for BroadcastJobs {
    type Listing = Listing;
    type Key = (String, String);

    fn count(&self, l: &Listing) -> usize {
        l.jobs.len()
    }

    fn key_at(&self, l: &Listing, i: usize) -> Option<Self::Key> {
        l.jobs.get(i).map(key)
    }

    fn retain(&self, l: &mut Listing, shown: &dyn Fn(&ObjectMeta) -> bool) {
        l.jobs.retain(|j| shown(&j.metadata));
    }
}

impl BroadcastJobsView {
    pub fn jobs(&self) -> &[BroadcastJob] {
        self.loaded().map_or(&[], |l| &l.jobs)
    }

    /// The job under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&BroadcastJob> {
        self.jobs().get(self.index()?)
    }

    /// The pods `job` owns, by node.
    pub fn pods_of(&self, job: &BroadcastJob) -> Vec<&JobPod> {
        let Some(l) = self.loaded() else {
            return Vec::new();
        };
        let (ns, name) = key(job);
        l.pods
            .iter()
            .filter(|p| p.namespace == ns && p.owner == name)
            .collect()
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
    seedlist::open(app, BroadcastJobs, view_of, Route::BroadcastJobs)
}

/// Enter on a row: that job's detail, sharing the list's last answer.
pub fn enter(app: &mut App) {
    seedlist::enter(
        app,
        view_of,
        Route::BroadcastJobs,
        "no BroadcastJob selected",
    );
}

/// Moves the list cursor.
pub fn navigate(view: &mut BroadcastJobsView, delta: isize, page: usize) {
    view.move_list(delta, page);
}

/// The kube layer's answer: every BroadcastJobs view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Listing, String>) {
    let result = result.map(|mut l| {
        l.jobs.sort_by_key(key);
        l.pods
            .sort_by(|a, b| (&a.node, &a.name).cmp(&(&b.node, &b.name)));
        l
    });
    seedlist::loaded(app, result, view_of);
}

fn view_of(route: &mut Route) -> Option<&mut BroadcastJobsView> {
    match route {
        Route::BroadcastJobs(v) => Some(v),
        _ => None,
    }
}
