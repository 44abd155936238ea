//! `Effect::FetchUsage`: the PodMetrics of the namespace watched (or of the namespaces the app
//! names, one after another), read in pages. A cluster
//! without `metrics.k8s.io` (the group missing, or its APIService unavailable) answers
//! `NotServed`, never an error: the console then shows no usage columns.

use kube::Client;

use super::metrics;
use crate::app::{msg::EffectResult, usage::Answer};

/// Reads the usage; `check` first asks discovery whether the API is served.
pub async fn fetch(
    client: Client,
    namespace: Option<String>,
    namespaces: Option<Vec<String>>,
    id: u64,
    check: bool,
) -> EffectResult {
    let answer = match namespaces {
        Some(namespaces) => read_each(&client, &namespaces, check).await,
        None => read(&client, namespace.as_deref(), check).await,
    };
    EffectResult::Usage { id, answer }
}

/// The PodMetrics of each namespace in turn, answered together.
async fn read_each(client: &Client, namespaces: &[String], check: bool) -> Answer {
    let mut all = Vec::new();
    let mut window: Option<f64> = None;
    for (i, ns) in namespaces.iter().enumerate() {
        match read(client, Some(ns), check && i == 0).await {
            Answer::Read {
                pods,
                window_seconds,
            } => {
                all.extend(pods);
                window = metrics::longest_window(window, window_seconds);
            }
            other => return other,
        }
    }
    Answer::Read {
        pods: all,
        window_seconds: window,
    }
}

async fn read(client: &Client, namespace: Option<&str>, check: bool) -> Answer {
    if check {
        match metrics::served(client).await {
            Ok(true) => {}
            Ok(false) => return Answer::NotServed,
            Err(err) => return Answer::Failed(super::errors::text(&err)),
        }
    }
    match metrics::pod_usage(client, namespace, None).await {
        Ok(usage) => Answer::Read {
            pods: usage.pods,
            window_seconds: usage.window_seconds,
        },
        Err(err) if not_served(&err) => Answer::NotServed,
        Err(err) => Answer::Failed(super::errors::text(&err)),
    }
}

/// Whether an error means the API went away (rather than a read that failed).
pub fn not_served(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 404 || status.code == 503)
}
