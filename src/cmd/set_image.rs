//! `kruise-tui set image KIND/NAME CONTAINER=IMAGE ...`: a new pod template revision through the
//! action layer; prints the images changed and the pods the controller moves next (the
//! partition decides which).

use anyhow::Result;

use super::{block_on, mutate};
use crate::{
    actions::Action,
    cli::{KubeArgs, SetImageArgs},
};

/// `kruise-tui set image`.
pub fn run(kube: &KubeArgs, args: SetImageArgs) -> Result<()> {
    let images = args
        .images
        .into_iter()
        .map(|i| (i.container, i.image))
        .collect();
    block_on(mutate::run(
        kube,
        &args.target,
        Action::SetImage { images },
        true,
    ))
}
