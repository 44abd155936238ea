//! Triage across kubeconfig contexts: each context is loaded headless — the console's own
//! watches and `update` fill an `App` exactly as on screen — and its triage rows are read once
//! every kind triage reads has loaded. Contexts run concurrently (at most [`CONCURRENCY`] at a
//! time), each under its own timeout; a context that cannot be reached, or whose user may not
//! list pods, is one row saying so and never delays the others.
//!
//! `kruise-tui triage` prints the result; the console's `:triage all` shows it.

use std::{collections::BTreeSet, time::Duration};

use futures::StreamExt as _;
use jiff::Timestamp;
use tokio::sync::mpsc;

use super::exec::Executor;
use crate::{
    app::{
        self, App, AppInit, Kind, Msg,
        oncall::triage::{Problem, worst_first},
    },
    cli::KubeArgs,
    config::LoadedConfig,
};

/// Contexts loaded at once.
pub const CONCURRENCY: usize = 8;
/// How long one context may take (connecting, discovering, listing) by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// The kinds triage reads: when each has loaded (or is not served), the rows are whole.
const TRIAGE_KINDS: [Kind; 8] = [
    Kind::Pod,
    Kind::CloneSet,
    Kind::StatefulSet,
    Kind::DaemonSet,
    Kind::PodUnavailableBudget,
    Kind::ContainerRecreateRequest,
    Kind::Rollout,
    Kind::BatchRelease,
];

/// What one context's triage came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Its problems, worst first (empty: healthy).
    Problems(Vec<Problem>),
    /// It could not be read: the connection, the server, or the timeout.
    Unreachable(String),
    /// Its user may not read what triage needs (403): what the server said.
    Forbidden(String),
}

/// One context's triage.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextTriage {
    pub context: String,
    pub verdict: Verdict,
    /// Kinds triage reads that the user may not list (their problems are missing).
    pub denied: Vec<Kind>,
}

/// One row of the merged list: a problem of one context, or a context that could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum Row<'a> {
    Problem {
        context: &'a str,
        problem: &'a Problem,
    },
    Unreachable {
        context: &'a str,
        why: &'a str,
    },
    Forbidden {
        context: &'a str,
        why: &'a str,
    },
}

/// Every context's rows in one list: contexts that could not be read first (the operator
/// cannot see into them), then every problem worst first across contexts (by triage's own
/// order; ties by context name).
pub fn merged(results: &[ContextTriage]) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = Vec::new();
    for r in results {
        match &r.verdict {
            Verdict::Unreachable(why) => rows.push(Row::Unreachable {
                context: &r.context,
                why,
            }),
            Verdict::Forbidden(why) => rows.push(Row::Forbidden {
                context: &r.context,
                why,
            }),
            Verdict::Problems(_) => {}
        }
    }
    let mut problems: Vec<(&str, &Problem)> = results
        .iter()
        .flat_map(|r| match &r.verdict {
            Verdict::Problems(ps) => ps.iter().map(|p| (r.context.as_str(), p)).collect(),
            _ => Vec::new(),
        })
        .collect();
    problems.sort_by(|(ca, a), (cb, b)| worst_first(a, b).then_with(|| ca.cmp(cb)));
    rows.extend(
        problems
            .into_iter()
            .map(|(context, problem)| Row::Problem { context, problem }),
    );
    rows
}

/// Triage of each of `contexts` (kubeconfig from `base`), in the order given.
pub async fn triage_contexts(
    base: &KubeArgs,
    contexts: &[String],
    config: &LoadedConfig,
    timeout: Duration,
) -> Vec<ContextTriage> {
    let mut results: Vec<(usize, ContextTriage)> =
        futures::stream::iter(contexts.iter().enumerate())
            .map(|(i, context)| {
                let mut kube = base.clone();
                kube.context = Some(context.clone());
                kube.readonly = true;
                let config = config.clone();
                async move {
                    let verdict =
                        match tokio::time::timeout(timeout, triage_one(kube, config)).await {
                            Ok(result) => result,
                            Err(_) => (
                                Verdict::Unreachable(format!(
                                    "no answer within {}s",
                                    timeout.as_secs_f32()
                                )),
                                Vec::new(),
                            ),
                        };
                    (
                        i,
                        ContextTriage {
                            context: context.clone(),
                            verdict: verdict.0,
                            denied: verdict.1,
                        },
                    )
                }
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Loads one context headless and reads its triage.
async fn triage_one(kube: KubeArgs, config: LoadedConfig) -> (Verdict, Vec<Kind>) {
    let (msg_tx, mut msgs) = mpsc::unbounded_channel();
    let (effect_tx, effect_rx) = mpsc::unbounded_channel();
    let executor = match Executor::start(kube.clone(), msg_tx).await {
        Ok(executor) => executor,
        Err(err) => return (Verdict::Unreachable(format!("{err:#}")), Vec::new()),
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
    let mut denied: BTreeSet<Kind> = BTreeSet::new();
    let verdict = loop {
        let Some(msg) = msgs.recv().await else {
            break Verdict::Unreachable("the watches stopped".to_owned());
        };
        match &msg {
            // The first failure of a watch triage needs: the context cannot be read.
            Msg::WatchFailed { kind, error } if TRIAGE_KINDS.contains(kind) => {
                break Verdict::Unreachable(error.clone());
            }
            Msg::WatchForbidden { kind, denied: d } if *kind == Kind::Pod => {
                break Verdict::Forbidden(d.message.clone());
            }
            Msg::WatchForbidden { kind, .. } => {
                denied.insert(*kind);
            }
            _ => {}
        }
        for effect in app::update(&mut app, msg) {
            let _ = effect_tx.send(effect);
        }
        if TRIAGE_KINDS.iter().all(|k| app.ready.contains(k)) {
            // A tick rebuilds triage with the clock now.
            for effect in app::update(&mut app, Msg::Tick(Timestamp::now())) {
                let _ = effect_tx.send(effect);
            }
            break Verdict::Problems(app.oncall.triage.clone());
        }
    };
    executor_task.abort();
    (verdict, denied.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::oncall::triage::ProblemKind;

    fn problem(kind: ProblemKind, subject: &str, weight: usize) -> Problem {
        Problem {
            kind,
            object: None,
            owner: None,
            subject: subject.to_owned(),
            why: String::new(),
            remedy: String::new(),
            weight,
            reported: false,
        }
    }

    #[test]
    fn merged_lists_unreadable_contexts_first_then_problems_worst_first_across_contexts() {
        let results = vec![
            ContextTriage {
                context: "a".into(),
                verdict: Verdict::Problems(vec![
                    problem(ProblemKind::CrashLoop, "CloneSet x/web", 1),
                    problem(ProblemKind::DeleteDenied, "Namespace x", 1),
                ]),
                denied: Vec::new(),
            },
            ContextTriage {
                context: "b".into(),
                verdict: Verdict::Problems(vec![problem(
                    ProblemKind::StuckRollout,
                    "CloneSet y/checkout",
                    2,
                )]),
                denied: Vec::new(),
            },
            ContextTriage {
                context: "dead".into(),
                verdict: Verdict::Unreachable("connection refused".into()),
                denied: Vec::new(),
            },
        ];
        let rows: Vec<String> = merged(&results)
            .iter()
            .map(|r| match r {
                Row::Problem { context, problem } => format!("{context} {}", problem.subject),
                Row::Unreachable { context, why } => format!("{context} unreachable {why}"),
                Row::Forbidden { context, why } => format!("{context} forbidden {why}"),
            })
            .collect();
        assert_eq!(
            rows,
            [
                "dead unreachable connection refused",
                "b CloneSet y/checkout",
                "a CloneSet x/web",
                "a Namespace x",
            ]
        );
    }
}
