//! `kruise-tui plan KIND/NAME --partition V`: reads the live workload and its pods and prints the
//! embedded logic's plan.
//!
//! The IO is [`run_plan`]; mapping served objects to the planner's input
//! ([`plan_input_from_objects`]) and printing ([`render_plan`]) are pure so they are tested on
//! fixtures. The Advanced DaemonSet mapping (it also reads the nodes) is in [`ads`].

pub mod ads;

use std::fmt::Write as _;

use anyhow::{Context as _, Result, anyhow, bail};
use k8s_openapi::{
    api::core::v1::Pod,
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};
use kube::{
    Api,
    api::{DynamicObject, ListParams},
    core::Selector,
};
use serde_json::Value;

use super::{
    discovery::{discover_kruise, preferred_version, readable_versions},
    errors::Plain,
};
use crate::{
    api::cloneset::from_served_json,
    app::msg::Kind,
    cli::PlanArgs,
    kruise::{
        FeatureGates, KruiseVersion,
        cloneset::{
            DELETION_COST_ANNOTATION, EXCLUDE_PREPARING_DELETE_LABEL, SPECIFIED_DELETE_LABEL,
            inplace,
        },
        intstr,
        plan::{
            self, Action, Change, Direction, Guards, Plan, PlanInput, PlanPod, PlanWorkload,
            WorkloadKind,
        },
        revision,
        statefulset::RollingUpdate,
    },
};

/// `kruise-tui plan KIND/NAME --partition V`.
pub fn run_plan(args: PlanArgs) -> Result<()> {
    let (kind, name) = parse_target(&args.target)?;
    intstr::parse_partition_input(&args.partition, None)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let text = runtime.block_on(fetch_and_plan(&args, kind, &name))?;
    print!("{text}");
    Ok(())
}

/// Splits `KIND/NAME`, naming the accepted kinds on error.
pub fn parse_target(target: &str) -> Result<(WorkloadKind, String)> {
    let (kind, name) = target
        .split_once('/')
        .filter(|(k, n)| !k.is_empty() && !n.is_empty())
        .ok_or_else(|| anyhow!("{target:?} is not KIND/NAME (e.g. cloneset/web)"))?;
    let kind = WorkloadKind::parse(kind).ok_or_else(|| {
        anyhow!(
            "unknown workload kind {kind:?}: plan takes cloneset|clone|cs, \
             asts|statefulset.apps.kruise.io or ads|daemonset.apps.kruise.io"
        )
    })?;
    Ok((kind, name.to_owned()))
}

async fn fetch_and_plan(args: &PlanArgs, kind: WorkloadKind, name: &str) -> Result<String> {
    let conn = crate::kube::connect::connect(&args.kube, None).await?;
    let namespace = args
        .kube
        .namespace
        .clone()
        .unwrap_or_else(|| conn.default_namespace.clone());
    let (served_kind, console_kind) = match kind {
        WorkloadKind::AdvancedStatefulSet => ("StatefulSet", Kind::StatefulSet),
        WorkloadKind::AdvancedDaemonSet => ("DaemonSet", Kind::DaemonSet),
        WorkloadKind::CloneSet => ("CloneSet", Kind::CloneSet),
    };
    let shown = kind.display();
    let apis = discover_kruise(&conn.client)
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
    // The version the CRD stores (or the newest served) among those the planner reads: another
    // served version may be a pruned view (a bare multi-version CRD has no conversion).
    let served = preferred_version(
        &apis.served,
        "apps.kruise.io",
        served_kind,
        readable_versions(console_kind),
    )
    .ok_or_else(|| anyhow!("the cluster serves apps.kruise.io but not {served_kind}"))?;
    let resource = served.resource.clone();
    let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), &namespace, &resource);
    let object = api
        .get_opt(name)
        .await
        .plain()
        .with_context(|| format!("cannot read {shown} {namespace}/{name}"))?
        .ok_or_else(|| anyhow!("{shown} {namespace}/{name} not found"))?;
    let json =
        serde_json::to_value(&object).with_context(|| format!("cannot encode the {shown}"))?;
    let now = jiff::Timestamp::now().as_second();
    let input = if kind == WorkloadKind::AdvancedDaemonSet {
        let (nodes, pods) = ads::fetch_nodes_and_pods(&conn.client, &namespace, &json).await?;
        ads::ads_plan_input_from_objects(json, &nodes, &pods, &args.partition, now)?
    } else {
        let selector: LabelSelector = json
            .pointer("/spec/selector")
            .map(|v| serde_json::from_value(v.clone()))
            .transpose()
            .with_context(|| format!("cannot read the selector of {shown} {namespace}/{name}"))?
            .unwrap_or_default();
        let pods_api: Api<Pod> = Api::namespaced(conn.client.clone(), &namespace);
        let pods = pods_api
            .list(&ListParams::default().labels_from(&pod_selector(&selector)?))
            .await
            .plain()
            .with_context(|| format!("cannot list the pods of {shown} {namespace}/{name}"))?
            .items;
        if kind == WorkloadKind::AdvancedStatefulSet {
            asts_plan_input_from_objects(json, &pods, &args.partition, now)?
        } else {
            plan_input_from_objects(&resource.version, json, &pods, &args.partition, now)?
        }
    };
    let planned = plan::plan(&input)?;
    Ok(render_plan(&planned, &input, &args.partition))
}

/// Maps a served Advanced StatefulSet (v1beta1 or v1alpha1 JSON) and its listed pods to the
/// planner's input for `--partition partition`.
pub fn asts_plan_input_from_objects(
    json: Value,
    pods: &[Pod],
    partition: &str,
    now: i64,
) -> Result<PlanInput> {
    let meta: ObjectMeta = json
        .get("metadata")
        .map(|m| serde_json::from_value(m.clone()))
        .transpose()
        .context("cannot read the metadata")?
        .unwrap_or_default();
    let name = meta.name.clone().unwrap_or_default();
    let field = |pointer: &str| json.pointer(pointer).filter(|v| !v.is_null()).cloned();
    let rolling: Option<RollingUpdate> = field("/spec/updateStrategy/rollingUpdate")
        .map(serde_json::from_value)
        .transpose()
        .context("cannot read updateStrategy.rollingUpdate")?;
    // The controller's reading of the spec (upstream's defaults included), so the plan predicts
    // what the embedded controller does. v1alpha1 and v1beta1 read alike.
    let set = crate::api::statefulset::from_served_json("v1beta1", json.clone())
        .context("cannot read the Advanced StatefulSet")?;
    let asts = crate::kruise::statefulset::reconcile::spec_of(&set);
    let revision_of =
        |key: &str| field(&format!("/status/{key}")).and_then(|v| v.as_str().map(str::to_owned));
    let update_revision = revision_of("updateRevision").ok_or_else(|| {
        anyhow!("Advanced StatefulSet {name} has no status yet: its controller has not seen it")
    })?;
    let workload = PlanWorkload {
        kind: WorkloadKind::AdvancedStatefulSet,
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: name.clone(),
        replicas: asts.replicas,
        partition: rolling.as_ref().map(|r| IntOrString::Int(r.partition)),
        max_unavailable: rolling.as_ref().and_then(|r| r.max_unavailable.clone()),
        paused: rolling.as_ref().is_some_and(|r| r.paused),
        current_revision: revision_of("currentRevision").unwrap_or_else(|| update_revision.clone()),
        update_revision,
        strategy_type: field("/spec/updateStrategy/rollingUpdate/podUpdatePolicy")
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "ReCreate".to_owned()),
        min_ready_seconds: rolling.as_ref().map_or(0, |r| r.min_ready_seconds),
        asts: Some(asts),
        ..PlanWorkload::default()
    };
    Ok(partition_input(workload, &meta, pods, partition, now))
}

/// A workload's pod selector as kube's label [`Selector`], for listing its pods; a malformed
/// requirement (bad operator, `In` without values) is a clear error, not a wrong query.
pub fn pod_selector(selector: &LabelSelector) -> Result<Selector> {
    Selector::try_from(selector.clone())
        .map_err(|e| anyhow!("the workload's pod selector is not valid: {}", e.0))
}

fn strategy_field<'a>(json: &'a Value, key: &str) -> Option<&'a Value> {
    let strategy = json.pointer("/spec/updateStrategy")?;
    strategy
        .get(key)
        .or_else(|| strategy.pointer(&format!("/rollingUpdate/{key}")))
        .filter(|v| !v.is_null())
}

fn parse_strategy<T: serde::de::DeserializeOwned>(json: &Value, key: &str) -> Result<Option<T>> {
    strategy_field(json, key)
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
        .with_context(|| format!("cannot read updateStrategy.{key}"))
}

/// Maps a served CloneSet (JSON, in its served `version`) and its listed pods to the planner's
/// input for `--partition partition`.
pub fn plan_input_from_objects(
    version: &str,
    json: Value,
    pods: &[Pod],
    partition: &str,
    now: i64,
) -> Result<PlanInput> {
    let cs = from_served_json(version, json.clone()).context("cannot read the CloneSet")?;
    let meta = &cs.metadata;
    let name = meta.name.clone().unwrap_or_default();
    let status = cs.status.clone().ok_or_else(|| {
        anyhow!("CloneSet {name} has no status yet: its controller has not seen it")
    })?;
    let strategy = &cs.spec.update_strategy;
    let mut strategy_type = strategy.type_.clone().unwrap_or_default();
    if matches!(strategy_type.as_str(), "RollingUpdate" | "OnDelete") {
        strategy_type = strategy_field(&json, "podUpdatePolicy")
            .and_then(Value::as_str)
            .unwrap_or("ReCreate")
            .to_owned();
    }
    let scale = json.pointer("/spec/scaleStrategy");
    let workload = PlanWorkload {
        kind: WorkloadKind::CloneSet,
        namespace: meta.namespace.clone().unwrap_or_default(),
        name: name.clone(),
        replicas: cs.spec.replicas.unwrap_or(1),
        partition: strategy.partition.clone(),
        max_unavailable: strategy.max_unavailable.clone(),
        max_surge: strategy.max_surge.clone(),
        paused: strategy.paused,
        current_revision: status.current_revision.clone(),
        update_revision: status.update_revision.clone(),
        strategy_type,
        priority: parse_strategy(&json, "priorityStrategy")?,
        scatter: parse_strategy(&json, "scatterStrategy")?.unwrap_or_default(),
        min_ready_seconds: cs.spec.min_ready_seconds.unwrap_or(0),
        scale_max_unavailable: scale
            .and_then(|s| s.get("maxUnavailable"))
            .filter(|v| !v.is_null())
            .map(|v| serde_json::from_value(v.clone()))
            .transpose()
            .context("cannot read scaleStrategy.maxUnavailable")?,
        exclude_preparing_delete: meta
            .labels
            .as_ref()
            .and_then(|l| l.get(EXCLUDE_PREPARING_DELETE_LABEL))
            .is_some_and(|v| v == "true")
            || scale
                .and_then(|s| s.get("excludePreparingDelete"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
        pods_to_delete: scale
            .and_then(|s| s.get("podsToDelete"))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default(),
        in_place_possible: true,
        lifecycle: json
            .pointer("/spec/lifecycle")
            .filter(|v| !v.is_null())
            .map(|v| serde_json::from_value(v.clone()))
            .transpose()
            .context("cannot read spec.lifecycle")?,
        asts: None,
        ads: None,
    };
    Ok(partition_input(workload, meta, pods, partition, now))
}

/// The planner's input for a partition change: the workload plus its active, owned pods.
pub(crate) fn partition_input(
    workload: PlanWorkload,
    meta: &ObjectMeta,
    pods: &[Pod],
    partition: &str,
    now: i64,
) -> PlanInput {
    let uid = meta.uid.clone().unwrap_or_default();
    let pods = pods
        .iter()
        .filter(|p| is_active_and_owned(p, &uid))
        .map(plan_pod)
        .collect();
    PlanInput {
        workload,
        pods,
        change: Change::Partition(partition.to_owned()),
        guards: Guards::default(),
        gates: FeatureGates::new(),
        version: KruiseVersion::V1_8,
        now,
    }
}

pub(crate) fn is_active_and_owned(pod: &Pod, owner_uid: &str) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    let owned =
        controller_uid(&pod.metadata).is_none_or(|u| owner_uid.is_empty() || u == owner_uid);
    pod.metadata.deletion_timestamp.is_none()
        && !matches!(phase, Some("Succeeded" | "Failed"))
        && owned
}

fn controller_uid(meta: &ObjectMeta) -> Option<&str> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str())
}

/// The planner's view of one pod.
pub fn plan_pod(pod: &Pod) -> PlanPod {
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let conditions = status.conditions.unwrap_or_default();
    let condition = |t: &str| conditions.iter().find(|c| c.type_ == t);
    let ready = condition("Ready").filter(|c| c.status == "True");
    PlanPod {
        name: pod.metadata.name.clone().unwrap_or_default(),
        revision: labels
            .get(revision::CONTROLLER_REVISION_HASH_LABEL)
            .cloned()
            .unwrap_or_default(),
        phase: status.phase.unwrap_or_default(),
        node_name: pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        ready: ready.is_some(),
        ready_since: ready
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| t.0.as_second()),
        in_place_update_ready: condition(inplace::IN_PLACE_UPDATE_READY)
            .is_none_or(|c| c.status == "True"),
        lifecycle_state: labels
            .get(revision::LIFECYCLE_STATE_LABEL)
            .cloned()
            .unwrap_or_default(),
        created: pod
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.as_second()),
        restarts: status
            .container_statuses
            .iter()
            .flatten()
            .map(|c| c.restart_count)
            .max()
            .unwrap_or(0),
        deletion_cost: annotations.get(DELETION_COST_ANNOTATION).cloned(),
        specified_delete: labels.contains_key(SPECIFIED_DELETE_LABEL),
        in_place_grace: annotations.contains_key(inplace::GRACE_KEY)
            || annotations.contains_key(inplace::GRACE_KEY_OLD),
        finalizers: pod.metadata.finalizers.clone().unwrap_or_default(),
        labels,
    }
}

fn or_default(
    v: Option<&k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    default: &str,
) -> String {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match v {
        Some(IntOrString::Int(i)) => i.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => default.to_owned(),
    }
}

/// Prints the plan for people: the workload, what moves in order, what blocks, the numbers.
pub fn render_plan(plan: &Plan, input: &PlanInput, partition_text: &str) -> String {
    let w = &input.workload;
    let mut out = String::new();
    let _ = writeln!(out, "{} {}/{}", plan.kind.display(), w.namespace, plan.name);
    // An Advanced DaemonSet counts nodes: one pod each, shown with its node.
    let daemon = plan.kind == WorkloadKind::AdvancedDaemonSet;
    let (replicas, unit) = if daemon {
        ("desired nodes", "node(s)")
    } else {
        ("replicas", "pod(s)")
    };
    let _ = writeln!(
        out,
        "  {replicas} {}  partition {} -> {} ({} {unit} stay on old revisions)",
        w.replicas,
        or_default(w.partition.as_ref(), "0"),
        partition_text,
        plan.partition
    );
    let _ = writeln!(
        out,
        "  maxUnavailable {} ({})  maxSurge {} ({})  strategy {}  paused {}",
        or_default(
            w.max_unavailable.as_ref(),
            // Upstream's defaults: CloneSet 20%, Advanced StatefulSet 1.
            match plan.kind {
                WorkloadKind::AdvancedDaemonSet => "unset",
                WorkloadKind::AdvancedStatefulSet => "1",
                WorkloadKind::CloneSet => "20%",
            }
        ),
        plan.max_unavailable,
        or_default(w.max_surge.as_ref(), "0"),
        plan.max_surge,
        if w.strategy_type.is_empty() {
            "ReCreate"
        } else {
            &w.strategy_type
        },
        if plan.paused { "yes" } else { "no" }
    );
    let _ = writeln!(
        out,
        "  revisions: current {}  update {}",
        plan.current_revision, plan.update_revision
    );
    let verb = match plan.direction {
        Direction::Forward => "update to",
        Direction::Rollback => "roll back to",
        Direction::Delete => "are deleted",
        Direction::None => "",
    };
    let target = plan.moves.first().map_or("", |m| m.to_revision.as_str());
    if plan.moves.is_empty() {
        let _ = writeln!(out, "\nNo pod moves.");
    } else {
        let _ = writeln!(
            out,
            "\n{} {unit} {verb} {target}, in this order:",
            plan.moves.len()
        );
        let node_of = |pod: &str| {
            input
                .pods
                .iter()
                .find(|p| p.name == pod)
                .map_or("", |p| p.node_name.as_str())
        };
        let node_width = if daemon {
            plan.moves
                .iter()
                .map(|m| node_of(&m.name).len())
                .max()
                .unwrap_or(4)
                .max(4)
        } else {
            0
        };
        let node_cell = |node: &str| {
            if daemon {
                format!("{node:<node_width$}  ")
            } else {
                String::new()
            }
        };
        let width = plan
            .moves
            .iter()
            .map(|m| m.name.len())
            .max()
            .unwrap_or(3)
            .max(3);
        let _ = writeln!(
            out,
            "  {:>3}  {}{:<width$}  {:<9}  {:<24}  WHEN",
            "#",
            node_cell("NODE"),
            "POD",
            "HOW",
            "FROM"
        );
        for (i, m) in plan.moves.iter().enumerate() {
            let how = match m.action {
                Action::InPlace => "in-place",
                Action::Recreate => "recreate",
                Action::Delete => "delete",
            };
            let when = m
                .blocked
                .as_ref()
                .map_or_else(|| "next step".to_owned(), |b| format!("blocked: {b}"));
            let _ = writeln!(
                out,
                "  {:>3}  {}{:<width$}  {how:<9}  {:<24}  {when}",
                i + 1,
                node_cell(node_of(&m.name)),
                m.name,
                m.from_revision
            );
        }
    }
    let skipped = if daemon { "held back" } else { "skipped" };
    for (pod, why) in &plan.skipped {
        let _ = writeln!(out, "  {skipped} {pod}: {why}");
    }
    let s = &plan.status;
    let _ = writeln!(out, "\nStatus:");
    let _ = writeln!(
        out,
        "  now:            replicas {}  ready {}  available {}  updated {}  updatedReady {}",
        s.replicas,
        s.ready_replicas,
        s.available_replicas,
        s.updated_replicas,
        s.updated_ready_replicas
    );
    let _ = writeln!(
        out,
        "  expectedUpdatedReplicas {}",
        s.expected_updated_replicas
    );
    let _ = writeln!(
        out,
        "  after next step: updated {}",
        s.updated_after_next_step
    );
    let _ = writeln!(
        out,
        "  at convergence:  updated {}",
        s.updated_at_convergence
    );
    if !plan.notes.is_empty() {
        let _ = writeln!(out, "\nNotes:");
        for note in &plan.notes {
            let _ = writeln!(out, "  - {note}");
        }
    }
    out
}
