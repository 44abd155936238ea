//! `kruise-tui rollout status|history|undo|pause|resume|partition KIND/NAME`: kubectl-kruise's
//! verbs (plus `partition`, which it lacks) for CloneSets, Advanced StatefulSets and Advanced
//! DaemonSets. The mutating ones go through the action layer ([`super::mutate`]).

mod history;
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
        RolloutCommand::Status(args) => block_on(status::run(kube, args)),
        RolloutCommand::History(args) => block_on(history::run(kube, args)),
        RolloutCommand::Undo(args) => block_on(mutate::run(
            kube,
            &args.target,
            Action::Undo {
                // 0 is kubectl's "the previous revision": the default.
                to_revision: args.to_revision.filter(|n| *n != 0),
            },
            true,
        )),
        RolloutCommand::Pause(args) => {
            block_on(mutate::run(kube, &args.target, Action::Pause, false))
        }
        RolloutCommand::Resume(args) => {
            block_on(mutate::run(kube, &args.target, Action::Resume, true))
        }
        // What needs no cluster to refuse ("abc", "150%", "-1", a percent on a kind that counts
        // pods) was a usage error while parsing; more than the replicas is refused once read.
        RolloutCommand::Partition(args) => block_on(mutate::run(
            kube,
            &args.target,
            Action::Partition {
                value: args.value.value,
            },
            true,
        )),
    }
}
