//! `kruise-tui restart POD... | KIND/NAME [-c CONTAINER ...] [--wait] [--timeout D]`: restart
//! containers in place through the action layer (ContainerRecreateRequests; SSAR,
//! `--readonly`, journal). Each pod's PodUnavailableBudget is checked with the port first:
//! for one pod without `--wait` a budget with no disruption left refuses (exit 1), with
//! `--wait` the command waits for it, then follows the request to Completed and the pod to
//! Ready, printing each container's state. Several pods, or a workload's pods (its own, by
//! controller reference, in name order), go one at a time that way — never more than one
//! taken away by the restart — and Ctrl-C stops after the pod in flight (exit 1).

use anyhow::{Result, bail};

use tokio_util::sync::CancellationToken;

use super::{Session, block_on, workload_kind};
use crate::{
    actions::{Action, RestartStrategy, Target},
    api::kinds::parse_kind,
    cli::{KubeArgs, RestartArgs, args::RestartTarget},
    kube::{
        restart::{self, Limits, Update},
        workload,
    },
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

/// The pods to restart, in order, and what they are (`pod web-x7k2p`, `3 pods of CloneSet
/// demo/web`).
async fn pods(session: &Session, targets: &[RestartTarget]) -> Result<(Vec<String>, String)> {
    match targets {
        [RestartTarget::Workload(w)] => {
            let kind = workload_kind(w);
            let resource = workload::resource_for(session.client(), kind).await?;
            let object = workload::get(
                session.client(),
                &resource,
                &session.namespace,
                &w.name,
                w.kind.title,
            )
            .await?;
            let mut names: Vec<String> =
                workload::owned_pods(session.client(), &session.namespace, &object)
                    .await?
                    .into_iter()
                    .filter(|p| p.metadata.deletion_timestamp.is_none())
                    .filter_map(|p| p.metadata.name)
                    .collect();
            names.sort();
            if names.is_empty() {
                bail!(
                    "{} {}/{} has no pods to restart",
                    w.kind.title,
                    session.namespace,
                    w.name
                );
            }
            let what = format!(
                "{} pod(s) of {} {}/{}",
                names.len(),
                w.kind.title,
                session.namespace,
                w.name
            );
            Ok((names, what))
        }
        _ if targets
            .iter()
            .any(|t| matches!(t, RestartTarget::Workload(_))) =>
        {
            bail!("restart takes pods, or one workload as KIND/NAME, not both")
        }
        _ => {
            let mut names: Vec<String> = Vec::new();
            for t in targets {
                if let RestartTarget::Pod(name) = t
                    && !names.contains(name)
                {
                    names.push(name.clone());
                }
            }
            let what = match names.as_slice() {
                [one] => format!("pod {}/{one}", session.namespace),
                many => format!("{} pods in {}", many.len(), session.namespace),
            };
            Ok((names, what))
        }
    }
}

/// Ctrl-C: the first stops after the pod in flight, a second leaves at once.
fn stop_on_ctrl_c(stop: CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("kruise-tui: stopping after the pod in flight (Ctrl-C again to leave now)");
            stop.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
}

async fn restart(kube: &KubeArgs, args: RestartArgs) -> Result<()> {
    let session = Session::open(kube).await?;
    let info = parse_kind("pod")?;
    let (names, what) = pods(&session, &args.targets).await?;
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
    let targets: Vec<Target> = names
        .iter()
        .map(|n| Target::new(info, Some(&session.namespace), n))
        .collect();
    let Some((first, rest)) = targets.split_first() else {
        bail!("nothing to restart");
    };
    let actor = session.actor(kube.readonly)?;
    // Bad input is refused here, even read-only.
    let (prepared, state) = actor
        .prepare(first, &action)
        .await
        .map_err(|e| anyhow::Error::msg(e.to_string()))?;
    if kube.readonly {
        bail!("read-only: {} not sent", action.describe());
    }
    // Many pods are paced: one at a time, each waits for its budget and is Ready again
    // before the next, so the restart never takes more than one pod away.
    let many = targets.len() > 1;
    if many {
        println!(
            "restarting {what} one at a time: each waits for its PodUnavailableBudget and is \
             Ready again before the next (Ctrl-C stops after the pod in flight)"
        );
        for (i, name) in names.iter().enumerate() {
            println!("  {:>3}  {name}", i + 1);
        }
    }
    let stop = CancellationToken::new();
    stop_on_ctrl_c(stop.clone());
    let limits = Limits {
        timeout: args.timeout,
        wait: args.wait || many,
        stop,
    };
    let report = |u: Update| print(&u);
    restart::run(
        &actor,
        session.client(),
        Some((prepared, state)),
        rest.to_vec(),
        &action,
        &limits,
        &report,
    )
    .await
    .map_err(anyhow::Error::msg)?;
    Ok(())
}
