//! Lists for `:ws` (WorkloadSpreads and the pods they matched) and `:ud` (UnitedDeployments and
//! the workloads they control).

use k8s_openapi::api::{
    apps::v1::{Deployment, StatefulSet as NativeStatefulSet},
    core::v1::Pod,
};
use k8s_openapi::apimachinery::pkg::{apis::meta::v1::ObjectMeta, util::intstr::IntOrString};
use kube::Client;

use crate::{
    api::{CloneSet, StatefulSet, UnitedDeployment, WorkloadSpread, keys, kinds},
    app::{
        uniteddeployments::{self, SubsetWorkload, TemplateKind, template_kind},
        workloadspreads::{self, SpreadPod, matched},
    },
};

use super::seed::{list, placed};

/// `Effect::List(Listing::WorkloadSpreads)`: the WorkloadSpreads in `namespace` (or every namespace) and
/// the pods upstream's webhook matched to one (their `matched-workloadspread` annotation).
pub async fn workload_spreads(
    client: Client,
    namespace: Option<String>,
) -> Result<workloadspreads::Listing, String> {
    let ns = namespace.as_deref();
    let spreads: Vec<WorkloadSpread> = list(&client, ns, "workloadspreads").await?;
    let pods: Vec<Pod> = if spreads.is_empty() {
        Vec::new()
    } else {
        list(&client, ns, "pods").await?
    };
    let pods = pods.into_iter().filter_map(spread_pod).collect();
    Ok(workloadspreads::Listing { spreads, pods })
}

fn spread_pod(p: Pod) -> Option<SpreadPod> {
    let m = matched(
        p.metadata
            .annotations
            .as_ref()?
            .get(keys::MATCHED_WORKLOADSPREAD)?,
    )?;
    let (node, phase, ready) = placed(&p);
    Some(SpreadPod {
        namespace: p.metadata.namespace.clone().unwrap_or_default(),
        spread: m.name,
        subset: m.subset,
        name: p.metadata.name.clone().unwrap_or_default(),
        node,
        phase,
        ready,
        terminating: p.metadata.deletion_timestamp.is_some(),
    })
}

/// `Effect::List(Listing::UnitedDeployments)`: the UnitedDeployments in `namespace` (or every namespace)
/// and the workloads (of the kinds their templates make) whose controller is one of them.
pub async fn united_deployments(
    client: Client,
    namespace: Option<String>,
) -> Result<uniteddeployments::Listing, String> {
    let ns = namespace.as_deref();
    let deployments: Vec<UnitedDeployment> = list(&client, ns, "uniteddeployments").await?;
    let kinds: Vec<TemplateKind> = {
        let mut k: Vec<TemplateKind> = deployments.iter().filter_map(template_kind).collect();
        k.sort_by_key(|k| k.short());
        k.dedup();
        k
    };
    let mut workloads = Vec::new();
    for kind in kinds {
        match kind {
            TemplateKind::CloneSet => {
                let sets: Vec<CloneSet> = list(&client, ns, "clonesets").await?;
                workloads.extend(sets.iter().filter_map(|s| {
                    let status = s.status.clone().unwrap_or_default();
                    subset_workload(
                        kind,
                        &s.metadata,
                        s.spec.replicas.unwrap_or(1),
                        (
                            status.replicas,
                            status.ready_replicas,
                            status.updated_replicas,
                        ),
                        s.spec.update_strategy.partition.as_ref().map(int_or_str),
                        &s.spec.selector,
                    )
                }));
            }
            TemplateKind::AdvancedStatefulSet => {
                let sets: Vec<StatefulSet> =
                    list(&client, ns, "statefulsets.apps.kruise.io").await?;
                workloads.extend(sets.iter().filter_map(|s| {
                    let status = s.status.clone().unwrap_or_default();
                    let partition = s
                        .spec
                        .update_strategy
                        .as_ref()
                        .and_then(|u| u.rolling_update.as_ref())
                        .and_then(|r| r.partition);
                    subset_workload(
                        kind,
                        &s.metadata,
                        s.spec.replicas.unwrap_or(1),
                        (
                            status.replicas,
                            status.ready_replicas,
                            status.updated_replicas,
                        ),
                        partition.map(|p| p.to_string()),
                        &s.spec.selector,
                    )
                }));
            }
            TemplateKind::StatefulSet => {
                let sets: Vec<NativeStatefulSet> = list(&client, ns, "statefulsets.apps").await?;
                workloads.extend(sets.iter().filter_map(|s| {
                    let spec = s.spec.as_ref()?;
                    let status = s.status.clone().unwrap_or_default();
                    let partition = spec
                        .update_strategy
                        .as_ref()
                        .and_then(|u| u.rolling_update.as_ref())
                        .and_then(|r| r.partition);
                    subset_workload(
                        kind,
                        &s.metadata,
                        spec.replicas.unwrap_or(1),
                        (
                            status.replicas,
                            status.ready_replicas.unwrap_or(0),
                            status.updated_replicas.unwrap_or(0),
                        ),
                        partition.map(|p| p.to_string()),
                        &spec.selector,
                    )
                }));
            }
            TemplateKind::Deployment => {
                let sets: Vec<Deployment> = list(&client, ns, "deployments").await?;
                workloads.extend(sets.iter().filter_map(|s| {
                    let spec = s.spec.as_ref()?;
                    let status = s.status.clone().unwrap_or_default();
                    subset_workload(
                        kind,
                        &s.metadata,
                        spec.replicas.unwrap_or(1),
                        (
                            status.replicas.unwrap_or(0),
                            status.ready_replicas.unwrap_or(0),
                            status.updated_replicas.unwrap_or(0),
                        ),
                        None,
                        &spec.selector,
                    )
                }));
            }
        }
    }
    Ok(uniteddeployments::Listing {
        deployments,
        workloads,
    })
}

fn int_or_str(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// The workload as a subset of the UnitedDeployment that controls it, if one does.
fn subset_workload(
    kind: TemplateKind,
    meta: &ObjectMeta,
    desired: i32,
    (replicas, ready, updated): (i32, i32, i32),
    partition: Option<String>,
    selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
) -> Option<SubsetWorkload> {
    let owner = kinds::controller_of(meta.owner_references.as_deref(), &kinds::UNITED_DEPLOYMENT)?;
    Some(SubsetWorkload {
        kind,
        namespace: meta.namespace.clone().unwrap_or_default(),
        owner: owner.name.clone(),
        subset: meta
            .labels
            .as_ref()
            .and_then(|l| l.get(keys::SUBSET_NAME))
            .cloned()
            .unwrap_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        selector: selector.clone(),
        desired,
        replicas,
        ready,
        updated,
        partition,
    })
}
