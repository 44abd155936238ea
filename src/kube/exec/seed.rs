//! Lists for the seed kinds' views (`:acj`), answered as plain typed objects.

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
