//! `Effect::StreamLogs`: `GET pods/NAME/log` through kube-rs's `log_stream`, its lines sent to
//! the app in batches (`Msg::Log`) as they arrive, then its end; `Effect::StopLogs` aborts it.

use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client, api::LogParams};
use tokio::sync::mpsc::UnboundedSender;

use crate::app::{
    Msg,
    logs::{LogEvent, LogEventKind, LogRequest},
};

/// Lines sent in one message at most (a tail of thousands arrives in a few messages, not one
/// per line; while following, each batch is what the server had sent so far).
const BATCH: usize = 256;

/// The parameters kubectl would send for the same view.
pub fn params(req: &LogRequest) -> LogParams {
    LogParams {
        container: Some(req.container.clone()),
        follow: req.follow,
        previous: req.previous,
        timestamps: req.timestamps,
        tail_lines: req.tail_lines,
        ..LogParams::default()
    }
}

/// Streams the log until the server ends it, the app stops listening, or the task is aborted.
pub async fn stream(client: Client, req: LogRequest, tx: UnboundedSender<Msg>) {
    let id = req.id;
    let send = |kind| tx.send(Msg::Log(LogEvent { stream: id, kind })).is_ok();
    let api: Api<Pod> = Api::namespaced(client, &req.namespace);
    let reader = match api.log_stream(&req.pod, &params(&req)).await {
        Ok(reader) => reader,
        Err(err) => {
            send(LogEventKind::Failed(super::super::errors::text(&err)));
            return;
        }
    };
    let mut batches = reader.lines().ready_chunks(BATCH);
    while let Some(batch) = batches.next().await {
        let mut lines = Vec::with_capacity(batch.len());
        let mut broke = None;
        for line in batch {
            match line {
                Ok(line) => lines.push(line),
                Err(err) => {
                    broke = Some(format!("the log stream broke: {err}"));
                    break;
                }
            }
        }
        if !lines.is_empty() && !send(LogEventKind::Lines(lines)) {
            return;
        }
        if let Some(why) = broke {
            send(LogEventKind::Failed(why));
            return;
        }
    }
    send(LogEventKind::Ended);
}
