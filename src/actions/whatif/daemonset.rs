//! The Advanced DaemonSet controller on the copy: what src/controllers/daemonset.rs does around
//! `kruise::daemonset::reconcile` (construct the history, reconcile, apply the writes, status,
//! pruning), with the writes applied in memory.

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::apis::meta::v1::Time,
};
use serde_json::Value;

use super::{
    Counts, Settings, Stop,
    world::{self, Controller, Pods, Round},
};
use crate::{
    api::DaemonSet,
    kruise::daemonset::{
        HASH_LABEL,
        reconcile::{self, Input, Op, Why, history, spec_of},
    },
};

pub struct Sim {
    ds: DaemonSet,
    uid: String,
    revisions: Vec<ControllerRevision>,
    /// The current revision's hash (the pods' label) after the last reconcile.
    hash: String,
}

impl Sim {
    pub fn new(object: Value, revisions: Vec<ControllerRevision>) -> Result<Self, String> {
        let ds: DaemonSet = crate::api::daemonset::from_any_served_json(object)
            .map_err(|e| format!("cannot read the Advanced DaemonSet: {e}"))?;
        let uid = ds.metadata.uid.clone().unwrap_or_default();
        let hash = history::template_hash(&ds, ds.status.as_ref().and_then(|s| s.collision_count));
        Ok(Self {
            ds,
            uid,
            revisions,
            hash,
        })
    }

    /// `constructHistory`'s writes, in memory: the current revision and the old ones.
    fn history(
        &mut self,
        pods: &mut Pods,
        owned: &[Pod],
        now: i64,
        round: &mut Round,
    ) -> (ControllerRevision, Vec<ControllerRevision>) {
        let h = history::construct_history(&self.ds, &self.revisions, owned);
        for rev in &h.relabel {
            if let Some(r) = self
                .revisions
                .iter_mut()
                .find(|r| r.metadata.name == rev.metadata.name)
            {
                *r = rev.clone();
            }
        }
        for (pod, hash) in &h.relabel_pods {
            if let Some(p) = pods
                .all
                .iter_mut()
                .find(|p| p.metadata.name.as_deref() == Some(pod.as_str()))
            {
                p.metadata
                    .labels
                    .get_or_insert_with(Default::default)
                    .insert(HASH_LABEL.to_owned(), hash.clone());
            }
        }
        self.revisions.retain(|r| {
            !h.dedup
                .iter()
                .any(|d| r.metadata.name.as_deref() == Some(d))
        });
        let cur = match (h.create, h.cur) {
            (Some(mut new), _) => {
                new.metadata.uid = Some(format!("whatif-rev-{}", self.revisions.len() + 1));
                new.metadata.creation_timestamp = Some(Time(
                    jiff::Timestamp::from_second(now).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
                ));
                self.revisions.push(new.clone());
                round.wrote = true;
                new
            }
            (None, Some(cur)) => {
                if h.renumber {
                    if let Some(r) = self
                        .revisions
                        .iter_mut()
                        .find(|r| r.metadata.name == cur.metadata.name)
                    {
                        *r = cur.clone();
                    }
                    round.wrote = true;
                }
                cur
            }
            // constructHistory always yields one; an empty history has nothing to roll.
            (None, None) => history::snapshot(&self.ds, 1),
        };
        (cur, h.old)
    }
}

impl Controller for Sim {
    fn reconcile(&mut self, pods: &mut Pods, now: i64, settings: &Settings) -> Round {
        let mut round = Round::default();
        let owned = pods.owned(&self.uid);
        let (cur, old) = self.history(pods, &owned, now, &mut round);
        let owned = pods.owned(&self.uid);
        self.hash = history::hash_of(&cur).to_owned();
        let nodes = pods.nodes().to_vec();
        let outcome = reconcile::reconcile(&Input {
            ds: &self.ds,
            pods: &owned,
            nodes: &nodes,
            cur: &cur,
            old: &old,
            now,
            version: settings.version,
        });
        for w in &outcome.pods {
            round.wrote = true;
            match &w.op {
                Op::Create { pod, .. } => {
                    let name = pods.create((**pod).clone(), now);
                    round.created.push(name);
                }
                Op::Update { status, pod } => {
                    pods.update(&w.name, status.as_deref(), pod.as_deref());
                    if let Why::InPlaceUpdate { .. } = w.why {
                        round.in_place.push(w.name.clone());
                    }
                }
                Op::Delete { .. } => {
                    // A daemon pod deleted on an outdated revision is replaced on its node.
                    let outdated = owned.iter().any(|p| {
                        p.metadata.name.as_deref() == Some(w.name.as_str())
                            && !world::is_updated(p, &self.hash)
                    });
                    if outdated {
                        round.recreated.push(w.name.clone());
                    } else {
                        round.deleted.push(w.name.clone());
                    }
                    pods.delete(&w.name, now);
                }
            }
        }
        if let Some(status) = &outcome.status {
            self.ds.status = Some(status.clone());
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
        let desired = self
            .ds
            .status
            .as_ref()
            .map_or(0, |s| s.desired_number_scheduled);
        world::counts(pods, &self.uid, &self.hash, desired)
    }

    fn min_ready_seconds(&self) -> i64 {
        i64::from(spec_of(&self.ds).min_ready_seconds)
    }

    fn why_stopped(&self, pods: &Pods, end: &Counts) -> Stop {
        let paused = spec_of(&self.ds).rolling_update.is_some_and(|r| r.paused);
        world::why_stopped(pods, &self.uid, &self.hash, end, paused)
    }

    fn snapshot(&self) -> (Value, Vec<ControllerRevision>) {
        let object = serde_json::to_value(&self.ds).unwrap_or(Value::Null);
        (object, self.revisions.clone())
    }
}
