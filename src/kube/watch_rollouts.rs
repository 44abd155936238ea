//! The watches of Kruise Rollout's kinds (`rollouts.rollouts.kruise.io` and
//! `batchreleases.rollouts.kruise.io`, read at v1beta1, the stored version whose shape
//! `api::rollout` models): started after discovery only when the cluster serves them. A cluster
//! without Kruise Rollout gets empty, ready stores and no error, so no view says anything about
//! a Rollout there.

use kruise_client::watchlist::Lister;
use kube::{Api, Client, runtime::reflector::store::Writer};
use tokio::{sync::mpsc::UnboundedSender, task::JoinSet};

use super::{discovery, oncall_watch::watch_api, watchset::watcher_config};
use crate::{
    api::rollout::{BatchRelease, Rollout},
    app::msg::{Kind, Msg},
};

/// Asks discovery whether `rollouts.kruise.io/v1beta1` is served: `(rollouts, batchreleases)`.
pub async fn served(client: &Client) -> (bool, bool) {
    let served = discovery::kruise_rollout_served(client).await;
    if served == (false, false) {
        tracing::info!("rollouts.kruise.io/v1beta1 not served; not watching Rollouts");
    }
    served
}

/// Starts the Rollout and BatchRelease watches in the console's namespace (every namespace when
/// None), or marks their stores ready and empty when not served.
pub fn spawn(
    tasks: &mut JoinSet<()>,
    served: (bool, bool),
    client: &Client,
    lister: &Lister,
    namespace: &Option<String>,
    writers: (Writer<Rollout>, Writer<BatchRelease>),
    tx: &UnboundedSender<Msg>,
) {
    let (rollouts, releases) = writers;
    if served.0 {
        let api: Api<Rollout> = match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        tasks.spawn(watch_api(
            Kind::Rollout,
            lister.clone(),
            api,
            watcher_config(),
            |_| {},
            rollouts,
            tx.clone(),
        ));
    } else {
        let _ = tx.send(Msg::StoreReady(Kind::Rollout));
    }
    if served.1 {
        let api: Api<BatchRelease> = match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        tasks.spawn(watch_api(
            Kind::BatchRelease,
            lister.clone(),
            api,
            watcher_config(),
            |_| {},
            releases,
            tx.clone(),
        ));
    } else {
        let _ = tx.send(Msg::StoreReady(Kind::BatchRelease));
    }
}
