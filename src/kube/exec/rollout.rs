//! Predictions and the rollout view's reads: the plan API run on the objects as the server has
//! them now (the workload at its served version, its pods, the nodes for an Advanced
//! DaemonSet), for the confirm dialog and for the rollout view's next step; and the recent
//! events of a workload and its pods.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{Result, anyhow};
use k8s_openapi::api::core::v1::{Event as CoreEvent, Node, ObjectReference, Pod};
use kube::{Api, Client, api::ListParams};

use super::{event_row, last_seen};
use crate::{
    actions::{
        ObjectState, Prepared, Target,
        preview::{live_input, preview_input, workload_kind},
    },
    api::kinds,
    app::msg::{EffectResult, ObjectEvent, ObjectRef, Prediction},
    kruise::plan::{self, Change, Plan, PlanInput, WorkloadKind},
    kube::{
        act::Actor,
        errors::Plain as _,
        gates::{ClusterGates, cluster_gates},
        workload,
    },
};

/// How many events the rollout view keeps.
const EVENTS_KEPT: usize = 50;

/// How long the cluster's feature gates are trusted before they are read again.
const GATES_FOR: Duration = Duration::from_secs(60);

/// The feature gates the cluster's controllers decide with (`kube::gates`), read at most once a
/// minute: the rollout view plans on every change and the gates hardly ever change.
#[derive(Debug, Default)]
pub struct Gates {
    cached: Mutex<Option<(Instant, ClusterGates)>>,
}

impl Gates {
    pub async fn get(&self, client: &Client) -> ClusterGates {
        if let Some((at, gates)) = self.cached.lock().ok().and_then(|c| c.clone())
            && at.elapsed() < GATES_FOR
        {
            return gates;
        }
        let gates = cluster_gates(client).await;
        if let Ok(mut c) = self.cached.lock() {
            *c = Some((Instant::now(), gates.clone()));
        }
        gates
    }
}

/// Plans `input` with the cluster's gates, saying which they were.
fn plan_with(input: &mut PlanInput, gates: ClusterGates) -> Result<Plan> {
    input.gates = gates.gates;
    input.version = gates.release.version;
    let mut plan = plan::plan(input)?;
    plan.notes.push(format!(
        "predicted with {} and the feature gates of {}",
        gates.release.assumed(),
        gates.source
    ));
    Ok(plan)
}

/// What the plan API predicts `prepared` does, on the object it was prepared on and the pods
/// (and nodes) as the server has them now: the same mapping the subcommands print
/// (`crate::actions::preview`). `None` for kinds without a rollout.
pub async fn predict(
    client: &Client,
    gates: &Gates,
    prepared: &Prepared,
    state: &ObjectState,
) -> Option<Result<Prediction, String>> {
    workload_kind(&prepared.target)?;
    let result = prediction(
        client,
        gates,
        &prepared.target,
        state,
        prepared.action.describe(),
        |pods, nodes, now| {
            preview_input(&prepared.target, &prepared.action, state, pods, nodes, now)
        },
    )
    .await;
    Some(result.map_err(|e| format!("{e:#}")))
}

/// `Effect::PlanRollout`: the next step (or what happens next as things stand) on the objects
/// as the server has them now.
pub async fn plan_rollout(
    actor: Arc<Actor>,
    client: Client,
    gates: Arc<Gates>,
    workload: ObjectRef,
    partition: Option<String>,
) -> EffectResult {
    let target = Target::watched(
        workload.kind,
        workload.namespace.as_deref().unwrap_or_default(),
        &workload.name,
    );
    let result = async {
        let state = actor.read(&target, false).await?;
        let (change, text) = match &partition {
            Some(p) => (Change::Partition(p.clone()), format!("partition → {p}")),
            None => (Change::Nothing, "no change".to_owned()),
        };
        prediction(
            &client,
            &gates,
            &target,
            &state,
            text,
            |pods, nodes, now| live_input(&target, &state, pods, nodes, change, now),
        )
        .await
    }
    .await
    .map_err(|e| format!("{e:#}"));
    EffectResult::RolloutPlan {
        workload,
        result: Box::new(result),
    }
}

/// Plans what `input` makes of `target` (as `state` shows it) against its pods and nodes as
/// the server has them now, with the cluster's feature gates; `change` names the change.
async fn prediction(
    client: &Client,
    gates: &Gates,
    target: &Target,
    state: &ObjectState,
    change: String,
    input: impl FnOnce(&[Pod], &[Node], i64) -> Result<PlanInput>,
) -> Result<Prediction> {
    let kind = workload_kind(target)
        .ok_or_else(|| anyhow!("{} has no rollout to plan", target.describe()))?;
    let ns = target.namespace.clone().unwrap_or_default();
    let (pods, nodes) = workload::plan_objects(client, kind, &ns, &state.object).await?;
    let now = jiff::Timestamp::now().as_second();
    let mut input = input(&pods, &nodes, now)?;
    let plan = plan_with(&mut input, gates.get(client).await)?;
    Ok(Prediction {
        change,
        nodes: nodes_of(kind, &input),
        plan,
    })
}

/// Pod → node, for an Advanced DaemonSet (its plan orders nodes).
fn nodes_of(kind: WorkloadKind, input: &PlanInput) -> BTreeMap<String, String> {
    if kind != WorkloadKind::AdvancedDaemonSet {
        return BTreeMap::new();
    }
    input
        .pods
        .iter()
        .map(|p| (p.name.clone(), p.node_name.clone()))
        .collect()
}

/// `Effect::FetchRolloutEvents`: the events of the workload and of its pods, newest last.
pub async fn rollout_events(
    client: Client,
    namespace: String,
    workload: ObjectRef,
    pods: Vec<String>,
) -> EffectResult {
    let result = events_of(client, &namespace, &workload, &pods)
        .await
        .map_err(|e| format!("cannot read events: {e:#}"));
    EffectResult::RolloutEvents { workload, result }
}

async fn events_of(
    client: Client,
    ns: &str,
    workload: &ObjectRef,
    pods: &[String],
) -> Result<Vec<ObjectEvent>> {
    let info = workload.kind.info();
    // The kind an event is about, decoded from its involvedObject (one without an apiVersion is
    // read at the workload's group, else the core group).
    let involved = |o: &ObjectReference| {
        let k = o.kind.as_deref()?;
        match o.api_version.as_deref() {
            Some(v) => kinds::find_by_api_version(v, k),
            None => kinds::find(info.group, k).or_else(|| kinds::find("", k)),
        }
    };
    let list = Api::<CoreEvent>::namespaced(client, ns)
        .list(&ListParams::default())
        .await
        .plain()?;
    // A 1,000-pod workload in a namespace of many events: one lookup per event.
    let pods: std::collections::HashSet<&str> = pods.iter().map(String::as_str).collect();
    let mut events: Vec<CoreEvent> = list
        .items
        .into_iter()
        .filter(|ev| {
            let o = &ev.involved_object;
            let name = o.name.as_deref().unwrap_or_default();
            match involved(o) {
                Some(k) if *k == kinds::POD => pods.contains(name),
                // Advanced StatefulSet/DaemonSet share their kind name with apps/v1: the
                // group tells them apart.
                Some(k) => k == info && name == workload.name,
                None => false,
            }
        })
        .collect();
    events.sort_by_key(last_seen);
    let skip = events.len().saturating_sub(EVENTS_KEPT);
    Ok(events
        .into_iter()
        .skip(skip)
        .map(|ev| {
            let object = format!(
                "{}/{}",
                ev.involved_object.kind.as_deref().unwrap_or_default(),
                ev.involved_object.name.as_deref().unwrap_or_default()
            );
            ObjectEvent {
                object,
                event: event_row(ev),
            }
        })
        .collect())
}
