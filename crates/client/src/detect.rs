//! Is a real kruise-manager already reconciling this cluster? Two controllers fighting over the
//! same CloneSets would flap pods, so `kruise-tui controllers` refuses (unless `--force`) when it
//! finds one, and says how it found it.

use jiff::Timestamp;
use k8s_openapi::api::{
    admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    apps::v1::Deployment,
    coordination::v1::Lease,
};
use kube::{Api, Client, api::ListParams};

/// The namespace upstream installs into.
pub const KRUISE_NAMESPACE: &str = "kruise-system";
/// Upstream's manager Deployment.
pub const MANAGER_DEPLOYMENT: &str = "kruise-controller-manager";
/// Upstream's leader-election Lease (`--leader-election-id`).
pub const MANAGER_LEASE: &str = "kruise-manager";
/// Upstream's webhook configurations.
pub const MUTATING_WEBHOOK: &str = "kruise-mutating-webhook-configuration";
pub const VALIDATING_WEBHOOK: &str = "kruise-validating-webhook-configuration";

/// Where a manager runs and what it registers: the names its signs are looked up by.
struct Install {
    namespace: &'static str,
    deployment: &'static str,
    lease: &'static str,
    mutating: &'static str,
    validating: &'static str,
}

/// Every sign of a running kruise-manager, one sentence each (empty: none found).
pub async fn kruise_manager_signs(client: &Client) -> Vec<String> {
    signs(
        client,
        &Install {
            namespace: KRUISE_NAMESPACE,
            deployment: MANAGER_DEPLOYMENT,
            lease: MANAGER_LEASE,
            mutating: MUTATING_WEBHOOK,
            validating: VALIDATING_WEBHOOK,
        },
    )
    .await
}

/// The signs of one install: its manager Deployment (scaled above 0), its webhook
/// configurations, a recently renewed leader Lease.
async fn signs(client: &Client, at: &Install) -> Vec<String> {
    let Install {
        namespace,
        deployment,
        lease,
        mutating,
        validating,
    } = at;
    let mut signs = Vec::new();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    if let Ok(Some(d)) = deployments.get_opt(deployment).await {
        let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        let available = d
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        if replicas > 0 {
            signs.push(format!(
                "the Deployment {namespace}/{deployment} exists ({available}/{replicas} available)"
            ));
        }
    }
    let mutating_api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    if let Ok(Some(_)) = mutating_api.get_opt(mutating).await {
        signs.push(format!(
            "the MutatingWebhookConfiguration {mutating} is installed"
        ));
    }
    let validating_api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    if let Ok(Some(_)) = validating_api.get_opt(validating).await {
        signs.push(format!(
            "the ValidatingWebhookConfiguration {validating} is installed"
        ));
    }
    let leases: Api<Lease> = Api::namespaced(client.clone(), namespace);
    if let Ok(Some(l)) = leases.get_opt(lease).await
        && let Some(holder) = super::lease::fresh_holder(&l, Timestamp::now())
    {
        signs.push(format!(
            "the Lease {namespace}/{lease} was renewed recently by {holder}"
        ));
    }
    signs
}

/// The namespace kruise-rollout installs into (`config/default`: `namespace: kruise-rollout`).
pub const ROLLOUT_NAMESPACE: &str = "kruise-rollout";
/// kruise-rollout's manager Deployment (`namePrefix: kruise-rollout-` + `controller-manager`).
pub const ROLLOUT_MANAGER_DEPLOYMENT: &str = "kruise-rollout-controller-manager";
/// kruise-rollout's leader-election Lease (`main.go`: `LeaderElectionID`).
pub const ROLLOUT_MANAGER_LEASE: &str = "71ddec2c.kruise.io";
/// kruise-rollout's webhook configurations.
pub const ROLLOUT_MUTATING_WEBHOOK: &str = "kruise-rollout-mutating-webhook-configuration";
pub const ROLLOUT_VALIDATING_WEBHOOK: &str = "kruise-rollout-validating-webhook-configuration";

/// Every sign of a running kruise-rollout manager (openkruise/rollouts), one sentence each
/// (empty: none found).
pub async fn kruise_rollout_signs(client: &Client) -> Vec<String> {
    signs(
        client,
        &Install {
            namespace: ROLLOUT_NAMESPACE,
            deployment: ROLLOUT_MANAGER_DEPLOYMENT,
            lease: ROLLOUT_MANAGER_LEASE,
            mutating: ROLLOUT_MUTATING_WEBHOOK,
            validating: ROLLOUT_VALIDATING_WEBHOOK,
        },
    )
    .await
}

/// Whether kruise-rollout's workload webhook (its MutatingWebhookConfiguration) is registered:
/// without it nothing intercepts a template change for a Rollout.
pub async fn kruise_rollout_webhook(client: &Client) -> bool {
    let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    api.get_opt(ROLLOUT_MUTATING_WEBHOOK)
        .await
        .is_ok_and(|found| found.is_some())
}

/// What the controllers' banner says when the Kruise Rollout CRDs are served but kruise-rollout's
/// workload webhook is not registered: nothing intercepts a template change, so a workload a
/// Rollout names rolls out without steps (`embedded`: kruise-tui's server, which intercepts
/// in-process when its webhooks are on).
pub fn rollout_webhook_notice(registered: bool, embedded: bool) -> Option<String> {
    if registered {
        return None;
    }
    let embedded = if embedded {
        " (kruise-tui's demo-server intercepts in-process, unless started with \
         --no-kruise-webhooks)"
    } else {
        ""
    };
    Some(format!(
        "controllers: no Kruise Rollout workload webhook is registered \
         ({ROLLOUT_MUTATING_WEBHOOK}): a template change of a workload a Rollout names is not \
         intercepted and rolls out without steps{embedded}"
    ))
}

/// What a look for Kruise's webhook configurations of one kind found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    /// These `kruise-*` configurations are registered.
    Found(Vec<String>),
    /// None (or the server does not serve the kind at all: 404).
    Absent,
    /// The list failed (no rights, say): why.
    Unknown(String),
}

/// Kruise's webhook configurations on the cluster, and whether it is kruise-tui's embedded
/// API server (whose admission chain runs Kruise's webhooks in-process, without them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhooks {
    pub mutating: Registered,
    pub validating: Registered,
    pub embedded: bool,
}

/// Lists the `kruise-*` Mutating- and ValidatingWebhookConfigurations.
pub async fn kruise_webhooks(client: &Client) -> Webhooks {
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let embedded = client
        .apiserver_version()
        .await
        .is_ok_and(|v| v.git_version.ends_with("+kruise-tui"));
    Webhooks {
        mutating: registered(mutating.list(&ListParams::default()).await),
        validating: registered(validating.list(&ListParams::default()).await),
        embedded,
    }
}

fn registered<K>(listed: Result<kube::api::ObjectList<K>, kube::Error>) -> Registered
where
    K: kube::Resource + Clone,
{
    match listed {
        Ok(list) => {
            let names: Vec<String> = list
                .items
                .iter()
                .filter_map(|o| o.meta().name.clone())
                // kruise-rollout's own (`kruise-rollout-*`) guard Rollouts, not Kruise's kinds.
                .filter(|n| n.starts_with("kruise-") && !n.starts_with("kruise-rollout-"))
                .collect();
            if names.is_empty() {
                Registered::Absent
            } else {
                Registered::Found(names)
            }
        }
        Err(kube::Error::Api(status)) if status.code == 404 => Registered::Absent,
        Err(err) => Registered::Unknown(crate::write::describe(&err)),
    }
}

/// What the controllers' banner says of the webhooks, in two lines: which configurations are
/// missing, then which Kruise features nothing enforces at admission (the controllers only
/// reconcile; the webhooks deny): deletion protection and PodUnavailableBudget without the
/// validating webhook, SidecarSet injection without the mutating one. Nothing when both are
/// registered.
pub fn webhook_notice(webhooks: &Webhooks) -> Vec<String> {
    let missing = |r: &Registered| !matches!(r, Registered::Found(_));
    let mut advice = Vec::new();
    if missing(&webhooks.validating) {
        advice.extend(["deletion protection", "PodUnavailableBudget"]);
    }
    if missing(&webhooks.mutating) {
        advice.push("SidecarSet injection");
    }
    let features = match advice.as_slice() {
        [one] => format!("{one} is"),
        [a, b] => format!("{a} and {b} are"),
        [a, b, c] => format!("{a}, {b} and {c} are"),
        _ => return Vec::new(),
    };
    let unknown: Vec<&str> = [&webhooks.mutating, &webhooks.validating]
        .into_iter()
        .filter_map(|r| match r {
            Registered::Unknown(why) => Some(why.as_str()),
            _ => None,
        })
        .collect();
    let what = if unknown.is_empty() {
        let kinds = match (missing(&webhooks.mutating), missing(&webhooks.validating)) {
            (true, true) => "Mutating/ValidatingWebhookConfiguration",
            (true, false) => "MutatingWebhookConfiguration",
            _ => "ValidatingWebhookConfiguration",
        };
        format!("no Kruise webhook is registered (no kruise-* {kinds})")
    } else {
        format!(
            "cannot tell whether Kruise's webhooks are registered ({})",
            unknown.join("; ")
        )
    };
    let embedded = if webhooks.embedded {
        " (kruise-tui's demo-server does, in-process, unless started with --no-kruise-webhooks)"
    } else {
        ""
    };
    vec![
        format!("controllers: {what}"),
        format!(
            "controllers: {features} advice only here: nothing enforces them at \
             admission{embedded}"
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn webhooks(mutating: Registered, validating: Registered) -> Webhooks {
        Webhooks {
            mutating,
            validating,
            embedded: false,
        }
    }

    #[test]
    fn the_notice_names_what_no_webhook_enforces() {
        let found = |n: &str| Registered::Found(vec![n.to_owned()]);
        assert!(
            webhook_notice(&webhooks(
                found(MUTATING_WEBHOOK),
                found(VALIDATING_WEBHOOK)
            ))
            .is_empty()
        );
        assert_eq!(
            webhook_notice(&webhooks(Registered::Absent, Registered::Absent)),
            [
                "controllers: no Kruise webhook is registered (no kruise-* \
                 Mutating/ValidatingWebhookConfiguration)",
                "controllers: deletion protection, PodUnavailableBudget and SidecarSet injection \
                 are advice only here: nothing enforces them at admission",
            ]
        );
        let only_mutating =
            webhook_notice(&webhooks(found(MUTATING_WEBHOOK), Registered::Absent)).join("\n");
        assert!(
            only_mutating.contains("(no kruise-* ValidatingWebhookConfiguration)\n")
                && only_mutating
                    .contains("deletion protection and PodUnavailableBudget are advice only"),
            "{only_mutating}"
        );
        let unknown = webhook_notice(&webhooks(
            Registered::Unknown("forbidden".into()),
            found(VALIDATING_WEBHOOK),
        ))
        .join("\n");
        assert!(
            unknown.contains("cannot tell whether Kruise's webhooks are registered (forbidden)\n")
                && unknown.contains("SidecarSet injection is advice only"),
            "{unknown}"
        );
    }
}
