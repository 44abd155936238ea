//! The watches of Kruise Rollout's kinds (`rollouts.rollouts.kruise.io` and
//! `batchreleases.rollouts.kruise.io`, read at v1beta1, the stored version whose shape
//! `api::rollout` models): started after discovery only when the cluster serves them. A cluster
//! without Kruise Rollout gets empty, ready stores and no error, so no view says anything about
//! a Rollout there.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use kube::{Api, Client, runtime::reflector::store::Writer};
use tokio::{sync::mpsc::UnboundedSender, task::JoinSet};

use super::{oncall_watch::watch_api, watchset::watcher_config};
use crate::{
    api::rollout::{BatchRelease, Rollout},
    app::msg::{Kind, Msg},
};

/// The group version the console reads Rollouts at.
pub const GROUP_VERSION: &str = "rollouts.kruise.io/v1beta1";

/// Which of the two kinds a resource list says are listable and watchable (Rollouts,
/// BatchReleases). Pure, for tests.
pub fn served_in(list: &APIResourceList) -> (bool, bool) {
    let ok = |plural: &str| {
        list.resources.iter().any(|r| {
            r.name == plural
                && ["list", "watch"]
                    .iter()
                    .all(|v| r.verbs.iter().any(|x| x == v))
        })
    };
    (ok("rollouts"), ok("batchreleases"))
}

/// Asks discovery whether `rollouts.kruise.io/v1beta1` is served; any error (the group is
/// missing: 404) means not served.
pub async fn served(client: &Client) -> (bool, bool) {
    match client.list_api_group_resources(GROUP_VERSION).await {
        Ok(list) => served_in(&list),
        Err(err) => {
            tracing::info!(%err, "rollouts.kruise.io/v1beta1 not served; not watching Rollouts");
            (false, false)
        }
    }
}

/// Starts the Rollout and BatchRelease watches in the console's namespace (every namespace when
/// None), or marks their stores ready and empty when not served.
pub fn spawn(
    tasks: &mut JoinSet<()>,
    served: (bool, bool),
    client: &Client,
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

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource;

    use super::*;

    fn resource(name: &str, verbs: &[&str]) -> APIResource {
        APIResource {
            name: name.into(),
            verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
            ..APIResource::default()
        }
    }

    #[test]
    fn only_listable_and_watchable_kinds_are_served() {
        let list = APIResourceList {
            group_version: GROUP_VERSION.into(),
            resources: vec![
                resource("rollouts", &["get", "list", "watch", "patch"]),
                resource("rollouts/status", &["get", "patch"]),
                resource("batchreleases", &["get"]),
            ],
        };
        assert_eq!(served_in(&list), (true, false));
        assert_eq!(served_in(&APIResourceList::default()), (false, false));
    }
}
