//! The Advanced StatefulSet controller on the copy: what src/controllers/statefulset.rs does
//! around `kruise::statefulset::reconcile` (settle the revisions, reconcile, apply the writes in
//! order, status, pruning), with the writes applied in memory.

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{PersistentVolumeClaim, Pod},
};
use serde_json::Value;

use super::{
    Counts, Settings, Stop,
    cloneset::selector_string,
    world::{self, Controller, Pods, Round},
};
use crate::{
    api::StatefulSet,
    kruise::statefulset::reconcile::{self, Input, Op, Why, revisions, spec_of, status},
};

pub struct Sim {
    set: StatefulSet,
    uid: String,
    revisions: Vec<ControllerRevision>,
    claims: Vec<PersistentVolumeClaim>,
    update: String,
}

impl Sim {
    pub fn new(object: Value, revisions: Vec<ControllerRevision>) -> Result<Self, String> {
        let set = crate::api::statefulset::from_served_json("v1beta1", object)
            .map_err(|e| format!("cannot read the Advanced StatefulSet: {e}"))?;
        let uid = set.metadata.uid.clone().unwrap_or_default();
        let update = set
            .status
            .as_ref()
            .map(|s| s.update_revision.clone())
            .unwrap_or_default();
        Ok(Self {
            set,
            uid,
            revisions,
            claims: Vec::new(),
            update,
        })
    }

    /// Whether `pod` keeps its slot (its ordinal is below the replicas): deleting it for an
    /// update recreates it; beyond the replicas a delete is a scale-down.
    fn in_slot(&self, pod: &str) -> bool {
        let name = self.set.metadata.name.as_deref().unwrap_or_default();
        let start = self.set.spec.ordinals.as_ref().map_or(0, |o| o.start);
        pod.strip_prefix(&format!("{name}-"))
            .and_then(|o| o.parse::<i32>().ok())
            .is_some_and(|o| o >= start && o < start + self.set.spec.replicas.unwrap_or(1))
    }
}

impl Controller for Sim {
    fn reconcile(&mut self, pods: &mut Pods, now: i64, settings: &Settings) -> Round {
        let mut round = Round::default();
        let owned: Vec<Pod> = pods.owned(&self.uid);
        let settled = revisions::active_revisions(&self.set, &self.revisions);
        let (update, current, wrote) = world::store_settled(&mut self.revisions, &settled, now);
        round.wrote |= wrote;
        self.update = update.metadata.name.clone().unwrap_or_default();
        let outcome = reconcile::reconcile(&Input {
            set: &self.set,
            pods: &owned,
            claims: &self.claims,
            revisions: &self.revisions,
            current: &current,
            update: &update,
            collision_count: settled.collision_count,
            label_selector: selector_string(self.set.spec.selector.match_labels.as_ref()),
            gates: &settings.gates,
            version: settings.version,
            now,
        });
        for w in &outcome.pods {
            round.wrote = true;
            match &w.op {
                Op::Create { pod, claims } => {
                    self.claims.extend(claims.iter().cloned());
                    let name = pods.create((**pod).clone(), now);
                    round.created.push(name);
                }
                Op::Claims { claims } => self.claims.extend(claims.iter().cloned()),
                Op::Update { status, pod } => {
                    pods.update(&w.name, status.as_deref(), pod.as_deref());
                    if let Why::InPlaceUpdate { .. } = w.why {
                        round.in_place.push(w.name.clone());
                    }
                }
                Op::Delete { .. } => {
                    let outdated = owned.iter().any(|p| {
                        p.metadata.name.as_deref() == Some(w.name.as_str())
                            && !world::is_updated(p, &self.update)
                    });
                    if outdated && self.in_slot(&w.name) {
                        round.recreated.push(w.name.clone());
                    } else {
                        round.deleted.push(w.name.clone());
                    }
                    pods.delete(&w.name, now);
                }
            }
        }
        if status::should_write(self.set.status.as_ref(), &outcome.status) {
            self.set.status = Some(outcome.status.clone());
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
            self.set.spec.replicas.unwrap_or(1),
        )
    }

    fn min_ready_seconds(&self) -> i64 {
        spec_of(&self.set)
            .rolling_update
            .map_or(0, |r| i64::from(r.min_ready_seconds))
    }

    fn why_stopped(&self, pods: &Pods, end: &Counts) -> Stop {
        let paused = spec_of(&self.set).rolling_update.is_some_and(|r| r.paused);
        world::why_stopped(pods, &self.uid, &self.update, end, paused)
    }

    fn snapshot(&self) -> (Value, Vec<ControllerRevision>) {
        let object = serde_json::to_value(&self.set).unwrap_or(Value::Null);
        (object, self.revisions.clone())
    }
}
