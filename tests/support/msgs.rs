//! Waiting on the kube layer's messages and reading its stores, shared by the kube-layer tests
//! (against the mock API server and against the embedded cluster).
#![allow(dead_code)]

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::app::{
    Stores,
    msg::{Discovery, EffectResult, Kind, Msg},
};
use tokio::sync::mpsc::UnboundedReceiver;

/// Guard against a hung test; the behaviour asserted is the message, not the time.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// Receives messages (keeping them in `seen`) until `done(seen)` holds.
pub async fn until(
    rx: &mut UnboundedReceiver<Msg>,
    seen: &mut Vec<Msg>,
    within: Duration,
    done: impl Fn(&[Msg]) -> bool,
) {
    let wait = async {
        while !done(seen) {
            match rx.recv().await {
                Some(msg) => seen.push(msg),
                None => panic!("message channel closed"),
            }
        }
    };
    if tokio::time::timeout(within, wait).await.is_err() {
        panic!("condition not met within {within:?}; messages: {seen:#?}");
    }
}

pub fn has(seen: &[Msg], pred: impl Fn(&Msg) -> bool) -> bool {
    seen.iter().any(pred)
}

pub fn ready(seen: &[Msg], kind: Kind) -> bool {
    has(seen, |m| matches!(m, Msg::StoreReady(k) if *k == kind))
}

/// The first discovery result in `seen`.
pub fn discovered(seen: &[Msg]) -> Option<Discovery> {
    seen.iter().find_map(|m| match m {
        Msg::Discovered(d) => Some(d.clone()),
        _ => None,
    })
}

/// Whether discovery found the Kruise `kind` served at `version`.
pub fn serves(discovery: &Discovery, kind: &str, version: &str) -> bool {
    discovery
        .kruise_kinds
        .contains(&(kind.to_owned(), version.to_owned()))
}

/// How many `WatchFailed` reports for `kind` are in `seen`.
pub fn failures(seen: &[Msg], kind: Kind) -> usize {
    seen.iter()
        .filter(|m| matches!(m, Msg::WatchFailed { kind: k, .. } if *k == kind))
        .count()
}

/// Lets `quiet` pass, then adds every message received meanwhile to `seen` (for "still only
/// one report" checks after retries).
pub async fn collect_after(rx: &mut UnboundedReceiver<Msg>, seen: &mut Vec<Msg>, quiet: Duration) {
    tokio::time::sleep(quiet).await;
    while let Ok(msg) = rx.try_recv() {
        seen.push(msg);
    }
}

/// Clears `seen`, waits for the next `EffectDone` and returns what `pick` takes from the results.
pub async fn effect_result<T>(
    rx: &mut UnboundedReceiver<Msg>,
    seen: &mut Vec<Msg>,
    pick: impl Fn(&EffectResult) -> Option<T>,
) -> Option<T> {
    seen.clear();
    until(rx, seen, PATIENCE, |s| {
        has(s, |m| matches!(m, Msg::EffectDone(_)))
    })
    .await;
    seen.iter().find_map(|m| match m {
        Msg::EffectDone(r) => pick(r),
        _ => None,
    })
}

/// The CloneSet names in the store, sorted.
pub fn cloneset_names(stores: &Stores) -> Vec<String> {
    let mut names: Vec<String> = stores
        .clonesets
        .state()
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    names.sort();
    names
}

pub fn partition_of(stores: &Stores, name: &str) -> Option<IntOrString> {
    stores
        .clonesets
        .find(|c| c.metadata.name.as_deref() == Some(name))
        .and_then(|c| c.spec.update_strategy.partition.clone())
}
