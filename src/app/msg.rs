//! `Msg`: everything that can happen to the console. Sent by background tasks, consumed by `update`.
//!
//! Contract between the kube layer (producer of watch/health/effect-result messages) and the app.

use std::collections::BTreeMap;

use crossterm::event::KeyEvent;
use jiff::Timestamp;

pub use crate::api::{denied::Denied, kinds::Kind};
use crate::{
    actions::{ObjectState, Prepared, RevisionInfo, Target},
    journal::Entry,
    kruise::plan::Plan,
};
pub use kruise_client::watchlist::ListMode;

#[derive(Debug, Clone)]
pub enum Msg {
    /// A key press from the terminal.
    Key(KeyEvent),
    /// The terminal was resized.
    Resize { width: u16, height: u16 },
    /// The clock moved (ages are rendered relative to the last tick; `update` never reads a clock).
    Tick(Timestamp),
    /// A reflector store changed (no payload: `update` reads the whole store).
    StoreChanged(Kind),
    /// These pods changed (added, modified or deleted) since the last message: `update` reads
    /// just them from the pod store, so a change costs work proportional to the change.
    PodsChanged(Vec<PodKey>),
    /// A kind's initial list has been loaded into its store.
    StoreReady(Kind),
    /// How a kind's initial list is loading: streamed, or in pages because the server refused
    /// streaming lists (sent when known, again if a streaming list falls back).
    ListMode { kind: Kind, mode: ListMode },
    /// What discovery found (sent after connecting and after every `:ctx`/`:ns` switch).
    Discovered(Discovery),
    /// Which Kruise release the cluster runs, as far as it can be told (sent after discovery,
    /// and again when a later look tells more).
    KruiseRelease(crate::kruise::release::ClusterRelease),
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
    /// Lines of a log stream, or its end.
    Log(super::logs::LogEvent),
    /// The shell `S` opened has ended (or could not start).
    Shell(super::shell::ShellOutcome),
}

/// A pod's namespace and name (the pod store's key).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodKey {
    pub namespace: String,
    pub name: String,
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
    /// An action prepared for the confirm dialog, or why it cannot be (one line: forbidden,
    /// read-only, refused, not found...).
    Prepared {
        id: u64,
        result: Result<Box<Preview>, String>,
    },
    /// A confirmed action was sent: what changed, or why it was not (one line).
    Performed {
        id: u64,
        target: Target,
        result: Result<String, String>,
    },
    /// The rollout view's next step, planned on the objects as the server has them now.
    RolloutPlan {
        workload: ObjectRef,
        /// Boxed: a prediction is large beside the other results.
        result: Box<Result<Prediction, String>>,
    },
    /// Recent events of a workload and its pods (newest last).
    RolloutEvents {
        workload: ObjectRef,
        result: Result<Vec<ObjectEvent>, String>,
    },
    /// The revisions of a workload, for the undo picker.
    Revisions {
        id: u64,
        result: Result<Box<Revisions>, String>,
    },
    /// The action journal, oldest first, and how many lines did not parse.
    Journal(Result<(Vec<Entry>, usize), String>),
    /// The incident report was written (its path), or why not.
    Exported(Result<String, String>),
    /// `:triage all`: each context's triage, in the order asked.
    TriagedAcross(Vec<super::oncall::across::ContextTriage>),
    /// A running restart moved on.
    Restart {
        id: u64,
        update: super::restart::Update,
    },
    /// What `:protect` lists.
    Protected(Result<super::protect::ProtectReport, String>),
    /// What `:acj` lists.
    CronJobs(Result<Vec<crate::api::AdvancedCronJob>, String>),
    /// What `:bcj` lists.
    BroadcastJobs(Result<super::broadcastjobs::Listing, String>),
    /// What `:ws` lists.
    WorkloadSpreads(Result<super::workloadspreads::Listing, String>),
    /// What `:ud` lists.
    UnitedDeployments(Result<super::uniteddeployments::Listing, String>),
    /// What `:imagepulljobs`, `:imagelistpulljobs` or `:nodeimages` lists (and the NodeImages
    /// a rollout view marks its pods with).
    Images {
        kind: super::images::ImageKind,
        result: Result<super::images::Listing, String>,
    },
    /// What `:persistentpodstates` lists.
    PersistentPodStates(Result<super::persistentpodstates::Listing, String>),
    /// What `:distributor` lists.
    Distributions(Result<super::distributions::Listing, String>),
    /// A what-if's predicted steps, or why it could not run (one line).
    WhatIf {
        id: u64,
        result: Result<Box<crate::actions::whatif::Simulation>, String>,
    },
    /// An effect failed; the message is shown to the user.
    Failed { what: String, error: String },
    /// What [`super::Effect::FetchUsage`] read.
    Usage {
        id: u64,
        answer: super::usage::Answer,
    },
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

/// An action ready to confirm: the exact request, the object it was prepared on, and what the
/// plan API predicts it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub prepared: Prepared,
    pub state: ObjectState,
    /// `None`: the action moves no pods by itself (scaling); `Some(Err)`: why no prediction
    /// could be made (the action can still be sent).
    pub prediction: Option<Result<Prediction, String>>,
}

/// What the plan API says happens, on the objects as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The change planned, in words (`partition 6 → 5`, `pause`).
    pub change: String,
    pub plan: Plan,
    /// Pod → node, for Advanced DaemonSets (the plan orders nodes).
    pub nodes: BTreeMap<String, String>,
}

/// One event and the object it is about (the workload or one of its pods).
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectEvent {
    /// `CloneSet/web`, `Pod/web-x7k2p`.
    pub object: String,
    pub event: EventRow,
}

/// A workload's revisions as the undo picker shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct Revisions {
    pub target: Target,
    /// The template the workload has now.
    pub current: serde_json::Value,
    /// Its ControllerRevisions, newest first.
    pub revisions: Vec<RevisionInfo>,
}
