//! The simulator's IO loop: one task that watches pods and nodes, keeps a local cache, applies
//! the pure decisions (`schedule`, `kubelet`) and sleeps until the earliest pod deadline.
//!
//! Work is keyed by pod: a changed or due pod is marked dirty; at most `MAX_IN_FLIGHT` requests
//! run at once, and a pod with a request in flight is looked at again when it completes. 10,000
//! pods cost one cache entry and at most one deadline each, never a task or a poll.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    time::Duration,
};

use anyhow::Result;
use futures::{StreamExt as _, future::BoxFuture};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::{
    Api, Client,
    runtime::{WatchStreamExt as _, watcher},
};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{
    deadlines::Deadlines,
    events,
    io::{self, Outcome},
    kubelet::{self, PodAction, Timing},
    nodes::SIM_NODE_LABEL,
    schedule,
};

/// How many API requests the simulator keeps in flight.
const MAX_IN_FLIGHT: usize = 32;

/// What the simulator runs.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Simulated nodes to register: `sim-node-0` .. `sim-node-{n-1}`.
    pub nodes: usize,
    pub timing: Timing,
    /// How often nodes post their Ready heartbeat.
    pub heartbeat: Duration,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            nodes: 3,
            timing: Timing::default(),
            heartbeat: Duration::from_secs(20),
        }
    }
}

type Key = String;

fn key_of(pod: &Pod) -> Key {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Registers the nodes, then simulates until `shutdown` is cancelled.
pub async fn run(client: Client, opts: SimOptions, shutdown: CancellationToken) -> Result<()> {
    for index in 0..opts.nodes {
        io::register_node(&client, index).await?;
    }
    let mut sim = Sim::new(client.clone(), opts.timing.clone());
    let pods = watcher(Api::<Pod>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .boxed();
    let node_events = watcher(Api::<Node>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .boxed();
    let mut streams = futures::stream::select(
        pods.map(|e| StreamItem::Pod(Box::new(e))),
        node_events.map(|e| StreamItem::Node(Box::new(e))),
    );
    let beats = tokio::spawn(heartbeats(
        client.clone(),
        opts.nodes,
        opts.heartbeat,
        shutdown.clone(),
    ));
    loop {
        sim.pump();
        let sleep = sim.sleep_for();
        tokio::select! {
            () = shutdown.cancelled() => break,
            item = streams.next() => match item {
                Some(StreamItem::Pod(event)) => match *event {
                    Ok(event) => sim.on_pod_event(event),
                    Err(err) => tracing::warn!(
                        "sim-nodes: pod watch error (retrying): {}",
                        crate::kube::errors::watcher_text(&err)
                    ),
                },
                Some(StreamItem::Node(event)) => match *event {
                    Ok(event) => sim.on_node_event(event),
                    Err(err) => tracing::warn!(
                        "sim-nodes: node watch error (retrying): {}",
                        crate::kube::errors::watcher_text(&err)
                    ),
                },
                None => break,
            },
            Some(done) = sim.requests.join_next(), if !sim.requests.is_empty() => {
                if let Ok((key, result)) = done {
                    sim.on_done(key, result);
                }
            }
            () = tokio::time::sleep(sleep.unwrap_or(Duration::from_secs(3600))), if sleep.is_some() => {
                sim.on_timer();
            }
        }
    }
    beats.abort();
    sim.requests.shutdown().await;
    Ok(())
}

/// Posts every node's Ready heartbeat each `every`, re-registering a node someone deleted.
async fn heartbeats(client: Client, count: usize, every: Duration, shutdown: CancellationToken) {
    let mut last: Vec<Option<Node>> = vec![None; count];
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        for (index, node) in last.iter_mut().enumerate() {
            let result = match io::heartbeat(&client, index, node.as_ref()).await {
                Err(err) if err.downcast_ref::<kube::Error>().is_some_and(is_not_found) => {
                    io::register_node(&client, index).await
                }
                other => other,
            };
            match result {
                Ok(fresh) => *node = Some(fresh),
                Err(err) => tracing::warn!("sim-nodes: {err:#}"),
            }
        }
    }
}

fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 404)
}

/// What a node watch event means for the pods.
enum NodeChange {
    New(String),
    /// Labels, taints or schedulability changed (or the set of foreign nodes).
    Placement,
    StatusOnly,
}

enum StreamItem {
    Pod(Box<Result<watcher::Event<Pod>, watcher::Error>>),
    Node(Box<Result<watcher::Event<Node>, watcher::Error>>),
}

/// The loop's state: caches, the deadline queue, the dirty queue and the requests in flight.
struct Sim {
    client: Client,
    timing: Timing,
    pods: HashMap<Key, Pod>,
    pod_init: Option<HashMap<Key, Pod>>,
    /// Which node each cached pod is on (or is being bound to), and the pods per node.
    placement: HashMap<Key, String>,
    load: HashMap<String, usize>,
    sim_nodes: HashMap<String, Node>,
    foreign_nodes: HashSet<String>,
    node_init: Option<HashMap<String, Node>>,
    deadlines: Deadlines<Key>,
    dirty: VecDeque<Key>,
    dirty_set: HashSet<Key>,
    in_flight: HashSet<Key>,
    redo: HashSet<Key>,
    requests: JoinSet<(Key, Result<Outcome>)>,
    use_binding: bool,
}

impl Sim {
    fn new(client: Client, timing: Timing) -> Self {
        Self {
            client,
            timing,
            pods: HashMap::new(),
            pod_init: None,
            placement: HashMap::new(),
            load: HashMap::new(),
            sim_nodes: HashMap::new(),
            foreign_nodes: HashSet::new(),
            node_init: None,
            deadlines: Deadlines::default(),
            dirty: VecDeque::new(),
            dirty_set: HashSet::new(),
            in_flight: HashSet::new(),
            redo: HashSet::new(),
            requests: JoinSet::new(),
            use_binding: true,
        }
    }

    fn mark(&mut self, key: Key) {
        if self.in_flight.contains(&key) {
            self.redo.insert(key);
        } else if self.dirty_set.insert(key.clone()) {
            self.dirty.push_back(key);
        }
    }

    fn place(&mut self, key: &Key, node: Option<String>) {
        if let Some(n) = self
            .placement
            .remove(key)
            .and_then(|old| self.load.get_mut(&old))
        {
            *n = n.saturating_sub(1);
        }
        if let Some(node) = node {
            *self.load.entry(node.clone()).or_default() += 1;
            self.placement.insert(key.clone(), node);
        }
    }

    fn on_pod_event(&mut self, event: watcher::Event<Pod>) {
        match event {
            watcher::Event::Init => self.pod_init = Some(HashMap::new()),
            watcher::Event::InitApply(pod) => {
                let pod = slim(pod);
                if let Some(init) = self.pod_init.as_mut() {
                    init.insert(key_of(&pod), pod);
                }
            }
            watcher::Event::InitDone => {
                let fresh = self.pod_init.take().unwrap_or_default();
                let gone: Vec<Key> = self
                    .pods
                    .keys()
                    .filter(|k| !fresh.contains_key(*k))
                    .cloned()
                    .collect();
                for key in gone {
                    self.forget(&key);
                }
                for (_, pod) in fresh {
                    self.upsert(pod);
                }
            }
            watcher::Event::Apply(pod) => self.upsert(slim(pod)),
            watcher::Event::Delete(pod) => self.forget(&key_of(&pod)),
        }
    }

    fn upsert(&mut self, pod: Pod) {
        let key = key_of(&pod);
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .filter(|n| !n.is_empty());
        if node.is_some() || !self.in_flight.contains(&key) {
            self.place(&key, node);
        }
        self.pods.insert(key.clone(), pod);
        self.mark(key);
    }

    fn forget(&mut self, key: &Key) {
        self.pods.remove(key);
        self.place(key, None);
        self.deadlines.set(key, None);
    }

    fn on_node_event(&mut self, event: watcher::Event<Node>) {
        match event {
            watcher::Event::Init => self.node_init = Some(HashMap::new()),
            watcher::Event::InitApply(node) => {
                if let (Some(init), Some(name)) =
                    (self.node_init.as_mut(), node.metadata.name.clone())
                {
                    init.insert(name, node);
                }
            }
            watcher::Event::InitDone => {
                self.sim_nodes.clear();
                self.foreign_nodes.clear();
                for (_, node) in self.node_init.take().unwrap_or_default() {
                    self.add_node(node);
                }
                self.mark_for_nodes(None, true);
            }
            watcher::Event::Apply(node) => match self.add_node(node) {
                NodeChange::New(name) => self.mark_for_nodes(Some(&name), false),
                NodeChange::Placement => self.mark_for_nodes(None, false),
                // Heartbeats change only the status: nothing to look at again.
                NodeChange::StatusOnly => {}
            },
            watcher::Event::Delete(node) => {
                let name = node.metadata.name.unwrap_or_default();
                self.sim_nodes.remove(&name);
                self.foreign_nodes.remove(&name);
                self.mark_for_nodes(None, false);
            }
        }
    }

    /// Records a node; says what its change means for the pods.
    fn add_node(&mut self, node: Node) -> NodeChange {
        let Some(name) = node.metadata.name.clone() else {
            return NodeChange::StatusOnly;
        };
        let simulated = node
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.get(SIM_NODE_LABEL).is_some_and(|v| v == "true"));
        if !simulated {
            self.sim_nodes.remove(&name);
            return if self.foreign_nodes.insert(name.clone()) {
                NodeChange::Placement
            } else {
                NodeChange::StatusOnly
            };
        }
        self.foreign_nodes.remove(&name);
        let change = match self.sim_nodes.get(&name) {
            None => NodeChange::New(name.clone()),
            Some(old) if old.metadata.labels != node.metadata.labels || old.spec != node.spec => {
                NodeChange::Placement
            }
            Some(_) => NodeChange::StatusOnly,
        };
        self.sim_nodes.insert(name, node);
        change
    }

    /// Marks the pods a node change concerns: unbound pods (they may fit now), the pods bound to
    /// `new_node` (they get a kubelet), or with `all` every pod on a simulated node.
    fn mark_for_nodes(&mut self, new_node: Option<&str>, all: bool) {
        let keys: Vec<Key> = self
            .pods
            .iter()
            .filter(|(_, p)| {
                let node = p
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_deref())
                    .filter(|n| !n.is_empty());
                match node {
                    None => true,
                    Some(n) => Some(n) == new_node || (all && self.sim_nodes.contains_key(n)),
                }
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.mark(key);
        }
    }

    /// Our scheduler places pods only while every node is simulated: on a cluster with real
    /// nodes, the real scheduler does it (and may place pods on our nodes, which we then run).
    fn schedules(&self) -> bool {
        self.foreign_nodes.is_empty() && !self.sim_nodes.is_empty()
    }

    fn sleep_for(&self) -> Option<Duration> {
        let next = self.deadlines.next()?;
        let wait = next.duration_since(Timestamp::now());
        Some(Duration::try_from(wait.max(SignedDuration::ZERO)).unwrap_or(Duration::ZERO))
    }

    fn on_timer(&mut self) {
        for key in self.deadlines.pop_due(Timestamp::now()) {
            self.mark(key);
        }
    }

    fn on_done(&mut self, key: Key, result: Result<Outcome>) {
        self.in_flight.remove(&key);
        match result {
            Ok(Outcome::BoundWithoutBindingSubresource) => self.use_binding = false,
            Ok(Outcome::Done | Outcome::Stale) => {}
            Err(err) => {
                tracing::warn!("sim-nodes: {err:#}");
                // Try again shortly (the failure may be transient).
                let retry = Timestamp::now() + SignedDuration::from_secs(2);
                self.deadlines.set(&key, Some(retry));
            }
        }
        if self.redo.remove(&key) {
            self.mark(key);
        }
    }

    /// Looks at dirty pods until the request budget is used up.
    fn pump(&mut self) {
        let now = Timestamp::now();
        while self.requests.len() < MAX_IN_FLIGHT {
            let Some(key) = self.dirty.pop_front() else {
                break;
            };
            self.dirty_set.remove(&key);
            if let Some(request) = self.decide(&key, now) {
                self.in_flight.insert(key.clone());
                self.requests.spawn(async move { (key, request.await) });
            }
        }
    }

    /// The request one pod needs now, if any (and its timer).
    fn decide(&mut self, key: &Key, now: Timestamp) -> Option<BoxFuture<'static, Result<Outcome>>> {
        let pod = self.pods.get(key)?.clone();
        let client = self.client.clone();
        let node_name = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .filter(|n| !n.is_empty());
        let Some(node_name) = node_name else {
            if pod.metadata.deletion_timestamp.is_some() {
                return Some(Box::pin(async move { io::delete_now(&client, &pod).await }));
            }
            if !self.schedules() || !schedule::wants_scheduling(&pod) {
                return None;
            }
            let nodes: Vec<Node> = self.sim_nodes.values().cloned().collect();
            return match schedule::pick_node(&pod, &nodes, &self.load) {
                Ok(node) => {
                    let node = node.to_owned();
                    self.place(key, Some(node.clone()));
                    let use_binding = self.use_binding;
                    Some(Box::pin(async move {
                        let outcome = io::bind(&client, &pod, &node, use_binding).await;
                        if matches!(
                            outcome,
                            Ok(Outcome::Done | Outcome::BoundWithoutBindingSubresource)
                        ) {
                            let event = events::scheduled(&pod, &node);
                            io::post_events(&client, &pod, &[event], None).await;
                        }
                        outcome
                    }))
                }
                Err(message) => {
                    let status = schedule::unschedulable_status(&pod, &message, now)?;
                    Some(Box::pin(async move {
                        let outcome = io::write_status(&client, &pod, status).await;
                        if matches!(outcome, Ok(Outcome::Done)) {
                            let event = events::failed_scheduling(&message);
                            io::post_events(&client, &pod, &[event], None).await;
                        }
                        outcome
                    }))
                }
            };
        };
        let node = self.sim_nodes.get(&node_name)?;
        let host_ip = node_ip(node);
        let decision = kubelet::decide(&pod, &host_ip, now, &self.timing);
        self.deadlines.set(key, decision.wake_at);
        match decision.action {
            PodAction::Nothing => None,
            PodAction::WriteStatus(status) => {
                let reported =
                    events::kubelet_events(&pod, &pod.status.clone().unwrap_or_default(), &status);
                Some(Box::pin(async move {
                    let outcome = io::write_status(&client, &pod, *status).await;
                    if matches!(outcome, Ok(Outcome::Done)) && !reported.is_empty() {
                        io::post_events(&client, &pod, &reported, Some(&node_name)).await;
                    }
                    outcome
                }))
            }
            PodAction::Delete => Some(Box::pin(async move { io::delete_now(&client, &pod).await })),
        }
    }
}

fn node_ip(node: &Node) -> String {
    node.status
        .as_ref()
        .and_then(|s| s.addresses.as_ref())
        .and_then(|a| a.iter().find(|a| a.type_ == "InternalIP"))
        .map(|a| a.address.clone())
        .unwrap_or_else(|| "10.240.0.1".to_owned())
}

/// Drops what the simulator never reads, to keep 10,000 cached pods small.
fn slim(mut pod: Pod) -> Pod {
    pod.metadata.managed_fields = None;
    pod
}
