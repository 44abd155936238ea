//! The watches behind the on-call views (`:pub`, `:sidecarset`, `:ppm`, `:crr`, triage): one per
//! kind, started after discovery when the cluster serves it (at v1alpha1, the only version
//! Kruise serves them at). A kind not served gets an empty, ready store. A refusal (403) goes to
//! the app as for any kind; the app says it in the view that needs the kind.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_client::watchlist::Lister;
use kube::{
    Api, Client, Resource,
    runtime::{WatchStreamExt, reflector::store::Writer, watcher},
};
use serde::de::DeserializeOwned;
use tokio::{sync::mpsc::UnboundedSender, task::JoinSet};

use super::{
    discovery::KruiseApis,
    watch::{StoreFeed, drive},
    watchset::{answers, tell_mode, watcher_config},
};
use crate::{
    api::kinds::{self, KindInfo},
    app::{
        msg::{Kind, Msg},
        stores::OncallWriters,
    },
    kruise::sidecarset::{SIDECARSET_NAME_LABEL, restore::REVISION_NAMESPACE},
};

/// The Kruise kind each on-call kind needs served (SidecarSet revisions: SidecarSets).
fn served_as(kind: Kind) -> Option<&'static KindInfo> {
    match kind {
        Kind::SidecarSetRevision => Some(&kinds::SIDECARSET),
        other if other.is_oncall() => Some(other.info()),
        _ => None,
    }
}

/// Whether the cluster serves `kind` at v1alpha1.
pub fn serves(apis: &KruiseApis, kind: Kind) -> bool {
    served_as(kind).is_some_and(|info| {
        apis.served.iter().any(|s| {
            s.kind == info.kind && s.resource.group == info.group && s.version == "v1alpha1"
        })
    })
}

/// Starts the on-call watches into `tasks` (the Rollout kinds' where `rollouts_served` says the
/// cluster serves them).
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    tasks: &mut JoinSet<()>,
    apis: &KruiseApis,
    client: &Client,
    lister: &Lister,
    namespace: &Option<String>,
    writers: OncallWriters,
    rollouts_served: (bool, bool),
    tx: &UnboundedSender<Msg>,
) {
    let OncallWriters {
        budgets,
        sidecarsets,
        probe_markers,
        node_probes,
        sidecar_revisions,
        restarts,
        rollouts,
        batch_releases,
    } = writers;
    super::watch_rollouts::spawn(
        tasks,
        rollouts_served,
        client,
        lister,
        namespace,
        (rollouts, batch_releases),
        tx,
    );
    start(
        tasks,
        apis,
        lister,
        Kind::PodUnavailableBudget,
        tx,
        in_scope(client, namespace),
        budgets,
        keep,
    );
    start(
        tasks,
        apis,
        lister,
        Kind::PodProbeMarker,
        tx,
        in_scope(client, namespace),
        probe_markers,
        keep,
    );
    start(
        tasks,
        apis,
        lister,
        Kind::ContainerRecreateRequest,
        tx,
        in_scope(client, namespace),
        restarts,
        keep,
    );
    // Cluster-scoped kinds.
    start(
        tasks,
        apis,
        lister,
        Kind::SidecarSet,
        tx,
        Api::all(client.clone()),
        sidecarsets,
        keep,
    );
    // Only the results are read: the probes' specs would double what is kept per node.
    start(
        tasks,
        apis,
        lister,
        Kind::NodePodProbe,
        tx,
        Api::all(client.clone()),
        node_probes,
        |p: &mut crate::api::NodePodProbe| p.spec = Default::default(),
    );
    // SidecarSet revisions live in kruise-system, labelled with their set; their recorded specs
    // are not needed to map a hash to a revision.
    let revisions: Api<ControllerRevision> = Api::namespaced(client.clone(), REVISION_NAMESPACE);
    if serves(apis, Kind::SidecarSetRevision) {
        let config = watcher_config().labels(SIDECARSET_NAME_LABEL);
        tasks.spawn(watch_api(
            Kind::SidecarSetRevision,
            lister.clone(),
            revisions,
            config,
            |r: &mut ControllerRevision| r.data = None,
            sidecar_revisions,
            tx.clone(),
        ));
    } else {
        let _ = tx.send(Msg::StoreReady(Kind::SidecarSetRevision));
    }
}

/// A namespaced kind in the console's namespace (every namespace when None).
fn in_scope<K>(client: &Client, namespace: &Option<String>) -> Api<K>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

fn keep<K>(_: &mut K) {}

#[allow(clippy::too_many_arguments)]
fn start<K>(
    tasks: &mut JoinSet<()>,
    apis: &KruiseApis,
    lister: &Lister,
    kind: Kind,
    tx: &UnboundedSender<Msg>,
    api: Api<K>,
    writer: Writer<K>,
    trim: fn(&mut K),
) where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    if serves(apis, kind) {
        tasks.spawn(watch_api(
            kind,
            lister.clone(),
            api,
            watcher_config(),
            trim,
            writer,
            tx.clone(),
        ));
    } else {
        // Not served: its store stays empty and is as complete as it will get.
        tracing::info!(?kind, "kind not served; not watching it");
        let _ = tx.send(Msg::StoreReady(kind));
    }
}

/// Watches `api` into `writer`, trimming each object with `trim` (and dropping managedFields).
pub(super) async fn watch_api<K>(
    kind: Kind,
    lister: Lister,
    api: Api<K>,
    config: watcher::Config,
    trim: fn(&mut K),
    writer: Writer<K>,
    tx: UnboundedSender<Msg>,
) where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let stream = lister
        .watcher(api.clone(), config, tell_mode(kind, &tx))
        .modify(move |obj: &mut K| {
            obj.meta_mut().managed_fields = None;
            trim(obj);
        });
    let probe = move || answers(api.clone());
    drive(kind, stream, StoreFeed::new(writer), probe, tx).await;
}
