//! Predictions and the rollout view's reads: the plan API run on the objects as the server has
//! them now (the workload at its served version, its pods, the nodes for an Advanced
//! DaemonSet), for the confirm dialog and for the rollout view's next step; and the recent
//! events of a workload and its pods.

use std::{collections::BTreeMap, sync::Arc};

use anyhow::{Context as _, Result, anyhow};
use k8s_openapi::{
    api::core::v1::{Event as CoreEvent, Node, Pod},
    apimachinery::pkg::apis::meta::v1::LabelSelector,
};
use kube::{Api, Client, api::ListParams};
use serde_json::Value;

use super::{event_row, last_seen};
use crate::{
    actions::{Action, ObjectState, Paths, Prepared, Target, intstr},
    app::msg::{EffectResult, Kind, ObjectEvent, ObjectRef, Prediction},
    kruise::plan::{self, Change, PlanInput},
    kube::{
        act::Actor,
        errors::Plain as _,
        plan_cmd::{self, pod_selector},
    },
};

/// How many events the rollout view keeps.
const EVENTS_KEPT: usize = 50;

/// The revision name a prediction gives a template no revision holds yet.
pub const NEW_REVISION: &str = "(new revision)";

/// What the plan API predicts `prepared` does; `None` for actions that move no pods by
/// themselves (scaling).
pub async fn predict(
    actor: &Actor,
    client: &Client,
    prepared: &Prepared,
    state: &ObjectState,
) -> Option<Result<Prediction, String>> {
    let change = match &prepared.action {
        Action::Partition { value } => Change::Partition(intstr(value)),
        Action::Pause => Change::Pause,
        Action::Resume => Change::Resume,
        Action::Scale { .. } => return None,
        Action::Undo { .. } | Action::SetTemplate { .. } | Action::SetImage { .. } => {
            match template_change(actor, prepared, state).await {
                Ok(change) => change,
                Err(err) => return Some(Err(format!("{err:#}"))),
            }
        }
    };
    let now = jiff::Timestamp::now().as_second();
    Some(
        plan_on(client, &prepared.target, state, change, now)
            .await
            .map(|(plan, nodes)| Prediction {
                change: prepared.action.describe(),
                plan,
                nodes,
            })
            .map_err(|e| format!("{e:#}")),
    )
}

/// A template change as the planner sees it: back to a revision the workload already has
/// (its pods on that revision stay), or a new revision (in place when only images change).
async fn template_change(
    actor: &Actor,
    prepared: &Prepared,
    state: &ObjectState,
) -> Result<Change> {
    let paths = Paths::of(
        &prepared.target.kind,
        &prepared.target.group,
        &state.version,
    )
    .ok_or_else(|| anyhow!("{} has no template to plan", prepared.target.describe()))?;
    let mut after = state.object.clone();
    let patch: json_patch::Patch = serde_json::from_value(prepared.request.body.clone())
        .context("cannot read the prepared patch")?;
    json_patch::patch(&mut after, &patch).context("cannot apply the prepared patch")?;
    let before = state
        .object
        .pointer(paths.template)
        .cloned()
        .unwrap_or(Value::Null);
    let after = after
        .pointer(paths.template)
        .cloned()
        .unwrap_or(Value::Null);
    let revisions = if state.revisions.is_empty() {
        let uid = state
            .object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        actor
            .revisions(&prepared.target, uid)
            .await
            .unwrap_or_default()
    } else {
        state.revisions.clone()
    };
    Ok(match revisions.iter().find(|r| r.template == after) {
        Some(rev) => Change::Undo {
            to: Some(rev.name.clone()),
        },
        None => Change::NewRevision {
            revision: NEW_REVISION.to_owned(),
            in_place_possible: crate::actions::template_diff(&before, &after)
                .iter()
                .all(|line| line.starts_with("spec.containers[") && line.contains("].image:")),
        },
    })
}

/// The planner's input for `target` as read, with `change`.
pub fn plan_input(
    target: &Target,
    state: &ObjectState,
    pods: &[Pod],
    nodes: &[Node],
    change: Change,
    now: i64,
) -> Result<PlanInput> {
    let json = state.object.clone();
    // The partition text only picks the default change, replaced right after.
    let mut input = match target.kind.as_str() {
        "CloneSet" => plan_cmd::plan_input_from_objects(&state.version, json, pods, "0", now)?,
        "StatefulSet" => plan_cmd::asts_plan_input_from_objects(json, pods, "0", now)?,
        "DaemonSet" => plan_cmd::ads::ads_plan_input_from_objects(json, nodes, pods, "0", now)?,
        other => return Err(anyhow!("{other} has no rollout to plan")),
    };
    input.change = change;
    Ok(input)
}

/// Lists what the planner reads (the pods matching the selector; the nodes for a DaemonSet)
/// and plans `change`.
async fn plan_on(
    client: &Client,
    target: &Target,
    state: &ObjectState,
    change: Change,
    now: i64,
) -> Result<(plan::Plan, BTreeMap<String, String>)> {
    let ns = target.namespace.clone().unwrap_or_default();
    let daemon = target.kind == "DaemonSet";
    let (nodes, pods) = if daemon {
        plan_cmd::ads::fetch_nodes_and_pods(client, &ns, &state.object).await?
    } else {
        let selector: LabelSelector = state
            .object
            .pointer("/spec/selector")
            .map(|v| serde_json::from_value(v.clone()))
            .transpose()
            .context("cannot read the selector")?
            .unwrap_or_default();
        let pods = Api::<Pod>::namespaced(client.clone(), &ns)
            .list(&ListParams::default().labels_from(&pod_selector(&selector)?))
            .await
            .plain()
            .with_context(|| format!("cannot list the pods of {}", target.describe()))?
            .items;
        (Vec::new(), pods)
    };
    let input = plan_input(target, state, &pods, &nodes, change, now)?;
    let planned = plan::plan(&input)?;
    let nodes = if daemon {
        input
            .pods
            .iter()
            .map(|p| (p.name.clone(), p.node_name.clone()))
            .collect()
    } else {
        BTreeMap::new()
    };
    Ok((planned, nodes))
}

/// `Effect::PlanRollout`: the next step (or what happens next as things stand) on the objects
/// as the server has them now.
pub async fn plan_rollout(
    actor: Arc<Actor>,
    client: Client,
    workload: ObjectRef,
    partition: Option<String>,
) -> EffectResult {
    let result = async {
        let target = crate::app::act::target_of(
            workload.kind,
            workload.namespace.as_deref().unwrap_or_default(),
            &workload.name,
        )
        .ok_or_else(|| anyhow!("{} has no rollout", workload.name))?;
        let state = actor.read(&target, false).await?;
        let (change, text) = match &partition {
            Some(p) => (Change::Partition(p.clone()), format!("partition → {p}")),
            None => (Change::Nothing, "no change".to_owned()),
        };
        let now = jiff::Timestamp::now().as_second();
        let (plan, nodes) = plan_on(&client, &target, &state, change, now).await?;
        Ok::<_, anyhow::Error>(Prediction {
            change: text,
            plan,
            nodes,
        })
    }
    .await
    .map_err(|e| format!("{e:#}"));
    EffectResult::RolloutPlan { workload, result }
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
    let kind = workload.kind.debug_name();
    let list = Api::<CoreEvent>::namespaced(client, ns)
        .list(&ListParams::default())
        .await
        .plain()?;
    let mut events: Vec<CoreEvent> = list
        .items
        .into_iter()
        .filter(|ev| {
            let o = &ev.involved_object;
            let name = o.name.as_deref().unwrap_or_default();
            match o.kind.as_deref() {
                Some("Pod") => pods.iter().any(|p| p == name),
                // Advanced StatefulSet/DaemonSet share their kind name with apps/v1.
                Some(k) => {
                    k == kind
                        && name == workload.name
                        && (workload.kind == Kind::CloneSet
                            || o.api_version
                                .as_deref()
                                .is_none_or(|v| v.starts_with("apps.kruise.io/")))
                }
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
