//! The simulator's IO loop: one task that watches pods, nodes, ContainerRecreateRequests and
//! NodePodProbes, keeps a local cache, applies the pure decisions (`schedule`, `kubelet`,
//! `recreate`, `probes`) and sleeps until the earliest deadline.
//!
//! Work is keyed ([`Work`]): a pod (schedule it, run its kubelet), a pod's CRRs (the daemon's
//! container recreation) or a node's probes. A changed or due key is marked dirty; at most
//! `MAX_IN_FLIGHT` requests run at once, and a key with a request in flight is looked at again
//! when it completes. 10,000 pods cost one cache entry and at most one deadline each, a node's
//! probes one deadline per node, never a task or a poll.
//!
//! Beside it, one task keeps the nodes alive as kubelets do ([`liveness`]): node Leases renewed,
//! the Ready heartbeat posted.

mod daemon;
mod liveness;
mod pods;

use std::{
    collections::{BTreeMap, HashMap, HashSet, VecDeque},
    time::Duration,
};

use anyhow::Result;
use futures::{StreamExt as _, future::BoxFuture, stream::BoxStream};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::{
    coordination::v1::Lease,
    core::v1::{Node, Pod},
};
use kube::{
    Api, Client,
    runtime::{WatchStreamExt as _, watcher},
};
use tokio::{sync::mpsc::UnboundedSender, task::JoinSet};
use tokio_util::sync::CancellationToken;

use super::{
    deadlines::Deadlines,
    io::{self, Outcome},
    kubelet::Timing,
    probes::NodeProber,
};
use crate::api::{ContainerRecreateRequest, NodePodProbe};

/// How many API requests the simulator keeps in flight.
const MAX_IN_FLIGHT: usize = 32;

/// What the simulator runs.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Simulated nodes to register: `sim-node-0` .. `sim-node-{n-1}`.
    pub nodes: usize,
    pub timing: Timing,
    /// How old the Ready heartbeat in a node's status may get before it is posted again (a
    /// changed condition is posted at once).
    pub heartbeat: Duration,
    /// How often each node's Lease in kube-node-lease is renewed (the kubelet's 10 s).
    pub lease_renew: Duration,
    /// The Kruise release whose kruise-daemon the nodes run (its CRR kill detection differs).
    pub kruise_version: crate::kruise::KruiseVersion,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            nodes: 3,
            timing: Timing::default(),
            heartbeat: Duration::from_secs(40),
            lease_renew: Duration::from_secs(10),
            kruise_version: crate::kruise::KruiseVersion::V1_9,
        }
    }
}

/// A pod's `namespace/name`.
type PodKey = String;

/// One unit of the simulator's work.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Work {
    /// Schedule the pod, or run its kubelet.
    Pod(PodKey),
    /// Work on the pod's ContainerRecreateRequests (the daemon's side).
    Crrs(PodKey),
    /// Run the probes of the node's NodePodProbe.
    Probes(String),
}

fn key_of(pod: &Pod) -> PodKey {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Registers the nodes, then simulates until `shutdown` is cancelled.
pub async fn run(client: Client, opts: SimOptions, shutdown: CancellationToken) -> Result<()> {
    let mut registered = Vec::with_capacity(opts.nodes);
    for index in 0..opts.nodes {
        registered.push(io::register_node(&client, index).await?);
    }
    let (seen_tx, seen_rx) = tokio::sync::mpsc::unbounded_channel();
    let beats = tokio::spawn(liveness::run(
        client.clone(),
        registered,
        liveness::Every {
            lease: opts.lease_renew,
            status: opts.heartbeat,
        },
        seen_rx,
        shutdown.clone(),
    ));
    let mut sim = Sim::new(client.clone(), opts.timing.clone(), seen_tx);
    sim.kruise_version = opts.kruise_version;
    let mut sources: Vec<BoxStream<'static, StreamItem>> = vec![
        watch::<Pod>(&client, None).map(StreamItem::Pod).boxed(),
        watch::<Node>(&client, None).map(StreamItem::Node).boxed(),
    ];
    let served = io::kruise_daemon_kinds(&client).await;
    if served.crrs {
        // Upstream's daemon lists only active CRRs: completed ones drop out of the watch.
        let active = Some(format!("{}=true", crate::kruise::crr::ACTIVE_KEY));
        sources.push(
            watch::<ContainerRecreateRequest>(&client, active)
                .map(StreamItem::Crr)
                .boxed(),
        );
    }
    if served.node_probes {
        sources.push(
            watch::<NodePodProbe>(&client, None)
                .map(StreamItem::NodeProbe)
                .boxed(),
        );
    }
    if !served.crrs || !served.node_probes {
        tracing::info!(
            "sim-nodes: the server does not serve ContainerRecreateRequests and NodePodProbes \
             (apps.kruise.io/v1alpha1); the simulated daemon leaves them alone"
        );
    }
    // A real kube-scheduler (its Lease in kube-system renewed recently) binds pods itself: two
    // schedulers would bind the same pods and fight. Its Lease is watched, not polled.
    sources.push(
        scheduler_lease_watch(&client)
            .map(StreamItem::SchedulerLease)
            .boxed(),
    );
    let mut streams = futures::stream::select_all(sources);
    loop {
        sim.pump();
        let sleep = sim.sleep_for();
        tokio::select! {
            () = shutdown.cancelled() => break,
            item = streams.next() => match item {
                Some(item) => sim.on_stream(item),
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

/// A cluster-wide watch of `K` (with an optional label selector), managedFields dropped.
fn watch<K>(
    client: &Client,
    labels: Option<String>,
) -> BoxStream<'static, Box<Result<watcher::Event<K>, watcher::Error>>>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + 'static,
{
    let mut config = watcher::Config::default();
    if let Some(labels) = labels {
        config = config.labels(&labels);
    }
    // What the simulator never reads goes, to keep 10,000 cached pods small.
    watcher(Api::<K>::all(client.clone()), config)
        .default_backoff()
        .modify(|o: &mut K| o.meta_mut().managed_fields = None)
        .map(Box::new)
        .boxed()
}

/// The Lease kube-scheduler renews while it leads (`kube-system/kube-scheduler`).
pub const SCHEDULER_LEASE: (&str, &str) = ("kube-system", "kube-scheduler");

fn scheduler_lease_watch(client: &Client) -> BoxStream<'static, Event<Lease>> {
    let config = watcher::Config::default().fields(&format!("metadata.name={}", SCHEDULER_LEASE.1));
    watcher(
        Api::<Lease>::namespaced(client.clone(), SCHEDULER_LEASE.0),
        config,
    )
    .default_backoff()
    .map(Box::new)
    .boxed()
}

type Event<K> = Box<Result<watcher::Event<K>, watcher::Error>>;

enum StreamItem {
    Pod(Event<Pod>),
    Node(Event<Node>),
    Crr(Event<ContainerRecreateRequest>),
    NodeProbe(Event<NodePodProbe>),
    SchedulerLease(Event<Lease>),
}

/// The loop's state: caches, the deadline queue, the dirty queue and the requests in flight.
struct Sim {
    client: Client,
    timing: Timing,
    kruise_version: crate::kruise::KruiseVersion,
    pods: HashMap<PodKey, Pod>,
    pod_init: Option<HashMap<PodKey, Pod>>,
    /// Which node each cached pod is on (or is being bound to), and the pods per node.
    placement: HashMap<PodKey, String>,
    load: HashMap<String, usize>,
    sim_nodes: HashMap<String, Node>,
    foreign_nodes: HashSet<String>,
    node_init: Option<HashMap<String, Node>>,
    /// The active CRRs by the pod they name, then by CRR name.
    crrs: HashMap<PodKey, BTreeMap<String, ContainerRecreateRequest>>,
    crr_init: Option<Vec<ContainerRecreateRequest>>,
    /// NodePodProbes by name (= node name), and the probe workers of each simulated node.
    node_probes: HashMap<String, NodePodProbe>,
    node_probe_init: Option<HashMap<String, NodePodProbe>>,
    probers: HashMap<String, NodeProber>,
    deadlines: Deadlines<Work>,
    dirty: VecDeque<Work>,
    dirty_set: HashSet<Work>,
    in_flight: HashSet<Work>,
    redo: HashSet<Work>,
    requests: JoinSet<(Work, Result<Outcome>)>,
    use_binding: bool,
    /// The kube-scheduler's Lease, when the cluster has one.
    scheduler_lease: Option<Lease>,
    /// Whether the last look found a real scheduler binding pods (for saying so once).
    deferring: bool,
    /// Where the simulated Nodes the watch brings go: the liveness task answers a condition
    /// someone else changed.
    liveness: UnboundedSender<Node>,
}

impl Sim {
    fn new(client: Client, timing: Timing, liveness: UnboundedSender<Node>) -> Self {
        Self {
            client,
            timing,
            kruise_version: crate::kruise::KruiseVersion::V1_9,
            pods: HashMap::new(),
            pod_init: None,
            placement: HashMap::new(),
            load: HashMap::new(),
            sim_nodes: HashMap::new(),
            foreign_nodes: HashSet::new(),
            node_init: None,
            crrs: HashMap::new(),
            crr_init: None,
            node_probes: HashMap::new(),
            node_probe_init: None,
            probers: HashMap::new(),
            deadlines: Deadlines::default(),
            dirty: VecDeque::new(),
            dirty_set: HashSet::new(),
            in_flight: HashSet::new(),
            redo: HashSet::new(),
            requests: JoinSet::new(),
            use_binding: true,
            scheduler_lease: None,
            deferring: false,
            liveness,
        }
    }

    fn on_stream(&mut self, item: StreamItem) {
        match item {
            StreamItem::Pod(event) => match *event {
                Ok(event) => self.on_pod_event(event),
                Err(err) => tracing::warn!(
                    "sim-nodes: pod watch error (retrying): {}",
                    kruise_client::errors::watcher_text(&err)
                ),
            },
            StreamItem::Node(event) => match *event {
                Ok(event) => self.on_node_event(event),
                Err(err) => tracing::warn!(
                    "sim-nodes: node watch error (retrying): {}",
                    kruise_client::errors::watcher_text(&err)
                ),
            },
            StreamItem::Crr(event) => match *event {
                Ok(event) => self.on_crr_event(event),
                Err(err) => tracing::warn!(
                    "sim-nodes: CRR watch error (retrying): {}",
                    kruise_client::errors::watcher_text(&err)
                ),
            },
            StreamItem::SchedulerLease(event) => match *event {
                Ok(watcher::Event::Apply(lease) | watcher::Event::InitApply(lease)) => {
                    self.scheduler_lease = Some(lease);
                }
                Ok(watcher::Event::Delete(_) | watcher::Event::Init) => {
                    self.scheduler_lease = None;
                }
                Ok(watcher::Event::InitDone) => {}
                Err(err) => tracing::debug!(
                    "sim-nodes: kube-scheduler Lease watch error (retrying): {}",
                    kruise_client::errors::watcher_text(&err)
                ),
            },
            StreamItem::NodeProbe(event) => match *event {
                Ok(event) => self.on_node_probe_event(event),
                Err(err) => {
                    tracing::warn!(
                        "sim-nodes: NodePodProbe watch error (retrying): {}",
                        kruise_client::errors::watcher_text(&err)
                    );
                }
            },
        }
    }

    fn mark(&mut self, key: Work) {
        if self.in_flight.contains(&key) {
            self.redo.insert(key);
        } else if self.dirty_set.insert(key.clone()) {
            self.dirty.push_back(key);
        }
    }

    fn place(&mut self, key: &PodKey, node: Option<String>) {
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

    /// Our scheduler places pods only while every node is simulated and no kube-scheduler runs:
    /// otherwise the real scheduler does it (and may place pods on our nodes, which we then run).
    fn schedules(&mut self) -> bool {
        let holder = self
            .scheduler_lease
            .as_ref()
            .and_then(|l| kruise_client::lease::fresh_holder(l, Timestamp::now()));
        if holder.is_some() != self.deferring {
            self.deferring = holder.is_some();
            match &holder {
                Some(h) => eprintln!(
                    "sim-nodes: a kube-scheduler is running (Lease {}/{} held by {h}); leaving \
                     binding to it",
                    SCHEDULER_LEASE.0, SCHEDULER_LEASE.1
                ),
                None => eprintln!("sim-nodes: no kube-scheduler is running; binding pods"),
            }
        }
        holder.is_none() && self.foreign_nodes.is_empty() && !self.sim_nodes.is_empty()
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

    fn on_done(&mut self, key: Work, result: Result<Outcome>) {
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

    /// Looks at dirty keys until the request budget is used up.
    fn pump(&mut self) {
        let now = Timestamp::now();
        while self.requests.len() < MAX_IN_FLIGHT {
            let Some(key) = self.dirty.pop_front() else {
                break;
            };
            self.dirty_set.remove(&key);
            let request = match &key {
                Work::Pod(pod) => self.decide_pod(pod, now),
                Work::Crrs(pod) => self.decide_crrs(pod, now),
                Work::Probes(node) => self.decide_probes(node, now),
            };
            if let Some(request) = request {
                self.in_flight.insert(key.clone());
                self.requests.spawn(async move { (key, request.await) });
            }
        }
    }
}

/// A request the loop runs for one key.
type Request = BoxFuture<'static, Result<Outcome>>;

fn node_ip(node: &Node) -> String {
    node.status
        .as_ref()
        .and_then(|s| s.addresses.as_ref())
        .and_then(|a| a.iter().find(|a| a.type_ == "InternalIP"))
        .map(|a| a.address.clone())
        .unwrap_or_else(|| "10.240.0.1".to_owned())
}
