//! The pod side of the loop: the pod and node caches, scheduling and the kubelet.

use std::collections::HashMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::runtime::watcher;

use super::{PodKey, Request, Sim, Work, key_of, node_ip};
use crate::sim::{
    events,
    io::{self, Outcome},
    kubelet::{self, PodAction},
    nodes::SIM_NODE_LABEL,
    schedule,
};

/// What a node watch event means for the pods.
enum NodeChange {
    New(String),
    /// Labels, taints or schedulability changed (or the set of foreign nodes).
    Placement,
    StatusOnly,
}

impl Sim {
    pub(super) fn on_pod_event(&mut self, event: watcher::Event<Pod>) {
        match event {
            watcher::Event::Init => self.pod_init = Some(HashMap::new()),
            watcher::Event::InitApply(pod) => {
                if let Some(init) = self.pod_init.as_mut() {
                    init.insert(key_of(&pod), pod);
                }
            }
            watcher::Event::InitDone => {
                let fresh = self.pod_init.take().unwrap_or_default();
                let gone: Vec<PodKey> = self
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
            watcher::Event::Apply(pod) => self.upsert(pod),
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
        if node.is_some() || !self.in_flight.contains(&Work::Pod(key.clone())) {
            self.place(&key, node);
        }
        self.pods.insert(key.clone(), pod);
        self.mark(Work::Pod(key.clone()));
        // The pod is the daemon's runtime: its CRRs may move on.
        if self.crrs.contains_key(&key) {
            self.mark(Work::Crrs(key));
        }
    }

    fn forget(&mut self, key: &PodKey) {
        self.pods.remove(key);
        self.place(key, None);
        self.deadlines.set(&Work::Pod(key.clone()), None);
        if self.crrs.contains_key(key) {
            self.mark(Work::Crrs(key.clone()));
        }
    }

    pub(super) fn on_node_event(&mut self, event: watcher::Event<Node>) {
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
                self.mark_daemon_work();
            }
            watcher::Event::Apply(node) => match self.add_node(node) {
                NodeChange::New(name) => {
                    self.mark_for_nodes(Some(&name), false);
                    self.mark_daemon_work();
                }
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
        // The liveness task ends only with the loop; a send cannot fail before.
        let _ = self.liveness.send(node.clone());
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
        let keys: Vec<PodKey> = self
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
            self.mark(Work::Pod(key));
        }
    }

    /// The request one pod needs now, if any (and its timer).
    pub(super) fn decide_pod(&mut self, key: &PodKey, now: Timestamp) -> Option<Request> {
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
            // The nodes by reference: cloning every node for every pod to place was a twentieth
            // of the server's time while 100,000 pods were created.
            return match schedule::pick_node(&pod, self.sim_nodes.values(), &self.load) {
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
        self.deadlines
            .set(&Work::Pod(key.clone()), decision.wake_at);
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
