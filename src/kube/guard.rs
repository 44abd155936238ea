//! The facts the guards decide on, read from the cluster: whether deletion protection is
//! enforced here (a Kruise validating webhook, or the embedded cluster's admission chain, and
//! the ResourcesDeletionProtection gate), the namespace's pods and PVCs or a CRD's custom
//! resources for a Cascading verdict, and the PodUnavailableBudgets of a namespace.

use k8s_openapi::api::{
    admissionregistration::v1::ValidatingWebhookConfiguration,
    core::v1::{PersistentVolumeClaim, Pod},
};
use kube::{
    Api, Client,
    api::{DynamicObject, ListParams},
    core::{ApiResource, GroupVersionKind},
};
use serde_json::Value;

use super::{detect, errors::text as describe, gates::feature_gates};
use crate::{
    actions::{
        ObjectState, Target,
        guard::{self, Enforcement, Verdict},
    },
    api::kinds::{self, KindInfo, ProtectedKind},
    kruise::{
        FeatureGates,
        protection::{ClusterFacts, CrFact, PodFact, PvcFact},
        pub_budget::{PodUnavailableBudget, PubOperation},
    },
};

/// Whether deletes are checked here, and the gates the verdicts use.
pub async fn enforcement(client: &Client) -> (Enforcement, FeatureGates) {
    let vwc: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let webhook = matches!(vwc.get_opt(detect::VALIDATING_WEBHOOK).await, Ok(Some(_)));
    // The gates only: a guard predicts nothing, so it needs no release detection.
    let (gates, source) = feature_gates(client).await;
    let embedded = source == "the embedded controllers";
    (
        Enforcement::decide(webhook, embedded, &gates, &source),
        gates,
    )
}

/// What a Cascading verdict on `kind`/`object` needs (`None` lists are "unavailable", which the
/// port treats as upstream does its list errors).
pub async fn deletion_facts(client: &Client, kind: &KindInfo, object: &Value) -> ClusterFacts {
    let mut facts = ClusterFacts::default();
    match kind.protected {
        Some(ProtectedKind::Namespace) => {
            let ns = object["metadata"]["name"].as_str().unwrap_or_default();
            let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
            facts.pods = pods.list(&ListParams::default()).await.ok().map(|l| {
                l.items
                    .into_iter()
                    .map(|p| PodFact {
                        phase: p.status.and_then(|s| s.phase).unwrap_or_default(),
                        deletion_timestamp: p.metadata.deletion_timestamp.map(|t| t.0.to_string()),
                    })
                    .collect()
            });
            let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), ns);
            facts.pvcs = pvcs.list(&ListParams::default()).await.ok().map(|l| {
                l.items
                    .into_iter()
                    .map(|p| PvcFact {
                        phase: p.status.and_then(|s| s.phase).unwrap_or_default(),
                        deletion_timestamp: p.metadata.deletion_timestamp.map(|t| t.0.to_string()),
                    })
                    .collect()
            });
        }
        Some(ProtectedKind::CustomResourceDefinition) => {
            let spec = &object["spec"];
            let storage = spec["versions"]
                .as_array()
                .and_then(|vs| vs.iter().find(|v| v["storage"].as_bool() == Some(true)))
                .and_then(|v| v["name"].as_str());
            if let (Some(group), Some(version), Some(kind), Some(plural)) = (
                spec["group"].as_str(),
                storage,
                spec["names"]["kind"].as_str(),
                spec["names"]["plural"].as_str(),
            ) {
                let ar = ApiResource::from_gvk_with_plural(
                    &GroupVersionKind::gvk(group, version, kind),
                    plural,
                );
                let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
                facts.custom_resources = api.list(&ListParams::default()).await.ok().map(|l| {
                    l.items
                        .into_iter()
                        .map(|o| CrFact {
                            namespace: o.metadata.namespace.unwrap_or_default(),
                            name: o.metadata.name.unwrap_or_default(),
                            deletion_timestamp: o
                                .metadata
                                .deletion_timestamp
                                .map(|t| t.0.to_string()),
                        })
                        .collect()
                });
            }
        }
        _ => {}
    }
    facts
}

/// The PodUnavailableBudgets of a namespace (none when they cannot be listed: no Kruise, no
/// rights).
pub async fn budgets(
    client: &Client,
    namespace: &str,
) -> Result<Vec<PodUnavailableBudget>, String> {
    let api: Api<PodUnavailableBudget> = Api::namespaced(client.clone(), namespace);
    match api.list(&ListParams::default()).await {
        Ok(l) => Ok(l.items),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
        Err(e) => Err(describe(&e)),
    }
}

/// The PUB verdict for `operation` on a pod as read (`object`: the pod's JSON).
pub async fn pod_budget_verdict(
    client: &Client,
    object: &Value,
    operation: PubOperation,
) -> Verdict {
    let Ok(pod) = serde_json::from_value::<Pod>(object.clone()) else {
        return Verdict::Unguarded("the pod does not decode".to_owned());
    };
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    match budgets(client, &ns).await {
        Ok(pubs) => guard::pub_verdict(&pod, &pubs, operation),
        Err(e) => Verdict::Unguarded(format!("PodUnavailableBudgets cannot be read: {e}")),
    }
}

/// The guard lines a confirm dialog shows before a delete, a restart or a protection change.
pub async fn notes(
    client: &Client,
    target: &Target,
    state: &ObjectState,
    action: &crate::actions::Action,
) -> Vec<String> {
    use crate::actions::Action;
    let mut out = Vec::new();
    let is_pod = *target.kind == kinds::POD;
    match action {
        Action::Delete => {
            let (enforcement, gates) = enforcement(client).await;
            let facts = deletion_facts(client, target.kind, &state.object).await;
            let verdict = guard::deletion_verdict(target.kind, &state.object, &gates, &facts);
            out.push(format!("deletion protection: {}", verdict.text()));
            if !matches!(verdict, Verdict::Unguarded(_)) {
                out.push(format!("deletion protection is {}", enforcement.text));
            }
            if is_pod {
                let v = pod_budget_verdict(client, &state.object, PubOperation::Delete).await;
                out.push(format!("budget: {}", v.text()));
            }
        }
        Action::Restart { .. } if is_pod => {
            let v = pod_budget_verdict(client, &state.object, PubOperation::Update).await;
            out.push(format!("budget: {}", v.text()));
        }
        Action::Protect { .. } => {
            let (enforcement, _) = enforcement(client).await;
            out.push(format!("deletion protection is {}", enforcement.text));
        }
        _ => {}
    }
    out
}

/// The Kruise Rollouts of a namespace (none where the Rollout CRDs are not served or cannot be
/// listed: a guard that cannot see a Rollout does not invent one).
pub async fn rollouts(client: &Client, namespace: &str) -> Vec<crate::api::rollout::Rollout> {
    let api: Api<crate::api::rollout::Rollout> = Api::namespaced(client.clone(), namespace);
    match api.list(&ListParams::default()).await {
        Ok(l) => l.items,
        Err(err) => {
            tracing::debug!("Rollouts cannot be listed: {}", describe(&err));
            Vec::new()
        }
    }
}

/// What a Kruise Rollout that releases the workload means for `action` on it: refused (a
/// partition, pause, resume or undo while the Rollout holds them), a note (a template change it
/// intercepts), or nothing.
pub async fn rollout_guard(
    client: &Client,
    target: &Target,
    state: &ObjectState,
    action: &crate::actions::Action,
) -> guard::RolloutGuard {
    if target.kind.workload.is_none() {
        return guard::RolloutGuard::Free;
    }
    let ns = target.namespace.clone().unwrap_or_default();
    let rollouts = rollouts(client, &ns).await;
    guard::rollout_guard(target, action, &state.object, &rollouts)
}
