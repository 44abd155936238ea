//! The image pre-download views: `:imagepulljobs`, `:imagelistpulljobs` and `:nodeimages`.
//! ImagePullJobs list their image and the nodes desired/active/succeeded/failed; Enter shows the
//! pull state of the image on each node (read from the NodeImage of each node, which
//! kruise-daemon keeps). ImageListPullJobs list their images and the ImagePullJobs they run;
//! Enter shows each image's pull state per node. NodeImages (one per node) list the pull counts;
//! Enter shows each image and tag with its phase, progress, version and message.
//!
//! Listed through the kube layer every two seconds while a view is on top, so a job created
//! elsewhere shows up without a key press. The rollout view asks for the NodeImages the same way
//! while it is on top, to mark pods whose next image is not yet on their node ([`pulls`]).

pub mod pulls;

use jiff::Timestamp;

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    route::{Fetch, Route, keep_in_window, move_cursor},
};
use crate::api::{ImageListPullJob, ImagePullJob, NodeImage};

/// Which of the three lists a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    PullJobs,
    ListPullJobs,
    NodeImages,
}

impl ImageKind {
    /// The kind as the title and messages name it.
    pub fn title(self) -> &'static str {
        match self {
            ImageKind::PullJobs => "ImagePullJobs",
            ImageKind::ListPullJobs => "ImageListPullJobs",
            ImageKind::NodeImages => "NodeImages",
        }
    }

    /// One object of the kind.
    pub fn singular(self) -> &'static str {
        match self {
            ImageKind::PullJobs => "ImagePullJob",
            ImageKind::ListPullJobs => "ImageListPullJob",
            ImageKind::NodeImages => "NodeImage",
        }
    }
}

/// The kube layer's answer for one kind. Only what that kind's view needs is filled: the
/// ImagePullJobs for `:imagepulljobs` (and, as the children of the list jobs, for
/// `:imagelistpulljobs`), the list jobs for `:imagelistpulljobs`, and the NodeImages always
/// (the per-node pull state). A NodeImage list that fails leaves the job lists usable: the
/// detail says why it cannot show the nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub pull_jobs: Vec<ImagePullJob>,
    pub list_jobs: Vec<ImageListPullJob>,
    pub node_images: Result<Vec<NodeImage>, String>,
}

impl Default for Listing {
    fn default() -> Self {
        Listing {
            pull_jobs: Vec::new(),
            list_jobs: Vec::new(),
            node_images: Ok(Vec::new()),
        }
    }
}

impl Listing {
    /// The NodeImages listed (none when they could not be).
    pub fn node_images(&self) -> &[NodeImage] {
        self.node_images.as_deref().unwrap_or_default()
    }
}

/// One of the three lists, or (with `detail`) one object of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImagesView {
    pub kind: ImageKind,
    /// Objects sorted by namespace and name.
    pub listing: Fetch<Listing>,
    pub selected: usize,
    pub offset: usize,
    /// `(namespace, name)` of the object the detail shows (namespace empty for a NodeImage).
    pub detail: Option<(String, String)>,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
    /// The `/` filter (by `namespace/name`).
    pub filter: ListFilter<Listing>,
}

impl ImagesView {
    pub fn new(kind: ImageKind) -> Self {
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

    fn loaded(&self) -> Option<&Listing> {
        match &self.listing {
            Fetch::Loaded(l) => Some(l),
            _ => None,
        }
    }

    /// The keys of the listed objects of this view's kind, in order.
    pub fn keys(&self) -> Vec<(String, String)> {
        let Some(l) = self.loaded() else {
            return Vec::new();
        };
        match self.kind {
            ImageKind::PullJobs => l.pull_jobs.iter().map(|j| key(&j.metadata)).collect(),
            ImageKind::ListPullJobs => l.list_jobs.iter().map(|j| key(&j.metadata)).collect(),
            ImageKind::NodeImages => l.node_images().iter().map(|n| key(&n.metadata)).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.loaded().map_or(0, |l| match self.kind {
            ImageKind::PullJobs => l.pull_jobs.len(),
            ImageKind::ListPullJobs => l.list_jobs.len(),
            ImageKind::NodeImages => l.node_images().len(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of the object under the cursor, or of the one the detail shows.
    fn current_index(&self) -> Option<usize> {
        match &self.detail {
            Some(k) => self.keys().iter().position(|x| x == k),
            None => (self.selected < self.len()).then_some(self.selected),
        }
    }

    /// The ImagePullJob under the cursor (or in detail), in a `:imagepulljobs` view.
    pub fn pull_job(&self) -> Option<&ImagePullJob> {
        let i = self.current_index()?;
        (self.kind == ImageKind::PullJobs)
            .then(|| self.loaded()?.pull_jobs.get(i))
            .flatten()
    }

    /// The ImageListPullJob under the cursor (or in detail), in a `:imagelistpulljobs` view.
    pub fn list_job(&self) -> Option<&ImageListPullJob> {
        let i = self.current_index()?;
        (self.kind == ImageKind::ListPullJobs)
            .then(|| self.loaded()?.list_jobs.get(i))
            .flatten()
    }

    /// The NodeImage under the cursor (or in detail), in a `:nodeimages` view.
    pub fn node_image(&self) -> Option<&NodeImage> {
        let i = self.current_index()?;
        (self.kind == ImageKind::NodeImages)
            .then(|| self.loaded()?.node_images().get(i))
            .flatten()
    }

    /// Whether the object the detail is about (or the cursor is on) exists.
    pub fn has_current(&self) -> bool {
        self.current_index().is_some()
    }
}

/// `(namespace, name)` of an object (namespace empty when cluster-scoped).
pub fn key(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// What the rollout view keeps of the NodeImages: listed while it is on top, `None` until they
/// are (and when they cannot be: no CRD, no right to list them), in which case it shows nothing
/// about images.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeImageCache {
    pub images: Option<Vec<NodeImage>>,
    pub fetched: Option<Timestamp>,
    pub in_flight: bool,
}

/// `:imagepulljobs`, `:imagelistpulljobs`, `:nodeimages`.
pub fn open(app: &mut App, kind: ImageKind) -> Vec<Effect> {
    if !matches!(app.top(), Route::Images(v) if v.kind == kind && v.detail.is_none()) {
        app.stack
            .push(Route::Images(Box::new(ImagesView::new(kind))));
    }
    super::poll::due(app, true)
}

/// Enter on a row: that object's detail, sharing the list's last answer.
pub fn enter(app: &mut App) {
    let Some(Route::Images(view)) = app.stack.last() else {
        return;
    };
    if view.detail.is_some() {
        return;
    }
    let Some(key) = view.keys().get(view.selected).cloned() else {
        app.set_status(Level::Info, format!("no {} selected", view.kind.singular()));
        return;
    };
    let mut detail = (**view).clone();
    detail.detail = Some(key);
    detail.selected = 0;
    detail.offset = 0;
    app.stack.push(Route::Images(Box::new(detail)));
}

/// Moves the list cursor.
pub fn navigate(view: &mut ImagesView, delta: isize, page: usize) {
    if view.detail.is_none() {
        let len = view.len();
        move_cursor(&mut view.selected, &mut view.offset, len, delta, page);
    }
}

/// The kube layer's answer: every view of that kind on the stack takes it, and every rollout
/// view takes the NodeImages in it.
pub fn loaded(app: &mut App, kind: ImageKind, result: Result<Listing, String>) {
    let (now, page) = (app.now, app.page());
    let result = result.map(|mut l| {
        l.pull_jobs.sort_by_key(|j| key(&j.metadata));
        l.list_jobs.sort_by_key(|j| key(&j.metadata));
        if let Ok(n) = &mut l.node_images {
            n.sort_by_key(|n| key(&n.metadata));
        }
        l
    });
    for route in &mut app.stack {
        match route {
            Route::Images(view) if view.kind == kind => {
                view.in_flight = false;
                view.fetched = Some(now);
                show(view, result.clone(), page);
            }
            Route::Rollout(view) if kind == ImageKind::NodeImages => {
                let cache = &mut view.node_images;
                cache.in_flight = false;
                cache.fetched = Some(now);
                cache.images = result
                    .as_ref()
                    .ok()
                    .and_then(|l| l.node_images.as_ref().ok())
                    .cloned();
            }
            _ => {}
        }
    }
}

/// Puts a listing (or why it failed) into the view, filtered, the cursor kept on its object.
fn show(view: &mut ImagesView, result: Result<Listing, String>, page: usize) {
    let kind = view.kind;
    let keep = view.keys().get(view.selected).cloned();
    view.listing = match result {
        Ok(l) => Fetch::Loaded(view.filter.keep(l, |l, shown| match kind {
            ImageKind::PullJobs => l.pull_jobs.retain(|j| shown(&j.metadata)),
            ImageKind::ListPullJobs => l.list_jobs.retain(|j| shown(&j.metadata)),
            ImageKind::NodeImages => {
                if let Ok(n) = &mut l.node_images {
                    n.retain(|n| shown(&n.metadata));
                }
            }
        })),
        Err(e) => Fetch::Failed(e),
    };
    if view.detail.is_none()
        && let Some(keep) = keep
        && let Some(i) = view.keys().iter().position(|k| *k == keep)
    {
        view.selected = i;
    }
    let len = view.len();
    view.selected = view.selected.min(len.saturating_sub(1));
    keep_in_window(view.selected, &mut view.offset, len, page);
}

impl Filterable for ImagesView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        self.detail.is_none().then_some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            show(self, Ok(all), page);
        }
    }
}

/// After an action: views ask again at the next update.
pub fn invalidate(view: &mut ImagesView) {
    view.fetched = None;
}
