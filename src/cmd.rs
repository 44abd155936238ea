//! The subcommands that act on one workload (`plan`, `rollout …`, `set image`, `scale`), beside
//! the console: each parses its arguments (`crate::cli`, [`crate::cli::args`]), reads through `crate::kube`,
//! predicts with the plan API (`crate::actions::preview`), sends through the action layer
//! (`crate::kube::act::Actor`: pinned patches, journal, `--readonly`) and prints.
//!
//! Exit codes (PRODUCT §2): 0 ok; 1 refused or failed, with one line on stderr (an
//! [`ActError`](crate::kube::act::ActError) line for actions); 2 usage error (clap, including
//! an unknown KIND).

mod mutate;
pub mod plan;
pub mod protect;
pub mod render;
pub mod report;
pub mod restart;
pub mod rollout;
pub mod scale;
pub mod serve;
pub mod set_image;
pub mod top;
pub mod triage;

use std::{future::Future, sync::Arc};

use anyhow::{Context as _, Result};

use crate::{
    actions::Target,
    cli::{KubeArgs, args::WorkloadArg},
    config::Paths,
    journal::Journal,
    kruise::plan::WorkloadKind,
    kube::{
        act::Actor,
        connect::{Connection, connect},
    },
};

/// Runs `future` to completion on a runtime of its own (the subcommands are one-shot).
fn block_on<T>(future: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(future)
}

/// Writes `text` to stdout; a reader that went away (`| head`) ends the output quietly instead
/// of failing the command.
fn emit(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(()),
    }
}

/// A connection and the namespace the command acts in.
struct Session {
    conn: Connection,
    namespace: String,
}

impl Session {
    async fn open(kube: &KubeArgs) -> Result<Session> {
        let conn = connect(&kube.source(), None).await?;
        let namespace = kube
            .namespace
            .clone()
            .unwrap_or_else(|| conn.default_namespace.clone());
        Ok(Session { conn, namespace })
    }

    fn client(&self) -> &kube::Client {
        &self.conn.client
    }

    fn target(&self, workload: &WorkloadArg) -> Target {
        Target::new(workload.kind, Some(&self.namespace), &workload.name)
    }

    /// The action layer for this cluster, journaling to the state dir.
    fn actor(&self, readonly: bool) -> Result<Arc<Actor>> {
        let paths = Paths::resolve()?;
        Ok(Actor::new(
            self.conn.client.clone(),
            readonly,
            self.conn.context.clone(),
            self.conn.cluster_url.clone(),
            Some(Journal::new(paths.journal_file)),
        ))
    }
}

/// The planner's kind of a workload argument (the parsers admit only these three).
fn workload_kind(workload: &WorkloadArg) -> WorkloadKind {
    workload.kind.workload.unwrap_or(WorkloadKind::CloneSet)
}
