//! What the seed kinds' list views (`:acj`, `:bcj`, `:ws`, `:ud`, the image lists, `:pps`,
//! `:distributor`) share: the listing as last fetched, the cursor, the object open in detail, the
//! poll state and the `/` filter, and what each does alike with them — keep the cursor on its
//! object across a new listing, move it, open the object under it in detail, take the kube
//! layer's answer. What a kind lists, how its objects are keyed, sorted and shown in detail stays
//! in the kind's module, which implements [`Seed`] and names its view `SeedList<ItsKind>`.

use std::fmt::Debug;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    route::{Fetch, Route, keep_in_window, move_cursor},
};

/// A seed kind, as its list view sees it.
pub trait Seed: Clone + PartialEq + Debug {
    /// The kube layer's answer: the listed objects and what their detail reads beside them.
    type Listing: Clone + PartialEq + Debug;
    /// What names a listed object from one listing to the next: `(namespace, name)`, or the
    /// name of a cluster-scoped one.
    type Key: Clone + PartialEq + Debug;

    /// How many objects `listing` lists.
    fn count(&self, listing: &Self::Listing) -> usize;

    /// The key of the `i`th listed object.
    fn key_at(&self, listing: &Self::Listing, i: usize) -> Option<Self::Key>;

    /// Keeps the listed objects whose metadata `shown` accepts (the `/` filter); what the
    /// detail reads beside them stays whole.
    fn retain(&self, listing: &mut Self::Listing, shown: &dyn Fn(&ObjectMeta) -> bool);

    /// The rows under the cursor: the listed objects, unless the kind's detail has rows of its
    /// own that the same cursor walks.
    fn rows(view: &SeedList<Self>) -> usize {
        view.listed()
    }

    /// Puts a listing (or why it failed) into the view: by default the list's cursor stays on
    /// its object ([`SeedList::show_list`]).
    fn show(view: &mut SeedList<Self>, result: Result<Self::Listing, String>, page: usize) {
        view.show_list(result, page);
    }
}

/// A seed kind's list, or (with `detail`) one object of it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedList<K: Seed> {
    /// The kind, with whatever state of its own its view keeps (which image list; the pod
    /// cursor of `:pps`'s detail).
    pub kind: K,
    /// As the kube layer answered, sorted, then filtered.
    pub listing: Fetch<K::Listing>,
    pub selected: usize,
    pub offset: usize,
    /// The key of the object the detail view shows.
    pub detail: Option<K::Key>,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by `namespace/name`).
    pub filter: ListFilter<K::Listing>,
}

impl<K: Seed + Default> Default for SeedList<K> {
    fn default() -> Self {
        Self::new(K::default())
    }
}

impl<K: Seed> SeedList<K> {
    pub fn new(kind: K) -> Self {
        Self {
            kind,
            listing: Fetch::Loading,
            selected: 0,
            offset: 0,
            detail: None,
            fetched: None,
            in_flight: false,
            filter: ListFilter::default(),
        }
    }

    /// The listing, once one was loaded.
    pub fn loaded(&self) -> Option<&K::Listing> {
        match &self.listing {
            Fetch::Loaded(l) => Some(l),
            _ => None,
        }
    }

    /// How many objects the list shows.
    pub fn listed(&self) -> usize {
        self.loaded().map_or(0, |l| self.kind.count(l))
    }

    /// Rows under the cursor (see [`Seed::rows`]).
    pub fn len(&self) -> usize {
        K::rows(self)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of the object under the list's cursor, or of the one the detail shows.
    pub fn index(&self) -> Option<usize> {
        match &self.detail {
            Some(key) => self.position(key),
            None => (self.selected < self.listed()).then_some(self.selected),
        }
    }

    /// The key of the object under the list's cursor, or of the one the detail shows.
    pub fn current_key(&self) -> Option<K::Key> {
        self.kind.key_at(self.loaded()?, self.index()?)
    }

    /// Where the object `key` names stands in the list.
    fn position(&self, key: &K::Key) -> Option<usize> {
        let l = self.loaded()?;
        (0..self.kind.count(l)).position(|i| self.kind.key_at(l, i).as_ref() == Some(key))
    }

    /// Puts a listing (or why it failed) into the view, through the `/` filter.
    pub fn put(&mut self, result: Result<K::Listing, String>) {
        let kind = &self.kind;
        self.listing = match result {
            Ok(l) => Fetch::Loaded(self.filter.keep(l, |l, shown| kind.retain(l, shown))),
            Err(e) => Fetch::Failed(e),
        };
    }

    /// Puts the cursor on row `found` (where the object it was on is now), then keeps it within
    /// the rows and the window.
    pub fn reselect(&mut self, found: Option<usize>, page: usize) {
        if let Some(i) = found {
            self.selected = i;
        }
        let len = self.len();
        self.selected = self.selected.min(len.saturating_sub(1));
        keep_in_window(self.selected, &mut self.offset, len, page);
    }

    /// Puts a listing into the view, the list's cursor kept on its object.
    pub fn show_list(&mut self, result: Result<K::Listing, String>, page: usize) {
        let keep = self.current_key();
        self.put(result);
        let found = keep.and_then(|k| self.position(&k));
        self.reselect(found, page);
    }

    /// Moves the list's cursor (a detail without a cursor of its own ignores it).
    pub fn move_list(&mut self, delta: isize, page: usize) {
        if self.detail.is_none() {
            let len = self.listed();
            move_cursor(&mut self.selected, &mut self.offset, len, delta, page);
        }
    }
}

impl<K: Seed> Filterable for SeedList<K> {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.detail.is_none().then_some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            K::show(self, Ok(all), page);
        }
    }
}

/// Opens a kind's list (`:bcj`, …): a new one unless `view` finds it on top (not in detail),
/// then asks for it at once.
pub fn open<K: Seed>(
    app: &mut App,
    kind: K,
    view: impl FnOnce(&mut Route) -> Option<&mut SeedList<K>>,
    route: impl FnOnce(Box<SeedList<K>>) -> Route,
) -> Vec<Effect> {
    let on_top = app.stack.last_mut().and_then(view);
    let shown = on_top.is_some_and(|v| v.detail.is_none());
    if !shown {
        app.stack.push(route(Box::new(SeedList::new(kind))));
    }
    super::poll::due(app, true)
}

/// Enter on a row of the list on top: that object's detail, sharing the list's last answer
/// (`none` says there is no object to open). Nothing in a detail.
pub fn enter<K: Seed>(
    app: &mut App,
    view: impl FnOnce(&mut Route) -> Option<&mut SeedList<K>>,
    route: impl FnOnce(Box<SeedList<K>>) -> Route,
    none: &str,
) {
    let Some(list) = app.stack.last_mut().and_then(view) else {
        return;
    };
    if list.detail.is_some() {
        return;
    }
    let Some(key) = list.current_key() else {
        app.set_status(Level::Info, none);
        return;
    };
    let mut detail = list.clone();
    detail.detail = Some(key);
    detail.selected = 0;
    detail.offset = 0;
    app.stack.push(route(Box::new(detail)));
}

/// The kube layer's answer (sorted): every view of the kind that `view` finds on the stack
/// takes it.
pub fn loaded<K: Seed>(
    app: &mut App,
    result: Result<K::Listing, String>,
    mut view: impl FnMut(&mut Route) -> Option<&mut SeedList<K>>,
) {
    let (now, page) = (app.now, app.page());
    for list in app.stack.iter_mut().filter_map(&mut view) {
        list.in_flight = false;
        list.fetched = Some(now);
        K::show(list, result.clone(), page);
    }
}
