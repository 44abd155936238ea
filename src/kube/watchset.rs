//! The set of watches behind one `Stores`: pods at once, Kruise kinds after discovery.
//!
//! [`WatchSet::start`] creates fresh stores, spawns the pod watch and a discovery task that
//! retries until the server answers, sends `Msg::Discovered`, then starts one watch per served
//! Kruise workload kind (at its own version, or another served version mapped into the internal
//! model). Dropping the set aborts every task, which is how `:ns`/`:ctx` rebuild the watches.

use std::{
    fmt::Debug,
    sync::{Arc, OnceLock},
};

use kruise_client::watchlist::{ListMode, Lister};
use kube::{
    Api, Client, Resource,
    api::{DynamicObject, ListParams},
    discovery::ApiResource,
    runtime::{
        WatchStreamExt,
        reflector::{self, store::Writer},
        watcher,
    },
};
use serde::de::DeserializeOwned;
use tokio::{
    sync::mpsc::UnboundedSender,
    task::{JoinHandle, JoinSet},
};

use super::{
    connect::Connection,
    discovery::{KruiseApis, WatchedVersion, discover_kruise, list_namespaces},
    health::WatchBackoff,
    watch::{PodFeed, StoreFeed, drive, map_events},
};
use crate::{
    api::{CloneSet, DaemonSet, StatefulSet, cloneset, pod::WatchedPod},
    app::{
        Stores,
        msg::{Discovery, Kind, Msg},
        stores::{OncallStores, OncallWriters, PodWriter, pod_store},
    },
};

/// Objects per page of an initial list: the first page is on screen before the rest arrives.
pub const PAGE_SIZE: u32 = 500;

/// Running watches for one (client, namespace). Dropping it stops them.
pub struct WatchSet {
    stores: Stores,
    apis: Arc<OnceLock<KruiseApis>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for WatchSet {
    fn drop(&mut self) {
        self.stop();
    }
}

impl WatchSet {
    /// Starts watching. With `announce`, `Msg::StoresReplaced` with the new stores is sent before
    /// any message of the new watches (used by `:ns`/`:ctx`). Must run inside a tokio runtime.
    pub fn start(
        conn: &Connection,
        namespace: Option<String>,
        tx: UnboundedSender<Msg>,
        announce: bool,
    ) -> Self {
        let (clonesets, cs_writer) = reflector::store::<CloneSet>();
        let (statefulsets, sts_writer) = reflector::store::<StatefulSet>();
        let (daemonsets, ds_writer) = reflector::store::<DaemonSet>();
        let (pods, pod_writer) = pod_store();
        let (oncall, oncall_writers) = OncallStores::new();
        let stores = Stores {
            clonesets,
            statefulsets,
            daemonsets,
            pods,
            oncall,
        };
        if announce {
            // A closed channel means the console is leaving; the tasks below end on their own.
            let _ = tx.send(Msg::StoresReplaced(stores.clone()));
        }
        let apis = Arc::new(OnceLock::new());
        let client = conn.client.clone();
        // Every watch tries a streaming list first; what this server refused is remembered for
        // the process (a `:ns` switch does not ask again).
        let lister = Lister::new(&conn.cluster_url);
        // Pods deserialize straight into the compact projection, kept in the console's own store.
        let pod_task = tokio::spawn(watch_pods(
            client.clone(),
            lister.clone(),
            namespace.clone(),
            pod_writer,
            tx.clone(),
        ));
        let discovery = Discovery {
            context: conn.context.clone(),
            contexts: conn.contexts.clone(),
            cluster_url: conn.cluster_url.clone(),
            namespace: namespace.clone(),
            ..Discovery::default()
        };
        let kruise_task = tokio::spawn(discover_then_watch(
            client,
            lister,
            discovery,
            apis.clone(),
            KruiseWriters {
                clonesets: cs_writer,
                statefulsets: sts_writer,
                daemonsets: ds_writer,
                oncall: oncall_writers,
            },
            tx,
        ));
        Self {
            stores,
            apis,
            tasks: vec![pod_task, kruise_task],
        }
    }

    /// Stops every watch (the stores keep their last contents).
    pub fn stop(&self) {
        for task in &self.tasks {
            task.abort();
        }
    }

    /// Read handles of the stores these watches fill.
    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    /// What discovery found, once it has run.
    pub fn apis(&self) -> Option<&KruiseApis> {
        self.apis.get()
    }
}

const WORKLOAD_KINDS: [Kind; 3] = [Kind::CloneSet, Kind::StatefulSet, Kind::DaemonSet];

struct KruiseWriters {
    clonesets: Writer<CloneSet>,
    statefulsets: Writer<StatefulSet>,
    daemonsets: Writer<DaemonSet>,
    oncall: OncallWriters,
}

async fn discover_then_watch(
    client: Client,
    lister: Lister,
    mut discovery: Discovery,
    cell: Arc<OnceLock<KruiseApis>>,
    writers: KruiseWriters,
    tx: UnboundedSender<Msg>,
) {
    let mut backoff = WatchBackoff::default();
    let mut failed = false;
    let apis = loop {
        match discover_kruise(&client).await {
            Ok(apis) => break apis,
            Err(err) => {
                let delay = backoff.next().unwrap_or(super::health::BACKOFF_MAX);
                tracing::warn!(err = %super::errors::text(&err), ?delay, "discovery failed; retrying");
                if !std::mem::replace(&mut failed, true) {
                    // The Kruise watches cannot start yet: say so where their banner goes.
                    for kind in WORKLOAD_KINDS {
                        let error = format!(
                            "discovering the Kruise APIs failed: {}",
                            super::errors::text(&err)
                        );
                        if tx.send(Msg::WatchFailed { kind, error }).is_err() {
                            return;
                        }
                    }
                }
                tokio::time::sleep(delay).await;
            }
        }
    };
    if failed {
        for kind in WORKLOAD_KINDS {
            let _ = tx.send(Msg::WatchRecovered(kind));
        }
    }
    discovery.namespaces = list_namespaces(&client).await;
    discovery.kruise_kinds = apis.kinds();
    discovery.kruise_missing = apis.missing();
    if tx.send(Msg::Discovered(discovery.clone())).is_err() {
        return;
    }
    let mut tasks = JoinSet::new();
    tasks.spawn(tell_release(client.clone(), apis.clone(), tx.clone()));
    let ns = discovery.namespace;
    spawn_workload(
        &mut tasks,
        &apis,
        Kind::CloneSet,
        &client,
        &lister,
        &ns,
        writers.clonesets,
        &tx,
        cloneset::from_served_json,
    );
    spawn_workload(
        &mut tasks,
        &apis,
        Kind::StatefulSet,
        &client,
        &lister,
        &ns,
        writers.statefulsets,
        &tx,
        plain_json,
    );
    spawn_workload(
        &mut tasks,
        &apis,
        Kind::DaemonSet,
        &client,
        &lister,
        &ns,
        writers.daemonsets,
        &tx,
        crate::api::daemonset::from_served_json,
    );
    // Kruise Rollout is a separate install (its own group): asked for on its own.
    let rollouts = super::watch_rollouts::served(&client).await;
    super::oncall_watch::spawn(
        &mut tasks,
        &apis,
        &client,
        &lister,
        &ns,
        writers.oncall,
        rollouts,
        &tx,
    );
    // Keeping the OnceLock filled only now means `apis()` implies the watches are running.
    let _ = cell.set(apis);
    // The JoinSet aborts its tasks when this task is aborted (dropped).
    while tasks.join_next().await.is_some() {}
}

/// Tells the console which Kruise release the cluster runs; looks once more a little later when
/// neither a manager's image nor the embedded controllers told it (they may not lead yet).
async fn tell_release(client: Client, apis: KruiseApis, tx: UnboundedSender<Msg>) {
    use crate::kruise::release::ReleaseSource;
    let mut release = kruise_client::release::detect(&client, &apis).await;
    if tx.send(Msg::KruiseRelease(release.clone())).is_err() {
        return;
    }
    for _ in 0..3 {
        if matches!(
            release.source,
            ReleaseSource::ManagerImage | ReleaseSource::EmbeddedControllers
        ) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        let again = kruise_client::release::detect(&client, &apis).await;
        if again != release {
            release = again;
            if tx.send(Msg::KruiseRelease(release.clone())).is_err() {
                return;
            }
        }
    }
}

fn plain_json<K: DeserializeOwned>(
    _version: &str,
    value: serde_json::Value,
) -> Result<K, serde_json::Error> {
    serde_json::from_value(value)
}

#[allow(clippy::too_many_arguments)]
fn spawn_workload<K>(
    tasks: &mut JoinSet<()>,
    apis: &KruiseApis,
    kind: Kind,
    client: &Client,
    lister: &Lister,
    namespace: &Option<String>,
    writer: Writer<K>,
    tx: &UnboundedSender<Msg>,
    convert: fn(&str, serde_json::Value) -> Result<K, serde_json::Error>,
) where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    match apis.resource_for(kind) {
        Some(WatchedVersion::Own(_)) => {
            tasks.spawn(watch_typed(
                kind,
                client.clone(),
                lister.clone(),
                namespace.clone(),
                writer,
                tx.clone(),
            ));
        }
        Some(WatchedVersion::Other(ar)) => {
            tasks.spawn(watch_mapped(
                kind,
                client.clone(),
                lister.clone(),
                namespace.clone(),
                ar,
                writer,
                tx.clone(),
                convert,
            ));
        }
        None => {
            // Not served: its store stays empty and is as complete as it will get.
            tracing::info!(?kind, "kind not served; not watching it");
            let _ = tx.send(Msg::StoreReady(kind));
        }
    }
}

/// The paged watcher's config: what a watch falls back to when the server refuses streaming
/// lists (the [`Lister`] tries `streaming_lists()` of it first).
pub(super) fn watcher_config() -> watcher::Config {
    watcher::Config::default().page_size(PAGE_SIZE)
}

/// Tells the console how `kind`'s initial list is loading (`Msg::ListMode`).
pub(super) fn tell_mode(
    kind: Kind,
    tx: &UnboundedSender<Msg>,
) -> impl Fn(ListMode) + Send + Sync + use<> {
    let tx = tx.clone();
    move |mode| {
        match mode {
            ListMode::Streaming => tracing::debug!(?kind, "streaming list"),
            ListMode::Paged => {
                tracing::info!(?kind, "paged list: the server refuses streaming lists")
            }
        }
        // A closed channel means the console is leaving; the watch ends on its own.
        let _ = tx.send(Msg::ListMode { kind, mode });
    }
}

/// Whether a one-object list of the kind answers: the sign that a failing watch can resume.
pub(super) async fn answers<K>(api: Api<K>) -> bool
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let params = ListParams::default().limit(1);
    let list = api.list(&params);
    matches!(
        tokio::time::timeout(std::time::Duration::from_secs(2), list).await,
        Ok(Ok(_))
    )
}

/// Watches a kind at the version of its Rust type (pods, and Kruise kinds at their own version),
/// by streaming list where `lister`'s server allows it.
pub async fn watch_typed<K>(
    kind: Kind,
    client: Client,
    lister: Lister,
    namespace: Option<String>,
    writer: Writer<K>,
    tx: UnboundedSender<Msg>,
) where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    let api: Api<K> = match &namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let stream = lister
        .watcher(api.clone(), watcher_config(), tell_mode(kind, &tx))
        .modify(|obj: &mut K| {
            obj.meta_mut().managed_fields = None;
        });
    let probe = move || answers(api.clone());
    drive(kind, stream, StoreFeed::new(writer), probe, tx).await;
}

/// Watches pods into the console's own pod store: each pod is read from the JSON straight into
/// its compact form (`managedFields` and everything else not kept is skipped by the parser) and
/// stored as read.
pub async fn watch_pods(
    client: Client,
    lister: Lister,
    namespace: Option<String>,
    writer: PodWriter,
    tx: UnboundedSender<Msg>,
) {
    let api: Api<WatchedPod> = match &namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let stream = lister.watcher(api.clone(), watcher_config(), tell_mode(Kind::Pod, &tx));
    let probe = move || answers(api.clone());
    drive(Kind::Pod, stream, PodFeed::new(writer), probe, tx).await;
}

/// Watches a kind served only at another version, mapping each object into the Rust type.
#[allow(clippy::too_many_arguments)]
pub async fn watch_mapped<K>(
    kind: Kind,
    client: Client,
    lister: Lister,
    namespace: Option<String>,
    ar: ApiResource,
    writer: Writer<K>,
    tx: UnboundedSender<Msg>,
    convert: fn(&str, serde_json::Value) -> Result<K, serde_json::Error>,
) where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
{
    let api: Api<DynamicObject> = match &namespace {
        Some(ns) => Api::namespaced_with(client, ns, &ar),
        None => Api::all_with(client, &ar),
    };
    let version = ar.version.clone();
    let stream = map_events(
        lister.watcher(api.clone(), watcher_config(), tell_mode(kind, &tx)),
        move |mut obj: DynamicObject| {
            obj.metadata.managed_fields = None;
            let name = obj.metadata.name.clone().unwrap_or_default();
            let converted = serde_json::to_value(&obj).and_then(|value| convert(&version, value));
            match converted {
                Ok(converted) => Some(converted),
                Err(err) => {
                    tracing::warn!(?kind, %name, %err, "cannot read an object; skipping it");
                    None
                }
            }
        },
    );
    let probe = move || answers(api.clone());
    drive(kind, stream, StoreFeed::new(writer), probe, tx).await;
}

/// Stores can hold thousands of objects: debug output shows their sizes only.
impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stores")
            .field("clonesets", &self.clonesets.len())
            .field("statefulsets", &self.statefulsets.len())
            .field("daemonsets", &self.daemonsets.len())
            .field("pods", &self.pods.len())
            .finish()
    }
}
