//! `kruise-tui scale KIND/NAME --replicas N [--pods a,b]`: the replica count through the action
//! layer; with `--pods` (CloneSet) exactly those pods go (`scaleStrategy.podsToDelete`), and
//! pods that are not the workload's are refused before anything is sent.

use anyhow::Result;

use super::{block_on, mutate};
use crate::{
    actions::Action,
    cli::{KubeArgs, ScaleArgs},
};

/// `kruise-tui scale`.
pub fn run(kube: &KubeArgs, args: ScaleArgs) -> Result<()> {
    let mut pods: Vec<String> = Vec::new();
    for pod in args.pods.into_iter().map(|p| p.trim().to_owned()) {
        if !pod.is_empty() && !pods.contains(&pod) {
            pods.push(pod);
        }
    }
    block_on(mutate::run(
        kube,
        &args.target,
        Action::Scale {
            replicas: args.replicas,
            pods,
        },
        false,
    ))
}
