//! The CloneSet controller on the copy: what src/controllers/cloneset.rs does around
//! `kruise::cloneset::reconcile` (settle the revisions, reconcile, apply the writes, status,
//! `podsToDelete`, pruning), with the writes applied in memory.

use std::collections::BTreeMap;

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{PersistentVolumeClaim, Pod},
};
use serde_json::Value;

use super::{
    Counts, Settings, Stop,
    world::{self, Controller, Pods, Round},
};
use crate::{
    api::CloneSet,
    kruise::cloneset::reconcile::{self, Input, PodOp, Why, pods, revisions},
};

pub struct Sim {
    version: String,
    cs: CloneSet,
    uid: String,
    revisions: Vec<ControllerRevision>,
    pvcs: Vec<PersistentVolumeClaim>,
    /// The update revision of the last reconcile.
    update: String,
    rng: u64,
}

/// `selector.String()` for the selector's matchLabels (what status.labelSelector shows).
pub fn selector_string(labels: Option<&BTreeMap<String, String>>) -> String {
    labels
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl Sim {
    pub fn new(
        version: &str,
        object: Value,
        revisions: Vec<ControllerRevision>,
    ) -> Result<Self, String> {
        let cs = crate::api::cloneset::from_served_json(version, object)
            .map_err(|e| format!("cannot read the CloneSet: {e}"))?;
        let uid = cs.metadata.uid.clone().unwrap_or_default();
        let update = cs
            .status
            .as_ref()
            .map(|s| s.update_revision.clone())
            .unwrap_or_default();
        Ok(Self {
            version: version.to_owned(),
            cs,
            uid,
            revisions,
            pvcs: Vec::new(),
            update,
            rng: 0x9e37_79b9_7f4a_7c15,
        })
    }
}

impl Controller for Sim {
    fn reconcile(&mut self, pods: &mut Pods, now: i64, settings: &Settings) -> Round {
        let mut round = Round::default();
        let owned = pods.owned(&self.uid);
        let all_pod_names: Vec<String> = owned
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        let mut active: Vec<Pod> = owned.into_iter().filter(pods::is_active).collect();
        active.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));

        let settled = revisions::active_revisions(&self.cs, &self.revisions);
        let (update, current, wrote) = world::store_settled(&mut self.revisions, &settled, now);
        round.wrote |= wrote;
        self.update = update.metadata.name.clone().unwrap_or_default();
        let nodes: Vec<(String, BTreeMap<String, String>)> = pods
            .nodes()
            .iter()
            .map(|n| {
                (
                    n.metadata.name.clone().unwrap_or_default(),
                    n.metadata.labels.clone().unwrap_or_default(),
                )
            })
            .collect();
        let label_selector = selector_string(self.cs.spec.selector.match_labels.as_ref());
        let input = Input {
            cs: &self.cs,
            pods: &active,
            all_pod_names: &all_pod_names,
            pvcs: &self.pvcs,
            revisions: &self.revisions,
            current: &current,
            update: &update,
            collision_count: settled.collision_count,
            label_selector,
            nodes: &nodes,
            gates: &settings.gates,
            version: settings.version,
            now,
        };
        let state = &mut self.rng;
        let mut rng = move || {
            // splitmix64: deterministic instance ids, so a what-if reads the same every time.
            *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let outcome = reconcile::reconcile(&input, &mut rng);
        self.pvcs.extend(outcome.pvcs.iter().cloned());
        for w in &outcome.pods {
            round.wrote = true;
            match &w.op {
                PodOp::Create(pod) => {
                    let name = pods.create((**pod).clone(), now);
                    round.created.push(name);
                }
                PodOp::Update { status, pod } => {
                    pods.update(&w.name, status.as_deref(), pod.as_deref());
                    match w.why {
                        Why::InPlaceUpdate { .. } => round.in_place.push(w.name.clone()),
                        Why::RecreateUpdate { .. } => round.recreated.push(w.name.clone()),
                        _ => {}
                    }
                }
                PodOp::Delete { .. } => {
                    pods.delete(&w.name, now);
                    round.deleted.push(w.name.clone());
                }
            }
        }
        if outcome.status_changed {
            self.cs.status = Some(outcome.status.clone());
            round.wrote = true;
        }
        if let Some(kept) = &outcome.pods_to_delete {
            self.cs
                .spec
                .scale_strategy
                .get_or_insert_with(Default::default)
                .pods_to_delete = kept.clone();
            round.wrote = true;
        }
        if !outcome.delete_revisions.is_empty() {
            self.revisions.retain(|r| {
                !outcome
                    .delete_revisions
                    .iter()
                    .any(|d| r.metadata.name.as_deref() == Some(d.as_str()))
            });
        }
        round.requeue_after = outcome.requeue_after;
        round
    }

    fn counts(&self, pods: &Pods) -> Counts {
        world::counts(
            pods,
            &self.uid,
            &self.update,
            self.cs.spec.replicas.unwrap_or(1),
        )
    }

    fn min_ready_seconds(&self) -> i64 {
        i64::from(self.cs.spec.min_ready_seconds.unwrap_or(0))
    }

    fn why_stopped(&self, pods: &Pods, end: &Counts) -> Stop {
        world::why_stopped(
            pods,
            &self.uid,
            &self.update,
            end,
            self.cs.spec.update_strategy.paused,
        )
    }

    fn snapshot(&self) -> (Value, Vec<ControllerRevision>) {
        let object =
            crate::api::cloneset::to_served_json(&self.version, &self.cs).unwrap_or(Value::Null);
        (object, self.revisions.clone())
    }
}
