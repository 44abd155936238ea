//! `GET /api/v1/namespaces/NS/pods/NAME/log`: the container's log as the simulated container
//! printed it (`sim::logs`), with kubectl's parameters: `container`, `previous`, `follow`,
//! `timestamps`, `tailLines`, `sinceSeconds`/`sinceTime` and `limitBytes`.
//!
//! The API server's checks come first, worded as upstream's `LogLocation` and
//! `ValidatePodLogOptions` word them (a container name when the pod has several, a known
//! container, an unscheduled pod serving an empty log); then the kubelet's (`sim::logs::run_of`:
//! waiting, no previous run). A follow streams the lines as they fall due (it sleeps until the
//! next one, it does not poll) and ends when the run ends (its last lines sent), when the
//! container restarts, or when the pod is gone.

use std::{collections::HashSet, sync::Arc, time::Duration};

use bytes::Bytes;
use futures::stream;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    http::{Req, Resp, Shared, full},
    routes::Target,
    status::{ApiError, FieldError},
    store::{EventType, Store, WatchFrom},
};
use crate::sim::{
    kubelet::Timing,
    logs::{self, Exit, LogLine, Run},
};

/// What the request asks for (upstream `PodLogOptions`).
#[derive(Debug, Clone, Default, PartialEq)]
struct Options {
    container: Option<String>,
    follow: bool,
    previous: bool,
    timestamps: bool,
    tail_lines: Option<i64>,
    since_seconds: Option<i64>,
    since_time: Option<Timestamp>,
    limit_bytes: Option<i64>,
}

fn int(req: &Req, key: &str) -> Result<Option<i64>, ApiError> {
    req.q(key)
        .map(|s| {
            s.parse::<i64>().map_err(|_| {
                ApiError::bad_request(format!("{key}: invalid value {s:?}: must be an integer"))
            })
        })
        .transpose()
}

impl Options {
    fn parse(req: &Req, name: &str) -> Result<Options, ApiError> {
        let since_time = req
            .q("sinceTime")
            .map(|s| {
                s.parse::<Timestamp>().map_err(|_| {
                    ApiError::bad_request(format!(
                        "sinceTime: invalid value {s:?}: must be an RFC 3339 time"
                    ))
                })
            })
            .transpose()?;
        let o = Options {
            container: req.q("container").map(str::to_owned),
            follow: req.flag("follow"),
            previous: req.flag("previous"),
            timestamps: req.flag("timestamps"),
            tail_lines: int(req, "tailLines")?,
            since_seconds: int(req, "sinceSeconds")?,
            since_time,
            limit_bytes: int(req, "limitBytes")?,
        };
        let mut errs = Vec::new();
        if let Some(n) = o.tail_lines.filter(|n| *n < 0) {
            errs.push(FieldError::invalid(
                "tailLines",
                &json!(n),
                "must be greater than or equal to 0",
            ));
        }
        if let Some(n) = o.limit_bytes.filter(|n| *n < 1) {
            errs.push(FieldError::invalid(
                "limitBytes",
                &json!(n),
                "must be greater than 0",
            ));
        }
        if o.since_seconds.is_some() && o.since_time.is_some() {
            return Err(ApiError::bad_request(
                "at most one of `sinceTime` or `sinceSeconds` may be specified",
            ));
        }
        if let Some(n) = o.since_seconds.filter(|n| *n < 1) {
            errs.push(FieldError::invalid(
                "sinceSeconds",
                &json!(n),
                "must be greater than 0",
            ));
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid("PodLogOptions", "", name, &errs));
        }
        Ok(o)
    }

    fn since(&self, now: Timestamp) -> Option<Timestamp> {
        self.since_time.or_else(|| {
            self.since_seconds
                .map(|s| now - SignedDuration::from_secs(s.clamp(0, 1 << 40)))
        })
    }

    fn render(&self, line: &LogLine) -> String {
        let mut s = if self.timestamps {
            line.stamped()
        } else {
            line.text.clone()
        };
        s.push('\n');
        s
    }
}

/// The pod named by the target, as a typed Pod (500 if the stored object does not parse).
pub(super) fn load_pod(store: &Store, t: &Target) -> Result<(Pod, u64), ApiError> {
    let name = t.name.as_deref().unwrap_or_default();
    let obj = store.get(&t.res, t.ns(), name)?;
    let pod = serde_json::from_slice::<Pod>(&obj.json)
        .map_err(|e| ApiError::internal(format!("pod {name} cannot be read: {e}")))?;
    Ok((pod, obj.rv))
}

/// The container a request means (upstream `LogLocation`/`streamLocation`): the one named, or
/// the only one; several and none named is an error naming them.
pub(super) fn container_for(pod: &Pod, requested: Option<&str>) -> Result<String, ApiError> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let spec = pod.spec.as_ref();
    let containers = spec.map(|s| s.containers.as_slice()).unwrap_or_default();
    let inits = spec
        .and_then(|s| s.init_containers.as_deref())
        .unwrap_or_default();
    let ephemeral = spec
        .and_then(|s| s.ephemeral_containers.as_deref())
        .unwrap_or_default();
    match requested {
        Some(c) => {
            let known = containers.iter().any(|x| x.name == c)
                || inits.iter().any(|x| x.name == c)
                || ephemeral.iter().any(|x| x.name == c);
            if known {
                Ok(c.to_owned())
            } else {
                Err(ApiError::bad_request(format!(
                    "container {c} is not valid for pod {name}"
                )))
            }
        }
        None => match containers {
            [only] => Ok(only.name.clone()),
            [] => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}"
            ))),
            several => {
                let names = |cs: &[k8s_openapi::api::core::v1::Container]| {
                    cs.iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let mut msg = format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    names(several)
                );
                if !inits.is_empty() {
                    msg.push_str(&format!(
                        " or one of the init containers: [{}]",
                        names(inits)
                    ));
                }
                Err(ApiError::bad_request(msg))
            }
        },
    }
}

/// Every image the cluster's ControllerRevisions name: what a past run may have run.
fn image_candidates(store: &Store) -> Vec<String> {
    let revisions = store.list_values("apps/v1", "ControllerRevision", None);
    logs::previous_image_candidates(&revisions)
}

/// The run the request means, from the pod as stored.
pub(super) fn run_for(
    store: &Store,
    pod: &Pod,
    container: &str,
    previous: bool,
) -> Result<Run, ApiError> {
    logs::run_of(pod, container, previous, &Timing::default(), &|| {
        image_candidates(store)
    })
    .map_err(|e| ApiError::bad_request(e.to_string()))
}

fn bound(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty())
}

/// A text/plain response whose body is what `rx` yields, chunk by chunk, until it closes.
fn text_stream(rx: mpsc::Receiver<Bytes>) -> Resp {
    let s = stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, std::convert::Infallible>(Frame::data(b)), rx))
    });
    with_text_type(Resp::new(StreamBody::new(s).boxed()))
}

fn with_text_type(mut r: Resp) -> Resp {
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    r
}

/// Cuts `chunk` to what is left of the byte budget; false once the budget is spent.
fn spend(budget: &mut Option<usize>, chunk: &mut String) -> bool {
    let Some(left) = budget.as_mut() else {
        return true;
    };
    if chunk.len() >= *left {
        let mut cut = *left;
        while !chunk.is_char_boundary(cut) {
            cut -= 1;
        }
        chunk.truncate(cut);
        *left = 0;
        return false;
    }
    *left -= chunk.len();
    true
}

/// `pods/log` from the router: GET only, errors as Status objects.
pub async fn route(shared: &Arc<Shared>, stop: &CancellationToken, req: &Req, t: &Target) -> Resp {
    if req.method != http::Method::GET || t.name.is_none() {
        return super::http::error_response(&ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({} {})",
            req.method, req.path
        )));
    }
    serve(shared, stop, req, t)
        .await
        .unwrap_or_else(|e| super::http::error_response(&e))
}

/// Serves `pods/log`.
pub async fn serve(
    shared: &Arc<Shared>,
    stop: &CancellationToken,
    req: &Req,
    t: &Target,
) -> Result<Resp, ApiError> {
    let name = t.name.clone().unwrap_or_default();
    let opts = Options::parse(req, &name)?;
    let (pod, rv) = load_pod(&shared.store, t)?;
    let container = container_for(&pod, opts.container.as_deref())?;
    if !bound(&pod) {
        // Upstream: an unscheduled pod has no log location and serves an empty log.
        return Ok(with_text_type(Resp::new(full(Bytes::new()))));
    }
    let run = run_for(&shared.store, &pod, &container, opts.previous)?;
    let now = Timestamp::now();
    let tail = opts
        .tail_lines
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut budget = opts
        .limit_bytes
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut body: String = logs::lines(&run, opts.since(now), now, tail)
        .iter()
        .map(|l| opts.render(l))
        .collect();
    let open = spend(&mut budget, &mut body);
    if !opts.follow || !open {
        return Ok(with_text_type(Resp::new(full(body))));
    }
    let follower = Follower {
        store: shared.store.clone(),
        name,
        container,
        opts,
        budget,
        run,
        cursor: now,
    };
    let rx = follower.spawn(t, rv, body, stop.clone())?;
    Ok(text_stream(rx))
}

/// Streams the lines `run` (of `container` in the pod `t` names, read at `rv`) prints after
/// `cursor`, as [`serve`]'s follow does, without timestamps: what `pods/attach` shows.
pub(super) fn follow_output(
    store: Arc<Store>,
    t: &Target,
    rv: u64,
    container: String,
    run: Run,
    cursor: Timestamp,
    stop: CancellationToken,
) -> Result<mpsc::Receiver<Bytes>, ApiError> {
    let follower = Follower {
        store,
        name: t.name.clone().unwrap_or_default(),
        container,
        opts: Options::default(),
        budget: None,
        run,
        cursor,
    };
    follower.spawn(t, rv, String::new(), stop)
}

/// One `follow=true` stream.
struct Follower {
    store: Arc<Store>,
    name: String,
    container: String,
    opts: Options,
    budget: Option<usize>,
    run: Run,
    /// Every line at or before this instant has been sent.
    cursor: Timestamp,
}

impl Follower {
    /// Watches the pod from `rv` on and streams in a task; `first` goes out first.
    fn spawn(
        self,
        t: &Target,
        rv: u64,
        first: String,
        stop: CancellationToken,
    ) -> Result<mpsc::Receiver<Bytes>, ApiError> {
        let key = Some(t.res.key.clone());
        let ns = Some(t.ns().to_owned());
        let sub = self
            .store
            .watch(key.clone(), ns.clone(), WatchFrom::Version(rv))
            .or_else(|_| {
                let now = self.store.current_rv();
                self.store.watch(key, ns, WatchFrom::Version(now))
            })?;
        let (tx, rx) = mpsc::channel::<Bytes>(64);
        if !first.is_empty() {
            let _ = tx.try_send(Bytes::from(first));
        }
        tokio::spawn(self.run(sub.rx, tx, stop));
        Ok(rx)
    }

    async fn run(
        mut self,
        mut events: mpsc::UnboundedReceiver<Arc<super::store::StoreEvent>>,
        tx: mpsc::Sender<Bytes>,
        stop: CancellationToken,
    ) {
        loop {
            let next = logs::next_line_at(&self.run, self.cursor);
            if next.is_none() && self.run.end.is_some() {
                return; // the run is over and every line of it was sent
            }
            let wait = next.map_or(Duration::from_secs(3600), |n| {
                Duration::try_from(n.duration_since(Timestamp::now())).unwrap_or_default()
            });
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tx.closed() => return,
                _ = tokio::time::sleep(wait), if next.is_some() => {
                    let now = Timestamp::now();
                    let from = self.cursor + SignedDuration::from_nanos(1);
                    let due = logs::lines(&self.run, Some(from), now, None);
                    self.cursor = now;
                    if !self.send(&tx, &due).await {
                        return;
                    }
                }
                ev = events.recv() => {
                    let Some(ev) = ev else { return };
                    if ev.obj.head["metadata"]["name"].as_str() != Some(&self.name) {
                        continue;
                    }
                    let Ok(pod) = serde_json::from_slice::<Pod>(&ev.obj.json) else {
                        return;
                    };
                    let Ok(mut new) = run_for(&self.store, &pod, &self.container, false) else {
                        return;
                    };
                    if new.container_id != self.run.container_id {
                        return; // restarted: this run's log is complete
                    }
                    if ev.etype == EventType::Deleted && new.end.is_none_or(|e| e.at > Timestamp::now()) {
                        // Gone with the pod: its containers were stopped now.
                        new.end = Some(Exit { at: Timestamp::now(), code: 0 });
                    }
                    if new != self.run && !self.catch_up(new, &tx).await {
                        return;
                    }
                }
            }
        }
    }

    /// The status told more about the run (mostly: how it ended). Lines the new knowledge puts
    /// before the cursor that were not sent yet (its shutdown lines) are sent now.
    async fn catch_up(&mut self, new: Run, tx: &mpsc::Sender<Bytes>) -> bool {
        let from = new
            .end
            .map_or(self.cursor, |e| e.at - SignedDuration::from_secs(1))
            .min(self.cursor);
        let sent: HashSet<(Timestamp, String)> =
            logs::lines(&self.run, Some(from), self.cursor, None)
                .into_iter()
                .map(|l| (l.at, l.text))
                .collect();
        let missed: Vec<LogLine> = logs::lines(&new, Some(from), self.cursor, None)
            .into_iter()
            .filter(|l| !sent.contains(&(l.at, l.text.clone())))
            .collect();
        self.run = new;
        self.send(tx, &missed).await
    }

    /// Sends these lines within the byte budget; false when the stream must end.
    async fn send(&mut self, tx: &mpsc::Sender<Bytes>, lines: &[LogLine]) -> bool {
        if lines.is_empty() {
            return true;
        }
        let mut chunk: String = lines.iter().map(|l| self.opts.render(l)).collect();
        let open = spend(&mut self.budget, &mut chunk);
        if !chunk.is_empty() && tx.send(Bytes::from(chunk)).await.is_err() {
            return false;
        }
        open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(containers: &[&str], inits: &[&str]) -> Pod {
        let c = |n: &&str| json!({"name": n, "image": "nginx"});
        serde_json::from_value(json!({
            "metadata": {"name": "web-x"},
            "spec": {
                "containers": containers.iter().map(c).collect::<Vec<_>>(),
                "initContainers": inits.iter().map(c).collect::<Vec<_>>(),
            },
        }))
        .unwrap()
    }

    #[test]
    fn the_container_is_named_or_the_only_one() {
        assert_eq!(container_for(&pod(&["nginx"], &[]), None).unwrap(), "nginx");
        let two = pod(&["nginx", "logtail"], &[]);
        assert_eq!(
            container_for(&two, None).unwrap_err().message,
            "a container name must be specified for pod web-x, choose one of: [nginx logtail]"
        );
        assert_eq!(container_for(&two, Some("logtail")).unwrap(), "logtail");
        assert_eq!(
            container_for(&two, Some("nope")).unwrap_err().message,
            "container nope is not valid for pod web-x"
        );
        let with_init = pod(&["a", "b"], &["setup"]);
        assert_eq!(
            container_for(&with_init, None).unwrap_err().message,
            "a container name must be specified for pod web-x, choose one of: [a b] or one of the init containers: [setup]"
        );
        assert_eq!(container_for(&with_init, Some("setup")).unwrap(), "setup");
    }

    #[test]
    fn the_byte_budget_cuts_on_a_character_boundary() {
        let mut budget = Some(5);
        let mut chunk = "abc".to_owned();
        assert!(spend(&mut budget, &mut chunk));
        assert_eq!((chunk.as_str(), budget), ("abc", Some(2)));
        let mut chunk = "é€x".to_owned();
        assert!(!spend(&mut budget, &mut chunk));
        assert_eq!(chunk, "é");
        let mut none = None;
        let mut chunk = "anything".to_owned();
        assert!(spend(&mut none, &mut chunk));
    }
}
