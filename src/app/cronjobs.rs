//! `:advancedcronjobs` (`:acj`): every AdvancedCronJob with its schedule, time zone, the next
//! run in that zone, active jobs, last schedule and whether it is paused; Enter opens one job's
//! detail (its template and active jobs). Listed through the kube layer every two seconds while
//! the view is on top, so a job created elsewhere shows up without a key press. `P` pauses or
//! resumes the selected job through the action layer (confirm dialog, journal).

use jiff::{Timestamp, Zoned};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    App, Effect, Level,
    route::Route,
    seedlist::{self, Seed, SeedList},
};
use crate::{
    actions::{Action, Target},
    api::{AdvancedCronJob, kinds},
    kruise::cronjob,
};

/// `:acj`: the list, or (with `detail`, the job's `(namespace, name)`) one job of it. Jobs are
/// sorted by namespace and name.
pub type CronJobsView = SeedList<CronJobs>;

/// The AdvancedCronJob kind of [`SeedList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CronJobs;

impl Seed for CronJobs {
    type Listing = Vec<AdvancedCronJob>;
    type Key = (String, String);

    fn count(&self, jobs: &Self::Listing) -> usize {
        jobs.len()
    }

    fn key_at(&self, jobs: &Self::Listing, i: usize) -> Option<Self::Key> {
        jobs.get(i).map(key)
    }

    fn retain(&self, jobs: &mut Self::Listing, shown: &dyn Fn(&ObjectMeta) -> bool) {
        jobs.retain(|j| shown(&j.metadata));
    }
}

impl CronJobsView {
    /// The job under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&AdvancedCronJob> {
        self.loaded()?.get(self.index()?)
    }
}

fn key(job: &AdvancedCronJob) -> (String, String) {
    (
        job.metadata.namespace.clone().unwrap_or_default(),
        job.metadata.name.clone().unwrap_or_default(),
    )
}

/// What the view shows of one job (computed from the object and the last tick).
#[derive(Debug, Clone, PartialEq)]
pub struct CronRow {
    pub namespace: String,
    pub name: String,
    pub schedule: String,
    /// `spec.timeZone`, or `UTC` when unset.
    pub zone: String,
    /// The next run in the job's zone, or why it cannot be computed.
    pub next: Result<Zoned, String>,
    pub paused: bool,
    pub active: usize,
    pub last_schedule: Option<Timestamp>,
    /// `Job` or `BroadcastJob`.
    pub template: &'static str,
    pub concurrency: String,
}

/// The row of `job` at `now`.
pub fn row(job: &AdvancedCronJob, now: Timestamp) -> CronRow {
    let spec = &job.spec;
    let status = job.status.as_ref();
    CronRow {
        namespace: job.metadata.namespace.clone().unwrap_or_default(),
        name: job.metadata.name.clone().unwrap_or_default(),
        schedule: spec.schedule.clone(),
        zone: spec
            .time_zone
            .clone()
            .filter(|z| !z.trim().is_empty())
            .unwrap_or_else(|| "UTC".to_owned()),
        next: cronjob::next_run(&spec.schedule, spec.time_zone.as_deref(), now)
            .map_err(|e| e.to_string()),
        paused: spec.paused,
        active: status.map_or(0, |s| s.active.len()),
        last_schedule: status
            .and_then(|s| s.last_schedule_time.as_ref())
            .map(|t| t.0),
        template: if spec.template.broadcast_job_template.is_some() {
            "BroadcastJob"
        } else {
            "Job"
        },
        concurrency: spec
            .concurrency_policy
            .clone()
            .unwrap_or_else(|| "Allow".to_owned()),
    }
}

/// `:acj`.
pub fn open(app: &mut App) -> Vec<Effect> {
    seedlist::open(app, CronJobs, view_of, Route::CronJobs)
}

/// Enter on a row: that job's detail, sharing the list's last answer.
pub fn enter(app: &mut App) {
    seedlist::enter(app, view_of, Route::CronJobs, "no AdvancedCronJob selected");
}

/// Moves the list cursor.
pub fn navigate(view: &mut CronJobsView, delta: isize, page: usize) {
    view.move_list(delta, page);
}

/// The kube layer's answer: every CronJobs view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Vec<AdvancedCronJob>, String>) {
    let result = result.map(|mut jobs| {
        jobs.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        jobs
    });
    seedlist::loaded(app, result, view_of);
}

fn view_of(route: &mut Route) -> Option<&mut CronJobsView> {
    match route {
        Route::CronJobs(v) => Some(v),
        _ => None,
    }
}

/// `P` on a job: pause it, or resume it when paused (confirm dialog first).
pub fn pause(app: &mut App) -> Vec<Effect> {
    if app.readonly {
        app.set_status(Level::Error, "read-only: pause not sent");
        return Vec::new();
    }
    let Route::CronJobs(view) = app.top() else {
        return Vec::new();
    };
    let Some(job) = view.current() else {
        app.set_status(Level::Info, "no AdvancedCronJob selected");
        return Vec::new();
    };
    let Ok(info) = kinds::parse_kind("acj") else {
        return Vec::new();
    };
    let target = Target::new(
        info,
        job.metadata.namespace.as_deref(),
        job.metadata.name.as_deref().unwrap_or_default(),
    );
    let action = if job.spec.paused {
        Action::Resume
    } else {
        Action::Pause
    };
    app.prepare(target, action)
}

/// After an action was sent: ask again at once.
pub fn invalidate(view: &mut CronJobsView) {
    view.fetched = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_shows_the_next_run_in_the_jobs_zone() {
        let job: AdvancedCronJob = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "report", "namespace": "demo"},
            "spec": {"schedule": "0 9 * * *", "timeZone": "Europe/Berlin", "paused": true,
                     "template": {"broadcastJobTemplate": {"spec": {}}}},
            "status": {"active": [{"name": "report-1"}],
                       "lastScheduleTime": "2026-03-28T08:00:00Z"}
        }))
        .unwrap();
        let r = row(&job, "2026-03-28T09:00:00Z".parse().unwrap());
        let next = r.next.unwrap();
        assert_eq!(next.timestamp().to_string(), "2026-03-29T07:00:00Z");
        assert_eq!(r.zone, "Europe/Berlin");
        assert_eq!((r.paused, r.active, r.template), (true, 1, "BroadcastJob"));
        let bad: AdvancedCronJob = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "bad"}, "spec": {"schedule": "nope", "template": {}}
        }))
        .unwrap();
        let r = row(&bad, Timestamp::UNIX_EPOCH);
        assert!(r.next.unwrap_err().contains("expected 5 fields"));
        assert_eq!(r.zone, "UTC");
    }
}
