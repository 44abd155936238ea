//! `kruise-tui rollout status|history|undo|pause|resume|partition KIND/NAME`: kubectl-kruise's
//! verbs (plus `partition`, which it lacks) for CloneSets, Advanced StatefulSets and Advanced
//! DaemonSets. The mutating ones go through the action layer ([`super::mutate`]).

mod history;
mod status;

use anyhow::Result;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{block_on, mutate};
use crate::{
    actions::Action,
    cli::{KubeArgs, RolloutCommand},
    kruise::intstr,
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
                to_revision: args.to_revision,
            },
            true,
        )),
        RolloutCommand::Pause(args) => {
            block_on(mutate::run(kube, &args.target, Action::Pause, false))
        }
        RolloutCommand::Resume(args) => {
            block_on(mutate::run(kube, &args.target, Action::Resume, true))
        }
        RolloutCommand::Partition(args) => {
            // What needs no cluster to refuse ("abc", "150%", "-1") is refused before connecting;
            // the rest (more than the replicas, a percent on a count-only kind) once read.
            intstr::parse_partition_input(&args.value, None)?;
            block_on(mutate::run(
                kube,
                &args.target,
                Action::Partition {
                    value: partition_value(&args.value),
                },
                true,
            ))
        }
    }
}

/// The partition as typed: a whole number is a count, anything else is passed on as text for
/// the action layer to accept as a percent or refuse with the reason ("abc", "150%").
fn partition_value(text: &str) -> IntOrString {
    match text.trim().parse::<i32>() {
        Ok(n) => IntOrString::Int(n),
        Err(_) => IntOrString::String(text.trim().to_owned()),
    }
}
