//! Reads of one workload for the subcommands (`plan`, `rollout`, `set image`, `scale`): the
//! workload at the version to read it, its pods, the cluster's nodes (an Advanced DaemonSet's
//! plan counts them), its ControllerRevisions, and a watch of it. IO only: what the objects mean
//! is `crate::actions::preview` and `crate::cmd`.

use anyhow::{Context as _, Result, anyhow, bail};
use futures::{Stream, StreamExt as _};
use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Node, Pod},
    },
    apimachinery::pkg::apis::meta::v1::LabelSelector,
};
use kube::{
    Api, Client,
    api::{DynamicObject, ListParams},
    core::{ApiResource, Selector},
    runtime::{WatchStreamExt as _, watcher},
};
use serde_json::Value;

use super::{
    discovery::{discover_kruise, preferred_version, readable_versions},
    errors::{Plain as _, forbidden, watcher_text},
};
use crate::{app::msg::Kind, kruise::plan::WorkloadKind};

/// The resource to read `kind` at: the version its CRD stores (or the newest served) among those
/// the planner reads; another served version may be a pruned view (a bare multi-version CRD has
/// no conversion).
pub async fn resource_for(client: &Client, kind: WorkloadKind) -> Result<ApiResource> {
    let info = kind.info();
    let served_kind = info.kind;
    let readable = Kind::of(info).map_or(&[][..], readable_versions);
    let apis = discover_kruise(client)
        .await
        .plain()
        .context("cannot discover the Kruise APIs")?;
    if !apis
        .served
        .iter()
        .any(|s| s.resource.group == "apps.kruise.io")
    {
        bail!("the cluster does not serve apps.kruise.io (is OpenKruise installed?)");
    }
    let served = preferred_version(&apis.served, "apps.kruise.io", served_kind, readable)
        .ok_or_else(|| anyhow!("the cluster serves apps.kruise.io but not {served_kind}"))?;
    Ok(served.resource.clone())
}

/// The workload `namespace/name` as JSON; "not found" names it as `shown` (`CloneSet`).
pub async fn get(
    client: &Client,
    resource: &ApiResource,
    namespace: &str,
    name: &str,
    shown: &str,
) -> Result<Value> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, resource);
    let object = api
        .get_opt(name)
        .await
        .plain()
        .with_context(|| format!("cannot read {shown} {namespace}/{name}"))?
        .ok_or_else(|| anyhow!("{shown} {namespace}/{name} not found"))?;
    serde_json::to_value(&object).with_context(|| format!("cannot encode the {shown}"))
}

/// A workload's pod selector as kube's label [`Selector`], for listing its pods; a malformed
/// requirement (bad operator, `In` without values) is a clear error, not a wrong query.
pub fn pod_selector(selector: &LabelSelector) -> Result<Selector> {
    Selector::try_from(selector.clone())
        .map_err(|e| anyhow!("the workload's pod selector is not valid: {}", e.0))
}

/// The workload's `spec.selector` (read from the object) as a label [`Selector`].
pub fn selector_of(namespace: &str, workload: &Value) -> Result<Selector> {
    let name = workload
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let selector: LabelSelector = workload
        .pointer("/spec/selector")
        .filter(|v| !v.is_null())
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
        .with_context(|| format!("cannot read the selector of {namespace}/{name}"))?
        .unwrap_or_default();
    pod_selector(&selector)
}

/// The pods matching the workload's `spec.selector` (owned or not: the mapping filters).
pub async fn pods_of(client: &Client, namespace: &str, workload: &Value) -> Result<Vec<Pod>> {
    let name = workload
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Api::<Pod>::namespaced(client.clone(), namespace)
        .list(&ListParams::default().labels_from(&selector_of(namespace, workload)?))
        .await
        .plain()
        .with_context(|| format!("cannot list the pods of {namespace}/{name}"))
        .map(|l| l.items)
}

/// The workload's own pods: those its selector matches that name it as their controller (not
/// every pod the selector happens to match).
pub async fn owned_pods(client: &Client, namespace: &str, workload: &Value) -> Result<Vec<Pod>> {
    let uid = workload
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(pods_of(client, namespace, workload)
        .await?
        .into_iter()
        .filter(|p| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && !uid.is_empty() && o.uid == uid)
        })
        .collect())
}

/// The cluster's nodes.
pub async fn nodes(client: &Client) -> Result<Vec<Node>> {
    Api::<Node>::all(client.clone())
        .list(&ListParams::default())
        .await
        .plain()
        .context("cannot list the nodes")
        .map(|l| l.items)
}

/// The pods of the workload and, for an Advanced DaemonSet, the nodes: what the planner reads
/// besides the workload.
pub async fn plan_objects(
    client: &Client,
    kind: WorkloadKind,
    namespace: &str,
    workload: &Value,
) -> Result<(Vec<Pod>, Vec<Node>)> {
    let nodes = if kind == WorkloadKind::AdvancedDaemonSet {
        nodes(client).await?
    } else {
        Vec::new()
    };
    Ok((pods_of(client, namespace, workload).await?, nodes))
}

/// The ControllerRevisions the workload with `uid` controls, in no order.
pub async fn revisions_of(
    client: &Client,
    namespace: &str,
    uid: &str,
) -> Result<Vec<ControllerRevision>> {
    let list = Api::<ControllerRevision>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .plain()
        .with_context(|| format!("cannot list the ControllerRevisions in {namespace}"))?;
    Ok(list
        .items
        .into_iter()
        .filter(|r| {
            r.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.uid == uid)
        })
        .collect())
}

/// Why a watch failed once; it retries with back-off unless the server forbids it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchFailure {
    pub message: String,
    /// A 403: retrying will not help.
    pub forbidden: bool,
}

/// Every version of `namespace/name` the server reports from now on (the current one first), as
/// JSON; `None` when it is deleted. A watch of that one name, never a poll.
pub fn watch(
    client: &Client,
    resource: &ApiResource,
    namespace: &str,
    name: &str,
) -> impl Stream<Item = Result<Option<Value>, WatchFailure>> + Send + 'static {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, resource);
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    watcher(api, config)
        .default_backoff()
        .filter_map(|event| async move {
            match event {
                Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => Some(
                    serde_json::to_value(&o)
                        .map(Some)
                        .map_err(|e| WatchFailure {
                            message: format!("cannot encode the object: {e}"),
                            forbidden: false,
                        }),
                ),
                Ok(watcher::Event::Delete(_)) => Some(Ok(None)),
                Ok(_) => None,
                Err(err) => Some(Err(WatchFailure {
                    message: watcher_text(&err),
                    forbidden: forbidden(&err).is_some(),
                })),
            }
        })
}
