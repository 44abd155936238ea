//! One Advanced DaemonSet reconcile (`daemonset_controller.go::syncDaemonSet` after the history
//! is constructed, v1.8.4), pure: the set, its pods, the nodes, its revisions and the clock in,
//! the writes out.
//!
//! `manage` first: a pod for every node that should run one and has none (pinned to the node by
//! a required node affinity; the scheduler binds it), the pods of nodes that should no longer run
//! one deleted, failed and surplus pods deleted. When that wrote anything the reconcile ends
//! there (the next one sees the result). Otherwise in-place updates are refreshed and, unless
//! paused, the rolling update ([`rolling_update_step`]) replaces old pods on the nodes the
//! partition and selector let update, within maxUnavailable or maxSurge, in place where the
//! update type and the diff allow. Then the history is pruned and the status computed.

pub mod history;
pub mod pods;
mod spec;
pub mod status;
#[cfg(test)]
mod tests;
mod writes;

use std::collections::BTreeMap;

use self::spec::lifecycle_of;
pub use self::{
    spec::{
        PROGRESSIVE_CREATE_POD, TEMPLATE_GENERATION_ANNOTATION, burst_replicas,
        partitioned_scaling, spec_of, template_generation,
    },
    writes::{Op, PodWrite, Why},
};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Node, Pod},
    },
    apimachinery::pkg::apis::meta::v1::OwnerReference,
    jiff::Timestamp,
};

use super::{
    DsNode, DsPod, DsSpec, DsUpdateStrategyType, NodeToPods, RollingUpdateType,
    find_updated_pods_on_node, node_should_run_daemon_pod, nodes_that_should_run,
    rolling_update_step,
};
use crate::{
    api::{DaemonSet, daemonset::DaemonSetStatus},
    kruise::{
        KruiseVersion,
        cloneset::{
            inplace::{self, PodModel},
            lifecycle::{self, Lifecycle},
            reconcile::{
                pods::{changes, pod_model},
                revisions::revision_templates,
            },
            state,
        },
        events::EventRecord,
        intstr, selector,
        statefulset::reconcile::inplace::{set_lifecycle, start_update_keeping_lifecycle},
    },
};

/// The controller ownerReference an Advanced DaemonSet puts on its pods and revisions.
pub fn owner_reference(ds: &DaemonSet) -> Option<OwnerReference> {
    Some(OwnerReference {
        api_version: "apps.kruise.io/v1alpha1".to_owned(),
        kind: "DaemonSet".to_owned(),
        name: ds.metadata.name.clone()?,
        uid: ds.metadata.uid.clone()?,
        controller: Some(true),
        block_owner_deletion: Some(true),
    })
}

/// Everything one reconcile reads.
pub struct Input<'a> {
    pub ds: &'a DaemonSet,
    /// Every pod the set controls, terminating ones included.
    pub pods: &'a [Pod],
    pub nodes: &'a [Node],
    /// The current revision (its hash label is the pods' hash).
    pub cur: &'a ControllerRevision,
    pub old: &'a [ControllerRevision],
    /// The clock, unix seconds.
    pub now: i64,
    /// Whose rules: v1.9.0 takes a percent partition.
    pub version: KruiseVersion,
}

/// What one reconcile writes: pods (creations first), the status, pruned revisions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub pods: Vec<PodWrite>,
    pub status: Option<DaemonSetStatus>,
    pub delete_revisions: Vec<String>,
    pub events: Vec<EventRecord>,
    pub requeue_after: Option<i64>,
    pub errors: Vec<String>,
}

impl Outcome {
    fn requeue(&mut self, secs: Option<i64>) {
        if let Some(secs) = secs.filter(|s| *s > 0) {
            self.requeue_after = Some(self.requeue_after.map_or(secs, |r| r.min(secs)));
        }
    }
}

/// One reconcile.
pub fn reconcile(input: &Input<'_>) -> Outcome {
    let ds = input.ds;
    let mut out = Outcome::default();
    if selector::is_empty(&ds.spec.selector) {
        out.events.push(EventRecord::warning(
            "SelectingAll",
            "This DaemonSet is selecting all pods. A non-empty selector is required.",
        ));
        return out;
    }
    let now = Timestamp::from_second(input.now).unwrap_or(Timestamp::UNIX_EPOCH);
    let hash = history::hash_of(input.cur);
    let generation = template_generation(ds);
    let mut by_node: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
    for pod in input.pods {
        if let Some(node) = pods::target_node(pod) {
            by_node.entry(node).or_default().push(pod);
        }
    }
    let run = Run {
        input,
        spec: spec_of(ds),
        lifecycle: lifecycle_of(ds),
        hash,
        generation,
        now,
    };
    let deleting = ds.metadata.deletion_timestamp.is_some();
    let full = !deleting && run.sync(&by_node, &mut out);
    if !deleting {
        let (st, requeue) =
            status::calculate(ds, input.nodes, &by_node, hash, generation, full, now);
        out.requeue(requeue);
        if status::should_write(ds, &st) {
            out.status = Some(st);
        }
    }
    out
}

struct Run<'a> {
    input: &'a Input<'a>,
    spec: DsSpec,
    lifecycle: Option<Lifecycle>,
    hash: &'a str,
    generation: Option<i64>,
    now: Timestamp,
}

impl Run<'_> {
    /// manage, then (when manage wrote nothing) refresh, the rolling update and the history.
    /// Returns whether it was a full sync.
    fn sync(&self, by_node: &BTreeMap<String, Vec<&Pod>>, out: &mut Outcome) -> bool {
        let ds = self.input.ds;
        let (creates, deletes) = self.manage(by_node, out);
        self.sync_nodes(&deletes, &creates, out);
        if !out.pods.is_empty() {
            return false;
        }
        // refreshUpdateStates.
        for pod in self.input.pods {
            let mut model = pod_model(pod);
            match inplace::refresh(&mut model, self.now.as_second()) {
                Ok(delay) => out.requeue(delay),
                Err(e) => {
                    out.errors.push(format!("pod {}: {e}", model.name));
                    return false;
                }
            }
            push_model(pod, &model, Why::Refresh, out);
        }
        if !out.pods.is_empty() {
            // The refreshed pods come back through the watch before pods are replaced.
            return false;
        }
        let paused = self.spec.rolling_update.as_ref().is_some_and(|r| r.paused);
        if !paused && self.spec.update_strategy_type == DsUpdateStrategyType::RollingUpdate {
            self.rolling_update(by_node, out);
        }
        out.delete_revisions = history::cleanup_history(ds, self.input.old, self.input.pods);
        out.errors.is_empty()
    }

    /// Port of `manage` and `podsShouldBeOnNode`: the nodes that need a pod, the pods to delete.
    fn manage(
        &self,
        by_node: &BTreeMap<String, Vec<&Pod>>,
        out: &mut Outcome,
    ) -> (Vec<String>, Vec<String>) {
        let ds = self.input.ds;
        let template = ds.spec.template.spec.clone().unwrap_or_default();
        let min_ready = self.spec.min_ready_seconds;
        let surge = self
            .spec
            .rolling_update
            .as_ref()
            .and_then(|r| r.max_surge.as_ref())
            .filter(|_| self.spec.update_strategy_type == DsUpdateStrategyType::RollingUpdate)
            .and_then(|v| intstr::scaled_value_apimachinery(v, 1, true).ok())
            .is_some_and(|s| s > 0);
        let (mut needing, mut deletes) = (Vec::new(), Vec::new());
        let (mut desired, mut new_pods) = (0, 0);
        let mut nodes: Vec<&Node> = self.input.nodes.iter().collect();
        nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        for node in &nodes {
            let name = node.metadata.name.clone().unwrap_or_default();
            let fit = node_should_run_daemon_pod(&template, node);
            let pods = by_node.get(&name);
            if fit.should_run {
                desired += 1;
            }
            let ds_pods: Vec<DsPod> = pods
                .into_iter()
                .flatten()
                .map(|p| DsPod::from_pod(p, self.now))
                .collect();
            if let Some((Some(_), _)) = find_updated_pods_on_node(&self.spec, &ds_pods, self.hash) {
                new_pods += 1;
            }
            match pods {
                None if fit.should_run => needing.push(name.clone()),
                Some(pods) if fit.should_continue_running => {
                    let mut running: Vec<&Pod> = Vec::new();
                    for pod in pods.iter().copied() {
                        if pod.metadata.deletion_timestamp.is_some() {
                            continue;
                        }
                        let pod_name = pod.metadata.name.clone().unwrap_or_default();
                        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
                        if phase == Some("Failed") {
                            out.events.push(EventRecord::warning(
                                "FailedDaemonPod",
                                format!(
                                    "Found failed daemon pod {}/{pod_name} on node {name}, will try to kill it",
                                    pod.metadata.namespace.as_deref().unwrap_or_default()
                                ),
                            ));
                            deletes.push(pod_name);
                        } else if DsPod::from_pod(pod, self.now).is_pre_deleting() {
                            deletes.push(pod_name);
                        } else {
                            running.push(pod);
                        }
                    }
                    running.sort_by(|a, b| pods::oldest_first(a, b));
                    if !surge {
                        deletes.extend(
                            running
                                .iter()
                                .skip(1)
                                .filter_map(|p| p.metadata.name.clone()),
                        );
                        continue;
                    }
                    if running.is_empty() {
                        if fit.should_run {
                            needing.push(name.clone());
                        }
                        continue;
                    }
                    // With surge: keep the oldest new and the oldest old pod, replace the old one
                    // once the new one is available.
                    let (mut oldest_new, mut oldest_old) = (None, None);
                    for pod in &running {
                        let is_new = pod
                            .metadata
                            .labels
                            .as_ref()
                            .and_then(|l| l.get(super::HASH_LABEL))
                            .is_some_and(|h| h == self.hash);
                        let slot = if is_new {
                            &mut oldest_new
                        } else {
                            &mut oldest_old
                        };
                        if slot.is_none() {
                            *slot = Some(*pod);
                        } else {
                            deletes.extend(pod.metadata.name.clone());
                        }
                    }
                    if let (Some(new), Some(old)) = (oldest_new, oldest_old) {
                        let ready = |p: &Pod| DsPod::from_pod(p, self.now).ready;
                        if !ready(old) || status::is_available(new, min_ready, self.now) {
                            deletes.extend(old.metadata.name.clone());
                        } else if ready(new) && min_ready > 0 {
                            out.requeue(Some(i64::from(min_ready)));
                        }
                    }
                }
                Some(pods) if !fit.should_continue_running => {
                    deletes.extend(
                        pods.iter()
                            .filter(|p| p.metadata.deletion_timestamp.is_none())
                            .filter_map(|p| p.metadata.name.clone()),
                    );
                }
                _ => {}
            }
        }
        // Unscheduled pods meant for nodes that are gone.
        for (node, pods) in by_node {
            if nodes
                .iter()
                .any(|n| n.metadata.name.as_deref() == Some(node.as_str()))
            {
                continue;
            }
            deletes.extend(
                pods.iter()
                    .filter(|p| {
                        p.spec
                            .as_ref()
                            .and_then(|s| s.node_name.as_deref())
                            .is_none_or(str::is_empty)
                    })
                    .filter_map(|p| p.metadata.name.clone()),
            );
        }
        needing.sort();
        // "This is the first deploy process": with a partition, GetNodesNeedingPods.
        if self.spec.update_strategy_type == DsUpdateStrategyType::RollingUpdate
            && let Some(rolling) = &self.spec.rolling_update
        {
            // v1.9.0 logs a partition that does not resolve and creates as if there were none.
            let partition = super::resolve_partition(
                &rolling.partition,
                self.spec.desired_number_scheduled,
                self.input.version,
            )
            .unwrap_or(0);
            if partition != 0 && partitioned_scaling(ds) {
                // Only up to `desired - new - partition` new pods.
                let partition = partition.clamp(0, desired);
                let max = usize::try_from((desired - new_pods - partition).max(0)).unwrap_or(0);
                needing.truncate(max);
            }
        }
        (needing, deletes)
    }

    /// Port of `syncNodes`: PreDelete hooks park pods instead of deleting them; creations and
    /// deletions are each capped at burstReplicas.
    fn sync_nodes(&self, deletes: &[String], creates: &[String], out: &mut Outcome) {
        let burst = usize::try_from(burst_replicas(self.input.ds)).unwrap_or(0);
        let in_place = self.spec.update_strategy_type == DsUpdateStrategyType::RollingUpdate
            && self
                .spec
                .rolling_update
                .as_ref()
                .is_some_and(|r| r.rolling_update_type == RollingUpdateType::InPlaceIfPossible);
        for node in creates.iter().take(burst) {
            let pod = pods::new_pod(self.input.ds, self.hash, self.generation, in_place, node);
            out.pods.push(PodWrite {
                name: String::new(),
                op: Op::Create {
                    node: node.clone(),
                    pod: Box::new(pod),
                },
                why: Why::Create,
            });
        }
        let hook = self.lifecycle.as_ref().and_then(|l| l.pre_delete.as_ref());
        let mut deleted = 0;
        for name in deletes {
            let Some(pod) = self
                .input
                .pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some(name.as_str()))
            else {
                continue;
            };
            let mut model = pod_model(pod);
            if lifecycle::is_pod_hooked(hook, &model.labels, &model.finalizers) {
                let mark = hook.is_some_and(|h| h.mark_pod_not_ready);
                set_lifecycle(
                    &mut model,
                    state::PREPARING_DELETE,
                    mark,
                    self.now.as_second(),
                );
                push_model(pod, &model, Why::Refresh, out);
                continue;
            }
            if deleted >= burst {
                continue;
            }
            deleted += 1;
            out.pods.push(PodWrite {
                name: name.clone(),
                op: Op::Delete {
                    uid: pod.metadata.uid.clone().unwrap_or_default(),
                },
                why: Why::Delete,
            });
        }
    }

    /// Port of `rollingUpdate` on [`rolling_update_step`], with `inPlaceUpdatePods`.
    fn rolling_update(&self, by_node: &BTreeMap<String, Vec<&Pod>>, out: &mut Outcome) {
        let nodes: Vec<DsNode> = self.input.nodes.iter().map(DsNode::from_node).collect();
        let template = self.input.ds.spec.template.spec.clone().unwrap_or_default();
        let should_run = nodes_that_should_run(&template, self.input.nodes);
        let node_to_pods: NodeToPods = by_node
            .iter()
            .map(|(n, pods)| {
                (
                    n.clone(),
                    pods.iter().map(|p| DsPod::from_pod(p, self.now)).collect(),
                )
            })
            .collect();
        // Templates by hash: the in-place decision compares the old revision with the current.
        let revs: Vec<ControllerRevision> = self
            .input
            .old
            .iter()
            .chain(std::iter::once(self.input.cur))
            .cloned()
            .collect();
        let templates: BTreeMap<String, inplace::RevisionTemplate> =
            revision_templates(&revs, self.input.cur)
                .into_iter()
                .zip(revs.iter().chain(std::iter::once(self.input.cur)))
                .map(|(mut t, r)| {
                    t.name = history::hash_of(r).to_owned();
                    (t.name.clone(), t)
                })
                .collect();
        let target = templates.get(self.hash).cloned().unwrap_or_default();
        let pod_of = |name: &str| {
            self.input
                .pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some(name))
        };
        let spec_for = |p: &DsPod| {
            let gated = pod_of(&p.name)
                .and_then(|p| p.spec.as_ref())
                .and_then(|s| s.readiness_gates.as_ref())
                .is_some_and(|g| {
                    g.iter()
                        .any(|g| g.condition_type == inplace::IN_PLACE_UPDATE_READY)
                });
            let old = templates
                .iter()
                .find(|(h, _)| crate::kruise::revision::equal_to_revision_hash(&p.hash, h))
                .map(|(_, t)| t);
            gated
                .then(|| inplace::calculate_spec(old, &target, 0))
                .flatten()
        };
        let step = match rolling_update_step(
            &self.spec,
            self.hash,
            &nodes,
            &should_run,
            &node_to_pods,
            &|p| spec_for(p).is_some(),
            self.input.version,
        ) {
            Ok(step) => step,
            Err(e) => {
                out.errors
                    .push(format!("couldn't get unavailable numbers: {e}"));
                return;
            }
        };
        let cur_name = self.input.cur.metadata.name.clone().unwrap_or_default();
        let mut deletes = step.pods_to_delete.clone();
        for name in &step.pods_in_place {
            let Some(pod) = pod_of(name) else { continue };
            let Some(spec) = spec_for(&DsPod::from_pod(pod, self.now)) else {
                deletes.push(name.clone());
                continue;
            };
            let mut model: PodModel = pod_model(pod);
            start_update_keeping_lifecycle(&mut model, &spec, self.now.as_second());
            push_model(
                pod,
                &model,
                Why::InPlaceUpdate {
                    revision: cur_name.clone(),
                },
                out,
            );
        }
        self.sync_nodes(&deletes, &step.nodes_to_create, out);
    }
}

fn push_model(pod: &Pod, model: &PodModel, why: Why, out: &mut Outcome) {
    let c = changes(pod, model);
    if c.is_empty() {
        return;
    }
    out.pods.push(PodWrite {
        name: model.name.clone(),
        op: Op::Update {
            status: c.status.map(Box::new),
            pod: c.pod.map(Box::new),
        },
        why,
    });
}
