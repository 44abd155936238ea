//! `Effect::WhatIf`: reads the workload, its pods, ControllerRevisions and the nodes (GET and
//! LIST only), prepares the pending action with the action layer (pure), and runs the
//! simulation (`crate::actions::whatif`) off the async threads. Sends nothing.

use std::sync::Arc;

use anyhow::{Context as _, anyhow};
use kube::Client;

use super::rollout::Gates;
use crate::{
    actions::{
        Action,
        whatif::{Settings, World, simulate},
    },
    app::{
        effect::{Pending, WhatIfRequest},
        msg::EffectResult,
    },
    kube::{act::Actor, workload},
};

pub async fn whatif(
    actor: Arc<Actor>,
    client: Client,
    gates: Arc<Gates>,
    req: WhatIfRequest,
) -> EffectResult {
    let WhatIfRequest {
        id,
        target,
        pending,
    } = req;
    let result = async {
        let (prepared, state) = match pending {
            Pending::Prepared { prepared, state } => (Some(*prepared), *state),
            Pending::Action(action) => {
                let undo = matches!(action, Action::Undo { .. });
                let state = actor.read(&target, undo).await?;
                let prepared = crate::actions::prepare(&target, &action, &state)?;
                (Some(prepared), state)
            }
            Pending::Nothing => (None, actor.read(&target, false).await?),
        };
        let ns = target.namespace.clone().unwrap_or_default();
        let uid = state
            .object
            .pointer("/metadata/uid")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned();
        let pods = workload::pods_of(&client, &ns, &state.object).await?;
        let revisions = workload::revisions_of(&client, &ns, &uid).await?;
        let nodes = workload::nodes(&client).await?;
        let mut settings = Settings::new(jiff::Timestamp::now());
        let cluster = gates.get(&client).await;
        settings.gates = cluster.gates;
        settings.version = cluster.release.version;
        let world = World {
            target,
            state,
            pods,
            revisions,
            nodes,
        };
        tokio::task::spawn_blocking(move || simulate(world, prepared.as_ref(), &settings))
            .await
            .context("the simulation stopped")?
            .map_err(|e| anyhow!(e))
    }
    .await
    .map(Box::new)
    .map_err(|e: anyhow::Error| format!("what-if: {e:#}"));
    EffectResult::WhatIf { id, result }
}
