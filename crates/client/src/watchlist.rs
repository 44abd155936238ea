//! Streaming lists (watch-list, KEP-3157) with the fallback client-go has and kube-rs lacks.
//!
//! A streaming list is one watch request (`watch=1&sendInitialEvents=true&
//! resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`): the server sends the current
//! objects as ADDED events, then a BOOKMARK annotated [`INITIAL_EVENTS_END`], then the changes,
//! with no LIST at all. kube-runtime 5 makes that request with `watcher::Config::streaming_lists`
//! but does not fall back: a server with the `WatchList` gate off (1.33, or an aggregated API)
//! refuses it (422 `sendInitialEvents is forbidden for watch unless the WatchList feature gate is
//! enabled`) and the watcher would retry the refused request forever.
//!
//! [`Fallback`] wraps kube-runtime's watcher: it starts the streaming one and, when the server
//! refuses it before the initial list is complete, drops it and starts the paged one (LIST in
//! pages, then WATCH: [`paged::watcher`], whose pages are pipelined), as client-go does
//! ("better to make progress than deadlocking"). The
//! refusal is swallowed (no error reaches the caller) and remembered in [`ListModes`] for that
//! server and resource, so a later watch there (a re-watch after a namespace switch, another
//! reflector) goes straight to the paged list.
//!
//! What counts as a refusal, while the initial list is being streamed:
//! - the watch request answered 400, 403 or 422 (or any status naming `sendInitialEvents`);
//! - the stream ending, or an error arriving on it, before the initial-events-end bookmark
//!   (kube-runtime then silently starts over: the wrapper sees a second `Init`).
//!
//! A request that fails without an answer (connection refused, a 5xx) is an outage, not a
//! refusal: the error passes through and the streaming list is tried again.

use std::{
    collections::HashMap,
    fmt::Debug,
    pin::Pin,
    sync::{Arc, Mutex, OnceLock},
    task::{Context, Poll},
};

use futures::{Stream, StreamExt as _, stream::BoxStream};
use kube::{
    Api, Resource,
    runtime::watcher::{self, Event, InitialListStrategy},
};
use serde::de::DeserializeOwned;

/// The annotation on the bookmark that ends a streaming list's initial events.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// How a watch got (or gets) its initial list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListMode {
    /// One watch request streaming the objects, ended by the initial-events-end bookmark.
    Streaming,
    /// LIST in pages, then WATCH (the server refused streaming lists).
    Paged,
}

/// A server and one of its resources, as the memory keys them: the cluster URL and the
/// resource's collection path without its namespace (`/api/v1/pods`,
/// `/apis/apps.kruise.io/v1alpha1/clonesets`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    pub server: String,
    pub resource: String,
}

impl Key {
    /// The key of `resource_url` (an `Api`'s URL, namespaced or not) on `server`.
    pub fn new(server: &str, resource_url: &str) -> Self {
        Self {
            server: server.to_owned(),
            resource: collection_path(resource_url),
        }
    }
}

/// `resource_url` without its `namespaces/NAME` segment: whether a server streams lists is a
/// property of the resource, not of the namespace asked for.
pub fn collection_path(resource_url: &str) -> String {
    let path = resource_url.split('?').next().unwrap_or_default();
    let parts: Vec<&str> = path.split('/').collect();
    let mut out: Vec<&str> = Vec::with_capacity(parts.len());
    let mut i = 0;
    while i < parts.len() {
        // `namespaces/NAME/<resource>`: drop the pair; `/api/v1/namespaces` itself stays.
        if parts[i] == "namespaces" && i + 2 < parts.len() {
            i += 2;
            continue;
        }
        out.push(parts[i]);
        i += 1;
    }
    out.join("/")
}

/// What servers answered, by [`Key`]: [`ListMode::Paged`] once a server refused a streaming list
/// of the resource, [`ListMode::Streaming`] once it completed one.
#[derive(Debug, Default)]
pub struct ListModes {
    known: Mutex<HashMap<Key, ListMode>>,
}

impl ListModes {
    /// A fresh memory (tests, or a component that wants its own).
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The memory shared by every watch of this process.
    pub fn process() -> Arc<Self> {
        static PROCESS: OnceLock<Arc<ListModes>> = OnceLock::new();
        PROCESS.get_or_init(ListModes::new).clone()
    }

    /// What `key`'s server answered last, if it was asked.
    pub fn get(&self, key: &Key) -> Option<ListMode> {
        self.known.lock().ok().and_then(|k| k.get(key).copied())
    }

    /// Records what `key`'s server answered.
    pub fn remember(&self, key: &Key, mode: ListMode) {
        if let Ok(mut known) = self.known.lock() {
            known.insert(key.clone(), mode);
        }
    }
}

/// Where watches list from: a server (its cluster URL) and the memory of what it answered.
#[derive(Debug, Clone)]
pub struct Lister {
    server: Arc<str>,
    modes: Arc<ListModes>,
}

impl Lister {
    /// Watches of `server` remembering in the process-wide memory.
    pub fn new(server: &str) -> Self {
        Self::with_memory(server, ListModes::process())
    }

    /// Watches of `server` remembering in `modes`.
    pub fn with_memory(server: &str, modes: Arc<ListModes>) -> Self {
        Self {
            server: server.into(),
            modes,
        }
    }

    /// The server's cluster URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The memory this lister remembers answers in.
    pub fn modes(&self) -> &Arc<ListModes> {
        &self.modes
    }

    /// What the server answered for `api`'s resource, if it was asked.
    pub fn mode_of<K: Resource>(&self, api: &Api<K>) -> Option<ListMode> {
        self.modes.get(&Key::new(&self.server, api.resource_url()))
    }

    /// A watcher of `api` with `config` (a paged config: its page size is the one the fallback
    /// uses), trying a streaming list first (kube-runtime's watcher) and listing in pipelined
    /// pages ([`paged::watcher`]) where the server refuses it. `on_mode` hears the mode of the
    /// initial list once it is known (and again if a streaming list falls back).
    pub fn watcher<K>(
        &self,
        api: Api<K>,
        config: watcher::Config,
        on_mode: impl Fn(ListMode) + Send + Sync + 'static,
    ) -> Fallback<K>
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    {
        let key = Key::new(&self.server, api.resource_url());
        Fallback::new(
            move |config: watcher::Config| {
                if config.initial_list_strategy == InitialListStrategy::StreamingList {
                    watcher::watcher(api.clone(), config).boxed()
                } else {
                    paged::watcher(api.clone(), config).boxed()
                }
            },
            config,
            key,
            self.modes.clone(),
            on_mode,
        )
    }
}

type Item<K> = Result<Event<K>, watcher::Error>;
type Start<K> = Box<dyn Fn(watcher::Config) -> BoxStream<'static, Item<K>> + Send>;

/// A watcher stream that lists by streaming and falls back to paged lists (see the module).
pub struct Fallback<K> {
    start: Start<K>,
    config: watcher::Config,
    key: Key,
    modes: Arc<ListModes>,
    on_mode: Box<dyn Fn(ListMode) + Send + Sync>,
    inner: Option<Inner<K>>,
    announced: bool,
    /// When the first list started, the objects it brought, and whether it is done (logged).
    started: Option<std::time::Instant>,
    listed: usize,
    done: bool,
}

enum Inner<K> {
    Streaming(BoxStream<'static, Item<K>>, Judge),
    Paged(BoxStream<'static, Item<K>>),
}

impl<K> Fallback<K> {
    /// Wraps the watchers `start` makes from a config: `config` as given for the paged one,
    /// `config.streaming_lists()` for the streaming one.
    pub fn new<S>(
        start: S,
        config: watcher::Config,
        key: Key,
        modes: Arc<ListModes>,
        on_mode: impl Fn(ListMode) + Send + Sync + 'static,
    ) -> Self
    where
        S: Fn(watcher::Config) -> BoxStream<'static, Item<K>> + Send + 'static,
    {
        Self {
            start: Box::new(start),
            config,
            key,
            modes,
            on_mode: Box::new(on_mode),
            inner: None,
            announced: false,
            started: None,
            listed: 0,
            done: false,
        }
    }

    /// Logs how long the first list took (the figure a user waits for), once.
    fn observe(&mut self, item: &Item<K>, mode: ListMode) {
        if self.done {
            return;
        }
        match item {
            Ok(Event::Init) => self.listed = 0,
            Ok(Event::InitApply(_)) => self.listed += 1,
            Ok(Event::InitDone) => {
                self.done = true;
                let took = self.started.map(|t| t.elapsed()).unwrap_or_default();
                tracing::info!(
                    server = %self.key.server,
                    resource = %self.key.resource,
                    ?mode,
                    objects = self.listed,
                    ms = took.as_millis() as u64,
                    "first list complete"
                );
            }
            _ => {}
        }
    }

    fn begin(&mut self) -> Inner<K> {
        self.started = Some(std::time::Instant::now());
        if self.modes.get(&self.key) == Some(ListMode::Paged) {
            tracing::info!(
                server = %self.key.server,
                resource = %self.key.resource,
                "the server refused streaming lists before: paged list"
            );
            self.announce(ListMode::Paged);
            Inner::Paged((self.start)(self.config.clone()))
        } else {
            Inner::Streaming(
                (self.start)(self.config.clone().streaming_lists()),
                Judge::default(),
            )
        }
    }

    fn fall_back(&mut self, why: &str) -> Inner<K> {
        tracing::info!(
            server = %self.key.server,
            resource = %self.key.resource,
            %why,
            "the server refused a streaming list: paged list from now on"
        );
        self.modes.remember(&self.key, ListMode::Paged);
        self.announced = false;
        self.announce(ListMode::Paged);
        Inner::Paged((self.start)(self.config.clone()))
    }

    fn announce(&mut self, mode: ListMode) {
        if !self.announced {
            self.announced = true;
            (self.on_mode)(mode);
        }
    }
}

impl<K> Stream for Fallback<K> {
    type Item = Item<K>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item<K>>> {
        // Every field is boxed or plain data: the wrapper is Unpin.
        let this = self.get_mut();
        loop {
            let inner = match this.inner.take() {
                Some(inner) => inner,
                None => this.begin(),
            };
            let (mut stream, mut judge) = match inner {
                Inner::Paged(mut stream) => {
                    let polled = stream.poll_next_unpin(cx);
                    this.inner = Some(Inner::Paged(stream));
                    if let Poll::Ready(Some(item)) = &polled {
                        this.observe(item, ListMode::Paged);
                    }
                    return polled;
                }
                Inner::Streaming(stream, judge) => (stream, judge),
            };
            let item = match stream.poll_next_unpin(cx) {
                Poll::Pending => {
                    this.inner = Some(Inner::Streaming(stream, judge));
                    return Poll::Pending;
                }
                Poll::Ready(None) => {
                    this.inner = Some(Inner::Streaming(stream, judge));
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(item)) => item,
            };
            let verdict = judge.judge(&item);
            this.inner = Some(Inner::Streaming(stream, judge));
            match verdict {
                Verdict::Pass => {}
                Verdict::Accepted => this.announce(ListMode::Streaming),
                Verdict::Listed => this.modes.remember(&this.key, ListMode::Streaming),
                Verdict::Refused(why) => {
                    // Drop the streaming watcher (its open request with it) and go on paged.
                    this.inner = Some(this.fall_back(&why));
                    continue;
                }
            }
            this.observe(&item, ListMode::Streaming);
            return Poll::Ready(Some(item));
        }
    }
}

/// What one item of the streaming watcher means for the mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing new: pass it on.
    Pass,
    /// The server accepted the streaming list (pass it on).
    Accepted,
    /// The initial list is complete (pass it on).
    Listed,
    /// The server refused streaming lists (why, in words): drop the item and fall back.
    Refused(String),
}

/// Follows a streaming watcher's items and tells a refusal from an outage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judge {
    /// Between the start (or a relist) and the initial-events-end bookmark.
    initial: bool,
    /// `Init`s seen in this initial phase (each one follows an accepted watch request).
    inits: u32,
}

impl Default for Judge {
    fn default() -> Self {
        Self {
            initial: true,
            inits: 0,
        }
    }
}

impl Judge {
    pub fn judge<K>(&mut self, item: &Item<K>) -> Verdict {
        match item {
            Ok(Event::Init) => {
                if self.initial && self.inits > 0 {
                    // kube-runtime restarts a streaming list whose stream ended early.
                    return Verdict::Refused(
                        "the stream ended before the initial-events-end bookmark".into(),
                    );
                }
                self.initial = true;
                self.inits += 1;
                Verdict::Accepted
            }
            Ok(Event::InitDone) => {
                self.initial = false;
                self.inits = 0;
                Verdict::Listed
            }
            Ok(Event::InitApply(_) | Event::Apply(_) | Event::Delete(_)) => Verdict::Pass,
            Err(watcher::Error::WatchStartFailed(kube::Error::Api(status)))
                if self.initial && refuses(status.code, &status.message) =>
            {
                Verdict::Refused(format!(
                    "{} {}: {}",
                    status.code, status.reason, status.message
                ))
            }
            Err(err @ (watcher::Error::WatchError(_) | watcher::Error::WatchFailed(_)))
                if self.initial && self.inits > 0 =>
            {
                Verdict::Refused(format!("before the initial-events-end bookmark: {err}"))
            }
            Err(watcher::Error::WatchError(status)) if status.code == 410 => {
                // Expired: kube-runtime lists again, by streaming.
                self.initial = true;
                self.inits = 0;
                Verdict::Pass
            }
            Err(_) => Verdict::Pass,
        }
    }
}

/// Whether an answer to a watch-list request is a refusal of streaming lists.
fn refuses(code: u16, message: &str) -> bool {
    matches!(code, 400 | 403 | 422) || message.contains("sendInitialEvents")
}

pub mod paged;

#[cfg(test)]
mod tests;
