//! Lists for the seed kinds' views (`:acj`, `:bcj`), answered as plain typed objects, and what
//! the other seed kinds' lists ([`super::spread`], [`super::seed_state`]) read the same way.

use k8s_openapi::{NamespaceResourceScope, api::core::v1::Pod};
use kube::{Api, Client, Resource, api::ListParams};
use serde::de::DeserializeOwned;

use crate::{
    api::{AdvancedCronJob, BroadcastJob, kinds},
    app::broadcastjobs::{JobPod, Listing},
    kube::errors::text as describe,
};

/// The objects of a namespaced kind in `namespace`, or in every namespace; an error names the
/// kind (`what`: `pods: forbidden …`).
pub(super) async fn list<K>(
    client: &Client,
    namespace: Option<&str>,
    what: &str,
) -> Result<Vec<K>, String>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    api.list(&ListParams::default())
        .await
        .map(|l| l.items)
        .map_err(|e| format!("{what}: {}", describe(&e)))
}

/// Where a pod runs and how it is, as the seed kinds' details show it: `spec.nodeName` (empty
/// while unscheduled), its phase (`Pending` until it has one) and whether it is Ready.
pub(super) fn placed(p: &Pod) -> (String, String, bool) {
    let status = p.status.as_ref();
    let node = p
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default();
    let phase = status
        .and_then(|s| s.phase.clone())
        .unwrap_or_else(|| "Pending".to_owned());
    (node, phase, crate::api::pod::is_ready(p))
}

/// `Effect::List(Listing::CronJobs)`: the AdvancedCronJobs in `namespace`, or in every namespace.
pub async fn cron_jobs(
    client: Client,
    namespace: Option<String>,
) -> Result<Vec<AdvancedCronJob>, String> {
    list(&client, namespace.as_deref(), "advancedcronjobs").await
}

/// `Effect::List(Listing::BroadcastJobs)`: the BroadcastJobs in `namespace` (or every namespace) and the
/// pods whose controller is one of them.
pub async fn broadcast_jobs(client: Client, namespace: Option<String>) -> Result<Listing, String> {
    let ns = namespace.as_deref();
    let jobs: Vec<BroadcastJob> = list(&client, ns, "broadcastjobs").await?;
    let pods: Vec<Pod> = list(&client, ns, "pods").await?;
    let pods = pods
        .into_iter()
        .filter_map(|p| {
            let owner = kinds::controller_of(
                p.metadata.owner_references.as_deref(),
                &kinds::BROADCAST_JOB,
            )?
            .name
            .clone();
            let (node, phase, ready) = placed(&p);
            Some(JobPod {
                namespace: p.metadata.namespace.clone().unwrap_or_default(),
                owner,
                name: p.metadata.name.clone().unwrap_or_default(),
                node,
                phase,
                ready,
            })
        })
        .collect();
    Ok(Listing { jobs, pods })
}
