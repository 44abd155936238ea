//! Printing for people: the plan (`plan`, and the prediction after `rollout partition` /
//! `rollout undo` / `set image`). Pure: text from the plan API's answer.

use std::fmt::Write as _;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::kruise::plan::{Action, Direction, Plan, PlanInput, WorkloadKind};

fn or_default(v: Option<&IntOrString>, default: &str) -> String {
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
                kind => kind.default_max_unavailable(),
            }
        ),
        plan.max_unavailable,
        or_default(
            w.max_surge.as_ref(),
            plan.kind.default_max_surge().unwrap_or("0")
        ),
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
    out.push_str(&render_moves(plan, input));
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

/// What moves, in order (one line per pod: how, from which revision, next step or what blocks
/// it), and what is left out; `No pod moves.` when nothing does. Starts with a blank line.
pub fn render_moves(plan: &Plan, input: &PlanInput) -> String {
    let mut out = String::new();
    let daemon = plan.kind == WorkloadKind::AdvancedDaemonSet;
    let unit = if daemon { "node(s)" } else { "pod(s)" };
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
    out
}
