//! `Msg`: everything that can happen to the console. Sent by background tasks, consumed by `update`.
//!
//! Contract between the kube layer (producer of watch/health/effect-result messages) and the app.

use crossterm::event::KeyEvent;
use jiff::Timestamp;

/// The kinds the console watches (one reflector each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    CloneSet,
    StatefulSet,
    DaemonSet,
    Pod,
}

impl Kind {
    /// The variant's name, as `{:?}` prints it.
    pub fn debug_name(self) -> &'static str {
        match self {
            Kind::CloneSet => "CloneSet",
            Kind::StatefulSet => "StatefulSet",
            Kind::DaemonSet => "DaemonSet",
            Kind::Pod => "Pod",
        }
    }

    /// The kind's plural name as the console shows it.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::CloneSet => "CloneSets",
            Kind::StatefulSet => "Advanced StatefulSets",
            Kind::DaemonSet => "Advanced DaemonSets",
            Kind::Pod => "Pods",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Msg {
    /// A key press from the terminal.
    Key(KeyEvent),
    /// The terminal was resized.
    Resize { width: u16, height: u16 },
    /// The clock moved (ages are rendered relative to the last tick; `update` never reads a clock).
    Tick(Timestamp),
    /// A reflector store changed (no payload: `update` reads the store).
    StoreChanged(Kind),
    /// A kind's initial list has been loaded into its store.
    StoreReady(Kind),
    /// What discovery found (sent after connecting and after every `:ctx`/`:ns` switch).
    Discovered(Discovery),
    /// A watch failed; it is retried with backoff.
    WatchFailed { kind: Kind, error: String },
    /// The user may not list or watch this kind here (HTTP 403). Not an outage: nothing is
    /// retried in a loop; the watch checks again slowly and on `:ns`/`:ctx`.
    WatchForbidden { kind: Kind, denied: Denied },
    /// A watch is receiving events again after a failure.
    WatchRecovered(Kind),
    /// The result of an [`Effect`](super::Effect) the executor ran.
    EffectDone(EffectResult),
    /// `:ns`/`:ctx` rebuilt the watches: read these stores from now on. Sent before any message
    /// of the new watches (and before `EffectDone(Switched)`); the old stores stop changing.
    StoresReplaced(super::Stores),
}

/// What a 403 said the user may not do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// The verb refused (`list`, `watch`).
    pub verb: String,
    /// The user the server named (`system:serviceaccount:perf-0:viewer`), if it named one.
    pub user: Option<String>,
    /// The namespace of the refused request; None for the cluster scope (all namespaces).
    pub namespace: Option<String>,
    /// The server's message, whole.
    pub message: String,
}

/// What the kube layer learned about the cluster it connected to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovery {
    pub context: Option<String>,
    pub contexts: Vec<String>,
    pub cluster_url: String,
    /// The namespace watched; None means all namespaces.
    pub namespace: Option<String>,
    /// Every served version of apps.kruise.io / policy.kruise.io kinds, e.g. ("CloneSet", "v1alpha1").
    pub kruise_kinds: Vec<(String, String)>,
    /// True when none of the Kruise CRDs is served: the console still shows pods.
    pub kruise_missing: bool,
    /// Namespaces known to the cluster, for `:ns` completion.
    pub namespaces: Vec<String>,
}

/// Results of effects, each tagged with what it was for.
#[derive(Debug, Clone, PartialEq)]
pub enum EffectResult {
    /// YAML text of an object, for the YAML view.
    Yaml { target: ObjectRef, yaml: String },
    /// Events involving an object (newest last).
    Events {
        target: ObjectRef,
        events: Vec<EventRow>,
    },
    /// A watch set was rebuilt for a new context/namespace.
    Switched,
    /// An effect failed; the message is shown to the user.
    Failed { what: String, error: String },
}

/// A reference to one object the user selected.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    pub kind: Kind,
    pub namespace: Option<String>,
    pub name: String,
}

/// One event row for the Events view.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    pub type_: String,
    pub reason: String,
    pub message: String,
    pub count: i32,
    pub last_seen: Option<Timestamp>,
    pub source: String,
}
