//! `kruise-tui rollout status|history|undo|pause|resume|partition KIND/NAME`: kubectl-kruise's
//! verbs (plus `partition`, which it lacks) for CloneSets, Advanced StatefulSets and Advanced
//! DaemonSets. The mutating ones go through the action layer ([`super::mutate`]), refused on a
//! workload a Kruise Rollout is releasing unless `--force`. `rollout status|approve|pause|resume|
//! undo rollout/NAME` act on the Kruise Rollout itself ([`kruise`], [`kruise_status`]).

mod history;
pub(super) mod kruise;
mod kruise_status;
mod status;

use std::future::Future;

use anyhow::{Result, anyhow, bail};
use futures::{Stream, StreamExt as _};
use serde_json::Value;

use super::{block_on, mutate};
use crate::{
    actions::Action,
    cli::{KubeArgs, RolloutCommand},
    kube::workload::WatchFailure,
};

pub use history::{Revision, render_history};
pub use status::RolloutStatus;

/// Runs one `rollout` subcommand.
pub fn run(kube: &KubeArgs, command: RolloutCommand) -> Result<()> {
    match command {
        RolloutCommand::Status(args) if args.target.is_kruise_rollout() => {
            block_on(kruise_status::run(kube, args))
        }
        RolloutCommand::Status(args) => block_on(status::run(kube, args)),
        RolloutCommand::History(args) => block_on(history::run(kube, args)),
        RolloutCommand::Undo(args) => {
            let action = Action::Undo {
                // 0 is kubectl's "the previous revision": the default.
                to_revision: args.to_revision.filter(|n| *n != 0),
            };
            if args.target.is_kruise_rollout() {
                block_on(kruise::run(kube, &args.target, action))
            } else {
                block_on(mutate::run_forced(
                    kube,
                    &args.target,
                    action,
                    true,
                    args.force,
                ))
            }
        }
        RolloutCommand::Pause(args) if args.target.is_kruise_rollout() => {
            block_on(kruise::run(kube, &args.target, Action::Pause))
        }
        RolloutCommand::Pause(args) => block_on(mutate::run_forced(
            kube,
            &args.target,
            Action::Pause,
            false,
            args.force,
        )),
        RolloutCommand::Resume(args) if args.target.is_kruise_rollout() => {
            block_on(kruise::run(kube, &args.target, Action::Resume))
        }
        RolloutCommand::Resume(args) => block_on(mutate::run_forced(
            kube,
            &args.target,
            Action::Resume,
            true,
            args.force,
        )),
        // What needs no cluster to refuse ("abc", "150%", "-1", a percent on a kind that counts
        // pods) was a usage error while parsing; more than the replicas is refused once read.
        RolloutCommand::Partition(args) => block_on(mutate::run_forced(
            kube,
            &args.target,
            Action::Partition {
                value: args.value.value,
            },
            true,
            args.force,
        )),
        // No --step: the step the Rollout is at (0 asks `kruise::run` to read it).
        RolloutCommand::Approve(args) => block_on(kruise::run(
            kube,
            &args.target,
            Action::Approve {
                step: args.step.unwrap_or(0),
            },
        )),
    }
}

/// `rollout status --watch`: hands each object the watch of `shown` delivers to `step` until it
/// says the wait is over. A deletion, a refusal (403) or the end of the watch is an error; any
/// other failure is said once per distinct message while the watch retries with back-off.
async fn follow<F, Fut>(
    updates: impl Stream<Item = Result<Option<Value>, WatchFailure>>,
    shown: &str,
    mut step: F,
) -> Result<()>
where
    F: FnMut(Value) -> Fut,
    Fut: Future<Output = Result<bool>>,
{
    let mut updates = std::pin::pin!(updates);
    let mut last_error = String::new();
    while let Some(update) = updates.next().await {
        let object = match update {
            Ok(Some(object)) => object,
            Ok(None) => bail!("{shown} was deleted"),
            Err(failure) if failure.forbidden => bail!("{}", failure.message),
            Err(failure) => {
                if failure.message != last_error {
                    eprintln!("kruise-tui: {} (retrying)", failure.message);
                    last_error = failure.message;
                }
                continue;
            }
        };
        if step(object).await? {
            return Ok(());
        }
    }
    Err(anyhow!("the watch of {shown} ended"))
}
