//! A Rollout's steps as the rollout view lists them: replicas as written and resolved on the
//! workload's R, the partition the step sets, how it pauses, its traffic (display only), and
//! where the run stands.
//!
//! The partition math is the BatchRelease port's (research kruise-rollout.md §3.5).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{Pause, RolloutRow};
use crate::actions::intstr;
use crate::{
    app::msg::Kind,
    kruise::rollout::{scale, workload::TargetKind},
};

/// Where a step stands in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Done,
    Current,
    /// A pending jump points here (`nextStepIndex ≠ current + 1`).
    JumpTarget,
    Later,
}

/// One step of the Rollout on this workload.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRow {
    /// 1-based.
    pub index: i32,
    /// `replicas` as written (`1`, `50%`).
    pub replicas: String,
    /// Pods on the new revision once the step is done (`scale(·, R)` clamped to R).
    pub pods: Option<i32>,
    /// The partition the BatchRelease sets for it.
    pub partition: Option<String>,
    pub pause: Pause,
    /// `traffic`, and whether header/path matches are configured (display only).
    pub traffic: Option<String>,
    pub matches: bool,
    pub mark: Mark,
}

/// The partition the BatchRelease writes for a step of `batch` pods on R replicas: the port's
/// [`kruise::rollout::batchrelease::step_partition`] for the workload's kind.
pub fn step_partition(kind: Kind, batch: &IntOrString, replicas: i32) -> IntOrString {
    let target = match kind {
        Kind::CloneSet => TargetKind::CloneSet,
        Kind::DaemonSet => TargetKind::AdvancedDaemonSet,
        _ => TargetKind::AdvancedStatefulSet,
    };
    crate::kruise::rollout::batchrelease::step_partition(target, batch, replicas)
}

/// The steps of `row`, marked against where the run stands.
pub fn plan(row: &RolloutRow) -> Vec<StepRow> {
    let steps = row.rollout.steps();
    let n = steps.len();
    let jump =
        (row.live() && row.next_step > 0 && row.next_step != row.step + 1).then_some(row.next_step);
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let index = i as i32 + 1;
            let pods = row
                .replicas
                .zip(s.replicas.as_ref())
                .map(|(r, v)| scale(v, r).map_or(0, |p| p.clamp(0, r.max(0))));
            let partition = row
                .replicas
                .zip(row.workload_kind)
                .zip(s.replicas.as_ref())
                .map(|((r, k), v)| intstr(&step_partition(k, v, r)));
            let mark = if jump == Some(index) {
                Mark::JumpTarget
            } else if index == row.step && row.step > 0 {
                Mark::Current
            } else if index < row.step {
                Mark::Done
            } else {
                Mark::Later
            };
            StepRow {
                index,
                replicas: s.replicas.as_ref().map_or_else(|| "-".to_owned(), intstr),
                pods,
                partition,
                pause: Pause::of(s, i + 1 == n),
                traffic: s.traffic.clone(),
                matches: !s.matches.is_empty(),
                mark,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pct(s: &str) -> IntOrString {
        IntOrString::String(s.to_owned())
    }

    #[test]
    fn the_worked_example_sets_nine_then_half_then_none() {
        // research §3.12: CloneSet R=10, steps 1, 50%, 100%.
        assert_eq!(
            step_partition(Kind::CloneSet, &IntOrString::Int(1), 10),
            IntOrString::Int(9)
        );
        assert_eq!(step_partition(Kind::CloneSet, &pct("50%"), 10), pct("50%"));
        assert_eq!(step_partition(Kind::CloneSet, &pct("100%"), 10), pct("0%"));
        // An Advanced StatefulSet or DaemonSet always gets the int.
        assert_eq!(
            step_partition(Kind::StatefulSet, &pct("50%"), 10),
            IntOrString::Int(5)
        );
        assert_eq!(
            step_partition(Kind::DaemonSet, &IntOrString::Int(20), 10),
            IntOrString::Int(0)
        );
        // 101 pods, 1% then 50%: research §5.2's table.
        assert_eq!(step_partition(Kind::CloneSet, &pct("1%"), 101), pct("98%"));
        assert_eq!(step_partition(Kind::CloneSet, &pct("50%"), 101), pct("49%"));
    }
}
