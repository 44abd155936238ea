//! One watch per kind: feeds a reflector store, coalesces change messages, reports health.
//!
//! [`drive`] consumes a kube-rs `watcher` stream (with [`WatchBackoff`]) and applies every event
//! to the kind's `Writer`. The first initial list is applied page by page, so the first rows show
//! while later pages load; later re-lists keep kube-rs's atomic swap. It sends
//! `Msg::StoreChanged` at most once per frame, `Msg::StoreReady` after each initial list, and
//! `Msg::WatchFailed`/`Msg::WatchRecovered` once per failure episode. While a watch is failing it
//! probes the server once a second, because a watch that resumes from its resourceVersion gets no
//! event until something changes.

use std::{future::Future, hash::Hash, pin::pin, sync::Arc, time::Duration};

use futures::{Stream, StreamExt};
use kube::runtime::{
    WatchStreamExt,
    reflector::{Lookup, ObjectRef, store::Writer},
    watcher::{self, Event},
};
use tokio::{sync::mpsc::UnboundedSender, time::Instant};

use super::health::{Health, WatchBackoff, describe};
use crate::app::msg::{Kind, Msg};

/// At most one `StoreChanged` per kind per frame (~60 fps).
pub const FRAME: Duration = Duration::from_millis(16);
/// How often a failing watch checks whether the server is back.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);
/// A failure this soon after a probe said "recovered" means the probe cannot be trusted.
pub const PROBE_GRACE: Duration = Duration::from_secs(10);

/// What applying one event did to the store.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    pub changed: bool,
    pub ready: bool,
}

/// A `Writer` plus the bookkeeping for applying the first initial list progressively.
pub struct StoreFeed<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
{
    writer: Writer<K>,
    listed_once: bool,
    /// Objects seen since the last `Init` of the first list (to drop ones deleted meanwhile).
    seen: Vec<ObjectRef<K>>,
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
        }
    }

    /// Applies one watcher event.
    pub fn apply(&mut self, event: Event<K>) -> Applied {
        match event {
            Event::Init if !self.listed_once => {
                self.seen.clear();
                Applied::default()
            }
            Event::InitApply(obj) if !self.listed_once => {
                // Nothing to clobber yet: show each page as it arrives.
                self.seen.push(obj.to_object_ref(Default::default()));
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
                Applied {
                    changed: true,
                    ready: true,
                }
            }
            Event::Apply(_) | Event::Delete(_) => {
                self.writer.apply_watcher_event(&event);
                Applied {
                    changed: true,
                    ready: false,
                }
            }
        }
    }

    /// Ends the progressive first list through the writer's own Init/InitDone cycle, so the
    /// store holds exactly the listed objects and `Store::wait_until_ready` resolves.
    fn finish_first_list(&mut self) {
        let reader = self.writer.as_reader();
        let listed: Vec<Arc<K>> = self
            .seen
            .drain(..)
            .filter_map(|key| reader.get(&key))
            .collect();
        self.writer.apply_watcher_event(&Event::Init);
        for obj in listed {
            self.writer
                .apply_watcher_event(&Event::InitApply(Arc::unwrap_or_clone(obj)));
        }
        self.writer.apply_watcher_event(&Event::InitDone);
        self.seen = Vec::new();
        self.listed_once = true;
    }
}

/// Runs one kind's watch until the message receiver is gone (or the task is aborted).
///
/// `probe` answers whether the server serves the kind again; it is called once a second while
/// the watch is failing.
pub async fn drive<K, S, P, F>(
    kind: Kind,
    stream: S,
    mut feed: StoreFeed<K>,
    probe: P,
    tx: UnboundedSender<Msg>,
) where
    K: Lookup + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Default,
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
    loop {
        let flush_at = last_sent.map_or_else(Instant::now, |at| at + FRAME);
        let sent = tokio::select! {
            item = stream.next() => match item {
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
                    if health.alive() {
                        tracing::info!(?kind, "watch recovered");
                        ok &= tx.send(Msg::WatchRecovered(kind)).is_ok();
                    }
                    let applied = feed.apply(event);
                    pending |= applied.changed;
                    if applied.ready {
                        if pending {
                            ok &= tx.send(Msg::StoreChanged(kind)).is_ok();
                            pending = false;
                            last_sent = Some(Instant::now());
                        }
                        ok &= tx.send(Msg::StoreReady(kind)).is_ok();
                    }
                    ok
                }
                Some(Err(err)) => {
                    let error = describe(&err);
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
                tx.send(Msg::StoreChanged(kind)).is_ok()
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

/// Maps a watch stream of one object type into another; objects `convert` rejects are dropped
/// (it logs why), markers and errors pass through.
pub fn map_events<A, B, S, C>(
    stream: S,
    convert: C,
) -> impl Stream<Item = Result<Event<B>, watcher::Error>> + Send
where
    S: Stream<Item = Result<Event<A>, watcher::Error>> + Send,
    C: Fn(A) -> Option<B> + Send + Sync + 'static,
    A: Send,
{
    let convert = Arc::new(convert);
    stream.filter_map(move |item| {
        let convert = convert.clone();
        async move {
            match item {
                Err(err) => Some(Err(err)),
                Ok(Event::Init) => Some(Ok(Event::Init)),
                Ok(Event::InitDone) => Some(Ok(Event::InitDone)),
                Ok(Event::InitApply(obj)) => convert(obj).map(|o| Ok(Event::InitApply(o))),
                Ok(Event::Apply(obj)) => convert(obj).map(|o| Ok(Event::Apply(o))),
                Ok(Event::Delete(obj)) => convert(obj).map(|o| Ok(Event::Delete(o))),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector::store;

    use super::*;
    use crate::api::SlimPod;

    fn pod(name: &str) -> SlimPod {
        let mut pod = SlimPod::default();
        pod.metadata.name = Some(name.to_owned());
        pod.metadata.namespace = Some("demo".to_owned());
        pod
    }

    fn names(store: &kube::runtime::reflector::Store<SlimPod>) -> Vec<String> {
        let mut names: Vec<_> = store
            .state()
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn first_list_shows_pages_as_they_arrive() {
        let (reader, writer) = store::<SlimPod>();
        let mut feed = StoreFeed::new(writer);
        feed.apply(Event::Init);
        let applied = feed.apply(Event::InitApply(pod("a")));
        assert!(applied.changed && !applied.ready);
        assert_eq!(names(&reader), ["a"], "first page visible before InitDone");
        feed.apply(Event::InitApply(pod("b")));
        let done = feed.apply(Event::InitDone);
        assert!(done.ready);
        assert_eq!(names(&reader), ["a", "b"]);
    }

    #[test]
    fn a_restarted_first_list_drops_objects_not_listed_again() {
        let (reader, writer) = store::<SlimPod>();
        let mut feed = StoreFeed::new(writer);
        feed.apply(Event::Init);
        feed.apply(Event::InitApply(pod("gone")));
        // The list failed half-way and started over; "gone" was deleted meanwhile.
        feed.apply(Event::Init);
        feed.apply(Event::InitApply(pod("kept")));
        feed.apply(Event::InitDone);
        assert_eq!(names(&reader), ["kept"]);
    }

    #[test]
    fn relists_after_the_first_swap_atomically() {
        let (reader, writer) = store::<SlimPod>();
        let mut feed = StoreFeed::new(writer);
        feed.apply(Event::Init);
        feed.apply(Event::InitApply(pod("a")));
        feed.apply(Event::InitDone);
        feed.apply(Event::Init);
        let applied = feed.apply(Event::InitApply(pod("b")));
        assert!(!applied.changed);
        assert_eq!(
            names(&reader),
            ["a"],
            "old state kept until the relist is done"
        );
        feed.apply(Event::InitDone);
        assert_eq!(names(&reader), ["b"]);
        feed.apply(Event::Delete(pod("b")));
        assert!(names(&reader).is_empty());
    }

    #[tokio::test]
    async fn ready_resolves_after_the_first_list() {
        let (reader, writer) = store::<SlimPod>();
        let mut feed = StoreFeed::new(writer);
        feed.apply(Event::Init);
        feed.apply(Event::InitApply(pod("a")));
        feed.apply(Event::InitDone);
        let ready = tokio::time::timeout(Duration::from_secs(1), reader.wait_until_ready()).await;
        assert!(matches!(ready, Ok(Ok(()))));
    }

    type Item = Result<Event<SlimPod>, watcher::Error>;

    /// Runs `drive` over a channel-fed stream; returns the event sender and the message receiver.
    fn driven(
        probe_answers: bool,
    ) -> (
        futures::channel::mpsc::UnboundedSender<Item>,
        tokio::sync::mpsc::UnboundedReceiver<Msg>,
        kube::runtime::reflector::Store<SlimPod>,
    ) {
        let (events, stream) = futures::channel::mpsc::unbounded::<Item>();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (reader, writer) = store::<SlimPod>();
        let probe = move || async move { probe_answers };
        tokio::spawn(drive(Kind::Pod, stream, StoreFeed::new(writer), probe, tx));
        (events, rx, reader)
    }

    async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Msg>) -> Msg {
        tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("a message")
            .expect("channel open")
    }

    #[tokio::test]
    async fn a_burst_of_events_is_one_change_message_per_frame() {
        let (events, mut rx, reader) = driven(true);
        events.unbounded_send(Ok(Event::Init)).unwrap();
        for i in 0..2000 {
            events
                .unbounded_send(Ok(Event::InitApply(pod(&format!("p{i}")))))
                .unwrap();
        }
        events.unbounded_send(Ok(Event::InitDone)).unwrap();
        let mut changed = 0;
        loop {
            match next(&mut rx).await {
                Msg::StoreChanged(Kind::Pod) => changed += 1,
                Msg::StoreReady(Kind::Pod) => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(changed >= 1, "the change is announced");
        assert!(changed < 2000, "{changed} messages for 2000 events");
        assert_eq!(reader.len(), 2000);
    }

    #[tokio::test]
    async fn retried_errors_are_one_failure_and_an_event_ends_it() {
        let (events, mut rx, _reader) = driven(false);
        for _ in 0..3 {
            events
                .unbounded_send(Err(watcher::Error::NoResourceVersion))
                .unwrap();
        }
        assert!(matches!(
            next(&mut rx).await,
            Msg::WatchFailed { kind: Kind::Pod, error } if error.contains("resourceVersion")
        ));
        events.unbounded_send(Ok(Event::Apply(pod("a")))).unwrap();
        // The two retried errors (backed off 0.25 s + 0.5 s) said nothing.
        assert!(matches!(
            next(&mut rx).await,
            Msg::WatchRecovered(Kind::Pod)
        ));
        assert!(matches!(next(&mut rx).await, Msg::StoreChanged(Kind::Pod)));
    }

    #[tokio::test]
    async fn a_relist_that_keeps_failing_is_one_failure() {
        let (events, mut rx, _reader) = driven(false);
        // What kube's watcher yields while the server is down before the first list: Init
        // (before any request), then the list error, again and again.
        for _ in 0..3 {
            events.unbounded_send(Ok(Event::Init)).unwrap();
            events
                .unbounded_send(Err(watcher::Error::NoResourceVersion))
                .unwrap();
        }
        assert!(matches!(next(&mut rx).await, Msg::WatchFailed { .. }));
        let quiet = tokio::time::timeout(Duration::from_millis(1500), rx.recv()).await;
        assert!(quiet.is_err(), "Init is not a recovery: {quiet:?}");
        events.unbounded_send(Ok(Event::Init)).unwrap();
        events.unbounded_send(Ok(Event::InitDone)).unwrap();
        assert!(matches!(
            next(&mut rx).await,
            Msg::WatchRecovered(Kind::Pod)
        ));
    }

    #[tokio::test]
    async fn the_probe_ends_an_episode_of_a_silently_resumed_watch_once() {
        let (events, mut rx, _reader) = driven(true);
        events
            .unbounded_send(Err(watcher::Error::NoResourceVersion))
            .unwrap();
        assert!(matches!(next(&mut rx).await, Msg::WatchFailed { .. }));
        // No event follows, but the server answers the probe.
        assert!(matches!(
            next(&mut rx).await,
            Msg::WatchRecovered(Kind::Pod)
        ));
        // The watch fails again at once: the probe is no longer trusted for this episode.
        events
            .unbounded_send(Err(watcher::Error::NoResourceVersion))
            .unwrap();
        assert!(matches!(next(&mut rx).await, Msg::WatchFailed { .. }));
        let quiet = tokio::time::timeout(Duration::from_millis(2500), rx.recv()).await;
        assert!(quiet.is_err(), "no flapping: {quiet:?}");
        events.unbounded_send(Ok(Event::Apply(pod("a")))).unwrap();
        assert!(matches!(
            next(&mut rx).await,
            Msg::WatchRecovered(Kind::Pod)
        ));
    }
}
