//! `kruise-tui plan KIND/NAME --partition V`: reads the live workload and its pods (and, for an
//! Advanced DaemonSet, the nodes) and prints the embedded logic's plan. Sends nothing.

use anyhow::Result;

use super::{Session, block_on, render::render_plan, workload_kind};
use crate::{
    actions::preview::{
        ads::ads_plan_input_from_objects, asts_plan_input_from_objects, plan_input_from_objects,
    },
    cli::{KubeArgs, PlanArgs},
    kruise::plan::{self, WorkloadKind},
    kube::workload,
};

/// `kruise-tui plan KIND/NAME --partition V`.
pub fn run(kube: &KubeArgs, args: PlanArgs) -> Result<()> {
    let text = block_on(fetch_and_plan(kube, &args))?;
    print!("{text}");
    Ok(())
}

async fn fetch_and_plan(kube: &KubeArgs, args: &PlanArgs) -> Result<String> {
    let session = Session::open(kube).await?;
    let kind = workload_kind(&args.target);
    let namespace = &session.namespace;
    let client = session.client();
    let resource = workload::resource_for(client, kind).await?;
    let json = workload::get(
        client,
        &resource,
        namespace,
        &args.target.name,
        kind.display(),
    )
    .await?;
    let (pods, nodes) = workload::plan_objects(client, kind, namespace, &json).await?;
    let now = jiff::Timestamp::now().as_second();
    let partition = &args.partition.text;
    let input = match kind {
        WorkloadKind::AdvancedDaemonSet => {
            ads_plan_input_from_objects(json, &nodes, &pods, partition, now)?
        }
        WorkloadKind::AdvancedStatefulSet => {
            asts_plan_input_from_objects(json, &pods, partition, now)?
        }
        WorkloadKind::CloneSet => {
            plan_input_from_objects(&resource.version, json, &pods, partition, now)?
        }
    };
    let mut input = input;
    let cluster = crate::kube::gates::cluster_gates(client).await;
    input.gates = cluster.gates;
    input.version = cluster.release.version;
    let planned = plan::plan(&input)?;
    Ok(render_plan(&planned, &input, partition))
}
