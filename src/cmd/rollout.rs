//! `kruise-tui rollout status|history|undo|pause|resume|partition KIND/NAME`: kubectl-kruise's
//! verbs (plus `partition`, which it lacks) for CloneSets, Advanced StatefulSets and Advanced
//! DaemonSets. The mutating ones go through the action layer ([`super::mutate`]), refused on a
//! workload a Kruise Rollout is releasing unless `--force`. `rollout status|approve|pause|resume|
//! undo rollout/NAME` act on the Kruise Rollout itself ([`kruise`], [`kruise_status`]).

mod history;
pub(super) mod kruise;
mod kruise_status;
mod status;

use anyhow::Result;

use super::{block_on, mutate};
use crate::{
    actions::Action,
    cli::{KubeArgs, RolloutCommand},
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
