//! Resource usage (issue 23): the CPU and memory figures of `metrics.k8s.io`, per pod and summed
//! per workload, with the requests and limits beside them.
//!
//! The metrics API has no watch: the figures are read again every collection window the API
//! reports (metrics-server's resolution, 15 s by default; clamped to
//! [`MIN_INTERVAL`]..=[`MAX_INTERVAL`]), and only while a view that shows them (Workloads, Pods)
//! is on top, one read at a time. Without the API nothing shows: no columns, no error (the
//! executor answers [`Answer::NotServed`], asked again every [`RECHECK_SECONDS`]). A read that
//! fails keeps the last figures, shown muted as stale.
//!
//! On a big cluster (more than [`SCOPE_ABOVE_PODS`] pods, all namespaces watched) a read covers
//! only the namespaces of the rows on screen, when they are few ([`MAX_SCOPED_NAMESPACES`]): at
//! 100,000 pods a cluster-wide read is ~35 MB of JSON every 15 s, most of the console's idle CPU
//! and a 100 MB swing of its memory, for figures nobody sees. Scrolling onto another namespace
//! asks for its figures at once.
//!
//! Each answer is folded once: a pod's requests and limits come from its row, a workload's
//! figures are the sum over its pods that have figures (by the pods' controller UID). A frame
//! looks each visible row up; nothing walks every pod per frame.

mod figures;

use std::collections::HashMap;

use jiff::Timestamp;

pub use figures::{Bounds, Figures, container_bounds, format_cpu, format_memory, requests_limits};

use super::{App, Effect, route::Route};
use kruise_client::metrics::PodUsage;

/// The shortest pause between two reads, whatever window the API reports.
pub const MIN_INTERVAL: i64 = 10;
/// The longest pause between two reads.
pub const MAX_INTERVAL: i64 = 60;
/// The pause when the API reports no window (metrics-server's default resolution).
pub const DEFAULT_INTERVAL: i64 = 15;
/// How often a cluster without the metrics API is asked again (it may be installed meanwhile).
pub const RECHECK_SECONDS: i64 = 60;
/// Above this many pods (all namespaces watched) a read covers the namespaces on screen only.
pub const SCOPE_ABOVE_PODS: usize = 2_000;
/// ... when the rows on screen span at most this many namespaces (else it reads them all).
pub const MAX_SCOPED_NAMESPACES: usize = 8;

/// What the executor answers to [`Effect::FetchUsage`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The cluster does not serve `metrics.k8s.io` (or its APIService is down).
    NotServed,
    /// The figures of every pod the API listed, and its collection window.
    Read {
        pods: Vec<PodUsage>,
        window_seconds: Option<f64>,
    },
    /// The read failed: the last figures stay, shown as stale.
    Failed(String),
}

/// The usage state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// Whether the API answered: None before the first answer.
    pub served: Option<bool>,
    /// The id of the read out now (answers of other ids are dropped: a `:ctx` came between).
    pub in_flight: Option<u64>,
    /// When the last answer (figures, not served, or failure) came.
    pub answered: Option<Timestamp>,
    /// Seconds from one answer to the next read.
    pub interval: i64,
    /// The last read failed: the figures are from an earlier one.
    pub stale: bool,
    /// The read out now was asked for before a `:ctx`/`:ns`: its answer is dropped.
    discard: bool,
    /// The namespaces the last read asked for (None: everything watched).
    read_scope: Option<Vec<String>>,
    /// Per pod, sorted by (namespace, name) for a lookup without allocating.
    pods: Vec<(String, String, Figures)>,
    /// Per workload UID, the sum over its pods.
    workloads: HashMap<String, Figures>,
}

impl Usage {
    /// Forgets everything (another cluster or namespace), keeping a read still out marked to
    /// be dropped: the next read starts once it has answered, never beside it.
    pub fn reset(&mut self) {
        *self = Usage {
            in_flight: self.in_flight,
            discard: self.in_flight.is_some(),
            ..Usage::default()
        };
    }

    /// Whether there are figures to show (the usage columns appear only then).
    pub fn shown(&self) -> bool {
        self.served == Some(true) && (!self.pods.is_empty() || !self.workloads.is_empty())
    }

    /// The figures of one pod.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<&Figures> {
        self.pods
            .binary_search_by(|(ns, n, _)| (ns.as_str(), n.as_str()).cmp(&(namespace, name)))
            .ok()
            .map(|i| &self.pods[i].2)
    }

    /// The summed figures of one workload (by UID).
    pub fn workload(&self, uid: &str) -> Option<&Figures> {
        self.workloads.get(uid)
    }

    /// Pods with figures.
    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }
}

/// Whether the view on top shows usage columns.
fn shows_usage(route: &Route) -> bool {
    matches!(route, Route::List(_))
}

/// The namespaces a read covers now: None (everything watched) unless the cluster is big, all
/// namespaces are watched, and the rows on screen span a few namespaces.
pub fn scope(app: &App) -> Option<Vec<String>> {
    if app.namespace.is_some() || app.pods.len() <= SCOPE_ABOVE_PODS {
        return None;
    }
    let Route::List(list) = app.top() else {
        return None;
    };
    let on_screen = list
        .visible
        .iter()
        .skip(list.offset)
        .take(app.page().max(1));
    let mut namespaces: Vec<&str> = if list.scope.is_pods() {
        on_screen
            .filter_map(|&i| app.pods.get(i as usize).map(|r| r.namespace.as_str()))
            .collect()
    } else {
        on_screen
            .filter_map(|&i| app.workloads.get(i as usize).map(|r| r.namespace.as_str()))
            .collect()
    };
    namespaces.sort_unstable();
    namespaces.dedup();
    if namespaces.is_empty() || namespaces.len() > MAX_SCOPED_NAMESPACES {
        return None;
    }
    Some(namespaces.into_iter().map(str::to_owned).collect())
}

/// The read the console is due for: none while one is out, no usage view is on top, or the pods
/// are still loading; else one when the last answer is older than its interval (or there is
/// none), or at once when the rows on screen moved to namespaces the last read did not cover.
pub fn due(app: &mut App) -> Vec<Effect> {
    // Not before the pods have loaded: their rows give the figures their requests, limits and
    // workloads, and on a big cluster they say which namespaces are on screen (a read before
    // them would read every pod's figures to attribute none).
    if app.usage.in_flight.is_some()
        || !shows_usage(app.top())
        || !app.ready.contains(&super::Kind::Pod)
    {
        return Vec::new();
    }
    let wait = match app.usage.served {
        Some(false) => RECHECK_SECONDS,
        _ => app.usage.interval.max(MIN_INTERVAL),
    };
    let scope = scope(app);
    let moved = app.usage.served == Some(true) && !covers(&app.usage.read_scope, &scope);
    let due = moved
        || app
            .usage
            .answered
            .is_none_or(|t| app.now.as_second() - t.as_second() >= wait);
    if !due {
        return Vec::new();
    }
    app.next_id += 1;
    let id = app.next_id;
    app.usage.in_flight = Some(id);
    app.usage.read_scope = scope.clone();
    vec![Effect::FetchUsage {
        id,
        check: app.usage.served != Some(true),
        namespaces: scope,
    }]
}

/// Whether a read of `read` covers the namespaces of `wanted` (None: everything watched).
fn covers(read: &Option<Vec<String>>, wanted: &Option<Vec<String>>) -> bool {
    match (read, wanted) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(read), Some(wanted)) => wanted.iter().all(|ns| read.contains(ns)),
    }
}

/// Folds an answer into the state.
pub fn apply(app: &mut App, id: u64, answer: Answer) {
    if app.usage.in_flight != Some(id) {
        return;
    }
    app.usage.in_flight = None;
    if std::mem::take(&mut app.usage.discard) {
        return;
    }
    app.usage.answered = Some(app.now);
    match answer {
        Answer::NotServed => {
            app.usage = Usage {
                served: Some(false),
                answered: Some(app.now),
                ..Usage::default()
            };
        }
        Answer::Failed(error) => {
            tracing::info!(%error, "reading metrics.k8s.io failed; the usage shown is stale");
            app.usage.stale = true;
            app.usage.interval = app.usage.interval.max(DEFAULT_INTERVAL);
        }
        Answer::Read {
            pods,
            window_seconds,
        } => {
            let (pods, workloads) = fold(&app.pods, pods);
            app.usage.pods = pods;
            app.usage.workloads = workloads;
            app.usage.served = Some(true);
            app.usage.stale = false;
            app.usage.interval = interval(window_seconds);
        }
    }
    app.mark_dirty();
}

/// The pause after an answer with this collection window.
pub fn interval(window_seconds: Option<f64>) -> i64 {
    match window_seconds {
        Some(w) if w.is_finite() && w > 0.0 => (w.round() as i64).clamp(MIN_INTERVAL, MAX_INTERVAL),
        _ => DEFAULT_INTERVAL,
    }
}

type Folded = (Vec<(String, String, Figures)>, HashMap<String, Figures>);

/// Per pod its figures with its requests and limits (from its row, when the console has it),
/// and per workload UID the sum over its pods.
pub fn fold(rows: &[std::sync::Arc<super::rows::PodRow>], read: Vec<PodUsage>) -> Folded {
    let mut pods = Vec::with_capacity(read.len());
    let mut workloads: HashMap<String, Figures> = HashMap::new();
    for usage in read {
        let row = super::podindex::find(rows, &usage.namespace, &usage.name);
        let mut figures = Figures::used(usage.cpu_millis(), usage.memory_bytes());
        if let Some(row) = row {
            figures.set_bounds(requests_limits(&row.pod));
            if let Some(uid) = &row.owner_uid {
                workloads.entry(uid.clone()).or_default().add(&figures);
            }
        }
        pods.push((usage.namespace.to_string(), usage.name.to_string(), figures));
    }
    pods.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    pods.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    (pods, workloads)
}

#[cfg(test)]
mod tests;
