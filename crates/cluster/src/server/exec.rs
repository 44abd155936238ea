//! `pods/exec` and `pods/attach` over WebSocket, the way kubectl 1.30+ talks to an API server:
//! a `GET` upgraded to WebSocket with the `v5.channel.k8s.io` subprotocol (`v4` too). Every
//! binary message starts with its channel: 0 stdin, 1 stdout, 2 stderr, 3 error (one `Status`
//! carrying the exit code, then the connection closes), 4 terminal resize, and in v5 255 to
//! close a stream (`[255, 0]`: stdin ended). SPDY, kubectl's fallback for servers that refuse
//! the upgrade, is not served.
//!
//! The API server's checks answer before the upgrade, as plain HTTP errors (a container name
//! when the pod has several, a command, a node); the kubelet's come after it, on the error
//! channel: a container that is not running is `unable to upgrade connection: container not
//! found ("NAME")`. Behind exec runs the simulated shell (`sim::shell`) with the container's
//! environment (`env`); behind attach, the container's main process: its output from now on,
//! as `pods/log` follows it. Either ends, with exit code 137, when the container stops.

mod env;

use std::{collections::VecDeque, sync::Arc};

use bytes::Bytes;
use futures::{SinkExt as _, StreamExt as _, stream::SplitSink};
use http::{HeaderValue, Method, StatusCode, header};
use hyper_util::rt::TokioIo;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{
        Message,
        handshake::derive_accept_key,
        protocol::{CloseFrame, Role, frame::coding::CloseCode},
    },
};
use tokio_util::sync::CancellationToken;

use super::{
    http::{Req, Resp, Shared, error_response, full, parse_query},
    podlog,
    routes::Target,
    status::ApiError,
    store::{EventType, Store, StoreEvent, WatchFrom},
};
use crate::sim::shell::{self, Event, Session};

/// The subprotocols served, preferred first.
const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

/// How long after the upgrade the first frame goes out. A container runtime takes at least
/// this long to start a process; kubectl registers its stream readers only after the upgrade,
/// and a frame for a stream it has not registered yet is dropped (client-go's
/// `readDemuxLoop`: "Unknown stream id, discarding message"). Sending at once lost a command's
/// stderr — or its exit Status — when kubectl was slow to get there (seen under load).
const START_LATENCY: std::time::Duration = std::time::Duration::from_millis(100);

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const CLOSE: u8 = 255;

/// What the request asks for (upstream `PodExecOptions`/`PodAttachOptions`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Query {
    command: Vec<String>,
    container: Option<String>,
    stdin: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
}

impl Query {
    /// Parses the raw query: `command` repeats, one argument each.
    fn parse(raw: &str) -> Query {
        let mut q = Query::default();
        for pair in raw.split('&').filter(|p| !p.is_empty()) {
            for (k, v) in parse_query(pair) {
                let on = matches!(v.as_str(), "true" | "1");
                match k.as_str() {
                    "command" => q.command.push(v),
                    "container" if !v.is_empty() => q.container = Some(v),
                    "stdin" => q.stdin = on,
                    "stdout" => q.stdout = on,
                    "stderr" => q.stderr = on,
                    "tty" => q.tty = on,
                    _ => {}
                }
            }
        }
        q
    }
}

/// The hostname a pod's containers see.
fn hostname(pod: &Pod) -> String {
    pod.spec
        .as_ref()
        .and_then(|s| s.hostname.clone())
        .filter(|h| !h.is_empty())
        .or_else(|| pod.metadata.name.clone())
        .unwrap_or_default()
}

/// The status of `container`, if it is running.
fn running<'a>(pod: &'a Pod, container: &str) -> Option<&'a ContainerStatus> {
    let status = pod.status.as_ref()?;
    [
        status.container_statuses.as_ref(),
        status.init_container_statuses.as_ref(),
        status.ephemeral_container_statuses.as_ref(),
    ]
    .into_iter()
    .flatten()
    .flatten()
    .find(|s| s.name == container)
    .filter(|s| s.state.as_ref().is_some_and(|st| st.running.is_some()))
}

/// The subprotocol to speak, from the client's WebSocket upgrade request.
fn negotiate(req: &Req) -> Result<(&'static str, String), ApiError> {
    let has = |name: header::HeaderName, token: &str| {
        req.headers.get_all(name).iter().any(|v| {
            v.to_str()
                .unwrap_or_default()
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        })
    };
    if !has(header::UPGRADE, "websocket") || !has(header::CONNECTION, "upgrade") {
        return Err(ApiError::bad_request(
            "Upgrade request required: the embedded cluster serves exec and attach over WebSocket \
             (v5.channel.k8s.io) only",
        ));
    }
    let key = req.header(header::SEC_WEBSOCKET_KEY).to_owned();
    if key.is_empty() {
        return Err(ApiError::bad_request("missing Sec-WebSocket-Key"));
    }
    let offered: Vec<String> = req
        .headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or_default().split(','))
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect();
    let protocol = PROTOCOLS
        .into_iter()
        .find(|p| offered.iter().any(|o| o == p))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "unable to upgrade: none of the offered stream protocols [{}] is supported (supported: {})",
                offered.join(", "),
                PROTOCOLS.join(", ")
            ))
        })?;
    Ok((protocol, derive_accept_key(key.as_bytes())))
}

/// `pods/exec` and `pods/attach` from the router.
pub fn route(shared: &Arc<Shared>, stop: &CancellationToken, req: Req, t: &Target) -> Resp {
    serve(shared, stop, req, t).unwrap_or_else(|e| error_response(&e))
}

fn serve(
    shared: &Arc<Shared>,
    stop: &CancellationToken,
    mut req: Req,
    t: &Target,
) -> Result<Resp, ApiError> {
    let attach = t.sub.as_deref() == Some("attach");
    if !matches!(req.method, Method::GET | Method::POST) || t.name.is_none() {
        return Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({} {})",
            req.method, req.path
        )));
    }
    let q = Query::parse(&req.raw_query);
    if !attach && q.command.is_empty() {
        return Err(ApiError::bad_request(
            "you must specify at least one command for the container",
        ));
    }
    if !(q.stdin || q.stdout || q.stderr) {
        return Err(ApiError::bad_request(
            "you must specify at least 1 of stdin, stdout, stderr",
        ));
    }
    let (pod, rv) = podlog::load_pod(&shared.store, t)?;
    let container = podlog::container_for(&pod, q.container.as_deref())?;
    let bound = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty());
    if !bound {
        return Err(ApiError::bad_request(format!(
            "pod {} does not have a host assigned",
            t.name.as_deref().unwrap_or_default()
        )));
    }
    let (protocol, accept) = negotiate(&req)?;
    let on_upgrade = req
        .upgrade
        .take()
        .ok_or_else(|| ApiError::internal("this connection cannot be upgraded"))?;
    let stream = Stream {
        store: shared.store.clone(),
        target: Target {
            res: t.res.clone(),
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            sub: t.sub.clone(),
        },
        rv,
        pod,
        container,
        q,
        attach,
        v5: protocol == PROTOCOLS[0],
        stop: stop.clone(),
    };
    tokio::spawn(async move {
        match on_upgrade.await {
            Ok(io) => {
                let ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(io), Role::Server, None).await;
                stream.run(ws).await;
            }
            Err(e) => tracing::debug!("exec: the upgrade failed: {e}"),
        }
    });
    let mut r = Resp::new(full(Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    h.insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(protocol),
    );
    if let Ok(v) = HeaderValue::from_str(&accept) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    Ok(r)
}

type Ws = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;
type Sink = SplitSink<Ws, Message>;

/// What came in on stdin.
enum Input {
    Data(Vec<u8>),
    Eof,
}

/// One upgraded exec or attach stream.
struct Stream {
    store: Arc<Store>,
    target: Target,
    rv: u64,
    pod: Pod,
    container: String,
    q: Query,
    attach: bool,
    v5: bool,
    stop: CancellationToken,
}

/// The Status the error channel carries for an exit code.
fn exit_status(code: i32, command: &[String]) -> Value {
    if code == 0 {
        return json!({"metadata": {}, "status": "Success"});
    }
    json!({
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "command terminated with non-zero exit code: command '{}' exited with {code}",
            command.join(" ")
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
    })
}

async fn send(sink: &mut Sink, channel: u8, data: &[u8]) -> bool {
    let mut frame = Vec::with_capacity(data.len() + 1);
    frame.push(channel);
    frame.extend_from_slice(data);
    sink.send(Message::Binary(Bytes::from(frame))).await.is_ok()
}

/// Sends the final Status and closes the connection normally (the client reads EOF).
async fn finish(sink: &mut Sink, status: &Value) {
    let _ = send(sink, ERROR, &serde_json::to_vec(status).unwrap_or_default()).await;
    let _ = sink
        .send(Message::Close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        })))
        .await;
}

impl Stream {
    async fn run(self, ws: Ws) {
        let (mut sink, mut incoming) = ws.split();
        tokio::time::sleep(START_LATENCY).await;
        let Some(status) = running(&self.pod, &self.container) else {
            let msg = format!(
                "unable to upgrade connection: container not found ({:?})",
                self.container
            );
            let status = json!({
                "metadata": {}, "status": "Failure", "code": 500, "reason": "InternalError",
                "message": format!("Internal error occurred: {msg}"),
                "details": {"causes": [{"message": msg}]},
            });
            finish(&mut sink, &status).await;
            return;
        };
        let container_id = status.container_id.clone().unwrap_or_default();
        let key = Some(self.target.res.key.clone());
        let ns = Some(self.target.ns().to_owned());
        let watched = self
            .store
            .watch(key.clone(), ns.clone(), WatchFrom::Version(self.rv))
            .or_else(|_| {
                self.store
                    .watch(key, ns, WatchFrom::Version(self.store.current_rv()))
            });
        let Ok(sub) = watched else {
            finish(&mut sink, &exit_status(1, &self.q.command)).await;
            return;
        };
        if self.attach {
            self.attach(sink, incoming).await;
            return;
        }
        let mut events = sub.rx;
        let Some(c) = self.shell_container(status) else {
            finish(&mut sink, &exit_status(1, &self.q.command)).await;
            return;
        };
        let now = Timestamp::now();
        let (mut session, first) = Session::start(c, &self.q.command, self.q.tty, now);
        let mut queue: VecDeque<Event> = first.into();
        let mut input: VecDeque<Input> = VecDeque::new();
        if !self.q.stdin {
            input.push_back(Input::Eof);
        }
        let mut resume: Option<tokio::time::Instant> = None;
        loop {
            // Play what is due: output, sleeps, the exit; then feed queued input.
            while resume.is_none_or(|r| r <= tokio::time::Instant::now()) {
                resume = None;
                if let Some(ev) = queue.pop_front() {
                    let ok = match ev {
                        Event::Stdout(s) if self.q.stdout || self.q.tty => {
                            send(&mut sink, STDOUT, s.as_bytes()).await
                        }
                        Event::Stderr(s) if self.q.stderr => {
                            send(&mut sink, STDERR, s.as_bytes()).await
                        }
                        Event::Stdout(_) | Event::Stderr(_) => true,
                        Event::Sleep(d) => {
                            resume = Some(tokio::time::Instant::now() + d);
                            true
                        }
                        Event::Exit(code) => {
                            finish(&mut sink, &exit_status(code, &self.q.command)).await;
                            return;
                        }
                    };
                    if !ok {
                        return;
                    }
                } else if let Some(i) = input.pop_front() {
                    let now = Timestamp::now();
                    queue.extend(match i {
                        Input::Data(b) => session.input(&b, now),
                        Input::Eof => session.close_stdin(now),
                    });
                } else {
                    break;
                }
            }
            let sleep = resume.map(tokio::time::sleep_until);
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = async { if let Some(s) = sleep { s.await } }, if resume.is_some() => {}
                msg = incoming.next() => match msg {
                    Some(Ok(Message::Binary(b))) => match (b.first(), b.get(1)) {
                        (Some(&STDIN), _) => input.push_back(Input::Data(b[1..].to_vec())),
                        (Some(&CLOSE), Some(&STDIN)) if self.v5 => input.push_back(Input::Eof),
                        // Resize (4): the simulated terminal has no size to change.
                        _ => {}
                    },
                    Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                    Some(Ok(_)) => {}
                },
                ev = events.recv() => {
                    if self.container_stopped(ev.as_deref(), &container_id) {
                        finish(&mut sink, &exit_status(137, &self.q.command)).await;
                        return;
                    }
                }
            }
        }
    }

    /// Whether this event says the container the session runs in stopped.
    fn container_stopped(&self, ev: Option<&StoreEvent>, container_id: &str) -> bool {
        let Some(ev) = ev else { return true };
        if ev.obj.head["metadata"]["name"].as_str() != self.target.name.as_deref() {
            return false;
        }
        if ev.etype == EventType::Deleted {
            return true;
        }
        let Ok(pod) = serde_json::from_slice::<Pod>(&ev.obj.json) else {
            return true;
        };
        running(&pod, &self.container).and_then(|s| s.container_id.as_deref()) != Some(container_id)
    }

    /// The simulated shell's view of the container.
    fn shell_container(&self, status: &ContainerStatus) -> Option<shell::Container> {
        let pod = &self.pod;
        let spec = pod.spec.as_ref()?;
        let container = spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
            .find(|c| c.name == self.container)?;
        let command: Vec<String> = container
            .command
            .iter()
            .flatten()
            .chain(container.args.iter().flatten())
            .cloned()
            .collect();
        let started = status
            .state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .and_then(|r| r.started_at.as_ref())
            .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
        Some(shell::Container {
            pod: pod.metadata.name.clone().unwrap_or_default(),
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            hostname: hostname(pod),
            container: self.container.clone(),
            image: container.image.clone().unwrap_or_default(),
            env: env::environment(&self.store, pod, container, self.q.tty),
            pod_ip: pod
                .status
                .as_ref()
                .and_then(|s| s.pod_ip.clone())
                .unwrap_or_default(),
            command,
            started,
        })
    }

    /// Attach: the main process's output from now on, until the container stops; its input
    /// goes nowhere (the simulated processes read none).
    async fn attach(&self, mut sink: Sink, mut incoming: futures::stream::SplitStream<Ws>) {
        let run = match podlog::run_for(&self.store, &self.pod, &self.container, false) {
            Ok(run) => run,
            Err(e) => {
                finish(&mut sink, &e.to_status()).await;
                return;
            }
        };
        let output = podlog::follow_output(
            self.store.clone(),
            &self.target,
            self.rv,
            self.container.clone(),
            run,
            Timestamp::now(),
            self.stop.clone(),
        );
        let mut output: mpsc::Receiver<Bytes> = match output {
            Ok(rx) => rx,
            Err(e) => {
                finish(&mut sink, &e.to_status()).await;
                return;
            }
        };
        let channel = if self.q.stdout || self.q.tty {
            STDOUT
        } else {
            STDERR
        };
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return,
                chunk = output.recv() => match chunk {
                    Some(b) => {
                        let text = if self.q.tty {
                            String::from_utf8_lossy(&b).replace('\n', "\r\n").into_bytes()
                        } else {
                            b.to_vec()
                        };
                        if !send(&mut sink, channel, &text).await {
                            return;
                        }
                    }
                    None => {
                        finish(&mut sink, &exit_status(0, &[])).await;
                        return;
                    }
                },
                msg = incoming.next() => match msg {
                    Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                    Some(Ok(_)) => {}
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_keep_their_order_and_flags_parse() {
        let q = Query::parse(
            "command=sh&command=-c&command=echo%20a%26b&container=nginx&stdin=true&stdout=1&tty=false",
        );
        assert_eq!(q.command, vec!["sh", "-c", "echo a&b"]);
        assert_eq!(q.container.as_deref(), Some("nginx"));
        assert!(q.stdin && q.stdout && !q.stderr && !q.tty);
    }

    #[test]
    fn exit_codes_travel_as_kubectl_reads_them() {
        assert_eq!(exit_status(0, &[])["status"], "Success");
        let s = exit_status(3, &["sh".to_owned()]);
        assert_eq!(s["reason"], "NonZeroExitCode");
        assert_eq!(s["details"]["causes"][0]["reason"], "ExitCode");
        assert_eq!(s["details"]["causes"][0]["message"], "3");
    }
}
