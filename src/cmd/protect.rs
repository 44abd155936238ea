//! `kruise-tui protect KIND/NAME always|cascading|off`: sets or removes
//! `policy.kruise.io/delete-protection` through the action layer (pinned patch, SSAR,
//! `--readonly`, journal with its revert), then says what a delete would meet now and whether
//! the cluster enforces the label at all.

use anyhow::Result;

use super::{Session, block_on};
use crate::{
    actions::{Action, Target, guard},
    cli::{KubeArgs, ProtectArgs},
    kube::guard::{deletion_facts, enforcement},
};

/// `kruise-tui protect`.
pub fn run(kube: &KubeArgs, args: ProtectArgs) -> Result<()> {
    block_on(protect(kube, args))
}

async fn protect(kube: &KubeArgs, args: ProtectArgs) -> Result<()> {
    let session = Session::open(kube).await?;
    let namespace = (args.target.kind.scope == crate::api::kinds::Scope::Namespaced)
        .then_some(session.namespace.as_str());
    let target = Target::new(args.target.kind, namespace, &args.target.name);
    let actor = session.actor(kube.readonly)?;
    let action = Action::Protect {
        value: args.value.0,
    };
    let done = actor
        .run(&target, &action)
        .await
        .map_err(|e| anyhow::Error::msg(e.to_string()))?;
    let resource = format!(
        "{}{}/{}",
        args.target.kind.singular,
        if args.target.kind.group.is_empty() {
            String::new()
        } else {
            format!(".{}", args.target.kind.group)
        },
        args.target.name
    );
    println!("{resource} {}", done.prepared.changes.join("; "));
    // What a delete meets now, on the object as it is after the change.
    let state = actor
        .read(&target, false)
        .await
        .map_err(|e| anyhow::Error::msg(e.to_string()))?;
    let (enforced, gates) = enforcement(session.client()).await;
    let facts = deletion_facts(session.client(), target.kind, &state.object).await;
    let verdict = guard::deletion_verdict(target.kind, &state.object, &gates, &facts);
    println!("a delete now: {}", verdict.text());
    println!("deletion protection is {}", enforced.text);
    Ok(())
}
