//! One watch per kind: feeds a reflector store, coalesces change messages, reports health.
//!
//! [`drive`] consumes a kube-rs `watcher` stream (with [`WatchBackoff`]) and applies every event
//! to the kind's `Writer`. The first initial list is applied page by page, so the first rows show
//! while later pages load; later re-lists keep kube-rs's atomic swap. It sends
//! `Msg::StoreChanged` at most once per frame, `Msg::StoreReady` after each initial list, and
//! `Msg::WatchFailed`/`Msg::WatchRecovered` once per failure episode. While a watch is failing it
//! probes the server once a second, because a watch that resumes from its resourceVersion gets no
//! event until something changes. A 403 is no failure: it is reported once as
//! `Msg::WatchForbidden` and asked again only every [`FORBIDDEN_RECHECK`] (a permission granted
//! later shows up then, or at once on `:ns`/`:ctx`), never in the backoff loop.

use std::{future::Future, hash::Hash, pin::pin, sync::Arc, time::Duration};

use futures::{Stream, StreamExt};
use kube::runtime::{
    WatchStreamExt,
    reflector::{Lookup, ObjectRef, store::Writer},
    watcher::{self, Event},
};
use tokio::{sync::mpsc::UnboundedSender, time::Instant};

pub use kruise_client::events::map_events;

use super::{
    errors,
    health::{Health, WatchBackoff},
};
use crate::app::msg::{Denied, Kind, Msg, PodKey};

/// At most one change message per kind this often (the console redraws what watches changed
/// at most every 100 ms too): under 200 pod changes a second the app patches its rows ten
/// times a second, not sixty.
pub const FRAME: Duration = Duration::from_millis(100);
/// How often a failing watch checks whether the server is back.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);
/// A failure this soon after a probe said "recovered" means the probe cannot be trusted.
pub const PROBE_GRACE: Duration = Duration::from_secs(10);
/// How often a watch the user may not make (403) asks again.
pub const FORBIDDEN_RECHECK: Duration = Duration::from_secs(60);

/// What applying one event did to the store.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    pub changed: bool,
    pub ready: bool,
}

/// What changed in a store since the last [`StoreFeed::take_changes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// These objects (added, modified or deleted; possibly repeated).
    Keys(Vec<PodKey>),
    /// The store was rebuilt (a list ended): read all of it.
    All,
}

/// What `drive` feeds a kind's events into: a store, plus the keys changed since the last message.
pub trait Feed<K> {
    /// Applies one watcher event (taking the object: a feed stores it without a copy if it can).
    fn apply(&mut self, event: Event<K>) -> Applied;
    /// What changed since the last call (and forgets it).
    fn take_changes(&mut self) -> Changes;
}

/// A `Writer` plus the bookkeeping for applying the first initial list progressively, and
/// the keys changed since the last message (so the app reads only those).
pub struct StoreFeed<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    writer: Writer<K>,
    listed_once: bool,
    /// Objects seen since the last `Init` of the first list (to drop ones deleted meanwhile).
    seen: Vec<ObjectRef<K>>,
    changed: Vec<PodKey>,
    rebuilt: bool,
}

impl<K> StoreFeed<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    pub fn new(writer: Writer<K>) -> Self {
        Self {
            writer,
            listed_once: false,
            seen: Vec::new(),
            changed: Vec::new(),
            rebuilt: false,
        }
    }

    /// What changed since the last call (and forgets it).
    pub fn take_changes(&mut self) -> Changes {
        Feed::take_changes(self)
    }

    /// Applies one watcher event.
    pub fn apply(&mut self, event: Event<K>) -> Applied {
        Feed::apply(self, event)
    }
}

impl<K> Feed<K> for StoreFeed<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    fn take_changes(&mut self) -> Changes {
        if std::mem::take(&mut self.rebuilt) {
            self.changed.clear();
            Changes::All
        } else {
            Changes::Keys(std::mem::take(&mut self.changed))
        }
    }

    fn apply(&mut self, event: Event<K>) -> Applied {
        match event {
            Event::Init if !self.listed_once => {
                self.seen.clear();
                Applied::default()
            }
            Event::InitApply(obj) if !self.listed_once => {
                // Nothing to clobber yet: show each page as it arrives.
                self.seen.push(obj.to_object_ref(Default::default()));
                self.note(&obj);
                self.writer.apply_watcher_event(&Event::Apply(obj));
                Applied {
                    changed: true,
                    ready: false,
                }
            }
            Event::InitDone if !self.listed_once => {
                self.finish_first_list();
                Applied {
                    changed: true,
                    ready: true,
                }
            }
            Event::Init | Event::InitApply(_) => {
                self.writer.apply_watcher_event(&event);
                Applied::default()
            }
            Event::InitDone => {
                self.writer.apply_watcher_event(&event);
                self.rebuilt = true;
                Applied {
                    changed: true,
                    ready: true,
                }
            }
            Event::Apply(ref obj) | Event::Delete(ref obj) => {
                self.note(obj);
                self.writer.apply_watcher_event(&event);
                Applied {
                    changed: true,
                    ready: false,
                }
            }
        }
    }
}

impl<K> StoreFeed<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    fn note(&mut self, obj: &K) {
        if !self.rebuilt {
            self.changed.push(PodKey {
                namespace: obj
                    .namespace()
                    .map(|ns| ns.into_owned())
                    .unwrap_or_default(),
                name: obj.name().map(|n| n.into_owned()).unwrap_or_default(),
            });
        }
    }

    /// Ends the progressive first list: objects applied by an earlier, interrupted attempt
    /// of it and not listed again are deleted (and named as changed). The listed objects stay
    /// where they are — no copy of the store, and the app's rows of them stay valid.
    fn finish_first_list(&mut self) {
        let seen: std::collections::HashSet<ObjectRef<K>> = self.seen.drain(..).collect();
        let stale: Vec<Arc<K>> = self
            .writer
            .as_reader()
            .state()
            .into_iter()
            .filter(|obj| !seen.contains(&obj.to_object_ref(Default::default())))
            .collect();
        for obj in stale {
            self.note(&obj);
            self.writer
                .apply_watcher_event(&Event::Delete(Arc::unwrap_or_clone(obj)));
        }
        self.seen = Vec::new();
        self.listed_once = true;
    }
}

/// Runs one kind's watch until the message receiver is gone (or the task is aborted).
///
/// `probe` answers whether the server serves the kind again; it is called once a second while
/// the watch is failing.
pub async fn drive<K, D, S, P, F>(
    kind: Kind,
    stream: S,
    mut feed: D,
    probe: P,
    tx: UnboundedSender<Msg>,
) where
    K: Send + 'static,
    D: Feed<K>,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send,
    P: Fn() -> F,
    F: Future<Output = bool>,
{
    let mut stream = pin!(stream.backoff(WatchBackoff::default()));
    let mut health = Health::default();
    // When the probe ended an episode and no event has confirmed it yet: if the watch fails
    // again soon after (the server lists but will not watch), only a real event ends the next
    // episode, so the banner does not flap.
    let mut unconfirmed: Option<Instant> = None;
    let mut probe_trusted = true;
    let mut pending = false;
    let mut last_sent: Option<Instant> = None;
    let mut probe_tick = tokio::time::interval(PROBE_EVERY);
    probe_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The refusal last reported, and when to ask again (the stream is not polled until then).
    let mut denied: Option<Denied> = None;
    let mut recheck_at: Option<Instant> = None;
    loop {
        let flush_at = last_sent.map_or_else(Instant::now, |at| at + FRAME);
        let sent = tokio::select! {
            () = tokio::time::sleep_until(recheck_at.unwrap_or_else(Instant::now)), if recheck_at.is_some() => {
                recheck_at = None;
                true
            }
            item = stream.next(), if recheck_at.is_none() => match item {
                None => return,
                // `Init` comes before the list request is even made: no sign of life.
                Some(Ok(event)) if matches!(event, Event::Init) => {
                    feed.apply(event);
                    true
                }
                Some(Ok(event)) => {
                    let mut ok = true;
                    unconfirmed = None;
                    probe_trusted = true;
                    let was_failing = health.alive();
                    if was_failing | denied.take().is_some() {
                        tracing::info!(?kind, "watch recovered");
                        ok &= tx.send(Msg::WatchRecovered(kind)).is_ok();
                    }
                    let applied = feed.apply(event);
                    pending |= applied.changed;
                    if applied.ready {
                        if pending {
                            ok &= tx.send(changed_msg(kind, &mut feed)).is_ok();
                            pending = false;
                            last_sent = Some(Instant::now());
                        }
                        ok &= tx.send(Msg::StoreReady(kind)).is_ok();
                    }
                    ok
                }
                Some(Err(err)) if errors::forbidden(&err).is_some() => {
                    // An answer, not an outage: say once what is refused, ask again slowly.
                    health.alive();
                    unconfirmed = None;
                    recheck_at = Some(Instant::now() + FORBIDDEN_RECHECK);
                    let now_denied = errors::forbidden(&err).map(errors::denied);
                    if now_denied != denied {
                        denied = now_denied;
                        tracing::info!(?kind, error = %errors::watcher_text(&err), "not permitted");
                        match &denied {
                            Some(d) => tx.send(Msg::WatchForbidden { kind, denied: d.clone() }).is_ok(),
                            None => true,
                        }
                    } else {
                        true
                    }
                }
                Some(Err(err)) => {
                    let error = errors::watcher_text(&err);
                    if unconfirmed.take().is_some_and(|at| at.elapsed() < PROBE_GRACE) {
                        probe_trusted = false;
                    }
                    if health.failed() {
                        tracing::warn!(?kind, %error, "watch failed; retrying");
                        tx.send(Msg::WatchFailed { kind, error }).is_ok()
                    } else {
                        tracing::debug!(?kind, %error, "watch retry failed");
                        true
                    }
                }
            },
            () = tokio::time::sleep_until(flush_at), if pending => {
                pending = false;
                last_sent = Some(Instant::now());
                tx.send(changed_msg(kind, &mut feed)).is_ok()
            }
            _ = probe_tick.tick(), if health.is_failing() && probe_trusted => {
                if probe().await && health.alive() {
                    unconfirmed = Some(Instant::now());
                    tracing::info!(?kind, "server answers again");
                    tx.send(Msg::WatchRecovered(kind)).is_ok()
                } else {
                    true
                }
            }
        };
        if !sent {
            return;
        }
    }
}

/// The message saying what changed: pods by key (the one kind that reaches 100,000 objects),
/// every other kind (and a rebuilt pod store) as a whole.
fn changed_msg<K>(kind: Kind, feed: &mut impl Feed<K>) -> Msg {
    match feed.take_changes() {
        Changes::Keys(keys) if kind == Kind::Pod => Msg::PodsChanged(keys),
        _ => Msg::StoreChanged(kind),
    }
}

mod podfeed;

pub use podfeed::PodFeed;

#[cfg(test)]
mod tests;
