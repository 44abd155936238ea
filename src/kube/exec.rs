//! The effect executor: runs the IO that `update` asks for and answers with `Msg::EffectDone`.
//!
//! It owns the connection, the running [`WatchSet`] and the action layer's [`Actor`] (journal in
//! the state dir, `--readonly` from the flags, context and cluster of the connection). Fetches
//! and actions run as their own tasks so a slow server never delays a `:ns` switch; `Switch`
//! rebuilds the watches in place (new client and actor for a new context, new stores announced
//! with `Msg::StoresReplaced`).

mod act;
mod images;
mod logs;
mod recovery;
mod rollout;
mod seed;
mod seed_state;
mod spread;
mod whatif;

use std::{collections::HashMap, future::Future, sync::Arc};

use anyhow::Result;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Pod};
use kube::{
    Api, Client,
    api::{DynamicObject, ListParams},
    discovery::ApiResource,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::{
    connect::{Connection, connect},
    discovery::{KruiseApis, WatchedVersion},
    errors::Plain,
    watchset::WatchSet,
};
pub use crate::actions::preview::live_input;
pub use act::done_text;

use super::act::Actor;
use crate::{
    api::{CloneSet, DaemonSet, StatefulSet},
    app::{
        Effect, Listing, Stores,
        msg::{EffectResult, EventRow, Kind, Msg, ObjectRef},
    },
    cli::KubeArgs,
    config::Paths,
    journal::Journal,
};

/// Runs effects against one cluster connection at a time.
pub struct Executor {
    args: KubeArgs,
    conn: Connection,
    namespace: Option<String>,
    watches: WatchSet,
    tx: UnboundedSender<Msg>,
    actor: Arc<Actor>,
    journal: Option<Journal>,
    /// The cluster's feature gates for predictions (read again after a minute).
    gates: Arc<rollout::Gates>,
    /// Running log streams by id (`StopLogs` aborts one).
    logs: HashMap<u64, tokio::task::AbortHandle>,
    /// Running restarts by id (`StopRestart` stops one after the pod in flight).
    restarts: HashMap<u64, tokio_util::sync::CancellationToken>,
}

fn actor_for(args: &KubeArgs, conn: &Connection, journal: Option<Journal>) -> Arc<Actor> {
    Actor::new(
        conn.client.clone(),
        args.readonly,
        conn.context.clone(),
        conn.cluster_url.clone(),
        journal,
    )
}

impl Executor {
    /// Connects with the kubeconfig flags and starts the watches for `-n`/`-A` (default: the
    /// context's namespace). Must run inside a tokio runtime.
    pub async fn start(args: KubeArgs, tx: UnboundedSender<Msg>) -> Result<Self> {
        let conn = connect(&args.source(), None).await?;
        let namespace = if args.all_namespaces {
            None
        } else {
            Some(
                args.namespace
                    .clone()
                    .unwrap_or_else(|| conn.default_namespace.clone()),
            )
        };
        Ok(Self::with_connection(args, conn, namespace, tx))
    }

    /// Starts the watches on an existing connection.
    pub fn with_connection(
        args: KubeArgs,
        conn: Connection,
        namespace: Option<String>,
        tx: UnboundedSender<Msg>,
    ) -> Self {
        let watches = WatchSet::start(&conn, namespace.clone(), tx.clone(), false);
        let journal = match Paths::resolve() {
            Ok(paths) => Some(Journal::new(paths.journal_file)),
            Err(err) => {
                tracing::warn!("no action journal: {err:#}");
                None
            }
        };
        let actor = actor_for(&args, &conn, journal.clone());
        Self {
            args,
            conn,
            namespace,
            watches,
            tx,
            actor,
            journal,
            gates: Arc::default(),
            logs: HashMap::new(),
            restarts: HashMap::new(),
        }
    }

    /// Journals actions to `journal` instead of the state dir's (tests).
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.actor = actor_for(&self.args, &self.conn, Some(journal.clone()));
        self.journal = Some(journal);
        self
    }

    /// The action layer this executor sends through.
    pub fn actor(&self) -> Arc<Actor> {
        self.actor.clone()
    }

    /// The stores the current watches fill.
    pub fn stores(&self) -> Stores {
        self.watches.stores().clone()
    }

    /// The namespace watched (None: all namespaces).
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The current connection.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Executes effects until the sender side is dropped.
    pub async fn run(mut self, mut effects: UnboundedReceiver<Effect>) {
        while let Some(effect) = effects.recv().await {
            self.execute(effect).await;
        }
    }

    /// Runs `result` in a task of its own and sends what it yields to `update`.
    fn answer(&self, result: impl Future<Output = EffectResult> + Send + 'static) {
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(Msg::EffectDone(result.await));
        });
    }

    /// Executes one effect (fetches are spawned; a switch completes before this returns).
    pub async fn execute(&mut self, effect: Effect) {
        let client = self.conn.client.clone();
        let (actor, gates) = (self.actor.clone(), self.gates.clone());
        let namespace = self.namespace.clone();
        match effect {
            Effect::FetchYaml(target) => {
                let ar = resource_of(target.kind, self.watches.apis());
                let ns = self.target_namespace(&target);
                self.answer(async move {
                    match fetch_yaml(client, &ar, &ns, &target.name).await {
                        Ok(yaml) => EffectResult::Yaml { target, yaml },
                        Err(err) => failed(format!("fetch YAML of {}", describe(&target)), err),
                    }
                });
            }
            Effect::FetchEvents(target) => {
                let ns = self.target_namespace(&target);
                self.answer(async move {
                    match fetch_events(client, &ns, &target).await {
                        Ok(events) => EffectResult::Events { target, events },
                        Err(err) => failed(format!("fetch events of {}", describe(&target)), err),
                    }
                });
            }
            Effect::Switch { context, namespace } => {
                let result = match self.switch(context.as_deref(), namespace).await {
                    Ok(()) => EffectResult::Switched,
                    Err(err) => failed(
                        match &context {
                            Some(name) => format!("switch to context {name}"),
                            None => "switch namespace".to_owned(),
                        },
                        err,
                    ),
                };
                let _ = self.tx.send(Msg::EffectDone(result));
            }
            Effect::Prepare(req) => {
                let req = *req;
                self.answer(act::prepare(
                    actor, client, gates, req.id, req.target, req.action,
                ));
            }
            Effect::Perform(req) => {
                let req = *req;
                self.answer(act::perform(actor, req.id, req.prepared, req.state));
            }
            Effect::PlanRollout {
                workload,
                partition,
            } => self.answer(rollout::plan_rollout(
                actor, client, gates, workload, partition,
            )),
            Effect::FetchRolloutEvents { workload, pods } => {
                let ns = self.target_namespace(&workload);
                self.answer(rollout::rollout_events(client, ns, workload, pods));
            }
            Effect::FetchRevisions { id, target } => self.answer(act::revisions(actor, id, target)),
            Effect::Restart(run) => {
                let stop = tokio_util::sync::CancellationToken::new();
                self.restarts.retain(|_, s| !s.is_cancelled());
                self.restarts.insert(run.id, stop.clone());
                tokio::spawn(recovery::restart(
                    actor,
                    client,
                    self.tx.clone(),
                    *run,
                    stop,
                ));
            }
            Effect::StopRestart(id) => {
                if let Some(stop) = self.restarts.remove(&id) {
                    stop.cancel();
                }
            }
            Effect::List(what) => self.answer(list(client, namespace, what)),
            Effect::FetchUsage {
                id,
                check,
                namespaces,
            } => self.answer(super::usage::fetch(
                client, namespace, namespaces, id, check,
            )),
            Effect::ReadJournal => self.answer(act::read_journal(self.journal.clone())),
            Effect::ExportReport { since, until } => {
                let args = self.args.clone();
                let journal = self.journal.clone();
                self.answer(async move {
                    EffectResult::Exported(
                        super::report::export(args, journal, since, until)
                            .await
                            .map_err(|e| format!("{e:#}")),
                    )
                });
            }
            Effect::RecordTriage(notes) => {
                if let Some(journal) = &self.journal {
                    let log = crate::journal::triage_log::TriageLog::beside(journal.path());
                    if let Err(err) = log.append(&notes) {
                        tracing::warn!("cannot write the triage record: {err:#}");
                    }
                }
            }
            Effect::TriageAcross { contexts } => {
                let mut base = self.args.clone();
                base.context = None;
                base.namespace = None;
                base.all_namespaces = true;
                self.answer(async move {
                    let config = match crate::config::Paths::resolve() {
                        Ok(paths) => crate::config::load(None, None, &paths),
                        Err(_) => crate::config::LoadedConfig::default(),
                    };
                    EffectResult::TriagedAcross(
                        super::triage_all::triage_contexts(
                            base,
                            contexts,
                            config,
                            super::triage_all::DEFAULT_TIMEOUT,
                        )
                        .await,
                    )
                });
            }
            Effect::WhatIf(req) => self.answer(whatif::whatif(actor, client, gates, *req)),
            Effect::StreamLogs(req) => {
                self.logs.retain(|_, task| !task.is_finished());
                let id = req.id;
                let task = tokio::spawn(logs::stream(client, req, self.tx.clone()));
                self.logs.insert(id, task.abort_handle());
            }
            Effect::StopLogs(id) => {
                if let Some(task) = self.logs.remove(&id) {
                    task.abort();
                }
            }
            // The runtime suspends the terminal for a shell; an executor alone has none.
            Effect::Shell(_) => {
                let _ = self
                    .tx
                    .send(Msg::Shell(crate::app::shell::ShellOutcome::Failed(
                        "a shell needs the console's terminal".to_owned(),
                    )));
            }
            // Leaving is the runtime's business; nothing to run here.
            Effect::Quit => {}
        }
    }

    /// Rebuilds the watches for another context (reconnecting) and/or namespace.
    ///
    /// `namespace` is taken as given: None watches all namespaces. On a failed reconnect the
    /// current watches keep running.
    async fn switch(&mut self, context: Option<&str>, namespace: Option<String>) -> Result<()> {
        if let Some(name) = context
            && self.conn.context.as_deref() != Some(name)
        {
            self.conn = connect(&self.args.source(), Some(name)).await?;
            self.actor = actor_for(&self.args, &self.conn, self.journal.clone());
            self.gates = Arc::default();
        }
        self.namespace = namespace;
        // Stop the old watches before the new ones announce their stores.
        self.watches.stop();
        self.watches = WatchSet::start(&self.conn, self.namespace.clone(), self.tx.clone(), true);
        Ok(())
    }

    fn target_namespace(&self, target: &ObjectRef) -> String {
        if matches!(target.kind, Kind::SidecarSet | Kind::NodePodProbe) {
            return String::new();
        }
        target
            .namespace
            .clone()
            .or_else(|| self.namespace.clone())
            .unwrap_or_else(|| self.conn.default_namespace.clone())
    }
}

fn describe(target: &ObjectRef) -> String {
    match &target.namespace {
        Some(ns) => format!("{:?} {ns}/{}", target.kind, target.name),
        None => format!("{:?} {}", target.kind, target.name),
    }
}

/// An effect's failure for the status line: the error and its causes, API errors by their
/// Status message (see [`errors`](super::errors)).
fn failed(what: String, err: anyhow::Error) -> EffectResult {
    EffectResult::Failed {
        what,
        error: format!("{err:#}"),
    }
}

/// The resource to GET for a kind: the version the watches read (from discovery), else the
/// internal model's own version.
pub fn resource_of(kind: Kind, apis: Option<&KruiseApis>) -> ApiResource {
    if let Some(WatchedVersion::Own(ar) | WatchedVersion::Other(ar)) =
        apis.and_then(|apis| apis.resource_for(kind))
    {
        return ar;
    }
    match kind {
        Kind::CloneSet => ApiResource::erase::<CloneSet>(&()),
        Kind::StatefulSet => ApiResource::erase::<StatefulSet>(&()),
        Kind::DaemonSet => ApiResource::erase::<DaemonSet>(&()),
        Kind::Pod => ApiResource::erase::<Pod>(&()),
        Kind::PodUnavailableBudget => ApiResource::erase::<crate::api::PodUnavailableBudget>(&()),
        Kind::SidecarSet => ApiResource::erase::<crate::api::SidecarSet>(&()),
        Kind::PodProbeMarker => ApiResource::erase::<crate::api::PodProbeMarker>(&()),
        Kind::NodePodProbe => ApiResource::erase::<crate::api::NodePodProbe>(&()),
        Kind::ContainerRecreateRequest => {
            ApiResource::erase::<crate::api::ContainerRecreateRequest>(&())
        }
        Kind::SidecarSetRevision => {
            ApiResource::erase::<k8s_openapi::api::apps::v1::ControllerRevision>(&())
        }
        Kind::Rollout => ApiResource::erase::<crate::api::rollout::Rollout>(&()),
        Kind::BatchRelease => ApiResource::erase::<crate::api::rollout::BatchRelease>(&()),
    }
}

/// GETs the object and renders it as YAML, without `metadata.managedFields`.
pub async fn fetch_yaml(client: Client, ar: &ApiResource, ns: &str, name: &str) -> Result<String> {
    // Cluster-scoped kinds (SidecarSet, NodePodProbe) are read without a namespace.
    let api: Api<DynamicObject> = if ns.is_empty() {
        Api::all_with(client, ar)
    } else {
        Api::namespaced_with(client, ns, ar)
    };
    let mut obj = api.get(name).await.plain()?;
    obj.metadata.managed_fields = None;
    Ok(serde_saphyr::to_string(&obj)?)
}

/// Lists the core/v1 events involving the object, oldest first (newest last).
pub async fn fetch_events(client: Client, ns: &str, target: &ObjectRef) -> Result<Vec<EventRow>> {
    let api: Api<CoreEvent> = if ns.is_empty() {
        Api::all(client)
    } else {
        Api::namespaced(client, ns)
    };
    let kind = target.kind.info().kind;
    let fields = format!(
        "involvedObject.name={},involvedObject.namespace={ns},involvedObject.kind={kind}",
        target.name
    );
    let list = api
        .list(&ListParams::default().fields(&fields))
        .await
        .plain()?;
    let kruise = !matches!(target.kind, Kind::Pod | Kind::SidecarSetRevision);
    let mut events: Vec<CoreEvent> = list
        .items
        .into_iter()
        // Advanced StatefulSet/DaemonSet share their kind name with apps/v1; keep Kruise's.
        .filter(|ev| {
            !kruise
                || ev
                    .involved_object
                    .api_version
                    .as_deref()
                    .is_none_or(|v| v.starts_with("apps.kruise.io/"))
        })
        .collect();
    events.sort_by_key(last_seen);
    Ok(events.into_iter().map(event_row).collect())
}

pub(crate) fn last_seen(ev: &CoreEvent) -> Option<jiff::Timestamp> {
    ev.last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| ev.event_time.as_ref().map(|t| t.0))
        .or_else(|| ev.first_timestamp.as_ref().map(|t| t.0))
        .or_else(|| ev.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

pub(super) fn event_row(ev: CoreEvent) -> EventRow {
    let last_seen = last_seen(&ev);
    let source = ev
        .source
        .as_ref()
        .and_then(|s| s.component.clone())
        .or_else(|| ev.reporting_component.clone())
        .unwrap_or_default();
    EventRow {
        type_: ev.type_.unwrap_or_default(),
        reason: ev.reason.unwrap_or_default(),
        message: ev.message.unwrap_or_default(),
        count: ev
            .count
            .or_else(|| ev.series.as_ref().and_then(|s| s.count))
            .unwrap_or(1),
        last_seen,
        source,
    }
}

/// `Effect::List`: what a polled view shows, read now.
async fn list(client: Client, namespace: Option<String>, what: Listing) -> EffectResult {
    match what {
        Listing::Protected => EffectResult::Protected(recovery::protected(client, namespace).await),
        Listing::CronJobs => EffectResult::CronJobs(seed::cron_jobs(client, namespace).await),
        Listing::BroadcastJobs => {
            EffectResult::BroadcastJobs(seed::broadcast_jobs(client, namespace).await)
        }
        Listing::WorkloadSpreads => {
            EffectResult::WorkloadSpreads(spread::workload_spreads(client, namespace).await)
        }
        Listing::UnitedDeployments => {
            EffectResult::UnitedDeployments(spread::united_deployments(client, namespace).await)
        }
        Listing::Images(kind) => EffectResult::Images {
            kind,
            result: images::list(client, namespace, kind).await,
        },
        Listing::PersistentPodStates => EffectResult::PersistentPodStates(
            seed_state::persistent_pod_states(client, namespace).await,
        ),
        Listing::Distributions => {
            EffectResult::Distributions(seed_state::distributions(client).await)
        }
    }
}
