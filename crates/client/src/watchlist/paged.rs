//! The paged LIST+WATCH the fallback uses, with its pages pipelined.
//!
//! kube-runtime's watcher lists page after page: it asks for a page, waits for all of it,
//! parses it, hands out its objects (the caller applies each before the next is asked for),
//! and only then asks for the next one. The server's time and the client's add up, page after
//! page. Here every page is fetched and parsed by its own task, and the next page is asked
//! for as soon as the current one's `metadata.continue` is known: kube-apiserver writes the
//! list's metadata before its items, so that is as soon as the page's first bytes arrive.
//! While the caller applies page N, page N+1 is being served, received and parsed. A body whose
//! metadata comes after its items is read whole first (the pages are then sequential, as
//! kube's are).
//!
//! The events are kube's watcher's: `Init`, one `InitApply` per object in list order,
//! `InitDone`, then a watch from the list's resourceVersion (with bookmarks, as the config
//! says) yielding `Apply`/`Delete`. Errors are [`watcher::Error`] items, and the stream makes
//! no request until it is polled again, so the caller's backoff paces retries. As kube's
//! watcher: a 410 Gone on the watch (or no resourceVersion) starts over with a full list; a
//! failed page starts over after the error; a watch that ends (its timeout) is resumed from the
//! last resourceVersion seen. Unlike kube's, a continue token that expired (410 on a later
//! page, the server compacted past the list's version) starts the list over at once, as
//! client-go's pager does, without an error the first time; a second in a row is reported.
//!
//! The config's label and field selectors, page size, list semantic, timeout and bookmarks are
//! honoured as kube's watcher honours them (the same `ListParams`/`WatchParams`).

mod head;
mod page;

use std::{collections::VecDeque, fmt::Debug, time::Duration};

use futures::{Stream, StreamExt as _, stream::BoxStream};
use kube::{
    Api, Client, Resource, ResourceExt as _,
    api::{ListParams, VersionMatch, WatchEvent, WatchParams},
    runtime::watcher::{self, Event, ListSemantic},
};
use serde::de::DeserializeOwned;

use self::page::Page;

type Item<K> = Result<Event<K>, watcher::Error>;

/// As kube's watcher: a watch silent this long past its timeout is taken as dead.
const IDLE_MARGIN: Duration = Duration::from_secs(5);

/// A watcher of `api` that lists in pipelined pages of `config.page_size` (see the module).
pub fn watcher<K>(api: Api<K>, config: watcher::Config) -> impl Stream<Item = Item<K>> + Send
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let ctx = Ctx {
        client: api.clone().into_client(),
        url: api.resource_url().to_owned(),
        api,
        config,
        expired: 0,
    };
    futures::stream::unfold((ctx, State::Empty), |(mut ctx, state)| async move {
        let (item, state) = step(&mut ctx, state).await;
        Some((item, (ctx, state)))
    })
}

struct Ctx<K> {
    api: Api<K>,
    client: Client,
    url: String,
    config: watcher::Config,
    /// Lists started over in a row because their continue token expired.
    expired: u32,
}

impl<K> Ctx<K>
where
    K: Clone + DeserializeOwned + Send + 'static,
{
    /// The first page's parameters: kube's watcher's (`to_list_params`).
    fn list_params(&self) -> ListParams {
        let c = &self.config;
        let (resource_version, version_match) = match c.list_semantic {
            ListSemantic::Any => (Some("0".to_owned()), Some(VersionMatch::NotOlderThan)),
            ListSemantic::MostRecent => (None, None),
        };
        ListParams {
            label_selector: c.label_selector.clone(),
            field_selector: c.field_selector.clone(),
            resource_version,
            version_match,
            limit: c.page_size,
            continue_token: None,
            ..ListParams::default()
        }
    }

    fn first_page(&self) -> Page<K> {
        page::fetch(self.client.clone(), self.url.clone(), self.list_params())
    }

    /// The page after the one that returned `token` (a continue token carries the list's
    /// version: no resourceVersion goes with it).
    fn page_after(&self, token: String) -> Page<K> {
        let lp = ListParams {
            continue_token: Some(token),
            resource_version: None,
            version_match: None,
            ..self.list_params()
        };
        page::fetch(self.client.clone(), self.url.clone(), lp)
    }

    fn watch_params(&self) -> WatchParams {
        let c = &self.config;
        WatchParams {
            label_selector: c.label_selector.clone(),
            field_selector: c.field_selector.clone(),
            timeout: c.timeout,
            bookmarks: c.bookmarks,
            send_initial_events: false,
        }
    }
}

enum State<K> {
    /// Nothing listed: the next step starts a list.
    Empty,
    /// Handing out a page's objects; then what comes after it.
    Page { objects: VecDeque<K>, then: Then<K> },
    /// Listed (or a watch ended): the next step starts a watch from `resource_version`.
    Listed { resource_version: String },
    Watching {
        resource_version: String,
        stream: BoxStream<'static, kube::Result<WatchEvent<K>>>,
    },
}

enum Then<K> {
    /// The next page, already asked for.
    Fetching(Page<K>),
    /// The list is complete at this resourceVersion.
    Done(String),
}

async fn step<K>(ctx: &mut Ctx<K>, mut state: State<K>) -> (Item<K>, State<K>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    loop {
        match step_once(ctx, state).await {
            (Some(item), next) => return (item, next),
            (None, next) => state = next,
        }
    }
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

fn is_gone(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 410)
}

async fn step_once<K>(ctx: &mut Ctx<K>, state: State<K>) -> (Option<Item<K>>, State<K>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    match state {
        State::Empty => (
            Some(Ok(Event::Init)),
            State::Page {
                objects: VecDeque::new(),
                then: Then::Fetching(ctx.first_page()),
            },
        ),
        State::Page { mut objects, then } => {
            if let Some(obj) = objects.pop_front() {
                return (
                    Some(Ok(Event::InitApply(obj))),
                    State::Page { objects, then },
                );
            }
            match then {
                Then::Done(resource_version) => {
                    ctx.expired = 0;
                    (
                        Some(Ok(Event::InitDone)),
                        State::Listed { resource_version },
                    )
                }
                Then::Fetching(page) => next_page(ctx, page).await,
            }
        }
        State::Listed { resource_version } => {
            match ctx.api.watch(&ctx.watch_params(), &resource_version).await {
                Ok(stream) => (
                    None,
                    State::Watching {
                        resource_version,
                        stream: stream.boxed(),
                    },
                ),
                Err(err) => {
                    tracing::debug!(%err, "watch start failed");
                    (
                        Some(Err(watcher::Error::WatchStartFailed(err))),
                        State::Listed { resource_version },
                    )
                }
            }
        }
        State::Watching {
            resource_version,
            mut stream,
        } => match watching(ctx, resource_version, &mut stream).await {
            (item, Watch::On(resource_version)) => (
                item,
                State::Watching {
                    resource_version,
                    stream,
                },
            ),
            (item, Watch::Again(resource_version)) => (item, State::Listed { resource_version }),
            (item, Watch::Relist) => (item, State::Empty),
        },
    }
}

/// Waits for `page` (asking for the one after it as soon as its head names it) and hands out
/// its objects next.
async fn next_page<K>(ctx: &mut Ctx<K>, mut page: Page<K>) -> (Option<Item<K>>, State<K>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let continued = page.continued;
    let mut next = non_empty(page.head().await.and_then(|meta| meta.continue_))
        .map(|token| ctx.page_after(token));
    match page.list().await {
        Ok(list) => {
            let then = match (non_empty(list.metadata.continue_), next.take()) {
                (Some(_), Some(next)) => Then::Fetching(next),
                // The metadata was not in the head: the pages go one after another.
                (Some(token), None) => Then::Fetching(ctx.page_after(token)),
                (None, _) => match non_empty(list.metadata.resource_version) {
                    Some(resource_version) => Then::Done(resource_version),
                    None => return (Some(Err(watcher::Error::NoResourceVersion)), State::Empty),
                },
            };
            (
                None,
                State::Page {
                    objects: list.items.into(),
                    then,
                },
            )
        }
        Err(err) if continued && is_gone(&err) && ctx.expired == 0 => {
            // The continue token expired: the list starts over, from its first page.
            tracing::info!(url = %ctx.url, %err, "continue token expired; listing again");
            ctx.expired += 1;
            (
                Some(Ok(Event::Init)),
                State::Page {
                    objects: VecDeque::new(),
                    then: Then::Fetching(ctx.first_page()),
                },
            )
        }
        Err(err) => {
            tracing::debug!(url = %ctx.url, %err, "list failed");
            (
                Some(Err(watcher::Error::InitialListFailed(err))),
                State::Empty,
            )
        }
    }
}

/// What follows a step of a watch.
enum Watch {
    /// Go on watching; the last resourceVersion seen.
    On(String),
    /// The watch ended (its timeout, or silent too long): start another from there.
    Again(String),
    /// List again (the version left the server's history).
    Relist,
}

/// One step of a watch from `resource_version`: kube's watcher's `Watching` state.
async fn watching<K>(
    ctx: &Ctx<K>,
    resource_version: String,
    stream: &mut BoxStream<'static, kube::Result<WatchEvent<K>>>,
) -> (Option<Item<K>>, Watch)
where
    K: Resource + Clone + Debug,
{
    let idle = Duration::from_secs(u64::from(ctx.config.timeout.unwrap_or(290))) + IDLE_MARGIN;
    let next = if ctx.config.timeout == Some(0) {
        stream.next().await
    } else {
        tokio::time::timeout(idle, stream.next())
            .await
            .ok()
            .flatten()
    };
    match next {
        Some(Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => {
            match non_empty(obj.resource_version()) {
                Some(rv) => (Some(Ok(Event::Apply(obj))), Watch::On(rv)),
                None => (Some(Err(watcher::Error::NoResourceVersion)), Watch::Relist),
            }
        }
        Some(Ok(WatchEvent::Deleted(obj))) => match non_empty(obj.resource_version()) {
            Some(rv) => (Some(Ok(Event::Delete(obj))), Watch::On(rv)),
            None => (Some(Err(watcher::Error::NoResourceVersion)), Watch::Relist),
        },
        Some(Ok(WatchEvent::Bookmark(bm))) => (None, Watch::On(bm.metadata.resource_version)),
        Some(Ok(WatchEvent::Error(status))) => {
            tracing::debug!(url = %ctx.url, ?status, "watch error");
            // 410 Gone: the version left the server's history; list again.
            let then = if status.code == 410 {
                Watch::Relist
            } else {
                Watch::On(resource_version)
            };
            (Some(Err(watcher::Error::WatchError(status.boxed()))), then)
        }
        Some(Err(err)) => {
            tracing::debug!(url = %ctx.url, %err, "watch failed");
            (
                Some(Err(watcher::Error::WatchFailed(err))),
                Watch::On(resource_version),
            )
        }
        None => (None, Watch::Again(resource_version)),
    }
}

#[cfg(test)]
mod tests;
