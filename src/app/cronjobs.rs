//! `:advancedcronjobs` (`:acj`): every AdvancedCronJob with its schedule, time zone, the next
//! run in that zone, active jobs, last schedule and whether it is paused; Enter opens one job's
//! detail (its template and active jobs). Listed through the kube layer every two seconds while
//! the view is on top, so a job created elsewhere shows up without a key press. `P` pauses or
//! resumes the selected job through the action layer (confirm dialog, journal).

use jiff::{Timestamp, Zoned};

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    route::{Fetch, Route, keep_in_window, move_cursor},
};
use crate::{
    actions::{Action, Target},
    api::{AdvancedCronJob, kinds},
    kruise::cronjob,
};

/// The list, or (with `detail`) one job of it.
#[derive(Debug, Clone, PartialEq)]
pub struct CronJobsView {
    /// Sorted by namespace and name.
    pub jobs: Fetch<Vec<AdvancedCronJob>>,
    pub selected: usize,
    pub offset: usize,
    /// `(namespace, name)` of the job the detail view shows.
    pub detail: Option<(String, String)>,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by `namespace/name`).
    pub filter: ListFilter<Vec<AdvancedCronJob>>,
}

impl CronJobsView {
    pub fn new() -> Self {
        Self {
            jobs: Fetch::Loading,
            selected: 0,
            offset: 0,
            detail: None,
            fetched: None,
            in_flight: false,
            filter: ListFilter::default(),
        }
    }

    pub fn len(&self) -> usize {
        match &self.jobs {
            Fetch::Loaded(j) => j.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The job under the cursor, or the one the detail view shows.
    pub fn current(&self) -> Option<&AdvancedCronJob> {
        let Fetch::Loaded(jobs) = &self.jobs else {
            return None;
        };
        match &self.detail {
            Some((ns, name)) => jobs.iter().find(|j| {
                j.metadata.namespace.as_deref() == Some(ns.as_str())
                    && j.metadata.name.as_deref() == Some(name.as_str())
            }),
            None => jobs.get(self.selected),
        }
    }
}

impl Default for CronJobsView {
    fn default() -> Self {
        Self::new()
    }
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
    if !matches!(app.top(), Route::CronJobs(v) if v.detail.is_none()) {
        app.stack.push(Route::CronJobs(Box::default()));
    }
    super::poll::due(app, true)
}

/// Enter on a row: that job's detail, sharing the list's last answer.
pub fn enter(app: &mut App) {
    let Some(Route::CronJobs(view)) = app.stack.last() else {
        return;
    };
    if view.detail.is_some() {
        return;
    }
    let Some(job) = view.current() else {
        app.set_status(Level::Info, "no AdvancedCronJob selected");
        return;
    };
    let key = (
        job.metadata.namespace.clone().unwrap_or_default(),
        job.metadata.name.clone().unwrap_or_default(),
    );
    let mut detail = (**view).clone();
    detail.detail = Some(key);
    detail.selected = 0;
    detail.offset = 0;
    app.stack.push(Route::CronJobs(Box::new(detail)));
}

/// Moves the list cursor.
pub fn navigate(view: &mut CronJobsView, delta: isize, page: usize) {
    if view.detail.is_none() {
        let len = view.len();
        move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
    }
}

/// The kube layer's answer: every CronJobs view on the stack takes it.
pub fn loaded(app: &mut App, result: Result<Vec<AdvancedCronJob>, String>) {
    let (now, page) = (app.now, app.page());
    let result = result.map(|mut jobs| {
        jobs.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        jobs
    });
    for route in &mut app.stack {
        let Route::CronJobs(view) = route else {
            continue;
        };
        view.in_flight = false;
        view.fetched = Some(now);
        show(view, result.clone(), page);
    }
}

/// Puts a listing (or why it failed) into the view, filtered, the cursor kept on its job.
fn show(view: &mut CronJobsView, result: Result<Vec<AdvancedCronJob>, String>, page: usize) {
    let keep = view
        .current()
        .map(|j| (j.metadata.namespace.clone(), j.metadata.name.clone()));
    view.jobs = match result {
        Ok(j) => Fetch::Loaded(
            view.filter
                .keep(j, |j, shown| j.retain(|j| shown(&j.metadata))),
        ),
        Err(e) => Fetch::Failed(e),
    };
    if let (Some(keep), Fetch::Loaded(jobs)) = (keep, &view.jobs)
        && let Some(i) = jobs
            .iter()
            .position(|j| (j.metadata.namespace.clone(), j.metadata.name.clone()) == keep)
    {
        view.selected = i;
    }
    let len = view.len();
    view.selected = view.selected.min(len.saturating_sub(1));
    keep_in_window(view.selected, &mut view.offset, len, page);
}

impl Filterable for CronJobsView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.detail.is_none().then_some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            show(self, Ok(all), page);
        }
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
