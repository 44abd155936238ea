//! Lists for the seed kinds' views (`:acj`, `:bcj`), answered as plain typed objects.

use kube::{Api, Client, api::ListParams};

use crate::{api::AdvancedCronJob, kube::errors::text as describe};

/// `Effect::FetchCronJobs`: the AdvancedCronJobs in `namespace`, or in every namespace.
pub async fn cron_jobs(
    client: Client,
    namespace: Option<String>,
) -> Result<Vec<AdvancedCronJob>, String> {
    let api: Api<AdvancedCronJob> = match &namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    api.list(&ListParams::default())
        .await
        .map(|l| l.items)
        .map_err(|e| format!("advancedcronjobs: {}", describe(&e)))
}

/// `Effect::FetchBroadcastJobs`: the BroadcastJobs in `namespace` (or every namespace) and the
/// pods whose controller is one of them.
pub async fn broadcast_jobs(
    client: Client,
    namespace: Option<String>,
) -> Result<crate::app::broadcastjobs::Listing, String> {
    use crate::{api::BroadcastJob, app::broadcastjobs::JobPod};
    use k8s_openapi::api::core::v1::Pod;
    let (jobs, pods): (Api<BroadcastJob>, Api<Pod>) = match &namespace {
        Some(ns) => (
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client, ns),
        ),
        None => (Api::all(client.clone()), Api::all(client)),
    };
    let jobs = jobs
        .list(&ListParams::default())
        .await
        .map_err(|e| format!("broadcastjobs: {}", describe(&e)))?
        .items;
    let pods = pods
        .list(&ListParams::default())
        .await
        .map_err(|e| format!("pods: {}", describe(&e)))?
        .items;
    let pods = pods
        .into_iter()
        .filter_map(|p| {
            let owner = p
                .metadata
                .owner_references
                .as_ref()?
                .iter()
                .find(|o| o.kind == "BroadcastJob" && o.controller == Some(true))?
                .name
                .clone();
            let status = p.status.as_ref();
            Some(JobPod {
                namespace: p.metadata.namespace.clone().unwrap_or_default(),
                owner,
                name: p.metadata.name.clone().unwrap_or_default(),
                node: p
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.clone())
                    .unwrap_or_default(),
                phase: status
                    .and_then(|s| s.phase.clone())
                    .unwrap_or_else(|| "Pending".to_owned()),
                ready: status
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True")),
            })
        })
        .collect();
    Ok(crate::app::broadcastjobs::Listing { jobs, pods })
}
