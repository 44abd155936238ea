//! The executor's recovery effects: a confirmed restart run to its end (reported as it goes),
//! and the `:protect` listing with each object's verdict.

use std::{sync::Arc, time::Duration};

use kube::{
    Api, Client,
    api::{DynamicObject, ListParams},
};
use tokio::sync::mpsc::UnboundedSender;

use crate::{
    actions::{Target, guard},
    api::kinds::{self, KindInfo},
    app::{
        msg::{EffectResult, Msg},
        protect::{ProtectReport, ProtectRow},
        restart::{RestartRun, Update},
    },
    kruise::protection::DELETION_PROTECTION_KEY,
    kube::{
        act::Actor,
        errors::text as describe,
        guard::{deletion_facts, enforcement},
        restart::{self, Limits},
    },
};

/// How long a console restart waits for each step (budget, request, readiness).
const RESTART_TIMEOUT: Duration = Duration::from_secs(600);

/// `Effect::Restart`.
pub async fn restart(
    actor: Arc<Actor>,
    client: Client,
    tx: UnboundedSender<Msg>,
    run: RestartRun,
    stop: tokio_util::sync::CancellationToken,
) {
    let id = run.id;
    let action = run.prepared.action.clone();
    let send = {
        let tx = tx.clone();
        move |update: Update| {
            let _ = tx.send(Msg::EffectDone(EffectResult::Restart { id, update }));
        }
    };
    let result = restart::run(
        &actor,
        &client,
        Some((run.prepared, run.state)),
        run.rest,
        &action,
        &Limits {
            timeout: RESTART_TIMEOUT,
            wait: true,
            stop,
        },
        &send,
    )
    .await;
    if let Err(why) = result {
        send(Update::Done(Err(why)));
    }
}

/// The kinds `:protect` lists: what Kruise's deletion protection guards among the kinds the
/// console handles, and Advanced DaemonSets (listed, and said to be unguarded).
const LISTED: &[&KindInfo] = &[
    &kinds::NAMESPACE,
    &kinds::CUSTOM_RESOURCE_DEFINITION,
    &kinds::CLONESET,
    &kinds::ADVANCED_STATEFULSET,
    &kinds::ADVANCED_DAEMONSET,
    &kinds::DEPLOYMENT,
    &kinds::REPLICASET,
    &kinds::STATEFULSET,
];

/// The rank of a kind in [`LISTED`], for the report's order.
fn rank(kind: &KindInfo) -> usize {
    LISTED
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(LISTED.len())
}

/// `Effect::List(Listing::Protected)`: every object carrying the label (namespaced kinds in `namespace`,
/// or everywhere), with the verdict a delete would meet now.
pub async fn protected(client: Client, namespace: Option<String>) -> Result<ProtectReport, String> {
    let (enforcement, gates) = enforcement(&client).await;
    let actor = Actor::new(client.clone(), true, None, String::new(), None);
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    let params = ListParams::default().labels(DELETION_PROTECTION_KEY);
    for info in LISTED.iter().copied() {
        let probe = Target::new(info, None, "");
        let ar = match actor.resource(&probe).await {
            Ok(ar) => ar,
            // Not served here (no Kruise): nothing of that kind to list.
            Err(_) => continue,
        };
        let cluster_scoped = info.scope == kinds::Scope::Cluster;
        let api: Api<DynamicObject> = match (&namespace, cluster_scoped) {
            (Some(ns), false) => Api::namespaced_with(client.clone(), ns, &ar),
            _ => Api::all_with(client.clone(), &ar),
        };
        let list = match api.list(&params).await {
            Ok(l) => l,
            Err(e) => {
                errors.push(format!("{}: {}", info.plural, describe(&e)));
                continue;
            }
        };
        for obj in list.items {
            let name = obj.metadata.name.clone().unwrap_or_default();
            let ns = obj.metadata.namespace.clone();
            let value = obj
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(DELETION_PROTECTION_KEY))
                .cloned()
                .unwrap_or_default();
            let json = serde_json::to_value(&obj).map_err(|e| e.to_string())?;
            let facts = deletion_facts(&client, info, &json).await;
            let verdict = guard::deletion_verdict(info, &json, &gates, &facts);
            rows.push(ProtectRow {
                target: Target::new(info, ns.as_deref(), &name),
                value,
                verdict,
            });
        }
    }
    rows.sort_by(|a, b| {
        (rank(a.target.kind), &a.target.namespace, &a.target.name).cmp(&(
            rank(b.target.kind),
            &b.target.namespace,
            &b.target.name,
        ))
    });
    Ok(ProtectReport {
        enforcement,
        rows,
        errors,
    })
}
