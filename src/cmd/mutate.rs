//! One mutating subcommand, start to end: prepare the action on the object as it is (bad input
//! is refused here, even in read-only mode), predict with the plan API which pods move next,
//! send it through the action layer (SSAR, pinned patch, conflict re-check, journal; nothing in
//! read-only mode), and print what changed in kubectl's voice, then the prediction.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::Value;

use super::{Session, render::render_moves, workload_kind};
use crate::{
    actions::{
        Action, ObjectState, Paths, Prepared, Target,
        preview::{change_for, is_active_and_owned, preview_input},
    },
    cli::{KubeArgs, args::WorkloadArg},
    kruise::plan::{self, Change, WorkloadKind},
    kube::{act::ActError, workload},
};

/// Runs `action` on `workload`; with `predict`, prints the pods the controller moves next.
pub(super) async fn run(
    kube: &KubeArgs,
    workload: &WorkloadArg,
    action: Action,
    predict: bool,
) -> Result<()> {
    run_forced(kube, workload, action, predict, false).await
}

/// [`run`], with the Kruise Rollout guard overridden by `force` (a partition, pause, resume or
/// undo on a workload a Rollout is releasing is refused otherwise).
pub(super) async fn run_forced(
    kube: &KubeArgs,
    workload: &WorkloadArg,
    action: Action,
    predict: bool,
    force: bool,
) -> Result<()> {
    let session = Session::open(kube).await?;
    let target = session.target(workload);
    let actor = session.actor(kube.readonly)?;
    // The Rollout guard first: a refusal naming the Rollout says more than why the action would
    // not apply.
    let read = actor.read(&target, false).await.map_err(one_line)?;
    let guard =
        super::rollout::kruise::guard(&session, workload, &action, &read.object, force).await?;
    let (mut prepared, state) = actor.prepare(&target, &action).await.map_err(one_line)?;
    // A template change a Rollout intercepts moves no pod until the Rollout's step 1: the
    // workload's own plan would not say what happens.
    let predict = predict
        && (guard.is_none()
            || matches!(
                action,
                Action::Partition { .. } | Action::Pause | Action::Resume
            ));
    if let Some(line) = guard {
        prepared.notes.insert(0, line);
    }
    let kind = workload_kind(workload);
    let named = match &action {
        Action::Scale { pods, .. } => pods.as_slice(),
        _ => &[],
    };
    let (pods, nodes) = if predict || !named.is_empty() {
        workload::plan_objects(session.client(), kind, &session.namespace, &state.object).await?
    } else {
        (Vec::new(), Vec::new())
    };
    check_named_pods(workload, &state.object, &pods, named)?;
    let cluster = if predict {
        Some(crate::kube::gates::cluster_gates(session.client()).await)
    } else {
        None
    };
    let prediction = predict
        .then(|| {
            let cluster = cluster.as_ref()?;
            prediction(kind, &target, &action, &state, &pods, &nodes, cluster)
        })
        .flatten();
    let report = report(workload, &prepared, &state);
    let done = actor.perform(prepared, state).await.map_err(one_line)?;
    print!("{report}");
    if done.retries > 0 {
        println!(
            "note: sent after {} retr{} (other fields changed meanwhile; the ones this changes \
             had not)",
            done.retries,
            if done.retries == 1 { "y" } else { "ies" }
        );
    }
    if let Some(text) = prediction {
        print!("{text}");
    }
    Ok(())
}

/// The action layer's error as its one line (its source, already in the line, is not repeated).
fn one_line(err: ActError) -> anyhow::Error {
    anyhow::Error::msg(err.to_string())
}

/// Refuses pods to delete that are not active pods of the workload: the controller would ignore
/// them and, scaling down, delete others instead.
fn check_named_pods(
    workload: &WorkloadArg,
    object: &Value,
    pods: &[Pod],
    named: &[String],
) -> Result<()> {
    if named.is_empty() {
        return Ok(());
    }
    let uid = object
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let own: Vec<&str> = pods
        .iter()
        .filter(|p| is_active_and_owned(p, uid))
        .filter_map(|p| p.metadata.name.as_deref())
        .collect();
    if let Some(stranger) = named.iter().find(|n| !own.contains(&n.as_str())) {
        bail!(
            "pod {stranger:?} is not a running pod of {} (its pods: {}); nothing sent",
            workload.resource_name(),
            if own.is_empty() {
                "none".to_owned()
            } else {
                own.join(", ")
            }
        );
    }
    Ok(())
}

/// What was changed, as kubectl says it (`cloneset.apps.kruise.io/web partitioned: 6 → 3`),
/// the changed fields one per line, and the action layer's notes.
fn report(workload: &WorkloadArg, prepared: &Prepared, state: &ObjectState) -> String {
    let name = workload.resource_name();
    let mut out = String::new();
    let mut details: &[String] = &prepared.changes;
    match &prepared.action {
        Action::Partition { value } => {
            let old = Paths::of(prepared.target.kind, &state.version)
                .and_then(|p| state.object.pointer(p.partition))
                .filter(|v| !v.is_null())
                .map_or_else(
                    || "0".to_owned(),
                    |v| v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                );
            let _ = writeln!(
                out,
                "{name} partitioned: {old} → {}",
                crate::actions::intstr(value)
            );
            details = &[];
        }
        Action::Pause => {
            let _ = writeln!(out, "{name} paused");
            details = &[];
        }
        Action::Resume => {
            let _ = writeln!(out, "{name} resumed");
            details = &[];
        }
        Action::Undo { .. } => {
            let to = match change_for(&prepared.target, &prepared.action, state) {
                Ok(Change::Undo { to: Some(rev) }) => state
                    .revisions
                    .iter()
                    .find(|r| r.name == rev)
                    .map(|r| format!(" to revision {} ({})", r.number, r.name)),
                _ => None,
            };
            let _ = writeln!(out, "{name} rolled back{}", to.unwrap_or_default());
            // The first line names the revision, as the headline does.
            details = prepared.changes.get(1..).unwrap_or_default();
        }
        Action::SetImage { .. } => {
            let _ = writeln!(out, "{name} image updated");
        }
        Action::SetTemplate { .. } => {
            let _ = writeln!(out, "{name} template replaced");
        }
        Action::Scale { .. } => {
            let _ = writeln!(out, "{name} scaled");
        }
        // Not rollout actions (their own subcommands report them).
        Action::Restart { .. }
        | Action::Protect { .. }
        | Action::Delete
        | Action::Approve { .. } => {
            let _ = writeln!(out, "{name} {}", prepared.action.describe());
        }
    }
    for line in details {
        let _ = writeln!(out, "  {line}");
    }
    for note in &prepared.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The plan API's prediction of the pods that move, as `plan` prints them; `None` where the
/// planner does not cover the change (an Advanced DaemonSet's template).
fn prediction(
    kind: WorkloadKind,
    target: &Target,
    action: &Action,
    state: &ObjectState,
    pods: &[Pod],
    nodes: &[Node],
    cluster: &crate::kube::gates::ClusterGates,
) -> Option<String> {
    if kind == WorkloadKind::AdvancedDaemonSet
        && !matches!(
            action,
            Action::Partition { .. } | Action::Pause | Action::Resume
        )
    {
        return None;
    }
    let now = jiff::Timestamp::now().as_second();
    let planned = preview_input(target, action, state, pods, nodes, now).and_then(|mut input| {
        // Predicted with the gates and the release the cluster's controllers decide with.
        input.gates = cluster.gates.clone();
        input.version = cluster.release.version;
        Ok((plan::plan(&input)?, input))
    });
    Some(match planned {
        Ok((planned, input)) => format!(
            "\nPredicted by the embedded Kruise logic ({}):{}",
            cluster.release.assumed(),
            render_moves(&planned, &input)
        ),
        Err(err) => format!("\n(no prediction: {err:#})\n"),
    })
}
