//! The test simulator of the walks: a Rollout, its workload and its BatchRelease, with the
//! Rollout port's writes applied as the API server would, and the BatchRelease controller's
//! answers set by hand.

use jiff::Timestamp;

use super::tests::secs;
use super::*;
use crate::api::rollout::{BatchReleaseCanaryStatus, BatchReleaseStatus, batch, step_state};
use crate::kruise::rollout::hash_release_plan;

/// A Rollout, its workload and its BatchRelease, with the Rollout's writes applied as the API
/// server would.
pub(super) struct Sim {
    pub(super) rollout: Rollout,
    pub(super) workload: WorkloadInfo,
    pub(super) br: Option<BatchRelease>,
    pub(super) now: Timestamp,
    pub(super) events: Vec<String>,
    pub(super) last: Outcome,
}

impl Sim {
    pub(super) fn new(rollout: Rollout, workload: WorkloadInfo) -> Self {
        Self {
            rollout,
            workload,
            br: None,
            now: secs(0),
            events: Vec::new(),
            last: Outcome::default(),
        }
    }

    pub(super) fn reconcile(&mut self) -> &Outcome {
        let out = reconcile(
            &self.rollout,
            Some(&self.workload),
            self.br.as_ref(),
            self.now,
        );
        if out.finalizer == Some(FinalizerOp::Add) {
            self.rollout.metadata.finalizers = Some(vec![keys::ROLLOUT_FINALIZER.into()]);
        }
        for p in &out.rollout_patches {
            let mut v = serde_json::to_value(&self.rollout.metadata).unwrap();
            json_patch::merge(&mut v, &p["metadata"]);
            self.rollout.metadata = serde_json::from_value(v).unwrap();
        }
        for p in &out.workload_patches {
            for (field, map) in [
                ("labels", &mut self.workload.labels),
                ("annotations", &mut self.workload.annotations),
            ] {
                if let Some(obj) = p["metadata"][field].as_object() {
                    for (k, v) in obj {
                        match v.as_str() {
                            Some(s) => map.insert(k.clone(), s.into()),
                            None => map.remove(k),
                        };
                    }
                }
            }
        }
        for a in &out.batch_release {
            match a {
                BrAction::Create(br) => {
                    let mut br = (**br).clone();
                    br.metadata.generation = Some(1);
                    self.br = Some(br);
                }
                BrAction::Update(br) => {
                    let mut br = (**br).clone();
                    br.metadata.generation = Some(br.metadata.generation.unwrap_or(0) + 1);
                    self.br = Some(br);
                }
                BrAction::Patch(p) => {
                    let br = self.br.as_mut().unwrap();
                    let mut v = serde_json::to_value(&br.spec).unwrap();
                    json_patch::merge(&mut v, &p["spec"]);
                    br.spec = serde_json::from_value(v).unwrap();
                    br.metadata.generation = Some(br.metadata.generation.unwrap_or(0) + 1);
                }
                BrAction::Delete => self.br = None,
            }
        }
        if let Some(s) = &out.status {
            self.rollout.status = Some(s.clone());
        }
        self.events.extend(out.events.iter().cloned());
        self.last = out;
        &self.last
    }

    /// The BatchRelease controller's answer: batch `b` Ready with `updated` pods (all ready).
    pub(super) fn br_ready(&mut self, b: i32, updated: i32) {
        let br = self.br.as_mut().unwrap();
        br.status = Some(BatchReleaseStatus {
            observed_generation: br.metadata.generation,
            observed_release_plan_hash: Some(hash_release_plan(&br.spec.release_plan)),
            observed_rollout_id: br.spec.release_plan.rollout_id.clone(),
            phase: Some(batch::PROGRESSING.into()),
            canary_status: Some(BatchReleaseCanaryStatus {
                batch_state: Some(batch::READY.into()),
                current_batch: b,
                updated_replicas: Some(updated),
                updated_ready_replicas: Some(updated),
                ..BatchReleaseCanaryStatus::default()
            }),
            ..BatchReleaseStatus::default()
        });
        self.workload.updated_replicas = updated;
        self.workload.updated_ready_replicas = updated;
    }

    pub(super) fn cs(&self) -> &crate::api::rollout::CanaryStatus {
        self.rollout.canary_status().unwrap()
    }

    pub(super) fn at(&self) -> (i32, String) {
        (
            self.cs().current_step_index,
            self.cs().current_step_state.clone(),
        )
    }

    pub(super) fn reason(&self) -> String {
        self.rollout
            .condition("Progressing")
            .map(|c| c.reason.clone())
            .unwrap_or_default()
    }

    pub(super) fn message(&self) -> String {
        self.rollout
            .status
            .as_ref()
            .and_then(|s| s.message.clone())
            .unwrap_or_default()
    }

    pub(super) fn release(&mut self, revision: &str) {
        self.workload.canary_revision = revision.into();
        self.workload.update_revision = format!("echo-{revision}");
        self.workload.updated_replicas = 0;
        self.workload.updated_ready_replicas = 0;
        self.workload.annotations.insert(
            keys::ROLLOUT_IN_PROGRESSING.into(),
            "{\"rolloutName\":\"rollout-demo\"}".into(),
        );
    }

    pub(super) fn approve(&mut self) {
        let cs = self
            .rollout
            .status
            .as_mut()
            .unwrap()
            .canary_status
            .as_mut()
            .unwrap();
        cs.current_step_state = step_state::STEP_READY.into();
    }
}

impl Sim {
    pub(super) fn clone_state(&self) -> Sim {
        Sim {
            rollout: self.rollout.clone(),
            workload: self.workload.clone(),
            br: self.br.clone(),
            now: self.now,
            events: Vec::new(),
            last: Outcome::default(),
        }
    }
}
