//! The work queue and reconcile loop of one controller, on kube-rs runtime's `applier`: keys are
//! queued by the trigger mappers (deduplicated while waiting, never reconciled twice at once),
//! each reconcile returns when to look again, and a failed one is retried with a per-key
//! exponential back-off. A failure is logged once, short, until its error changes or the object
//! recovers ([`failures`](super::failures)).

use std::{
    convert::Infallible,
    fmt::Debug,
    future::Future,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{FutureExt as _, StreamExt as _, channel::mpsc};
use kube::{
    Resource,
    runtime::{
        controller::{self, Action, ReconcileReason, ReconcileRequest},
        reflector::{ObjectRef, Store},
    },
};
use tokio_util::sync::CancellationToken;

use super::{
    cache::{Change, Informer},
    failures::{Failed, Failures},
    key_of,
};

/// Why a reconcile failed, and when to try again.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ReconcileError {
    pub message: String,
    /// A conflict (409) or stale cache: retry soon, without growing the back-off.
    pub transient: bool,
    /// The API's reason (`BadRequest`, `Invalid`, ...) when the server refused a request.
    pub reason: Option<String>,
}

impl ReconcileError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: false,
            reason: None,
        }
    }

    pub fn transient(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: true,
            reason: None,
        }
    }

    /// The error as the log says it: one short line.
    pub fn line(&self) -> String {
        super::failures::short(self.reason.as_deref(), &self.message)
    }
}

impl From<kube::Error> for ReconcileError {
    fn from(err: kube::Error) -> Self {
        let (transient, reason) = match &err {
            kube::Error::Api(s) => (s.code == 409, Some(s.reason.clone())),
            _ => (false, None),
        };
        Self {
            message: super::write::describe(&err),
            transient,
            reason: reason.filter(|r| !r.is_empty()),
        }
    }
}

/// The sending side of a controller's work queue (cheap to clone, usable from handlers).
pub struct Queue<K: Resource<DynamicType = ()>> {
    tx: mpsc::UnboundedSender<ReconcileRequest<K>>,
}

impl<K: Resource<DynamicType = ()>> Clone for Queue<K> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
        }
    }
}

impl<K: Resource<DynamicType = ()>> Queue<K> {
    /// Queues `namespace/name` (namespace `""` for cluster-scoped kinds).
    pub fn enqueue(&self, namespace: &str, name: &str) {
        let mut obj_ref = ObjectRef::<K>::new(name);
        if !namespace.is_empty() {
            obj_ref = obj_ref.within(namespace);
        }
        let _ = self.tx.unbounded_send(ReconcileRequest {
            obj_ref,
            reason: ReconcileReason::Unknown,
        });
    }

    /// Queues the object itself.
    pub fn enqueue_obj(&self, obj: &K) {
        let meta = obj.meta();
        self.enqueue(
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        );
    }
}

/// The receiving side, handed to [`run`].
pub struct Inbox<K: Resource<DynamicType = ()>> {
    rx: mpsc::UnboundedReceiver<ReconcileRequest<K>>,
}

/// A new work queue.
pub fn queue<K: Resource<DynamicType = ()>>() -> (Queue<K>, Inbox<K>) {
    let (tx, rx) = mpsc::unbounded();
    (Queue { tx }, Inbox { rx })
}

/// A handler that queues every object in `store` (after a relist, when deletions cannot be
/// named).
pub fn enqueue_all<K>(
    queue: &Queue<K>,
    store: Store<K>,
) -> impl Fn() + Clone + Send + Sync + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let queue = queue.clone();
    move || {
        for obj in store.state() {
            queue.enqueue_obj(&obj);
        }
    }
}

/// Wires a controller's own kind to its queue, as controller-runtime's `For(..)` does: an added
/// or changed object is queued, a deleted one goes to `on_deleted` (it is not reconciled: its
/// key left the store), and a relist queues them all. Returns the handler that queues them all,
/// for the relists of the other kinds the controller watches.
pub fn watch_own<K>(
    informer: &Informer<K>,
    queue: &Queue<K>,
    on_deleted: impl Fn(&K) + Send + Sync + 'static,
) -> impl Fn() + Clone + Send + Sync + 'static
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
{
    watch_own_if(informer, queue, |_, _| true, on_deleted)
}

/// [`watch_own`], queueing an added or changed object only when `matters(old, new)` (`old` is
/// `None` for a new one).
pub fn watch_own_if<K>(
    informer: &Informer<K>,
    queue: &Queue<K>,
    matters: impl Fn(Option<&K>, &K) -> bool + Send + Sync + 'static,
    on_deleted: impl Fn(&K) + Send + Sync + 'static,
) -> impl Fn() + Clone + Send + Sync + 'static
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
{
    let all = enqueue_all(queue, informer.store());
    let (q, resync) = (queue.clone(), all.clone());
    informer.on_change(move |change| match change {
        Change::Applied { old, new } => {
            if matters(old.as_deref(), new) {
                q.enqueue_obj(new);
            }
        }
        Change::Deleted(obj) => on_deleted(obj),
        Change::Resynced => resync(),
    });
    all
}

const BACKOFF_BASE: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(60);
const TRANSIENT_RETRY: Duration = Duration::from_millis(200);

/// Runs the reconcile loop of controller `name` over `store` until `shutdown`.
pub async fn run<K, Ctx, F, Fut>(
    name: &'static str,
    store: Store<K>,
    inbox: Inbox<K>,
    ctx: Arc<Ctx>,
    concurrency: u16,
    reconcile: F,
    shutdown: CancellationToken,
) where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
    Ctx: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, ReconcileError>> + Send + 'static,
{
    let failures: Arc<Mutex<Failures>> = Arc::default();
    let on_success = failures.clone();
    let reconcile = Arc::new(reconcile);
    let reconciler = move |obj: Arc<K>, ctx: Arc<Ctx>| {
        let reconcile = reconcile.clone();
        let failures = on_success.clone();
        async move {
            let key = key_of(&*obj);
            let result = reconcile(obj, ctx).await;
            if result.is_ok()
                && let Some(attempts) = failures.lock().ok().and_then(|mut f| f.succeeded(&key))
            {
                tracing::info!(controller = name, %key, "reconciled again after {attempts} failed attempt(s)");
            }
            result
        }
        .boxed()
    };
    let error_policy = move |obj: Arc<K>, err: &ReconcileError, _ctx: Arc<Ctx>| {
        let key = key_of(&*obj);
        if err.transient {
            tracing::debug!(controller = name, %key, "retrying: {err}");
            return Action::requeue(TRANSIENT_RETRY);
        }
        let line = err.line();
        let failed = failures
            .lock()
            .map(|mut f| f.failed(&key, &line))
            .unwrap_or(Failed {
                attempts: 1,
                say: Some(line),
            });
        let delay = BACKOFF_BASE
            .saturating_mul(1u32 << failed.attempts.min(8))
            .min(BACKOFF_MAX);
        match failed.say {
            Some(line) => tracing::warn!(
                controller = name,
                %key,
                "reconcile failed (retrying with back-off up to {}s; said again only if the error \
                 changes): {line}",
                BACKOFF_MAX.as_secs()
            ),
            None => {
                tracing::debug!(controller = name, %key, attempts = failed.attempts, "still failing, retrying in {delay:?}")
            }
        }
        Action::requeue(delay)
    };
    let queue = inbox.rx.map(Ok::<_, Infallible>);
    let config = controller::Config::default().concurrency(concurrency);
    let mut results = std::pin::pin!(controller::applier(
        reconciler,
        error_policy,
        ctx,
        store,
        queue,
        config
    ));
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            item = results.next() => match item {
                None => break,
                Some(Ok(_)) => {}
                Some(Err(controller::Error::ObjectNotFound(_))) => {}
                Some(Err(err)) => tracing::debug!(controller = name, "{err}"),
            }
        }
    }
}
