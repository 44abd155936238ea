//! What guards an action before it is sent, decided with the Kruise port on facts the kube
//! layer read: would a delete be denied by deletion protection now (and why, in words), and
//! does the pod's PodUnavailableBudget allow one more unavailable pod now.

mod rollout;

pub use rollout::{RolloutGuard, controlling_rollout, in_release, rollout_guard, standing};

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::objects::protection_of;
use crate::api::kinds::KindInfo;
use crate::kruise::{
    FeatureGates,
    protection::{
        ClusterFacts, PROTECTION_ALWAYS, PROTECTION_CASCADING, ProtectedKind,
        validate_deletion_of_kind,
    },
    pub_budget::{
        PodUnavailableBudget, PubOperation, RELATED_PUB_ANNOTATION, admission::validate_pod,
    },
};

/// A guard's answer, with the reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing guards it (no label, a kind Kruise does not guard, no PUB).
    Unguarded(String),
    Allowed(String),
    Denied(String),
}

impl Verdict {
    pub fn denied(&self) -> bool {
        matches!(self, Verdict::Denied(_))
    }

    /// `would be denied: 3 active replicas`, `allowed: …`, `not protected`.
    pub fn text(&self) -> String {
        match self {
            Verdict::Unguarded(why) => why.clone(),
            Verdict::Allowed(why) => format!("allowed: {why}"),
            Verdict::Denied(why) => format!("would be denied: {why}"),
        }
    }
}

/// Whether the cluster enforces deletion protection, in one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enforcement {
    pub confirmed: bool,
    pub text: String,
}

impl Enforcement {
    /// Decides from what the kube layer found: a Kruise validating webhook configuration, and
    /// the gates of the controllers (with where they came from).
    pub fn decide(webhook: bool, embedded: bool, gates: &FeatureGates, source: &str) -> Self {
        let on = gates.enabled("ResourcesDeletionProtection");
        match (webhook, embedded, on) {
            (true, _, true) => Enforcement {
                confirmed: true,
                text: format!(
                    "enforced: Kruise's validating webhook is installed and \
                     ResourcesDeletionProtection is on ({source})"
                ),
            },
            (false, true, true) => Enforcement {
                confirmed: true,
                text: format!(
                    "enforced: the embedded cluster's admission chain checks deletes \
                     (ResourcesDeletionProtection on, {source})"
                ),
            },
            (true, _, false) | (false, true, false) => Enforcement {
                confirmed: false,
                text: format!(
                    "NOT enforced: the ResourcesDeletionProtection gate is off ({source}): the \
                     label is only advice"
                ),
            },
            (false, false, _) => Enforcement {
                confirmed: false,
                text: "enforcement cannot be confirmed: no Kruise validating webhook for \
                       ResourcesDeletionProtection is installed: the label is only advice"
                    .to_owned(),
            },
        }
    }
}

/// Would deleting `object` (of `kind`) be denied by deletion protection now?
/// Decided with the port as if enforcement were on (whether it is, [`Enforcement`] says);
/// `facts` are the namespace's pods and PVCs or the CRD's custom resources.
pub fn deletion_verdict(
    kind: &KindInfo,
    object: &Value,
    gates: &FeatureGates,
    facts: &ClusterFacts,
) -> Verdict {
    let Some(protected) = kind.protected else {
        return Verdict::Unguarded(format!(
            "{}: not a kind deletion protection guards",
            kind.kind
        ));
    };
    let label = protection_of(object);
    let Some(value) = label else {
        return Verdict::Unguarded("not protected".to_owned());
    };
    let gates = gates.clone().with("ResourcesDeletionProtection", true);
    let verdict = validate_deletion_of_kind(&gates, protected, object, facts);
    if verdict.allowed {
        let why = match value {
            PROTECTION_CASCADING => match protected {
                ProtectedKind::Namespace => "Cascading, and no active pods or Bound PVCs",
                ProtectedKind::CustomResourceDefinition => "Cascading, and no custom resources",
                ProtectedKind::Service | ProtectedKind::Ingress => {
                    "Cascading is not honoured for this kind"
                }
                _ => "Cascading, and 0 replicas",
            }
            .to_owned(),
            PROTECTION_ALWAYS => "terminating".to_owned(),
            other => format!("{other:?} is not a value Kruise knows (Always, Cascading)"),
        };
        return Verdict::Allowed(why);
    }
    let message = verdict.message.unwrap_or_default();
    let why = if value == PROTECTION_ALWAYS {
        "delete-protection Always".to_owned()
    } else {
        match protected {
            ProtectedKind::Namespace => {
                let active = facts.pods.as_ref().map_or(0, |pods| {
                    pods.iter()
                        .filter(|p| {
                            p.phase != "Succeeded"
                                && p.phase != "Failed"
                                && p.deletion_timestamp.is_none()
                        })
                        .count()
                });
                if active > 0 {
                    format!("Cascading, {active} active pods in the namespace")
                } else if message.contains("pvc") {
                    let bound = facts.pvcs.as_ref().map_or(0, |p| {
                        p.iter()
                            .filter(|p| p.phase == "Bound" && p.deletion_timestamp.is_none())
                            .count()
                    });
                    format!("Cascading, {bound} Bound PVCs in the namespace")
                } else {
                    message
                }
            }
            ProtectedKind::CustomResourceDefinition => {
                match facts
                    .custom_resources
                    .as_ref()
                    .map(|c| c.iter().filter(|c| c.deletion_timestamp.is_none()).count())
                {
                    Some(n) if n > 0 && message.contains("active CRs") => {
                        format!("Cascading, {n} custom resources of the CRD")
                    }
                    _ => message,
                }
            }
            _ => {
                let replicas = object["spec"]["replicas"].as_i64().unwrap_or(0);
                format!("{replicas} active replicas")
            }
        }
    };
    Verdict::Denied(why)
}

/// Does the pod's PodUnavailableBudget (the one its `kruise.io/related-pub` annotation names,
/// among `pubs`) allow `operation` on it now? Decided with the port's webhook check as a dry
/// run; `now` is RFC 3339.
pub fn pub_verdict(pod: &Pod, pubs: &[PodUnavailableBudget], operation: PubOperation) -> Verdict {
    let related = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(RELATED_PUB_ANNOTATION))
        .cloned()
        .unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let Some(budget) = pubs.iter().find(|p| {
        !related.is_empty()
            && p.name() == related
            && p.metadata.namespace.as_deref().unwrap_or_default() == namespace
    }) else {
        return Verdict::Unguarded("no PodUnavailableBudget protects this pod".to_owned());
    };
    let mut copy = budget.clone();
    let allowed_now = budget.status.unavailable_allowed;
    let verdict = validate_pod(
        pod,
        operation,
        true,
        Some(&mut copy),
        "1970-01-01T00:00:00Z",
    );
    let name = budget.name();
    if verdict.allowed {
        let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
        let why = if !crate::kruise::pub_budget::is_pod_ready(pod) {
            format!("PodUnavailableBudget {name}: the pod is already unavailable")
        } else if budget.status.unavailable_pods.contains_key(pod_name)
            || budget.status.disrupted_pods.contains_key(pod_name)
        {
            format!("PodUnavailableBudget {name}: the pod is already counted unavailable")
        } else if budget.status.desired_available == 0 {
            format!("PodUnavailableBudget {name} asks for no pod to stay available")
        } else {
            format!("PodUnavailableBudget {name} has {allowed_now} unavailable allowed")
        };
        Verdict::Allowed(why)
    } else {
        Verdict::Denied(format!(
            "PodUnavailableBudget {name} has {allowed_now} unavailable allowed"
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kruise::protection::PodFact;

    fn cloneset(label: Option<&str>, replicas: i64) -> Value {
        let mut o = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web", "labels": {}}, "spec": {"replicas": replicas}});
        if let Some(l) = label {
            o["metadata"]["labels"]["policy.kruise.io/delete-protection"] = json!(l);
        }
        o
    }

    #[test]
    fn cascading_counts_replicas_and_always_denies() {
        let g = FeatureGates::new();
        let f = ClusterFacts::default();
        let v = |o: &Value| deletion_verdict(&crate::api::kinds::CLONESET, o, &g, &f);
        assert_eq!(
            v(&cloneset(Some("Cascading"), 3)).text(),
            "would be denied: 3 active replicas"
        );
        assert!(!v(&cloneset(Some("Cascading"), 0)).denied());
        assert_eq!(
            v(&cloneset(Some("Always"), 0)).text(),
            "would be denied: delete-protection Always"
        );
        assert_eq!(v(&cloneset(None, 3)).text(), "not protected");
        let ns = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "demo", "labels": {"policy.kruise.io/delete-protection": "Cascading"}}});
        let facts = ClusterFacts {
            pods: Some(vec![PodFact {
                phase: "Running".into(),
                deletion_timestamp: None,
            }]),
            pvcs: Some(vec![]),
            custom_resources: None,
        };
        assert_eq!(
            deletion_verdict(&crate::api::kinds::NAMESPACE, &ns, &g, &facts).text(),
            "would be denied: Cascading, 1 active pods in the namespace"
        );
    }

    #[test]
    fn enforcement_is_said_plainly() {
        let on = FeatureGates::new().with("ResourcesDeletionProtection", true);
        assert!(Enforcement::decide(false, true, &on, "x").confirmed);
        let none = Enforcement::decide(false, false, &on, "x");
        assert!(!none.confirmed);
        assert!(none.text.contains("only advice"));
        assert!(!Enforcement::decide(true, false, &FeatureGates::new(), "x").confirmed);
    }
}
