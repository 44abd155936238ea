//! Is a real kruise-manager already reconciling this cluster? Two controllers fighting over the
//! same CloneSets would flap pods, so `kruise-tui controllers` refuses (unless `--force`) when it
//! finds one, and says how it found it.

use jiff::Timestamp;
use k8s_openapi::api::{
    admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    apps::v1::Deployment,
    coordination::v1::Lease,
};
use kube::{Api, Client};

/// The namespace upstream installs into.
pub const KRUISE_NAMESPACE: &str = "kruise-system";
/// Upstream's manager Deployment.
pub const MANAGER_DEPLOYMENT: &str = "kruise-controller-manager";
/// Upstream's leader-election Lease (`--leader-election-id`).
pub const MANAGER_LEASE: &str = "kruise-manager";
/// Upstream's webhook configurations.
pub const MUTATING_WEBHOOK: &str = "kruise-mutating-webhook-configuration";
pub const VALIDATING_WEBHOOK: &str = "kruise-validating-webhook-configuration";

/// Every sign of a running kruise-manager, one sentence each (empty: none found).
pub async fn kruise_manager_signs(client: &Client) -> Vec<String> {
    let mut signs = Vec::new();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), KRUISE_NAMESPACE);
    if let Ok(Some(d)) = deployments.get_opt(MANAGER_DEPLOYMENT).await {
        let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        let available = d
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        if replicas > 0 {
            signs.push(format!(
                "the Deployment {KRUISE_NAMESPACE}/{MANAGER_DEPLOYMENT} exists ({available}/{replicas} available)"
            ));
        }
    }
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    if let Ok(Some(_)) = mutating.get_opt(MUTATING_WEBHOOK).await {
        signs.push(format!(
            "the MutatingWebhookConfiguration {MUTATING_WEBHOOK} is installed"
        ));
    }
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    if let Ok(Some(_)) = validating.get_opt(VALIDATING_WEBHOOK).await {
        signs.push(format!(
            "the ValidatingWebhookConfiguration {VALIDATING_WEBHOOK} is installed"
        ));
    }
    let leases: Api<Lease> = Api::namespaced(client.clone(), KRUISE_NAMESPACE);
    if let Ok(Some(lease)) = leases.get_opt(MANAGER_LEASE).await
        && let Some(holder) = super::lease::fresh_holder(&lease, Timestamp::now())
    {
        signs.push(format!(
            "the Lease {KRUISE_NAMESPACE}/{MANAGER_LEASE} was renewed recently by {holder}"
        ));
    }
    signs
}
