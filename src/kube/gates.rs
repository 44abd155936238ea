//! The Kruise feature gates the cluster's controllers decide with, so predictions use the same:
//! the embedded controllers publish theirs on their leader Lease; a kruise-manager's are its
//! `--feature-gates` argument. Upstream's defaults when neither can be read.

use k8s_openapi::api::{apps::v1::Deployment, coordination::v1::Lease};
use kube::{Api, Client};

use super::{detect, lease};
use crate::kruise::{FeatureGates, release::ClusterRelease};

/// The gates, and where they came from (for notes like "predicted with the gates of …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterGates {
    pub gates: FeatureGates,
    pub source: String,
    /// The Kruise release whose rules the cluster's controllers follow (as far as it can be
    /// told: `kruise_client::release::detect`).
    pub release: ClusterRelease,
}

/// Reads the gates and the release of whichever controllers run here.
pub async fn cluster_gates(client: &Client) -> ClusterGates {
    let (gates, source) = feature_gates(client).await;
    let apis = crate::kube::discovery::discover_kruise(client)
        .await
        .unwrap_or_default();
    ClusterGates {
        gates,
        source,
        release: kruise_client::release::detect(client, &apis).await,
    }
}

/// The gates alone, and where they came from (for callers that do not predict: no discovery,
/// no release detection).
pub async fn feature_gates(client: &Client) -> (FeatureGates, String) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), lease::NAMESPACE);
    if let Ok(Some(l)) = leases.get_opt(lease::NAME).await
        && lease::fresh_holder(&l, jiff::Timestamp::now()).is_some()
        && let Some(spec) = l
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(lease::GATES_ANNOTATION))
        && let Ok(gates) = FeatureGates::parse(spec)
    {
        return (gates, "the embedded controllers".to_owned());
    }
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), detect::KRUISE_NAMESPACE);
    if let Ok(Some(d)) = deployments.get_opt(detect::MANAGER_DEPLOYMENT).await
        && let Some(gates) = manager_gates(&d)
    {
        return (
            gates,
            format!(
                "{}/{}'s --feature-gates",
                detect::KRUISE_NAMESPACE,
                detect::MANAGER_DEPLOYMENT
            ),
        );
    }
    (FeatureGates::new(), "upstream's defaults".to_owned())
}

/// The `--feature-gates` of a kruise-manager Deployment's containers.
pub fn manager_gates(d: &Deployment) -> Option<FeatureGates> {
    let containers = &d.spec.as_ref()?.template.spec.as_ref()?.containers;
    let mut args = containers
        .iter()
        .flat_map(|c| c.args.iter().flatten().chain(c.command.iter().flatten()));
    let mut spec = None;
    while let Some(arg) = args.next() {
        if let Some(v) = arg.strip_prefix("--feature-gates=") {
            spec = Some(v.to_owned());
        } else if arg == "--feature-gates" {
            spec = args.next().cloned();
        }
    }
    // Unknown gates (upstream has more than the port reads) are left out, not an error.
    let spec = spec?;
    let known: Vec<&str> = spec
        .split(',')
        .filter(|p| {
            let name = p.split_once('=').map_or(*p, |(n, _)| n).trim();
            FeatureGates::is_known(name)
        })
        .collect();
    FeatureGates::parse(&known.join(",")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_managers_feature_gates_argument_is_read_and_unknown_gates_skipped() {
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "spec": {"selector": {}, "template": {"spec": {"containers": [{
                "name": "manager",
                "args": ["--enable-leader-election",
                         "--feature-gates=CloneSetPartitionRollback=true,SomethingNew=true"],
            }]}}},
        }))
        .expect("deployment");
        let gates = manager_gates(&d).expect("gates");
        assert!(gates.enabled("CloneSetPartitionRollback"));
        assert_eq!(gates.to_spec(), "CloneSetPartitionRollback=true");
    }
}
