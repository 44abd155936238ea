//! `Effect`: IO that `update` asks for, as data. The kube layer's executor runs them and answers
//! with `Msg::EffectDone`.
//!
//! Mutations take two effects with a typed confirm step between them: [`Effect::Prepare`] reads
//! the object and predicts what the action does (nothing is sent), the confirm dialog shows it,
//! and only the user's confirm emits [`Effect::Perform`] with exactly what was shown.

use super::{logs::LogRequest, msg::ObjectRef, shell::ShellRequest};
use crate::actions::{Action, ObjectState, Prepared, Target};

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Fetch the object's YAML for the YAML view.
    FetchYaml(ObjectRef),
    /// Fetch the events involving the object.
    FetchEvents(ObjectRef),
    /// Rebuild the watches for another context and/or namespace (None = all namespaces).
    Switch {
        context: Option<String>,
        namespace: Option<String>,
    },
    /// Read the object, check RBAC, prepare the action on it and predict its effect with the
    /// plan API (sends nothing); answered by `EffectResult::Prepared`.
    Prepare(Box<PrepareRequest>),
    /// Send a prepared action (after the user confirmed it); answered by
    /// `EffectResult::Performed`.
    Perform(Box<PerformRequest>),
    /// Plan the rollout view's next step (`partition`: the next batch's partition; `None`: what
    /// the controller does next as things stand); answered by `EffectResult::RolloutPlan`.
    PlanRollout {
        workload: ObjectRef,
        partition: Option<String>,
    },
    /// The recent events of a workload and of its pods; answered by
    /// `EffectResult::RolloutEvents`.
    FetchRolloutEvents {
        workload: ObjectRef,
        pods: Vec<String>,
    },
    /// The workload's revisions (with their templates) for the undo picker.
    FetchRevisions { id: u64, target: Target },
    /// Read the action journal for `:journal`.
    ReadJournal,
    /// Write the incident report of this window to a file in the state dir; answered by
    /// `EffectResult::Exported`.
    ExportReport {
        since: jiff::Timestamp,
        until: jiff::Timestamp,
    },
    /// Append these notes to the triage record (`triage.jsonl` beside the journal).
    RecordTriage(Vec<crate::journal::triage_log::TriageNote>),
    /// Triage every one of these kubeconfig contexts (`:triage all`); answered by
    /// `EffectResult::TriagedAcross` once each has answered or timed out.
    TriageAcross { contexts: Vec<String> },
    /// Run a confirmed restart (and the marked pods after it, one after another); answered by
    /// `EffectResult::Restart` updates until it ends.
    Restart(Box<super::restart::RestartRun>),
    /// Stop the restart with this id once the pod in flight is Ready again (`Esc` on its
    /// panel); answered by its `Update::Done`.
    StopRestart(u64),
    /// List what a polled view shows (the views of kinds without a watch of their own); each
    /// [`Listing`] is answered by its own `EffectResult`.
    List(Listing),
    /// Simulate the pending action on a copy of the workload (reads only, sends nothing);
    /// answered by `EffectResult::WhatIf`.
    WhatIf(Box<WhatIfRequest>),
    /// Stream a container's log; answered by `Msg::Log` (batches of lines, then its end).
    StreamLogs(LogRequest),
    /// Stop the log stream with this id (its view closed or asked for another).
    StopLogs(u64),
    /// Suspend the console and run `kubectl exec -it` in a container (the runtime runs it, not
    /// the executor); answered by `Msg::Shell`.
    Shell(ShellRequest),
    /// Read the PodMetrics of the namespace watched, or only of `namespaces` when set (a big
    /// cluster: the namespaces of the rows on screen); `check`: first ask discovery whether
    /// `metrics.k8s.io` is served. Answered by `EffectResult::Usage` with this id.
    FetchUsage {
        id: u64,
        check: bool,
        namespaces: Option<Vec<String>>,
    },
    /// Leave the console.
    Quit,
}

/// What [`Effect::Prepare`] carries.
#[derive(Debug, Clone, PartialEq)]
pub struct PrepareRequest {
    /// Matches the answer to the dialog that asked.
    pub id: u64,
    pub target: Target,
    pub action: Action,
}

/// What [`Effect::Perform`] carries: the request the dialog showed and the object it was
/// prepared on (the action layer's conflict check compares against it).
#[derive(Debug, Clone, PartialEq)]
pub struct PerformRequest {
    pub id: u64,
    pub prepared: Prepared,
    pub state: ObjectState,
}

/// What [`Effect::WhatIf`] carries.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfRequest {
    /// Matches the answer to the What-if view that asked.
    pub id: u64,
    pub target: Target,
    pub pending: Pending,
}

/// The action a what-if simulates.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    /// Nothing: the controllers as things stand.
    Nothing,
    /// An action to prepare on the object as read now (the next rollout step).
    Action(Action),
    /// The action of the open confirm dialog, on the object it was prepared on.
    Prepared {
        prepared: Box<Prepared>,
        state: Box<ObjectState>,
    },
}

/// What a polled view lists (in the namespace watched, or all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Every object carrying the delete-protection label, with its verdict now; answered by
    /// `EffectResult::Protected`.
    Protected,
    /// The AdvancedCronJobs; answered by `EffectResult::CronJobs`.
    CronJobs,
    /// The BroadcastJobs and the pods they own; answered by `EffectResult::BroadcastJobs`.
    BroadcastJobs,
    /// The WorkloadSpreads and the pods they matched; answered by
    /// `EffectResult::WorkloadSpreads`.
    WorkloadSpreads,
    /// The UnitedDeployments and the workloads they control; answered by
    /// `EffectResult::UnitedDeployments`.
    UnitedDeployments,
    /// The image pre-download objects of one kind with the NodeImages; answered by
    /// `EffectResult::Images`.
    Images(super::images::ImageKind),
    /// The PersistentPodStates, the pods they concern and the nodes' labels; answered by
    /// `EffectResult::PersistentPodStates`.
    PersistentPodStates,
    /// The ResourceDistributions (cluster-scoped), the namespaces and the objects of each
    /// copied name; answered by `EffectResult::Distributions`.
    Distributions,
}
