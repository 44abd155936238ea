//! How far a client's watch has fallen behind: the events the store has queued for it and not
//! yet taken. A real server's cacher gives each watcher a small buffer and terminates a watcher
//! that cannot take its events in time ("forcing watcher close due to unresponsiveness"); the
//! client watches again from the last version it saw. Here a watcher is closed once it lags by
//! more than the watch window holds (events or their objects' bytes): from that far back it
//! could not resume either, and queueing on would hold superseded objects without bound.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use tokio_util::sync::CancellationToken;

use super::StoreEvent;

/// One watcher's backlog, shared by the store (which queues) and the watcher (which takes).
#[derive(Debug, Default)]
pub struct Lag {
    events: AtomicUsize,
    bytes: AtomicUsize,
    closed: CancellationToken,
}

impl Lag {
    pub(super) fn new() -> Arc<Lag> {
        Arc::new(Lag::default())
    }

    /// The store queued `ev` for this watcher. False (and the watcher is closed) when the
    /// backlog is now beyond `max_events` or `max_bytes`.
    pub(super) fn queued(&self, ev: &StoreEvent, max_events: usize, max_bytes: usize) -> bool {
        let events = self.events.fetch_add(1, Ordering::Relaxed) + 1;
        let bytes = self.bytes.fetch_add(ev.obj.weight(), Ordering::Relaxed) + ev.obj.weight();
        if events > max_events || bytes > max_bytes.max(ev.obj.weight()) {
            self.closed.cancel();
            return false;
        }
        true
    }

    /// The watcher took `ev` off its queue.
    pub fn took(&self, ev: &StoreEvent) {
        let _ = self
            .events
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(1))
            });
        let w = ev.obj.weight();
        let _ = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(w))
            });
    }

    /// Events queued and not yet taken.
    pub fn backlog(&self) -> (usize, usize) {
        (
            self.events.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }

    /// Whether the store closed this watcher for lagging.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Resolves when the store closes this watcher for lagging.
    pub async fn closed(&self) {
        self.closed.cancelled().await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::kruise::KruiseVersion;
    use crate::server::store::{Store, WatchFrom};

    fn config_map(store: &Store, name: &str) {
        store
            .create(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default"},
                "data": {"k": "v"},
            }))
            .unwrap();
    }

    fn config_map_key(store: &Store) -> std::sync::Arc<str> {
        store
            .registry()
            .lookup("", "v1", "configmaps")
            .unwrap()
            .key
            .clone()
    }

    #[test]
    fn a_client_watch_that_lags_beyond_the_window_is_closed_and_no_longer_queued_for() {
        let store = Store::new(KruiseVersion::V1_9).unwrap();
        store.set_event_window(5);
        let key = config_map_key(&store);
        let from = WatchFrom::Version(store.current_rv());
        let mut client = store.watch_client(Some(key.clone()), None, from).unwrap();
        let mut internal = store.watch(Some(key), None, from).unwrap();
        let lag = client.lag.clone().unwrap();
        // Taking events keeps the backlog small: ten writes, each taken, never close it.
        for i in 0..10 {
            config_map(&store, &format!("taken-{i}"));
            let ev = client.rx.try_recv().unwrap();
            lag.took(&ev);
        }
        assert!(!lag.is_closed());
        assert_eq!(lag.backlog().0, 0);
        // A watcher that stops reading: five queued events are within the window ...
        for i in 0..5 {
            config_map(&store, &format!("left-{i}"));
        }
        assert!(!lag.is_closed());
        assert_eq!(lag.backlog().0, 5);
        // ... the sixth is beyond it: the watcher is closed and nothing more is queued.
        config_map(&store, "over");
        assert!(lag.is_closed());
        config_map(&store, "after");
        let mut queued = 0;
        while client.rx.try_recv().is_ok() {
            queued += 1;
        }
        assert_eq!(queued, 5);
        // The server's own loops are not bounded: every event reached the internal watch.
        let mut internal_seen = 0;
        while internal.rx.try_recv().is_ok() {
            internal_seen += 1;
        }
        assert_eq!(internal_seen, 17);
        assert!(internal.lag.is_none());
    }

    #[test]
    fn a_client_watch_is_closed_when_its_backlog_outgrows_the_window_bytes() {
        let store = Store::new(KruiseVersion::V1_9).unwrap();
        store.set_event_window_bytes(1_000);
        let key = config_map_key(&store);
        let from = WatchFrom::Version(store.current_rv());
        let client = store.watch_client(Some(key), None, from).unwrap();
        let lag = client.lag.clone().unwrap();
        let mut written = 0;
        while !lag.is_closed() {
            config_map(&store, &format!("cm-{written}"));
            written += 1;
            assert!(written < 100, "never closed");
        }
        // Each ConfigMap is a few hundred bytes of JSON: a handful fit in 1,000 bytes.
        assert!(written > 1);
    }
}
