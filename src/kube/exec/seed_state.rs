//! Lists for `:pps` (PersistentPodStates with their pods and the nodes' labels) and
//! `:distributor` (ResourceDistributions with the namespaces and the objects of each copied
//! name).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, Pod, Secret};
use kube::{Api, Client, api::ListParams};

use crate::{
    api::{PersistentPodState, ResourceDistribution},
    app::{
        distributions::{self, CopyObject},
        persistentpodstates::{self, PodPlace},
    },
    kruise::distribution,
    kube::errors::text as describe,
};

use super::seed::{list, placed};

/// `Effect::List(Listing::PersistentPodStates)`: the states in `namespace` (or every namespace), the pods
/// of those namespaces they concern, and the labels of the nodes those pods run on. Nodes that
/// cannot be read (no RBAC for nodes) leave the topology comparison out, not the view.
pub async fn persistent_pod_states(
    client: Client,
    namespace: Option<String>,
) -> Result<persistentpodstates::Listing, String> {
    let ns = namespace.as_deref();
    let states: Vec<PersistentPodState> = list(&client, ns, "persistentpodstates").await?;
    if states.is_empty() {
        return Ok(persistentpodstates::Listing {
            states,
            pods: Vec::new(),
            nodes: Ok(BTreeMap::new()),
        });
    }
    let pods: Vec<Pod> = list(&client, ns, "pods").await?;
    let wanted = |p: &Pod| {
        let ns = p.metadata.namespace.as_deref().unwrap_or_default();
        let name = p.metadata.name.as_deref().unwrap_or_default();
        let owner = controller(p);
        states.iter().any(|s| {
            s.metadata.namespace.as_deref() == Some(ns)
                && (s
                    .status
                    .as_ref()
                    .is_some_and(|st| st.pod_states.contains_key(name))
                    || owner.is_some_and(|(k, n)| {
                        k == s.spec.target_ref.kind && n == s.spec.target_ref.name
                    }))
        })
    };
    let pods: Vec<PodPlace> = pods.iter().filter(|p| wanted(p)).map(place).collect();
    let nodes = if pods.iter().all(|p| p.node.is_empty()) {
        Ok(BTreeMap::new())
    } else {
        node_labels(client).await
    };
    Ok(persistentpodstates::Listing {
        states,
        pods,
        nodes,
    })
}

fn controller(p: &Pod) -> Option<(&str, &str)> {
    let o = p
        .metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))?;
    Some((o.kind.as_str(), o.name.as_str()))
}

fn place(p: &Pod) -> PodPlace {
    let (owner_kind, owner) = controller(p).unwrap_or_default();
    let (node, phase, ready) = placed(p);
    PodPlace {
        namespace: p.metadata.namespace.clone().unwrap_or_default(),
        name: p.metadata.name.clone().unwrap_or_default(),
        owner_kind: owner_kind.to_owned(),
        owner: owner.to_owned(),
        node,
        phase,
        ready,
    }
}

async fn node_labels(client: Client) -> Result<BTreeMap<String, BTreeMap<String, String>>, String> {
    let nodes: Api<Node> = Api::all(client);
    let list = nodes
        .list_metadata(&ListParams::default())
        .await
        .map_err(|e| format!("nodes: {}", describe(&e)))?;
    Ok(list
        .items
        .into_iter()
        .map(|n| {
            (
                n.metadata.name.unwrap_or_default(),
                n.metadata.labels.unwrap_or_default(),
            )
        })
        .collect())
}

/// `Effect::List(Listing::Distributions)`: every ResourceDistribution (cluster-scoped, whatever namespace
/// is watched), the cluster's namespaces, and each copied Secret or ConfigMap name in every
/// namespace (a list by `metadata.name`). A namespace or kind that cannot be listed is reported
/// in the listing; the distributions still show.
pub async fn distributions(client: Client) -> Result<distributions::Listing, String> {
    let api: Api<ResourceDistribution> = Api::all(client.clone());
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| format!("resourcedistributions: {}", describe(&e)))?
        .items;
    let mut listing = distributions::Listing {
        distributions: list,
        namespaces: Ok(Vec::new()),
        copies: Vec::new(),
        copy_errors: Vec::new(),
    };
    if listing.distributions.is_empty() {
        return Ok(listing);
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    listing.namespaces = namespaces
        .list_metadata(&ListParams::default())
        .await
        .map(|l| {
            l.items
                .into_iter()
                .map(|n| distribution::Namespace {
                    name: n.metadata.name.unwrap_or_default(),
                    labels: n.metadata.labels.unwrap_or_default(),
                    terminating: n.metadata.deletion_timestamp.is_some(),
                })
                .collect()
        })
        .map_err(|e| format!("namespaces: {}", describe(&e)));
    let wanted: BTreeSet<(String, String)> = listing
        .distributions
        .iter()
        .map(distributions::copied)
        .filter(|(_, name)| !name.is_empty())
        .collect();
    for (kind, name) in wanted {
        let params = ListParams::default().fields(&format!("metadata.name={name}"));
        let found = match kind.as_str() {
            "Secret" => copies::<Secret>(&client, &params, "secrets").await,
            "ConfigMap" => copies::<ConfigMap>(&client, &params, "configmaps").await,
            other => Err(format!(
                "{other}: not a kind ResourceDistribution copies (Secret, ConfigMap)"
            )),
        };
        match found {
            Ok(objects) => listing
                .copies
                .extend(objects.into_iter().map(|(namespace, body)| CopyObject {
                    kind: kind.clone(),
                    namespace,
                    name: name.clone(),
                    body,
                })),
            Err(e) => listing.copy_errors.push(e),
        }
    }
    Ok(listing)
}

async fn copies<K>(
    client: &Client,
    params: &ListParams,
    plural: &str,
) -> Result<Vec<(String, serde_json::Value)>, String>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::all(client.clone());
    let list = api
        .list(params)
        .await
        .map_err(|e| format!("{plural}: {}", describe(&e)))?;
    Ok(list
        .items
        .iter()
        .filter_map(|o| {
            let ns = o.meta().namespace.clone()?;
            Some((ns, serde_json::to_value(o).ok()?))
        })
        .collect())
}
