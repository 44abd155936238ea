//! `kruise-tui restart POD [-c CONTAINER ...] [--wait] [--timeout D]`: restart containers in
//! place through the action layer (a ContainerRecreateRequest; SSAR, `--readonly`, journal).
//! The pod's PodUnavailableBudget is checked with the port first: without `--wait` a budget
//! with no disruption left refuses (exit 1), with `--wait` the command waits for it, then
//! follows the request to Completed and the pod to Ready, printing each container's state.

use anyhow::{Result, bail};

use super::{Session, block_on};
use crate::{
    actions::{Action, RestartStrategy, Target},
    api::kinds::parse_kind,
    cli::{KubeArgs, RestartArgs},
    kube::restart::{self, Limits, Update},
};

/// `kruise-tui restart`.
pub fn run(kube: &KubeArgs, args: RestartArgs) -> Result<()> {
    block_on(restart(kube, args))
}

fn print(update: &Update) {
    match update {
        Update::Step(step) => {
            let crr = step.crr.as_deref().unwrap_or("-");
            let containers: Vec<String> = step
                .containers
                .iter()
                .map(|(name, phase, _)| format!("{name}={phase}"))
                .collect();
            let mut line = format!("pod/{} {crr}: {}", step.pod, step.state);
            if !containers.is_empty() {
                line.push_str(&format!(" ({})", containers.join(", ")));
            }
            if !step.message.is_empty() {
                line.push_str(&format!(" — {}", step.message));
            }
            println!("{line}");
        }
        Update::Done(Ok(text)) => println!("{text}"),
        // The error is printed once, by main.
        Update::Done(Err(_)) => {}
    }
}

async fn restart(kube: &KubeArgs, args: RestartArgs) -> Result<()> {
    let session = Session::open(kube).await?;
    let info = parse_kind("pod")?;
    let target = Target::new(info, Some(&session.namespace), &args.pod);
    let action = Action::Restart {
        containers: args.containers.clone(),
        strategy: RestartStrategy {
            failure_policy: args.failure_policy.clone(),
            ordered_recreate: args.ordered_recreate,
            unready_grace_period_seconds: args.unready_grace_period_seconds,
            min_started_seconds: args.min_started_seconds,
            active_deadline_seconds: args.active_deadline_seconds,
            ttl_seconds_after_finished: args.ttl_seconds_after_finished,
        },
    };
    let actor = session.actor(kube.readonly)?;
    // Bad input is refused here, even read-only.
    let (prepared, state) = actor
        .prepare(&target, &action)
        .await
        .map_err(|e| anyhow::Error::msg(e.to_string()))?;
    if kube.readonly {
        bail!("read-only: {} not sent", action.describe());
    }
    let limits = Limits {
        timeout: args.timeout,
        wait: args.wait,
    };
    let report = |u: Update| print(&u);
    restart::run(
        &actor,
        session.client(),
        Some((prepared, state)),
        Vec::new(),
        &action,
        &limits,
        &report,
    )
    .await
    .map_err(anyhow::Error::msg)?;
    Ok(())
}
