//! `rollout status rollout/NAME [--watch] [--timeout D]`: a Kruise Rollout as research §7.2
//! says to show it: phase and Progressing reason, step i/N and its state, the message, each step
//! (replicas as written and resolved against the workload's replicas, the pause: manual, Ns or
//! auto for a final "100%"), the time left in a timed pause (nobody else shows it), and the
//! BatchRelease's batch. With --watch, printed again on every change until the Rollout is
//! Healthy (exit 0), deleted or past --timeout (exit 1).

use std::fmt::Write as _;

use anyhow::{Result, anyhow, bail};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{Api, core::ApiResource};

use crate::{
    actions::{Target, intstr},
    api::rollout::{BatchRelease, Rollout, condition, phase, step_state},
    cli::{KubeArgs, RolloutStatusArgs},
    cmd::Session,
    kruise::rollout::calculate_batch_replicas,
    kube::workload,
};

/// What the status of a Rollout reads besides the Rollout: its BatchRelease and the replicas of
/// its workload (to resolve percents).
#[derive(Debug, Clone, Default)]
pub struct Related {
    pub batch_release: Option<BatchRelease>,
    pub replicas: Option<i32>,
}

/// The seconds left in the current step's timed pause: `max(0, lastUpdateTime + duration − now)`,
/// only while Progressing / InRolling / StepPaused on a step with a duration (research §3.6).
pub fn time_left(rollout: &Rollout, now: Timestamp) -> Option<(i64, i32)> {
    let status = rollout.canary_status()?;
    let reason = rollout.condition(condition::PROGRESSING)?.reason.as_str();
    if rollout.phase() != phase::PROGRESSING
        || reason != condition::REASON_IN_ROLLING
        || status.current_step_state != step_state::STEP_PAUSED
    {
        return None;
    }
    let step = rollout
        .steps()
        .get(usize::try_from(status.current_step_index - 1).ok()?)?;
    let duration = step.pause.as_ref()?.duration?;
    let since = status.last_update_time.as_ref()?.0.as_second();
    Some((
        (since + i64::from(duration) - now.as_second()).max(0),
        duration,
    ))
}

/// How a step pauses: `manual` (no pause, or no duration), `Ns`, or `auto` for a final
/// `"100%"` (the only step that completes without a pause, §7.5).
fn pause_text(rollout: &Rollout, i: usize) -> String {
    let steps = rollout.steps();
    let step = &steps[i];
    if i + 1 == steps.len() && step.replicas == Some(IntOrString::String("100%".to_owned())) {
        return "auto".to_owned();
    }
    match step.pause.as_ref().and_then(|p| p.duration) {
        None => "manual".to_owned(),
        Some(d) => format!("{d}s"),
    }
}

/// `demo/web-rollout`.
fn name_of(rollout: &Rollout) -> String {
    format!(
        "{}/{}",
        rollout.metadata.namespace.as_deref().unwrap_or_default(),
        rollout.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The line `rollout status` adds for a workload a Rollout releases.
pub fn released_by(rollout: &Rollout) -> String {
    let at = match rollout.canary_status() {
        Some(s) if rollout.phase() == phase::PROGRESSING => format!(
            "step {}/{} {}",
            s.current_step_index,
            rollout.steps().len(),
            s.current_step_state
        ),
        _ => {
            let p = rollout.phase();
            if p.is_empty() { "not reconciled" } else { p }.to_owned()
        }
    };
    format!(
        "released by Rollout {}: {at} (kruise-tui rollout status rollout/{})",
        name_of(rollout),
        rollout.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The Rollout's status, a few lines.
pub fn render(rollout: &Rollout, related: &Related, now: Timestamp) -> String {
    let mut out = String::new();
    let r = related.replicas;
    let _ = writeln!(out, "rollout.rollouts.kruise.io/{}", name_of(rollout));
    let w = &rollout.spec.workload_ref;
    let replicas = r.map(|r| format!(" ({r} replicas)")).unwrap_or_default();
    let _ = writeln!(out, "  workload   {} {}{replicas}", w.kind, w.name);
    let generation = rollout.metadata.generation;
    let observed = rollout.status.as_ref().and_then(|s| s.observed_generation);
    if generation.is_some() && observed < generation {
        let _ = writeln!(
            out,
            "  (the Rollout controller has not seen the latest spec yet: what follows may be stale)"
        );
    }
    let reason = rollout
        .condition(condition::PROGRESSING)
        .map(|c| c.reason.as_str())
        .filter(|r| !r.is_empty());
    let p = rollout.phase();
    let _ = writeln!(
        out,
        "  phase      {}{}",
        if p.is_empty() { "(not reconciled)" } else { p },
        reason.map(|r| format!(" ({r})")).unwrap_or_default()
    );
    if rollout.spec.strategy.paused {
        let _ = writeln!(out, "  paused     yes (spec.strategy.paused)");
    }
    let steps = rollout.steps();
    let status = rollout.canary_status();
    if let Some(s) = status {
        let waiting = p == phase::PROGRESSING
            && reason == Some(condition::REASON_IN_ROLLING)
            && s.current_step_state == step_state::STEP_PAUSED
            && steps
                .get(usize::try_from(s.current_step_index - 1).unwrap_or(usize::MAX))
                .is_some_and(|st| st.pause.as_ref().and_then(|p| p.duration).is_none());
        let _ = writeln!(
            out,
            "  step       {}/{} {}{}",
            s.current_step_index,
            steps.len(),
            s.current_step_state,
            if waiting {
                ": waiting for approval"
            } else {
                ""
            }
        );
        let next = s.next_step_index;
        let default_next = if s.current_step_index >= i32::try_from(steps.len()).unwrap_or(0) {
            -1
        } else {
            s.current_step_index + 1
        };
        if next != default_next && next >= 1 {
            let _ = writeln!(out, "  jump       to step {next} pending");
        }
    }
    if let Some((left, duration)) = time_left(rollout, now) {
        let _ = writeln!(
            out,
            "  time left  {left}s of the {duration}s pause, then the next step starts by itself"
        );
    }
    if let Some(m) = rollout
        .status
        .as_ref()
        .and_then(|s| s.message.as_deref())
        .filter(|m| !m.is_empty())
    {
        let _ = writeln!(out, "  message    {m}");
    }
    if !steps.is_empty() {
        let _ = writeln!(out, "  steps      #  REPLICAS  PODS  PAUSE");
        let current = status.map_or(0, |s| s.current_step_index);
        for (i, step) in steps.iter().enumerate() {
            let raw = step
                .replicas
                .as_ref()
                .map_or_else(|| "-".to_owned(), intstr);
            let pods = match (step.replicas.as_ref(), r) {
                (Some(v), Some(r)) => calculate_batch_replicas(v, r).to_string(),
                _ => "?".to_owned(),
            };
            let marker = if usize::try_from(current - 1).ok() == Some(i) {
                ">"
            } else {
                " "
            };
            let traffic = step
                .traffic
                .as_deref()
                .map(|t| format!("  traffic {t}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "           {marker}{:>2}  {raw:<8}  {pods:<4}  {}{traffic}",
                i + 1,
                pause_text(rollout, i)
            );
        }
    }
    if let Some(br) = &related.batch_release {
        let _ = writeln!(out, "  {}", batch_line(br, r));
    }
    out
}

/// `batch      2/3 Ready: 5 updated, 5 ready of 5 planned (BatchRelease web-rollout, Progressing)`.
fn batch_line(br: &BatchRelease, replicas: Option<i32>) -> String {
    let batches = &br.spec.release_plan.batches;
    let status = br.status.as_ref();
    let phase = status
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("not reconciled");
    let name = br.metadata.name.as_deref().unwrap_or_default();
    let Some(c) = status.and_then(|s| s.canary_status.as_ref()) else {
        return format!("batch      - (BatchRelease {name}, {phase})");
    };
    let planned = batches
        .get(usize::try_from(c.current_batch).unwrap_or(usize::MAX))
        .zip(replicas)
        .map(|(b, r)| calculate_batch_replicas(&b.canary_replicas, r).to_string())
        .unwrap_or_else(|| "?".to_owned());
    format!(
        "batch      {}/{} {}: {} updated, {} ready of {planned} planned (BatchRelease {name}, {phase})",
        c.current_batch + 1,
        batches.len(),
        c.batch_state.as_deref().unwrap_or("-"),
        c.updated_replicas.unwrap_or(0),
        c.updated_ready_replicas.unwrap_or(0),
    )
}

/// The BatchRelease (named as its Rollout) and the workload's replicas, where they can be read.
async fn related(session: &Session, rollout: &Rollout) -> Related {
    let client = session.client();
    let ns = &session.namespace;
    let name = rollout.metadata.name.as_deref().unwrap_or_default();
    let brs: Api<BatchRelease> = Api::namespaced(client.clone(), ns);
    let batch_release = brs.get_opt(name).await.ok().flatten();
    let target = Target::new(&crate::api::kinds::ROLLOUT, Some(ns), name);
    let object = serde_json::to_value(rollout).unwrap_or_default();
    let replicas = async {
        let workload = crate::actions::rollout::workload_of(&target, &object).ok()?;
        let kind = workload.kind.workload?;
        let resource = workload::resource_for(client, kind).await.ok()?;
        let object = workload::get(client, &resource, ns, &workload.name, kind.display())
            .await
            .ok()?;
        if kind == crate::kruise::plan::WorkloadKind::AdvancedDaemonSet {
            return object
                .pointer("/status/desiredNumberScheduled")
                .and_then(serde_json::Value::as_i64)
                .and_then(|v| i32::try_from(v).ok());
        }
        Some(
            object
                .pointer("/spec/replicas")
                .and_then(serde_json::Value::as_i64)
                .and_then(|v| i32::try_from(v).ok())
                .unwrap_or(1),
        )
    }
    .await;
    Related {
        batch_release,
        replicas,
    }
}

pub(super) async fn run(kube: &KubeArgs, args: RolloutStatusArgs) -> Result<()> {
    let session = Session::open(kube).await?;
    let name = args.target.name.clone();
    let shown = args.target.resource_name();
    let api: Api<Rollout> = Api::namespaced(session.client().clone(), &session.namespace);
    let rollout = api
        .get_opt(&name)
        .await
        .map_err(|e| anyhow!("cannot read {shown}: {}", crate::kube::errors::text(&e)))?
        .ok_or_else(|| anyhow!("{shown} not found in {}", session.namespace))?;
    let last = render(
        &rollout,
        &related(&session, &rollout).await,
        Timestamp::now(),
    );
    print!("{last}");
    if rollout.phase() == phase::HEALTHY || !(args.watch || args.timeout.is_some()) {
        return Ok(());
    }
    let limit = args.timeout.filter(|t| !t.is_zero());
    let resource = ApiResource::erase::<Rollout>(&());
    let updates = workload::watch(session.client(), &resource, &session.namespace, &name);
    // Each step reads the BatchRelease and the workload (async), so the last text shown is
    // shared with the steps rather than borrowed by one.
    let last = std::cell::RefCell::new(last);
    let follow = super::follow(updates, &shown, |object| {
        let (session, shown, last) = (&session, &shown, &last);
        async move {
            let rollout: Rollout =
                serde_json::from_value(object).map_err(|e| anyhow!("cannot read {shown}: {e}"))?;
            let now = render(
                &rollout,
                &related(session, &rollout).await,
                Timestamp::now(),
            );
            let mut last = last.borrow_mut();
            if now != *last {
                println!();
                print!("{now}");
                *last = now;
            }
            Ok(rollout.phase() == phase::HEALTHY)
        }
    });
    match limit {
        None => follow.await,
        Some(limit) => match tokio::time::timeout(limit, follow).await {
            Ok(result) => result,
            Err(_) => bail!(
                "timed out after {}s waiting for {shown} to be Healthy",
                limit.as_secs()
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rollout(step: i32, state: &str, reason: &str) -> Rollout {
        serde_json::from_value(json!({
            "metadata": {"name": "web-rollout", "namespace": "demo", "generation": 2},
            "spec": {
                "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
                "strategy": {"canary": {"steps": [
                    {"replicas": 1}, {"replicas": "50%", "pause": {"duration": 60}},
                    {"replicas": "100%"}]}},
            },
            "status": {"observedGeneration": 2, "phase": "Progressing",
                "conditions": [{"type": "Progressing", "status": "True", "reason": reason}],
                "canaryStatus": {"currentStepIndex": step, "nextStepIndex": step + 1,
                    "currentStepState": state, "lastUpdateTime": "2026-01-01T00:00:00Z"}},
        }))
        .expect("a Rollout")
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(
            "2026-01-01T00:00:00Z"
                .parse::<Timestamp>()
                .expect("time")
                .as_second()
                + seconds,
        )
        .expect("time")
    }

    #[test]
    fn a_timed_pause_counts_down_from_the_steps_last_update_and_never_below_zero() {
        let r = rollout(2, "StepPaused", "InRolling");
        assert_eq!(time_left(&r, at(15)), Some((45, 60)));
        assert_eq!(time_left(&r, at(90)), Some((0, 60)));
        // Only while it waits in that pause: not on a manual step, not while paused by spec.
        assert_eq!(
            time_left(&rollout(1, "StepPaused", "InRolling"), at(15)),
            None
        );
        assert_eq!(time_left(&rollout(2, "StepPaused", "Paused"), at(15)), None);
        assert_eq!(
            time_left(&rollout(2, "StepUpgrade", "InRolling"), at(15)),
            None
        );
    }

    #[test]
    fn the_status_shows_the_steps_resolved_the_wait_and_the_batch() {
        let br: BatchRelease = serde_json::from_value(json!({
            "metadata": {"name": "web-rollout"},
            "spec": {"releasePlan": {"batches": [{"canaryReplicas": 1},
                {"canaryReplicas": "50%"}, {"canaryReplicas": "100%"}], "batchPartition": 0}},
            "status": {"phase": "Progressing", "canaryStatus": {"currentBatch": 0,
                "batchState": "Ready", "updatedReplicas": 1, "updatedReadyReplicas": 1}},
        }))
        .expect("a BatchRelease");
        let related = Related {
            batch_release: Some(br),
            replicas: Some(10),
        };
        let text = render(&rollout(1, "StepPaused", "InRolling"), &related, at(5));
        assert!(
            text.contains("  step       1/3 StepPaused: waiting for approval\n"),
            "{text}"
        );
        assert!(!text.contains("time left"), "{text}");
        assert!(
            text.contains("           > 1  1         1     manual\n"),
            "{text}"
        );
        assert!(
            text.contains("             2  50%       5     60s\n"),
            "{text}"
        );
        assert!(
            text.contains("             3  100%      10    auto\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  batch      1/3 Ready: 1 updated, 1 ready of 1 planned (BatchRelease \
                 web-rollout, Progressing)\n"
            ),
            "{text}"
        );
        let mut jumping = rollout(3, "StepUpgrade", "InRolling");
        if let Some(s) = jumping
            .status
            .as_mut()
            .and_then(|s| s.canary_status.as_mut())
        {
            s.next_step_index = 1;
        }
        let text = render(&jumping, &Related::default(), at(5));
        assert!(text.contains("  jump       to step 1 pending\n"), "{text}");
        assert!(
            text.contains("           > 3  100%      ?     auto\n"),
            "{text}"
        );
        assert_eq!(
            released_by(&rollout(2, "StepPaused", "InRolling")),
            "released by Rollout demo/web-rollout: step 2/3 StepPaused (kruise-tui rollout \
             status rollout/web-rollout)"
        );
    }
}
