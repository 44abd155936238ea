//! The on-call views: triage (`:triage`, and its strip over the Workloads view), restarts
//! (`:crr`), budgets (`:pub`), sidecar versions (`:sidecarset`) and probe markers (`:ppm`).
//!
//! Their rows are cached in [`Oncall`], rebuilt from the stores when any store changes (and
//! triage on every tick, as stalls and deadlines move with the clock). The views are live:
//! rows leave as problems clear.

pub mod across;
pub mod probes;
pub mod record;
pub mod rows;
pub mod sidecar;
pub mod triage;

use std::collections::HashMap;

use super::{
    App, Effect, Level,
    filter::{Filterable, matches},
    msg::{Kind, ObjectRef},
    rollout::RolloutView,
    route::{Fetch, Owner, PodView, Route, TextView, move_cursor},
};
use crate::journal::Entry;

pub use triage::{Denial, Problem, ProblemKind};

/// Which on-call screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Triage,
    /// Triage of every kubeconfig context (`:triage all`).
    TriageAll,
    Restarts,
    Budgets,
    SidecarSets,
    ProbeMarkers,
    /// Kruise Rollouts (`:rollouts`).
    Rollouts,
    /// One SidecarSet's matched pods and their sidecar versions.
    SidecarPods(String),
    /// One PodUnavailableBudget with its pods.
    Budget {
        namespace: String,
        name: String,
    },
}

impl Screen {
    /// The kinds a screen reads (a refusal of any is said in it).
    pub fn kinds(&self) -> &'static [Kind] {
        match self {
            Screen::Triage => &[Kind::PodUnavailableBudget, Kind::ContainerRecreateRequest],
            // Read headless per context, not from this context's stores.
            Screen::TriageAll => &[],
            Screen::Restarts => &[Kind::ContainerRecreateRequest],
            Screen::Budgets | Screen::Budget { .. } => &[Kind::PodUnavailableBudget],
            Screen::SidecarSets => &[Kind::SidecarSet],
            Screen::SidecarPods(_) => &[Kind::SidecarSet, Kind::SidecarSetRevision],
            Screen::ProbeMarkers => &[Kind::PodProbeMarker, Kind::NodePodProbe],
            Screen::Rollouts => &[Kind::Rollout, Kind::BatchRelease],
        }
    }
}

impl Screen {
    /// The screens that list many objects (and so take a `/` filter); the others are one
    /// object's detail.
    pub fn is_list(&self) -> bool {
        matches!(
            self,
            Screen::Triage
                | Screen::TriageAll
                | Screen::Restarts
                | Screen::Budgets
                | Screen::SidecarSets
                | Screen::ProbeMarkers
                | Screen::Rollouts
        )
    }
}

/// An on-call screen's UI state.
#[derive(Debug, Clone, PartialEq)]
pub struct OncallView {
    pub screen: Screen,
    pub selected: usize,
    pub offset: usize,
    /// The `/` filter of a list screen (every word must occur in the row).
    pub filter: String,
}

impl OncallView {
    pub fn new(screen: Screen) -> OncallView {
        OncallView {
            screen,
            selected: 0,
            offset: 0,
            filter: String::new(),
        }
    }
}

impl Filterable for OncallView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.screen.is_list().then_some(&mut self.filter)
    }

    /// The rows are the app's (rebuilt from the stores): the cursor goes back to the first row
    /// the filter keeps, and the next rebuild clamps it.
    fn refilter(&mut self, _page: usize) {
        self.selected = 0;
        self.offset = 0;
    }
}

/// What `/` matches an on-call row against (every word of the filter, case-insensitive).
pub trait Search {
    fn search(&self) -> String;
}

/// The rows a screen's `/` filter keeps, in order.
pub fn shown<'a, T: Search>(rows: &'a [T], filter: &str) -> Vec<&'a T> {
    kept(rows, filter).collect()
}

/// The rows a screen's `/` filter keeps, lazily (every row while no filter is typed).
fn kept<'a, T: Search>(rows: &'a [T], filter: &str) -> impl Iterator<Item = &'a T> {
    let filter = filter.to_lowercase();
    rows.iter()
        .filter(move |r| filter.is_empty() || matches(&r.search().to_lowercase(), &filter))
}

/// How many rows a screen's filter keeps (no row is searched while no filter is typed).
fn count<T: Search>(rows: &[T], filter: &str) -> usize {
    if filter.is_empty() {
        rows.len()
    } else {
        kept(rows, filter).count()
    }
}

/// The `i`th row a screen's filter keeps.
fn nth<'a, T: Search>(rows: &'a [T], filter: &str, i: usize) -> Option<&'a T> {
    kept(rows, filter).nth(i)
}

/// The cached rows of the on-call views.
#[derive(Debug, Clone, Default)]
pub struct Oncall {
    pub triage: Vec<Problem>,
    /// `:triage all`: every context's triage, read once per asking.
    pub across: Option<across::Across>,
    /// A problem Enter chose in another context: opened once that context has loaded.
    pub pending: Option<Problem>,
    /// The problems last written to the triage record (None until this context has loaded).
    pub recorded: Option<record::Recorded>,
    pub restarts: Vec<rows::CrrRow>,
    pub budgets: Vec<rows::PubRow>,
    pub sidecarsets: Vec<sidecar::SidecarRow>,
    pub probes: Vec<probes::ProbeRow>,
    /// Budget left per workload UID, for the Workloads view's PUB column.
    pub budget_left: HashMap<String, i32>,
    pub memory: triage::Memory,
    /// Refused deletes read from the journal.
    pub denials: Vec<Denial>,
    /// CloneSets' status conditions by workload key (the Progressing condition, for triage).
    pub progress: HashMap<String, super::rollout::progress::Conditions>,
    /// Kruise Rollouts in scope (`:rollouts`, the rollout view's Rollout section, triage).
    pub rollouts: Vec<super::rollouts::RolloutRow>,
}

/// The refused deletes of the journal (deletion protection or a budget said no).
pub fn denials(entries: &[Entry]) -> Vec<Denial> {
    entries
        .iter()
        .filter(|e| e.request.verb.eq_ignore_ascii_case("DELETE") && !e.result.ok)
        .filter(|e| {
            let m = e.result.message.to_lowercase();
            m.contains("protect") || m.contains("forbidden") || e.result.code == Some(403)
        })
        .map(|e| {
            let kind = Kind::of(e.target.kind)
                .filter(|k| e.target.kind.workload.is_some() || *k == Kind::Pod);
            Denial {
                object: kind.map(|kind| ObjectRef {
                    kind,
                    namespace: e.target.namespace.clone(),
                    name: e.target.name.clone(),
                }),
                subject: e.target.describe(),
                message: e.result.message.clone(),
                time: e.time,
            }
        })
        .collect()
}

impl App {
    /// The on-call views' rows (triage, restarts, budgets, SidecarSets, probes).
    pub fn oncall(&self) -> &Oncall {
        &self.oncall
    }

    /// Rebuilds every on-call row model from the stores and the workload/pod rows.
    pub(crate) fn rebuild_oncall(&mut self) {
        let ns = self.namespace.as_deref();
        self.oncall.restarts = rows::build_restarts(&self.stores, ns, &self.pods);
        self.oncall.budgets =
            rows::build_budgets(&self.stores, ns, &self.workloads, &self.owners, &self.pods);
        self.oncall.budget_left = rows::budget_left(&self.oncall.budgets);
        self.oncall.sidecarsets = sidecar::build_sidecarsets(&self.stores);
        self.oncall.probes = probes::build_probes(&self.stores, ns, &self.pods);
        self.oncall.progress = super::rollout::progress::by_workload(&self.stores);
        self.oncall.rollouts = super::rollouts::build(&self.stores, ns, &self.workloads);
        self.rebuild_triage();
    }

    /// Recomputes triage (the clock moved, or a row model changed).
    pub(crate) fn rebuild_triage(&mut self) {
        let input = triage::Input {
            now: self.now,
            stall_seconds: self.rollout.stall_seconds,
            workloads: &self.workloads,
            owners: &self.owners,
            pods: &self.pod_index,
            budgets: &self.oncall.budgets,
            restarts: &self.oncall.restarts,
            denials: &self.oncall.denials,
            progress: &self.oncall.progress,
            rollouts: &self.oncall.rollouts,
        };
        let mut memory = std::mem::take(&mut self.oncall.memory);
        self.oncall.triage = triage::triage(&input, &mut memory);
        self.oncall.memory = memory;
        self.clamp_oncall();
    }

    /// Keeps every on-call view's cursor on a row.
    pub(crate) fn clamp_oncall(&mut self) {
        let page = self.page();
        let lens: Vec<usize> = self
            .stack
            .iter()
            .map(|r| match r {
                Route::Oncall(v) => self.oncall_len(v),
                _ => 0,
            })
            .collect();
        for (route, len) in self.stack.iter_mut().zip(lens) {
            if let Route::Oncall(v) = route {
                move_cursor(&mut v.selected, &mut v.offset, len, 0, page);
            }
        }
    }

    /// Rows a screen shows (those its filter keeps).
    pub(crate) fn oncall_len(&self, view: &OncallView) -> usize {
        let f = view.filter.as_str();
        match &view.screen {
            Screen::Triage => count(&self.oncall.triage, f),
            Screen::TriageAll => self
                .oncall
                .across
                .as_ref()
                .and_then(|a| a.rows.as_deref())
                .map_or(0, |rows| count(rows, f)),
            Screen::Restarts => count(&self.oncall.restarts, f),
            Screen::Budgets => count(&self.oncall.budgets, f),
            Screen::SidecarSets => count(&self.oncall.sidecarsets, f),
            Screen::ProbeMarkers => count(&self.oncall.probes, f),
            Screen::Rollouts => count(&self.oncall.rollouts, f),
            Screen::SidecarPods(name) => self.sidecar_pods(name).len(),
            Screen::Budget { namespace, name } => self.budget(namespace, name).map_or(0, |b| {
                b.disrupted.len() + b.unavailable.len() + b.not_ready.len()
            }),
        }
    }

    /// The sidecar versions of one SidecarSet's matched pods (read live from the stores).
    pub fn sidecar_pods(&self, name: &str) -> Vec<sidecar::SidecarPodRow> {
        let sets = self.stores.oncall.sidecarsets.state();
        let Some(set) = sets
            .iter()
            .find(|s| s.metadata.name.as_deref() == Some(name))
        else {
            return Vec::new();
        };
        let revisions = self.stores.oncall.sidecar_revisions.state();
        // The console does not watch Namespaces: a namespaceSelector is not checked here.
        sidecar::sidecar_pods(set, &revisions, &self.pods, None)
    }

    pub(crate) fn budget(&self, namespace: &str, name: &str) -> Option<&rows::PubRow> {
        self.oncall
            .budgets
            .iter()
            .find(|b| b.namespace == namespace && b.name == name)
    }

    /// Whether every kind triage reads has loaded (or is not served): its rows are whole.
    pub(crate) fn triage_loaded(&self) -> bool {
        triage::READS.iter().all(|k| self.ready.contains(k))
    }

    /// Rows the triage strip takes over the Workloads view (0 when nothing is wrong).
    pub(crate) fn strip_rows(&self) -> usize {
        match self.top() {
            Route::List(list) if !list.scope.is_pods() => self.oncall.triage.len().min(3),
            _ => 0,
        }
    }
}

/// Opens an on-call screen (replacing the same screen on top).
pub fn open_screen(app: &mut App, screen: Screen) -> Vec<Effect> {
    if let Route::Oncall(v) = app.top()
        && v.screen == screen
    {
        return Vec::new();
    }
    let triage = screen == Screen::Triage;
    app.stack.push(Route::Oncall(OncallView::new(screen)));
    app.clamp_oncall();
    // Triage lists the deletes the journal says were refused.
    if triage {
        vec![Effect::ReadJournal]
    } else {
        Vec::new()
    }
}

/// Moves the cursor of the on-call view on top.
pub fn navigate(app: &mut App, delta: isize) {
    let page = app.page();
    let len = match app.top() {
        Route::Oncall(v) => app.oncall_len(v),
        _ => return,
    };
    if let Some(Route::Oncall(v)) = app.stack.last_mut() {
        move_cursor(&mut v.selected, &mut v.offset, len, delta, page);
    }
}

/// The object under the cursor of the on-call view on top (for `y`, `e`).
pub fn selection(app: &App, view: &OncallView) -> Option<ObjectRef> {
    let (i, f) = (view.selected, view.filter.as_str());
    let obj = |kind, ns: &str, name: &str| ObjectRef {
        kind,
        namespace: Some(ns.to_owned()),
        name: name.to_owned(),
    };
    match &view.screen {
        Screen::Triage => nth(&app.oncall.triage, f, i).and_then(|p| p.object.clone()),
        Screen::TriageAll => across::selected_problem(app, view)
            .filter(|(context, _)| app.context.as_deref() == Some(context.as_str()))
            .and_then(|(_, p)| p.object),
        Screen::Restarts => nth(&app.oncall.restarts, f, i)
            .map(|r| obj(Kind::ContainerRecreateRequest, &r.namespace, &r.name)),
        Screen::Budgets => nth(&app.oncall.budgets, f, i)
            .map(|b| obj(Kind::PodUnavailableBudget, &b.namespace, &b.name)),
        Screen::SidecarSets => nth(&app.oncall.sidecarsets, f, i).map(|s| ObjectRef {
            kind: Kind::SidecarSet,
            namespace: None,
            name: s.name.clone(),
        }),
        Screen::ProbeMarkers => nth(&app.oncall.probes, f, i)
            .map(|p| obj(Kind::PodProbeMarker, &p.namespace, &p.marker)),
        Screen::SidecarPods(name) => app
            .sidecar_pods(name)
            .get(i)
            .map(|p| obj(Kind::Pod, &p.namespace, &p.pod)),
        Screen::Rollouts => {
            nth_rollout(app, view).map(|r| obj(Kind::Rollout, &r.namespace, &r.name))
        }
        Screen::Budget { namespace, name } => {
            Some(obj(Kind::PodUnavailableBudget, namespace, name))
        }
    }
}

/// The workload the remedy keys (`u`, `[`, `P`) act on in triage (and the workload of a
/// `:rollouts` row, when the console shows its kind).
pub fn selected_owner(app: &App) -> Option<Owner> {
    match app.top() {
        Route::Oncall(v) if v.screen == Screen::Triage => {
            nth(&app.oncall.triage, &v.filter, v.selected)?
                .owner
                .clone()
        }
        Route::Oncall(v) if v.screen == Screen::Rollouts => {
            nth_rollout(app, v)?.owner(&app.workloads)
        }
        _ => None,
    }
}

/// The `:rollouts` row under the cursor.
pub fn nth_rollout<'a>(app: &'a App, view: &OncallView) -> Option<&'a super::rollouts::RolloutRow> {
    nth(&app.oncall.rollouts, &view.filter, view.selected)
}

fn pod_view(namespace: &str, name: &str) -> Route {
    Route::Pod(PodView {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        scroll: 0,
        container: 0,
    })
}

fn rollout_view(app: &App, owner: Owner) -> Route {
    let mut view = RolloutView::new(owner);
    let summary = super::rollout::summary::summary(&app.stores, &view.owner);
    view.refresh(summary, &app.pods);
    Route::Rollout(Box::new(view))
}

/// Where Enter on a triage problem goes (a workload's rollout view, a pod, a budget), or what
/// the status line says instead.
pub(crate) fn problem_route(app: &App, p: &Problem) -> Result<Route, String> {
    let Some(object) = &p.object else {
        return Err(format!("{}: see :protect", p.subject));
    };
    let ns = object.namespace.clone().unwrap_or_default();
    match (p.kind, object.kind) {
        (ProblemKind::StuckRollout, _) => match p.owner.clone() {
            Some(owner) => Ok(rollout_view(app, owner)),
            None => Err(format!("{} is gone", p.subject)),
        },
        (_, Kind::Pod) => Ok(pod_view(&ns, &object.name)),
        (_, Kind::PodUnavailableBudget) => Ok(Route::Oncall(OncallView::new(Screen::Budget {
            namespace: ns,
            name: object.name.clone(),
        }))),
        (_, Kind::CloneSet | Kind::StatefulSet | Kind::DaemonSet) => app
            .workloads
            .iter()
            .find(|w| w.kind == object.kind && w.namespace == ns && w.name == object.name)
            .map(|w| rollout_view(app, w.owner()))
            .ok_or_else(|| format!("{} is gone", p.subject)),
        _ => Err(format!("{}: see :protect", p.subject)),
    }
}

/// Enter in an on-call view: the row's object (a workload's rollout, a pod, a budget's pods, a
/// SidecarSet's pods, a CRR's YAML).
pub fn open(app: &mut App) -> Vec<Effect> {
    let Route::Oncall(view) = app.top() else {
        return Vec::new();
    };
    let (i, f) = (view.selected, view.filter.as_str());
    let route = match &view.screen {
        Screen::Triage => {
            let Some(p) = nth(&app.oncall.triage, f, i).cloned() else {
                return Vec::new();
            };
            match problem_route(app, &p) {
                Ok(route) => route,
                Err(status) => {
                    app.set_status(Level::Info, status);
                    return Vec::new();
                }
            }
        }
        Screen::TriageAll => return across::open_row(app),
        Screen::Restarts => {
            let Some(r) = nth(&app.oncall.restarts, f, i) else {
                return Vec::new();
            };
            let target = ObjectRef {
                kind: Kind::ContainerRecreateRequest,
                namespace: Some(r.namespace.clone()),
                name: r.name.clone(),
            };
            app.stack.push(Route::Yaml(TextView {
                target: target.clone(),
                lines: Fetch::Loading,
                scroll: 0,
            }));
            return vec![Effect::FetchYaml(target)];
        }
        Screen::Budgets => match nth(&app.oncall.budgets, f, i) {
            Some(b) => Route::Oncall(OncallView::new(Screen::Budget {
                namespace: b.namespace.clone(),
                name: b.name.clone(),
            })),
            None => return Vec::new(),
        },
        Screen::SidecarSets => match nth(&app.oncall.sidecarsets, f, i) {
            Some(s) => Route::Oncall(OncallView::new(Screen::SidecarPods(s.name.clone()))),
            None => return Vec::new(),
        },
        Screen::ProbeMarkers => match nth(&app.oncall.probes, f, i) {
            Some(p) => pod_view(&p.namespace, &p.pod),
            None => return Vec::new(),
        },
        Screen::Rollouts => {
            let Some(r) = nth(&app.oncall.rollouts, f, i) else {
                return Vec::new();
            };
            match r.owner(&app.workloads) {
                Some(owner) => rollout_view(app, owner),
                None => {
                    let text = format!(
                        "Rollout {}/{}: its workload {} is not in the console (y shows the Rollout)",
                        r.namespace, r.name, r.workload
                    );
                    app.set_status(Level::Info, text);
                    return Vec::new();
                }
            }
        }
        Screen::SidecarPods(name) => match app.sidecar_pods(name).get(i) {
            Some(p) => pod_view(&p.namespace, &p.pod),
            None => return Vec::new(),
        },
        Screen::Budget { namespace, name } => {
            let Some(b) = app.budget(namespace, name) else {
                return Vec::new();
            };
            let pods: Vec<&str> = b
                .disrupted
                .iter()
                .chain(&b.unavailable)
                .chain(&b.not_ready)
                .map(|p| p.pod.as_str())
                .collect();
            match pods.get(i) {
                Some(pod) => pod_view(namespace, pod),
                None => return Vec::new(),
            }
        }
    };
    app.stack.push(route);
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        actions::{Action, ApiRequest, Target},
        journal::Outcome,
    };

    fn entry(verb: &str, ok: bool, code: Option<u16>, message: &str) -> Entry {
        Entry {
            time: "2026-01-10T12:00:00Z".parse().unwrap(),
            context: None,
            user: None,
            cluster: "https://127.0.0.1:6443".into(),
            target: Target {
                kind: &crate::api::kinds::CLONESET,
                namespace: Some("demo".into()),
                name: "web".into(),
            },
            action: Action::Pause,
            request: ApiRequest {
                verb: verb.into(),
                path: "/apis/apps.kruise.io/v1alpha1/namespaces/demo/clonesets/web".into(),
                content_type: String::new(),
                body: serde_json::Value::Null,
            },
            result: Outcome {
                ok,
                code,
                message: message.into(),
            },
            inverse: None,
        }
    }

    #[test]
    fn only_refused_deletes_of_the_journal_are_denials() {
        let entries = [
            entry(
                "DELETE",
                false,
                Some(403),
                "admission webhook denied the request: forbidden by ResourcesDeletionProtection",
            ),
            entry("DELETE", true, Some(200), ""),
            entry("PATCH", false, Some(409), "conflict"),
            entry("DELETE", false, Some(404), "not found"),
        ];
        let found = denials(&entries);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].subject, "CloneSet demo/web");
        assert_eq!(
            found[0].object.as_ref().map(|o| o.kind),
            Some(Kind::CloneSet)
        );
    }
}
