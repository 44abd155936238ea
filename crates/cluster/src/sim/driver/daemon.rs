//! The simulated kruise-daemon side of the loop: the CRR and NodePodProbe caches, container
//! recreation (`recreate`) and probes (`probes`) on the simulated nodes.

use std::collections::HashMap;

use jiff::Timestamp;
use kube::runtime::watcher;

use super::{PodKey, Request, Sim, Work};
use crate::{
    api::{ContainerRecreateRequest, NodePodProbe},
    kruise::crr::NODE_NAME_KEY,
    sim::{
        io::{self, Outcome},
        recreate,
    },
};

/// The pod a CRR names, as a cache key.
fn pod_key_of(crr: &ContainerRecreateRequest) -> PodKey {
    format!(
        "{}/{}",
        crr.metadata.namespace.as_deref().unwrap_or_default(),
        crr.spec.pod_name
    )
}

impl Sim {
    pub(super) fn on_crr_event(&mut self, event: watcher::Event<ContainerRecreateRequest>) {
        match event {
            watcher::Event::Init => self.crr_init = Some(Vec::new()),
            watcher::Event::InitApply(crr) => {
                if let Some(init) = self.crr_init.as_mut() {
                    init.push(crr);
                }
            }
            watcher::Event::InitDone => {
                let mut keys: Vec<PodKey> = self.crrs.keys().cloned().collect();
                self.crrs.clear();
                for crr in self.crr_init.take().unwrap_or_default() {
                    keys.push(pod_key_of(&crr));
                    self.store_crr(crr);
                }
                for key in keys {
                    self.mark(Work::Crrs(key));
                }
            }
            watcher::Event::Apply(crr) => {
                let key = pod_key_of(&crr);
                self.store_crr(crr);
                self.mark(Work::Crrs(key));
            }
            watcher::Event::Delete(crr) => {
                let key = pod_key_of(&crr);
                let name = crr.metadata.name.clone().unwrap_or_default();
                if let Some(of_pod) = self.crrs.get_mut(&key) {
                    of_pod.remove(&name);
                    if of_pod.is_empty() {
                        self.crrs.remove(&key);
                    }
                }
                self.mark(Work::Crrs(key));
            }
        }
    }

    fn store_crr(&mut self, crr: ContainerRecreateRequest) {
        let name = crr.metadata.name.clone().unwrap_or_default();
        self.crrs
            .entry(pod_key_of(&crr))
            .or_default()
            .insert(name, crr);
    }

    pub(super) fn on_node_probe_event(&mut self, event: watcher::Event<NodePodProbe>) {
        match event {
            watcher::Event::Init => self.node_probe_init = Some(HashMap::new()),
            watcher::Event::InitApply(npp) => {
                if let (Some(init), Some(name)) =
                    (self.node_probe_init.as_mut(), npp.metadata.name.clone())
                {
                    init.insert(name, npp);
                }
            }
            watcher::Event::InitDone => {
                let fresh = self.node_probe_init.take().unwrap_or_default();
                let gone: Vec<String> = self
                    .node_probes
                    .keys()
                    .filter(|k| !fresh.contains_key(*k))
                    .cloned()
                    .collect();
                for name in gone {
                    self.forget_node_probe(&name);
                }
                let names: Vec<String> = fresh.keys().cloned().collect();
                self.node_probes = fresh;
                for name in names {
                    self.mark(Work::Probes(name));
                }
            }
            watcher::Event::Apply(npp) => {
                let Some(name) = npp.metadata.name.clone() else {
                    return;
                };
                self.node_probes.insert(name.clone(), npp);
                self.mark(Work::Probes(name));
            }
            watcher::Event::Delete(npp) => {
                if let Some(name) = npp.metadata.name {
                    self.forget_node_probe(&name);
                }
            }
        }
    }

    fn forget_node_probe(&mut self, name: &str) {
        self.node_probes.remove(name);
        self.probers.remove(name);
        self.deadlines.set(&Work::Probes(name.to_owned()), None);
    }

    /// Marks all daemon work (the set of simulated nodes changed).
    pub(super) fn mark_daemon_work(&mut self) {
        let crrs: Vec<PodKey> = self.crrs.keys().cloned().collect();
        for key in crrs {
            self.mark(Work::Crrs(key));
        }
        let probes: Vec<String> = self.node_probes.keys().cloned().collect();
        for name in probes {
            self.mark(Work::Probes(name));
        }
    }

    /// The requests the CRRs of one pod on a simulated node need now (and their timer).
    pub(super) fn decide_crrs(&mut self, key: &PodKey, now: Timestamp) -> Option<Request> {
        let crrs: Vec<ContainerRecreateRequest> = self
            .crrs
            .get(key)
            .into_iter()
            .flat_map(|of_pod| of_pod.values())
            .filter(|c| {
                c.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(NODE_NAME_KEY))
                    .is_some_and(|node| self.sim_nodes.contains_key(node))
            })
            .cloned()
            .collect();
        let work = Work::Crrs(key.clone());
        if crrs.is_empty() {
            self.deadlines.set(&work, None);
            return None;
        }
        let pod = self.pods.get(key).cloned();
        let plan = recreate::plan(self.kruise_version, &crrs, pod.as_ref(), now);
        self.deadlines.set(&work, plan.wake_at);
        if plan.phases.is_empty()
            && plan.kill.is_none()
            && plan.states.is_none()
            && plan.complete.is_none()
        {
            return None;
        }
        let client = self.client.clone();
        let ns = crrs[0].metadata.namespace.clone().unwrap_or_default();
        let node = crrs[0]
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(NODE_NAME_KEY))
            .cloned();
        Some(Box::pin(async move {
            for crr in &plan.phases {
                if io::write_crr_status(&client, crr).await? == Outcome::Stale {
                    return Ok(Outcome::Stale);
                }
            }
            if let (Some(kill), Some(pod)) = (&plan.kill, &pod) {
                if io::write_status(&client, pod, kill.status.clone()).await? == Outcome::Stale {
                    return Ok(Outcome::Stale);
                }
                io::post_events(
                    &client,
                    pod,
                    std::slice::from_ref(&kill.event),
                    node.as_deref(),
                )
                .await;
            }
            if let Some((name, states)) = &plan.states
                && io::patch_crr_states(&client, &ns, name, states).await? == Outcome::Stale
            {
                return Ok(Outcome::Stale);
            }
            match &plan.complete {
                Some(crr) => io::write_crr_status(&client, crr).await,
                None => Ok(Outcome::Done),
            }
        }))
    }

    /// The request a simulated node's probes need now (and their timer).
    pub(super) fn decide_probes(&mut self, node: &str, now: Timestamp) -> Option<Request> {
        let work = Work::Probes(node.to_owned());
        let npp = match self.node_probes.get(node) {
            Some(npp) if self.sim_nodes.contains_key(node) => npp.clone(),
            _ => {
                self.probers.remove(node);
                self.deadlines.set(&work, None);
                return None;
            }
        };
        let pods = &self.pods;
        let read = |ns: &str, name: &str| pods.get(&format!("{ns}/{name}")).cloned();
        let pass = self
            .probers
            .entry(node.to_owned())
            .or_default()
            .pass(&npp, &read, now);
        self.deadlines.set(&work, pass.wake_at);
        let events: Vec<_> = pass
            .events
            .into_iter()
            .filter_map(|((ns, name, uid), event)| {
                let pod = self.pods.get(&format!("{ns}/{name}"))?;
                (pod.metadata.uid.as_deref() == Some(uid.as_str())).then(|| (pod.clone(), event))
            })
            .collect();
        if pass.status.is_none() && events.is_empty() {
            return None;
        }
        let client = self.client.clone();
        let node = node.to_owned();
        Some(Box::pin(async move {
            let outcome = match pass.status {
                Some(status) => {
                    let mut written = npp;
                    written.status = Some(status);
                    io::write_node_probe_status(&client, &written).await
                }
                None => Ok(Outcome::Done),
            };
            for (pod, event) in &events {
                io::post_events(&client, pod, std::slice::from_ref(event), Some(&node)).await;
            }
            outcome
        }))
    }
}
