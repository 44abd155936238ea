//! `kruise-tui top KIND/NAME | pods [-l SEL] [--containers] [-o text|json]`: the CPU and memory
//! of a workload's pods (its own, by controller reference) or of the namespace's pods, from
//! `metrics.k8s.io`, with each pod's requests/limits and the total (kruise-tools#8).
//!
//! Exit 1 with "Metrics API not available" when the cluster does not serve the API (as kubectl
//! says it), 2 on a usage error. A pod the metrics do not list yet is printed with `-`.

mod render;

use std::collections::HashMap;

use anyhow::{Context as _, Result, bail};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

use super::{Session, block_on, emit, workload_kind};
use crate::{
    api::SlimPod,
    app::usage::{Bounds, Figures, container_bounds, requests_limits},
    cli::{KubeArgs, TopArgs, TopTarget, TriageOutput},
    kube::{metrics, workload},
};

pub use render::{json, table};

/// What `top` measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// What was measured: `CloneSet demo/web`, `pods in demo`.
    pub what: String,
    /// Whether the pods span namespaces (`top pods -A`): a NAMESPACE column.
    pub all_namespaces: bool,
    pub pods: Vec<PodLine>,
}

/// One pod: its figures (None: not measured yet) and its containers'.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodLine {
    pub namespace: String,
    pub name: String,
    pub figures: Option<Figures>,
    /// The pod's requests and limits (shown also before it is measured).
    pub bounds: Bounds,
    pub containers: Vec<ContainerLine>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContainerLine {
    pub name: String,
    pub figures: Option<Figures>,
    pub bounds: Bounds,
}

impl Report {
    /// The sum over the measured pods, and how many were measured.
    pub fn total(&self) -> (Figures, usize) {
        let mut total = Figures::default();
        let mut measured = 0;
        for f in self.pods.iter().filter_map(|p| p.figures.as_ref()) {
            total.add(f);
            measured += 1;
        }
        (total, measured)
    }
}

/// `kruise-tui top`.
pub fn run(kube: &KubeArgs, args: TopArgs) -> Result<()> {
    let report = block_on(measure(kube, &args))?;
    let text = match args.output {
        TriageOutput::Text => table(&report, args.containers),
        TriageOutput::Json => format!("{}\n", json(&report)),
    };
    emit(&text)
}

async fn measure(kube: &KubeArgs, args: &TopArgs) -> Result<Report> {
    let session = Session::open(kube).await?;
    let client = session.client();
    let served = metrics::served(client)
        .await
        .map_err(|e| anyhow::anyhow!("{}", crate::kube::errors::text(&e)))?;
    if !served {
        bail!(
            "Metrics API not available (this cluster does not serve {})",
            metrics::GROUP_VERSION
        );
    }
    let (what, namespace, selector, pods) = match &args.target {
        TopTarget::Workload(w) => {
            let ns = session.namespace.clone();
            let resource = workload::resource_for(client, workload_kind(w)).await?;
            let object = workload::get(client, &resource, &ns, &w.name, w.kind.title).await?;
            let selector = workload::selector_of(&ns, &object)?.to_string();
            let pods = workload::owned_pods(client, &ns, &object).await?;
            let what = format!("{} {ns}/{}", w.kind.title, w.name);
            (what, Some(ns), Some(selector), pods)
        }
        TopTarget::Pods => {
            let ns = (!kube.all_namespaces).then(|| session.namespace.clone());
            let api: Api<Pod> = match &ns {
                Some(ns) => Api::namespaced(client.clone(), ns),
                None => Api::all(client.clone()),
            };
            let mut params = ListParams::default();
            if let Some(sel) = &args.selector {
                params = params.labels(sel);
            }
            let pods = api
                .list(&params)
                .await
                .context("cannot list the pods")?
                .items;
            let what = match &ns {
                Some(ns) => format!("pods in {ns}"),
                None => "pods in all namespaces".to_owned(),
            };
            (what, ns, args.selector.clone(), pods)
        }
    };
    let usage = metrics::pod_usage(client, namespace.as_deref(), selector.as_deref())
        .await
        .map_err(|e| anyhow::anyhow!(crate::kube::errors::text(&e)))
        .context("cannot read the pods' metrics")?;
    Ok(join(what, namespace.is_none(), pods, usage.pods))
}

/// Each pod (sorted, the deleted left out) with its figures and its containers'. Pure.
pub fn join(
    what: String,
    all_namespaces: bool,
    pods: Vec<Pod>,
    usage: Vec<metrics::PodUsage>,
) -> Report {
    let by_pod: HashMap<(String, String), metrics::PodUsage> = usage
        .into_iter()
        .map(|u| ((u.namespace.to_string(), u.name.to_string()), u))
        .collect();
    let mut lines: Vec<PodLine> = pods
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| serde_json::to_value(p).ok())
        .filter_map(|v| serde_json::from_value::<SlimPod>(v).ok())
        .map(|pod| {
            let namespace = pod.metadata.namespace.as_deref().unwrap_or("").to_owned();
            let name = pod.metadata.name.as_deref().unwrap_or("").to_owned();
            let usage = by_pod.get(&(namespace.clone(), name.clone()));
            let containers: Vec<ContainerLine> = pod
                .spec
                .containers
                .iter()
                .map(|c| {
                    let used = usage.and_then(|u| u.containers.iter().find(|m| m.name == c.name));
                    let bounds = container_bounds(c);
                    ContainerLine {
                        name: c.name.to_string(),
                        figures: used.map(|m| Figures {
                            cpu: m.cpu_millis,
                            memory: m.memory_bytes,
                            bounds,
                        }),
                        bounds,
                    }
                })
                .collect();
            let bounds = requests_limits(&pod);
            let figures = usage.map(|u| {
                let mut f = Figures::used(u.cpu_millis(), u.memory_bytes());
                f.set_bounds(bounds);
                f
            });
            PodLine {
                namespace,
                name,
                figures,
                bounds,
                containers,
            }
        })
        .collect();
    lines.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Report {
        what,
        all_namespaces,
        pods: lines,
    }
}
