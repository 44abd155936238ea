//! Triage across kubeconfig contexts: each context is loaded headless — the console's own
//! watches and `update` fill an `App` exactly as on screen — and its triage rows are read once
//! every kind triage reads has loaded. Contexts run concurrently (at most [`CONCURRENCY`] at a
//! time), each under its own timeout; a context that cannot be reached, or whose user may not
//! list pods, is one row saying so and never delays the others.
//!
//! `kruise-tui triage` prints the result; the console's `:triage all` shows it.

use std::time::Duration;

use futures::{FutureExt as _, StreamExt as _, future::BoxFuture};
use jiff::Timestamp;
use tokio::sync::mpsc;

use super::exec::Executor;
use crate::{
    app::{
        self, App, AppInit, Kind, Msg,
        oncall::{
            across::{ContextTriage, Verdict},
            triage::READS,
        },
    },
    cli::KubeArgs,
    config::LoadedConfig,
};

/// Contexts loaded at once.
pub const CONCURRENCY: usize = 8;
/// How long one context may take (connecting, discovering, listing) by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// Triage of each of `contexts` (kubeconfig from `base`), in the order given.
///
/// Boxed: the executor runs it for `:triage all`, and it runs executors itself (a future type
/// that contains itself cannot be named otherwise).
pub fn triage_contexts(
    base: KubeArgs,
    contexts: Vec<String>,
    config: LoadedConfig,
    timeout: Duration,
) -> BoxFuture<'static, Vec<ContextTriage>> {
    let runs: Vec<_> = contexts
        .into_iter()
        .enumerate()
        .map(|(i, context)| {
            let mut kube = base.clone();
            kube.context = Some(context.clone());
            kube.readonly = true;
            let config = config.clone();
            async move {
                let verdict = tokio::time::timeout(timeout, triage_one(kube, config))
                    .await
                    .unwrap_or_else(|_| {
                        Verdict::Unreachable(format!("no answer within {}s", timeout.as_secs_f32()))
                    });
                (i, ContextTriage { context, verdict })
            }
        })
        .collect();
    async move {
        let mut results: Vec<(usize, ContextTriage)> = futures::stream::iter(runs)
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        results.sort_by_key(|(i, _)| *i);
        results.into_iter().map(|(_, r)| r).collect()
    }
    .boxed()
}

/// Loads one context headless and reads its triage.
async fn triage_one(kube: KubeArgs, config: LoadedConfig) -> Verdict {
    let (msg_tx, mut msgs) = mpsc::unbounded_channel();
    let (effect_tx, effect_rx) = mpsc::unbounded_channel();
    let executor = match Executor::start(kube.clone(), msg_tx).await {
        Ok(executor) => executor,
        Err(err) => return Verdict::Unreachable(format!("{err:#}")),
    };
    let mut app = App::new(AppInit {
        stores: executor.stores(),
        config,
        namespace: executor.namespace().map(str::to_owned),
        now: Timestamp::now(),
        context: kube.context.clone(),
        size: (200, 50),
        readonly: true,
    });
    // The executor answers what `update` asks (the journal's refused deletes, for one).
    let executor_task = tokio::spawn(executor.run(effect_rx));
    let verdict = loop {
        let Some(msg) = msgs.recv().await else {
            break Verdict::Unreachable("the watches stopped".to_owned());
        };
        match &msg {
            // The first failure of a watch triage needs: the context cannot be read.
            Msg::WatchFailed { kind, error } if READS.contains(kind) => {
                break Verdict::Unreachable(error.clone());
            }
            Msg::WatchForbidden { kind, denied: d } if *kind == Kind::Pod => {
                break Verdict::Forbidden(d.message.clone());
            }
            _ => {}
        }
        for effect in app::update(&mut app, msg) {
            // A one-shot look records nothing (the console watching the context does).
            if !matches!(effect, crate::app::Effect::RecordTriage(_)) {
                let _ = effect_tx.send(effect);
            }
        }
        if app.triage_loaded() {
            // A tick rebuilds triage with the clock now (what it would record is dropped).
            let _ = app::update(&mut app, Msg::Tick(Timestamp::now()));
            break Verdict::Problems(app.oncall.triage.clone());
        }
    };
    executor_task.abort();
    verdict
}
