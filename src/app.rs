//! Console state, messages and the pure `update(&mut App, Msg) -> Vec<Effect>`. No IO, no awaits,
//! no clock (time arrives as `Msg::Tick`).
//!
//! Background tasks (terminal events, watchers, the effect executor) send [`Msg`]s; only `update`
//! changes state. Views read state.
//!
//! # Contract for the runtime
//! ```text
//! let mut app = App::new(AppInit { stores, config: config::load(..), namespace, now, context, size });
//! loop {
//!     msg = select!(terminal key → Msg::Key, resize → Msg::Resize, store → Msg::StoreChanged,
//!                   1 s interval → Msg::Tick(Timestamp::now()), executor → Msg::EffectDone, ...);
//!     for effect in app::update(&mut app, msg) { executor.send(effect) }  // Effect::Quit: leave
//!     if app.should_quit() { break }
//!     if app.take_dirty() { terminal.draw(|f| view::render(&app, f)) }
//! }
//! ```
//! `Effect::Switch` always carries the full target: the context to use (the current one for
//! `:ns`) and the namespace (`None` = all namespaces). After a switch the runtime keeps feeding
//! the same `Stores` handles (a new watcher's initial list replaces their content) and sends a
//! fresh `Msg::Discovered`.

pub mod act;
pub mod broadcastjobs;
pub mod command;
pub mod cronjobs;
pub mod dialog;
pub mod distributions;
pub mod effect;
pub mod filter;
pub mod images;
pub mod journal;
pub mod keys;
pub mod logs;
pub mod msg;
pub mod oncall;
pub mod persistentpodstates;
pub mod podindex;
pub mod poll;
pub mod protect;
pub mod restart;
pub mod rollout;
pub mod rollouts;
pub mod route;
pub mod rows;
pub mod seedlist;
pub mod shell;
pub mod stores;
pub mod uniteddeployments;
pub mod update;
pub mod usage;
pub mod whatif;
pub mod workloadspreads;

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::Arc,
};

use jiff::Timestamp;

pub use effect::{Effect, Listing};
pub use msg::{Denied, Kind, Msg};
pub use stores::Stores;
pub use update::update;

use self::{
    route::{ListView, Route, Scope},
    rows::{PodRow, WorkloadRow},
};
use crate::config::{Keymap, LoadedConfig, LogsConfig, RolloutConfig, Theme};

/// What the runtime knows when the console starts.
pub struct AppInit {
    pub stores: Stores,
    pub config: LoadedConfig,
    /// The namespace watched (None = all namespaces, `-A`).
    pub namespace: Option<String>,
    /// The clock at start; afterwards `Msg::Tick` moves it.
    pub now: Timestamp,
    /// The kubeconfig context, if known before discovery.
    pub context: Option<String>,
    /// The terminal size (columns, rows); `Msg::Resize` updates it.
    pub size: (u16, u16),
    /// `--readonly`: mutating keys say "read-only" and emit nothing.
    pub readonly: bool,
}

/// How long a status message stays on the status line.
pub const STATUS_SECONDS: i64 = 5;

/// Input mode: where keys go.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Normal,
    /// `:` command line; `hint` lists completions after an ambiguous Tab.
    Command {
        input: String,
        hint: String,
    },
    /// `/` filter: keys edit the top list's filter live.
    Filter,
    /// The help overlay, scrolled down `scroll` lines (j/k, page keys) when it is taller than
    /// the screen.
    Help {
        scroll: u16,
    },
}

/// What a banner is about (the view picks its style).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Banner {
    Error,
    Warn,
    Info,
}

/// Severity of a status-line message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

/// A transient message on the status line.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub text: String,
    pub level: Level,
    pub since: Timestamp,
}

/// The console's whole state. Fields are read by `view`; only `update` writes them.
pub struct App {
    pub(crate) stores: Stores,
    pub(crate) theme: Theme,
    pub(crate) keymap: Keymap,
    /// The batch plan (`[rollout]` of config.toml).
    pub(crate) rollout: RolloutConfig,
    /// The Log view's buffer (`[logs]` of config.toml).
    pub(crate) logs: LogsConfig,
    pub(crate) readonly: bool,
    /// A form, the confirm dialog, the revision picker or a wait, over the view.
    pub(crate) overlay: Option<dialog::Overlay>,
    /// Tags effect requests so an answer finds the dialog that asked.
    pub(crate) next_id: u64,
    /// The marked pods a restart goes on to after the one being confirmed (dialog id, pods).
    pub(crate) restart_batch: Option<(u64, Vec<crate::actions::Target>)>,
    /// Config warnings (bad theme/keymap), shown until dismissed with `Esc` on the root view.
    pub(crate) warnings: Vec<String>,
    pub(crate) now: Timestamp,
    pub(crate) context: Option<String>,
    pub(crate) cluster_url: String,
    pub(crate) namespace: Option<String>,
    pub(crate) contexts: Vec<String>,
    pub(crate) namespaces: Vec<String>,
    pub(crate) kruise_missing: bool,
    /// The Kruise release the cluster runs, once told (header, and the rules predictions use).
    pub(crate) kruise_release: Option<crate::kruise::release::ClusterRelease>,
    /// The root was switched to Pods because no workload kind can be shown (Kruise missing, or
    /// none the user may list); undone when that changes while the root is still that view.
    pub(crate) pods_for_missing_kruise: bool,
    pub(crate) ready: BTreeSet<Kind>,
    /// How each kind's initial list loads (streamed or paged), once its watch knows: shown while
    /// the kind is not ready.
    pub(crate) list_modes: BTreeMap<Kind, msg::ListMode>,
    /// Watches failing now, with their last error.
    pub(crate) failed: BTreeMap<Kind, String>,
    /// Kinds the user may not list here (403), with what the server said.
    pub(crate) forbidden: BTreeMap<Kind, Denied>,
    pub(crate) workloads: Vec<WorkloadRow>,
    /// Workload UID → index in `workloads` (for the pods' revision column).
    pub(crate) owners: HashMap<String, usize>,
    /// Pod rows sorted by namespace then name.
    pub(crate) pods: Vec<Arc<PodRow>>,
    /// Indexes over `pods`, patched with them.
    pub(crate) pod_index: podindex::PodIndex,
    /// The on-call views' rows (triage, restarts, budgets, sidecars, probes).
    pub(crate) oncall: oncall::Oncall,
    /// CPU and memory from `metrics.k8s.io`, per pod and per workload.
    pub(crate) usage: usage::Usage,
    pub(crate) stack: Vec<Route>,
    pub(crate) mode: Mode,
    pub(crate) status: Option<Status>,
    pub(crate) size: (u16, u16),
    dirty: bool,
    quit: bool,
}

impl App {
    /// Builds the console state and its first row models from whatever the stores hold.
    pub fn new(init: AppInit) -> App {
        let mut app = App {
            stores: init.stores,
            theme: init.config.theme,
            keymap: init.config.keymap,
            rollout: init.config.rollout,
            logs: init.config.logs,
            readonly: init.readonly,
            overlay: None,
            next_id: 0,
            restart_batch: None,
            warnings: init.config.warnings,
            now: init.now,
            context: init.context,
            cluster_url: String::new(),
            namespace: init.namespace,
            contexts: Vec::new(),
            namespaces: Vec::new(),
            kruise_missing: false,
            kruise_release: None,
            pods_for_missing_kruise: false,
            ready: BTreeSet::new(),
            list_modes: BTreeMap::new(),
            failed: BTreeMap::new(),
            forbidden: BTreeMap::new(),
            workloads: Vec::new(),
            owners: HashMap::new(),
            pods: Vec::new(),
            pod_index: podindex::PodIndex::default(),
            oncall: oncall::Oncall::default(),
            usage: usage::Usage::default(),
            stack: vec![Route::List(ListView::new(Scope::Workloads))],
            mode: Mode::Normal,
            status: None,
            size: init.size,
            dirty: true,
            quit: false,
        };
        app.rebuild_workloads();
        app.rebuild_pods();
        app
    }

    /// True once the user asked to leave.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// True if the screen changed since the last call (then clears the flag). The runtime draws
    /// only when this says so.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::replace(&mut self.dirty, false)
    }

    /// The view on top of the stack.
    pub(crate) fn top(&self) -> &Route {
        // The stack is never empty: `pop` keeps the root.
        self.stack.last().unwrap_or(&self.stack[0])
    }

    /// The banners under the header: failing watches, Kruise missing, config warnings (one
    /// each), most important first.
    pub(crate) fn banners(&self) -> Vec<(Banner, String)> {
        let mut out = Vec::new();
        if !self.failed.is_empty() {
            let kinds: Vec<&str> = self.failed.keys().map(|k| k.plural()).collect();
            let error = self.failed.values().last().cloned().unwrap_or_default();
            out.push((
                Banner::Error,
                format!(
                    "✖ watch failing for {}, retrying with backoff (rows may be stale): {}",
                    kinds.join(", "),
                    error.lines().next().unwrap_or("")
                ),
            ));
        }
        out.extend(
            self.permission_lines()
                .into_iter()
                .map(|line| (Banner::Info, line)),
        );
        if self.kruise_missing {
            out.push((
                Banner::Info,
                "OpenKruise is not installed in this cluster (no apps.kruise.io CRDs are served): \
                 no CloneSets, Advanced StatefulSets or Advanced DaemonSets; pods are shown"
                    .to_owned(),
            ));
        }
        let dismiss = self.keymap.hint(crate::config::Action::Back);
        for (i, w) in self.warnings.iter().enumerate() {
            let last = i + 1 == self.warnings.len();
            let tail = if last {
                format!(" ({dismiss} dismisses)")
            } else {
                String::new()
            };
            out.push((Banner::Warn, format!("⚠ config: {w}{tail}")));
        }
        out
    }

    /// One plain line per refusal: "no permission to list CloneSets, Advanced StatefulSets in
    /// perf-0 as system:serviceaccount:perf-0:viewer" (kinds refused alike share a line).
    pub(crate) fn permission_lines(&self) -> Vec<String> {
        let mut groups: Vec<(&Denied, Vec<&'static str>)> = Vec::new();
        // The on-call kinds' refusals are said in the views that read them.
        for (kind, denied) in self.forbidden.iter().filter(|(k, _)| !k.is_oncall()) {
            let same = |d: &Denied| {
                d.verb == denied.verb && d.user == denied.user && d.namespace == denied.namespace
            };
            match groups.iter_mut().find(|(d, _)| same(d)) {
                Some((_, kinds)) => kinds.push(kind.plural()),
                None => groups.push((denied, vec![kind.plural()])),
            }
        }
        groups
            .into_iter()
            .map(|(denied, kinds)| {
                let scope = match &denied.namespace {
                    Some(ns) => format!("in {ns}"),
                    None => "in any namespace".to_owned(),
                };
                let who = denied
                    .user
                    .as_deref()
                    .map(|u| format!(" as {u}"))
                    .unwrap_or_default();
                format!(
                    "no permission to {} {} {scope}{who}",
                    denied.verb,
                    kinds.join(", ")
                )
            })
            .collect()
    }

    /// True when no workload kind can be shown: Kruise is missing, or every workload kind is
    /// refused to this user.
    pub(crate) fn no_workloads_to_show(&self) -> bool {
        self.kruise_missing
            || [Kind::CloneSet, Kind::StatefulSet, Kind::DaemonSet]
                .iter()
                .all(|k| self.forbidden.contains_key(k))
    }

    /// Opens on Pods while no workload kind can be shown (and back on Workloads once one can),
    /// as long as the root is the view the console chose.
    pub(crate) fn choose_root(&mut self) {
        let root_is = |app: &App, scope: Scope| {
            app.stack.len() == 1 && matches!(app.top(), Route::List(l) if l.scope == scope)
        };
        let pods_readable = !self.forbidden.contains_key(&Kind::Pod);
        if self.no_workloads_to_show() && pods_readable && root_is(self, Scope::Workloads) {
            self.stack = vec![Route::List(ListView::new(Scope::Pods))];
            self.pods_for_missing_kruise = true;
        } else if !self.no_workloads_to_show()
            && self.pods_for_missing_kruise
            && root_is(self, Scope::Pods)
        {
            self.stack = vec![Route::List(ListView::new(Scope::Workloads))];
            self.pods_for_missing_kruise = false;
        }
    }

    /// Terminal rows the banners take (each wraps at the terminal width; at most 6 rows).
    pub(crate) fn banner_count(&self) -> usize {
        let width = usize::from(self.size.0.max(1));
        let rows: usize = self
            .banners()
            .iter()
            .map(|(_, text)| text.chars().count().div_ceil(width).max(1))
            .sum();
        rows.min(6)
    }

    /// Rows a table body can show at the current size (header, banners, borders, column titles
    /// and the status line taken away).
    pub(crate) fn page(&self) -> usize {
        let chrome = 1 + self.banner_count() + self.strip_rows() + 2 + 1 + 1;
        usize::from(self.size.1).saturating_sub(chrome).max(1)
    }

    pub(crate) fn rebuild_workloads(&mut self) {
        let (rows, owners) = rows::build_workloads(&self.stores, self.namespace.as_deref());
        self.workloads = rows;
        self.owners = owners;
        self.rebuild_oncall();
        self.refresh_lists();
        self.refresh_rollouts();
    }

    /// Rebuilds the pod rows and indexes from the whole store (after a list, `:ns`, `:ctx`).
    pub(crate) fn rebuild_pods(&mut self) {
        let pods = rows::build_pods(&self.stores, self.namespace.as_deref(), &self.pods);
        self.pod_index = podindex::PodIndex::rebuild(&pods, &self.pods, &self.pod_index, self.now);
        self.pods = pods;
        self.rebuild_oncall();
        self.refresh_lists();
        self.refresh_rollouts();
    }

    /// Applies the pods that changed: rows and indexes are patched for those pods only, and
    /// the lists are re-filtered only when rows moved or a filter may see the change.
    pub(crate) fn apply_pod_changes(&mut self, keys: Vec<msg::PodKey>) {
        let patched = podindex::apply(
            &self.stores,
            self.namespace.as_deref(),
            &mut self.pods,
            &mut self.pod_index,
            keys,
            self.now,
        );
        if !patched.changed {
            return;
        }
        self.rebuild_oncall();
        if patched.moved || self.lists_filtered() {
            self.refresh_lists();
        }
        self.refresh_rollouts();
        self.mark_dirty();
    }

    /// Whether a list on the stack filters its rows (a pod's change may show or hide it).
    fn lists_filtered(&self) -> bool {
        self.stack
            .iter()
            .any(|r| matches!(r, Route::List(list) if !list.filter.is_empty()))
    }

    /// Re-reads the rollout views' workloads and pods from the stores and the pod rows.
    pub(crate) fn refresh_rollouts(&mut self) {
        for route in &mut self.stack {
            if let Route::Rollout(view) = route {
                let summary = rollout::summary::summary(&self.stores, &view.owner);
                view.refresh(summary, &self.pods);
            }
        }
    }

    /// The effects the rollout view on top is due for (its plan and events, when stale).
    pub(crate) fn rollout_due(&mut self) -> Vec<Effect> {
        let now = self.now;
        // Under a Kruise Rollout the console's own next batch is not shown: no plan to ask.
        let controlled = match self.stack.last() {
            Some(Route::Rollout(view)) => self.rollout_of(&view.owner).is_some(),
            _ => false,
        };
        match self.stack.last_mut() {
            Some(Route::Rollout(view)) => {
                if controlled {
                    view.plan_refresh.stale = false;
                }
                view.due(now, &self.rollout)
            }
            _ => Vec::new(),
        }
    }

    /// The overlay over the view, if one is open.
    pub fn overlay(&self) -> Option<&dialog::Overlay> {
        self.overlay.as_ref()
    }

    /// The view on top of the stack.
    pub fn current(&self) -> &Route {
        self.top()
    }

    /// The workload rows (every workload in scope, sorted).
    pub fn workloads(&self) -> &[WorkloadRow] {
        &self.workloads
    }

    /// The resource usage read from `metrics.k8s.io`.
    pub fn usage(&self) -> &usage::Usage {
        &self.usage
    }

    /// The status line's message, if one is showing.
    pub fn status(&self) -> Option<&Status> {
        self.status.as_ref()
    }

    /// Recomputes every list's visible rows (scope + filter), keeping selections on their objects.
    pub(crate) fn refresh_lists(&mut self) {
        let page = self.page();
        for route in &mut self.stack {
            if let Route::List(list) = route {
                filter::refresh(list, &self.workloads, &self.pods, page);
            }
        }
    }

    pub(crate) fn set_status(&mut self, level: Level, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            level,
            since: self.now,
        });
    }

    pub(crate) fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    pub(crate) fn request_quit(&mut self) {
        self.quit = true;
    }
}
