//! Evaluator for `rollout-intercept.json`: the workload mutating webhook's decision.

use serde_json::{Value, json};

use kruise_tui::api::rollout::Rollout;
use kruise_tui::kruise::rollout::batchrelease::intercept;
use kruise_tui::kruise::rollout::workload::TargetKind;

use super::common::{expect_subset, expected, input, no_op, parse};

pub fn intercept_case(op: Option<&str>, case: &Value) -> Result<(), String> {
    no_op(op, "rollout-intercept.json")?;
    let i = input(case)?;
    let kind = match i["kind"].as_str() {
        Some("CloneSet") => TargetKind::CloneSet,
        Some("StatefulSet") => TargetKind::StatefulSet,
        Some("AdvancedStatefulSet") => TargetKind::AdvancedStatefulSet,
        Some("AdvancedDaemonSet") => TargetKind::AdvancedDaemonSet,
        other => return Err(format!("unknown kind {other:?}")),
    };
    let rollouts: Vec<Rollout> = parse("rollouts", &i["rollouts"])?;
    let out = intercept(kind, &i["old"], &i["new"], &rollouts);
    let got = json!({"intercepted": out.is_some(), "object": out});
    expect_subset(expected(case)?, &got)
}
