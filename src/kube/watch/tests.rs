//! `StoreFeed` and `drive` on scripted watcher streams.

use std::{
    collections::VecDeque,
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    task::Poll,
};

use kube::runtime::reflector::store;

use super::*;
use crate::{
    api::{CloneSet, SlimPod, pod::WatchedPod},
    app::stores::{PodStore, PodWriter, pod_store},
};
use std::sync::Arc;

fn pod(name: &str) -> WatchedPod {
    let mut pod = SlimPod::default();
    pod.metadata.name = Some(name.into());
    pod.metadata.namespace = Some("demo".into());
    pod.into()
}

fn names(store: &PodStore) -> Vec<String> {
    let mut names: Vec<_> = store
        .state()
        .iter()
        .filter_map(|p| p.metadata.name.as_deref().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// The pod store and its feed, as the pod watch makes them.
fn pod_feed() -> (PodStore, PodFeed) {
    let (reader, writer): (PodStore, PodWriter) = pod_store();
    (reader, PodFeed::new(writer))
}

#[test]
fn the_generic_feed_follows_the_same_rules_for_other_kinds() {
    let cs = |name: &str| {
        let mut cs = CloneSet::default();
        cs.metadata.name = Some(name.to_owned());
        cs.metadata.namespace = Some("demo".to_owned());
        cs
    };
    let (reader, writer) = store::<CloneSet>();
    let mut feed = StoreFeed::new(writer);
    let names = || {
        let mut n: Vec<_> = reader
            .state()
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        n.sort();
        n
    };
    feed.apply(Event::Init);
    feed.apply(Event::InitApply(cs("gone")));
    assert_eq!(names(), ["gone"], "first page visible before InitDone");
    feed.apply(Event::Init);
    feed.apply(Event::InitApply(cs("kept")));
    assert!(feed.apply(Event::InitDone).ready);
    assert_eq!(names(), ["kept"]);
    let Changes::Keys(keys) = feed.take_changes() else {
        panic!("keys expected");
    };
    assert!(keys.iter().any(|k| k.name == "gone"), "{keys:?}");
    feed.apply(Event::Init);
    feed.apply(Event::InitApply(cs("b")));
    assert_eq!(names(), ["kept"], "old state kept until the relist is done");
    feed.apply(Event::InitDone);
    assert_eq!(names(), ["b"]);
    assert_eq!(feed.take_changes(), Changes::All);
}

#[test]
fn first_list_shows_pages_as_they_arrive() {
    let (reader, mut feed) = pod_feed();
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
    let (reader, mut feed) = pod_feed();
    feed.apply(Event::Init);
    feed.apply(Event::InitApply(pod("gone")));
    // The list failed half-way and started over; "gone" was deleted meanwhile.
    feed.apply(Event::Init);
    feed.apply(Event::InitApply(pod("kept")));
    feed.apply(Event::InitDone);
    assert_eq!(names(&reader), ["kept"]);
    let Changes::Keys(keys) = feed.take_changes() else {
        panic!("keys expected");
    };
    assert!(keys.iter().any(|k| k.name == "gone"), "{keys:?}");
}

#[test]
fn relists_after_the_first_swap_atomically() {
    let (reader, mut feed) = pod_feed();
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

#[test]
fn the_end_of_the_first_list_keeps_the_listed_objects_in_place() {
    let (reader, mut feed) = pod_feed();
    feed.apply(Event::Init);
    feed.apply(Event::InitApply(pod("a")));
    let before = reader.state();
    feed.take_changes();
    feed.apply(Event::InitDone);
    // The same objects (no copy of the store), and nothing else to read.
    assert!(Arc::ptr_eq(&before[0], &reader.state()[0]));
    assert_eq!(feed.take_changes(), Changes::Keys(Vec::new()));
}

type Item = Result<Event<WatchedPod>, watcher::Error>;

/// Runs `drive` over a channel-fed stream; returns the event sender and the message receiver.
fn driven(
    probe_answers: bool,
) -> (
    futures::channel::mpsc::UnboundedSender<Item>,
    tokio::sync::mpsc::UnboundedReceiver<Msg>,
    PodStore,
) {
    let (events, stream) = futures::channel::mpsc::unbounded::<Item>();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let (reader, feed) = pod_feed();
    let probe = move || async move { probe_answers };
    tokio::spawn(drive(Kind::Pod, stream, feed, probe, tx));
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
    let mut last = None;
    loop {
        match next(&mut rx).await {
            msg @ (Msg::StoreChanged(Kind::Pod) | Msg::PodsChanged(_)) => {
                changed += 1;
                last = Some(msg);
            }
            Msg::StoreReady(Kind::Pod) => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(changed >= 1, "the change is announced");
    assert!(changed < 2000, "{changed} messages for 2000 events");
    // Pages are named pod by pod (the app patches its rows; no whole rebuild per page).
    assert!(matches!(last, Some(Msg::PodsChanged(_))));
    assert_eq!(reader.len(), 2000);
}

#[tokio::test]
async fn after_the_list_each_change_names_the_pods_it_touched() {
    let (events, mut rx, _reader) = driven(true);
    events.unbounded_send(Ok(Event::Init)).unwrap();
    events
        .unbounded_send(Ok(Event::InitApply(pod("a"))))
        .unwrap();
    events
        .unbounded_send(Ok(Event::InitApply(pod("b"))))
        .unwrap();
    events.unbounded_send(Ok(Event::InitDone)).unwrap();
    while !matches!(next(&mut rx).await, Msg::StoreReady(Kind::Pod)) {}
    events.unbounded_send(Ok(Event::Apply(pod("c")))).unwrap();
    events.unbounded_send(Ok(Event::Delete(pod("a")))).unwrap();
    let mut keys = Vec::new();
    while keys.len() < 2 {
        match next(&mut rx).await {
            Msg::PodsChanged(k) => keys.extend(k.into_iter().map(|k| k.name)),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(keys, ["c", "a"]);
    // A relist rebuilds the store: the whole of it is read again.
    events.unbounded_send(Ok(Event::Init)).unwrap();
    events
        .unbounded_send(Ok(Event::InitApply(pod("b"))))
        .unwrap();
    events.unbounded_send(Ok(Event::InitDone)).unwrap();
    assert!(matches!(next(&mut rx).await, Msg::StoreChanged(Kind::Pod)));
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
    assert!(matches!(next(&mut rx).await, Msg::PodsChanged(keys) if keys.len() == 1));
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

fn forbidden_error() -> watcher::Error {
    let status = kube::core::Status {
        code: 403,
        reason: "Forbidden".into(),
        message:
            "clonesets.apps.kruise.io is forbidden: User \"system:serviceaccount:demo:viewer\" \
                  cannot list resource \"clonesets\" in API group \"apps.kruise.io\" in the \
                  namespace \"demo\""
                .into(),
        ..kube::core::Status::default()
    };
    watcher::Error::InitialListFailed(kube::Error::Api(status.boxed()))
}

/// A stream that plays `script` (then stays pending) and counts how often it was asked.
fn scripted(script: Vec<Item>) -> (impl Stream<Item = Item> + Send, Arc<AtomicUsize>) {
    let polls = Arc::new(AtomicUsize::new(0));
    let counter = polls.clone();
    let script = Mutex::new(VecDeque::from(script));
    let stream = futures::stream::poll_fn(move |_| {
        let next = script.lock().ok().and_then(|mut s| s.pop_front());
        match next {
            Some(item) => {
                counter.fetch_add(1, Ordering::SeqCst);
                Poll::Ready(Some(item))
            }
            None => Poll::Pending,
        }
    });
    (stream, polls)
}

#[tokio::test(start_paused = true)]
async fn a_403_is_said_once_and_asked_again_only_slowly() {
    let script = vec![
        Err(forbidden_error()),
        Err(forbidden_error()),
        // Permission granted meanwhile: the third try lists.
        Ok(Event::Init),
        Ok(Event::InitApply(pod("a"))),
        Ok(Event::InitDone),
    ];
    let (stream, polls) = scripted(script);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (reader, feed) = pod_feed();
    let probes = Arc::new(AtomicUsize::new(0));
    let probed = probes.clone();
    let probe = move || {
        probed.fetch_add(1, Ordering::SeqCst);
        async { true }
    };
    tokio::spawn(drive(Kind::CloneSet, stream, feed, probe, tx));
    match next(&mut rx).await {
        Msg::WatchForbidden { kind, denied } => {
            assert_eq!(kind, Kind::CloneSet);
            assert_eq!(denied.verb, "list");
            assert_eq!(
                denied.user.as_deref(),
                Some("system:serviceaccount:demo:viewer")
            );
            assert_eq!(denied.namespace.as_deref(), Some("demo"));
        }
        other => panic!("unexpected {other:?}"),
    }
    // No backoff loop: a minute passes with no new request and nothing more to say.
    tokio::time::sleep(FORBIDDEN_RECHECK - Duration::from_secs(1)).await;
    assert_eq!(
        polls.load(Ordering::SeqCst),
        1,
        "asked again before the recheck"
    );
    assert!(rx.try_recv().is_err(), "a 403 is no failure episode");
    // The recheck: refused again, said nothing again.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(polls.load(Ordering::SeqCst), 2);
    assert!(rx.try_recv().is_err(), "the same refusal is said once");
    assert_eq!(
        probes.load(Ordering::SeqCst),
        0,
        "a refusal is not probed like an outage"
    );
    // The next recheck lists: the refusal is over.
    tokio::time::sleep(FORBIDDEN_RECHECK).await;
    assert!(matches!(
        next(&mut rx).await,
        Msg::WatchRecovered(Kind::CloneSet)
    ));
    // Then the list lands: change notices (coalesced per frame, so one or more) and readiness.
    loop {
        match next(&mut rx).await {
            Msg::StoreChanged(Kind::CloneSet) => {}
            Msg::StoreReady(Kind::CloneSet) => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(names(&reader), ["a"]);
}

#[tokio::test(start_paused = true)]
async fn a_failure_that_turns_into_a_refusal_says_so() {
    let script = vec![
        Err(watcher::Error::NoResourceVersion),
        Err(forbidden_error()),
    ];
    let (stream, _polls) = scripted(script);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (_reader, feed) = pod_feed();
    tokio::spawn(drive(Kind::CloneSet, stream, feed, || async { false }, tx));
    assert!(matches!(next(&mut rx).await, Msg::WatchFailed { .. }));
    assert!(matches!(next(&mut rx).await, Msg::WatchForbidden { .. }));
}
