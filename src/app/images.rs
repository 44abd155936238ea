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
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    App, Effect,
    route::Route,
    seedlist::{self, Seed, SeedList},
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

    /// The kind's description.
    pub fn info(self) -> &'static crate::api::kinds::KindInfo {
        use crate::api::kinds;
        match self {
            ImageKind::PullJobs => &kinds::IMAGE_PULL_JOB,
            ImageKind::ListPullJobs => &kinds::IMAGE_LIST_PULL_JOB,
            ImageKind::NodeImages => &kinds::NODE_IMAGE,
        }
    }

    /// The kind's name (one object of it).
    pub fn kind_name(self) -> &'static str {
        self.info().kind
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

/// One of the three lists (`kind`), or (with `detail`, the object's `(namespace, name)`,
/// namespace empty for a NodeImage) one object of it. Objects are sorted by namespace and name.
pub type ImagesView = SeedList<ImageKind>;

impl Seed for ImageKind {
    type Listing = Listing;
    type Key = (String, String);

    fn count(&self, l: &Listing) -> usize {
        match self {
            ImageKind::PullJobs => l.pull_jobs.len(),
            ImageKind::ListPullJobs => l.list_jobs.len(),
            ImageKind::NodeImages => l.node_images().len(),
        }
    }

    fn key_at(&self, l: &Listing, i: usize) -> Option<Self::Key> {
        let meta = match self {
            ImageKind::PullJobs => &l.pull_jobs.get(i)?.metadata,
            ImageKind::ListPullJobs => &l.list_jobs.get(i)?.metadata,
            ImageKind::NodeImages => &l.node_images().get(i)?.metadata,
        };
        Some(key(meta))
    }

    fn retain(&self, l: &mut Listing, shown: &dyn Fn(&ObjectMeta) -> bool) {
        match self {
            ImageKind::PullJobs => l.pull_jobs.retain(|j| shown(&j.metadata)),
            ImageKind::ListPullJobs => l.list_jobs.retain(|j| shown(&j.metadata)),
            ImageKind::NodeImages => {
                if let Ok(n) = &mut l.node_images {
                    n.retain(|n| shown(&n.metadata));
                }
            }
        }
    }
}

impl ImagesView {
    /// The keys of the listed objects of this view's kind, in order.
    pub fn keys(&self) -> Vec<(String, String)> {
        let Some(l) = self.loaded() else {
            return Vec::new();
        };
        (0..self.listed())
            .filter_map(|i| self.kind.key_at(l, i))
            .collect()
    }

    /// The ImagePullJob under the cursor (or in detail), in a `:imagepulljobs` view.
    pub fn pull_job(&self) -> Option<&ImagePullJob> {
        let i = self.index()?;
        (self.kind == ImageKind::PullJobs)
            .then(|| self.loaded()?.pull_jobs.get(i))
            .flatten()
    }

    /// The ImageListPullJob under the cursor (or in detail), in a `:imagelistpulljobs` view.
    pub fn list_job(&self) -> Option<&ImageListPullJob> {
        let i = self.index()?;
        (self.kind == ImageKind::ListPullJobs)
            .then(|| self.loaded()?.list_jobs.get(i))
            .flatten()
    }

    /// The NodeImage under the cursor (or in detail), in a `:nodeimages` view.
    pub fn node_image(&self) -> Option<&NodeImage> {
        let i = self.index()?;
        (self.kind == ImageKind::NodeImages)
            .then(|| self.loaded()?.node_images().get(i))
            .flatten()
    }

    /// Whether the object the detail is about (or the cursor is on) exists.
    pub fn has_current(&self) -> bool {
        self.index().is_some()
    }
}

/// `(namespace, name)` of an object (namespace empty when cluster-scoped).
pub fn key(meta: &ObjectMeta) -> (String, String) {
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
    seedlist::open(app, kind, view_of(kind), Route::Images)
}

/// Enter on a row: that object's detail, sharing the list's last answer.
pub fn enter(app: &mut App) {
    let Some(Route::Images(view)) = app.stack.last() else {
        return;
    };
    let (kind, none) = (view.kind, format!("no {} selected", view.kind.kind_name()));
    seedlist::enter(app, view_of(kind), Route::Images, &none);
}

/// Moves the list cursor.
pub fn navigate(view: &mut ImagesView, delta: isize, page: usize) {
    view.move_list(delta, page);
}

/// The kube layer's answer: every view of that kind on the stack takes it, and every rollout
/// view takes the NodeImages in it.
pub fn loaded(app: &mut App, kind: ImageKind, result: Result<Listing, String>) {
    let now = app.now;
    let result = result.map(|mut l| {
        l.pull_jobs.sort_by_key(|j| key(&j.metadata));
        l.list_jobs.sort_by_key(|j| key(&j.metadata));
        if let Ok(n) = &mut l.node_images {
            n.sort_by_key(|n| key(&n.metadata));
        }
        l
    });
    if kind == ImageKind::NodeImages {
        for route in &mut app.stack {
            if let Route::Rollout(view) = route {
                let cache = &mut view.node_images;
                cache.in_flight = false;
                cache.fetched = Some(now);
                cache.images = result
                    .as_ref()
                    .ok()
                    .and_then(|l| l.node_images.as_ref().ok())
                    .cloned();
            }
        }
    }
    seedlist::loaded(app, result, view_of(kind));
}

/// The views of `kind` among the routes.
fn view_of(kind: ImageKind) -> impl FnMut(&mut Route) -> Option<&mut ImagesView> {
    move |route| match route {
        Route::Images(v) if v.kind == kind => Some(v),
        _ => None,
    }
}

/// After an action: views ask again at the next update.
pub fn invalidate(view: &mut ImagesView) {
    view.fetched = None;
}
