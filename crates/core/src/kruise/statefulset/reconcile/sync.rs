//! The body of one Advanced StatefulSet reconcile: `processReplica` over the slots,
//! `processCondemned`, and `rollingUpdateStatefulsetPods` (v1.8.4, and v1.9.0's Parallel loop
//! and failed-pod budget, #2109), deciding the writes into the [`Outcome`].

use std::collections::{BTreeMap, HashMap, HashSet};

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use super::{Input, Op, Outcome, PodWrite, Why, inplace, inplace::InPlace, name_of, pods};
use crate::kruise::{
    KruiseVersion,
    cloneset::{
        inplace::{PodModel, RevisionTemplate},
        lifecycle::{self, Lifecycle},
        reconcile::{
            pods::{changes, pod_model},
            revisions::template_of,
        },
        state,
    },
    intstr,
    statefulset::{
        AstsPod, AstsSpec, PodManagementPolicy, UpdateAction, UpdateStrategyType,
        is_current_revision_needed, ordinals::replicas_range, rolling_update_step,
    },
};

/// How a processing loop ends (upstream's `shouldExit` / `shouldBreak` / an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Break,
    /// `shouldExit` without an error: v1.9.0's Parallel loop goes on past it.
    Exit,
    /// An error (already in `out.errors`): the pass ends at every version.
    Fail,
}

/// One reconcile's working state.
pub(super) struct Run<'a> {
    pub(super) input: &'a Input<'a>,
    pub(super) spec: AstsSpec,
    pub(super) lifecycle: Option<Lifecycle>,
    pub(super) by_name: HashMap<&'a str, &'a Pod>,
    pub(super) templates: Vec<RevisionTemplate>,
    pub(super) out: Outcome,
    /// Conditions set by this reconcile (type, message).
    pub(super) conditions: Vec<(&'static str, String)>,
    /// A refresh changed a pod this reconcile (the rolling update then waits).
    pub(super) refreshed: bool,
    /// The pods refreshed so far.
    pub(super) seen: HashSet<String>,
    /// `status.currentReplicas` / `updatedReplicas` adjustments for pods updated this pass.
    pub(super) current_gone: i32,
    pub(super) updated_gone: i32,
}

impl Run<'_> {
    pub(super) fn min_ready(&self) -> i32 {
        self.spec
            .rolling_update
            .as_ref()
            .map_or(0, |r| r.min_ready_seconds)
    }

    fn grace(&self) -> i32 {
        self.input
            .set
            .spec
            .update_strategy
            .as_ref()
            .and_then(|s| s.rolling_update.as_ref())
            .and_then(|r| r.in_place_update_strategy.as_ref())
            .and_then(|s| s.grace_period_seconds)
            .unwrap_or(0)
    }

    fn requeue(&mut self, secs: Option<i64>) {
        if let Some(secs) = secs.filter(|s| *s > 0) {
            self.out.requeue_after = Some(self.out.requeue_after.map_or(secs, |r| r.min(secs)));
        }
    }

    /// Requeues for when a Running and Ready pod becomes available (`isRunningAndAvailable`'s
    /// wait time).
    fn requeue_for_availability(&mut self, pod: &AstsPod) {
        let min_ready = i64::from(self.min_ready());
        if min_ready > 0 && pod.phase == "Running" && pod.ready {
            let wait = min_ready - pod.ready_for_seconds.unwrap_or(0);
            self.requeue(Some(wait.max(1)));
        }
    }

    /// Emits the writes that make `pod` say what `model` says.
    fn push_model(&mut self, pod: &Pod, model: &PodModel, why: Why) {
        let c = changes(pod, model);
        if c.is_empty() {
            return;
        }
        self.out.pods.push(PodWrite {
            name: model.name.clone(),
            op: Op::Update {
                status: c.status.map(Box::new),
                pod: c.pod.map(Box::new),
            },
            why,
        });
    }

    /// The claims of the pod at `ordinal` that do not exist yet; Err when one is being deleted.
    fn missing_claims(&self, ordinal: i32) -> Result<Vec<PersistentVolumeClaim>, String> {
        let mut missing = Vec::new();
        for claim in pods::claims(self.input.set, ordinal, self.input.version).into_values() {
            let name = claim.metadata.name.as_deref().unwrap_or_default();
            match self
                .input
                .claims
                .iter()
                .find(|c| c.metadata.name.as_deref() == Some(name))
            {
                None => missing.push(claim),
                Some(c) if c.metadata.deletion_timestamp.is_some() => {
                    return Err(format!("pvc {name} is to be deleted"));
                }
                Some(_) => {}
            }
        }
        Ok(missing)
    }

    pub(super) fn sync(&mut self, slots: &mut [Option<AstsPod>], condemned: &[AstsPod]) {
        let set = self.input.set;
        let gates = self.input.gates;
        let scale_budget = match &set
            .spec
            .scale_strategy
            .as_ref()
            .and_then(|s| s.max_unavailable.clone())
        {
            None => None,
            Some(v) => match intstr::scaled_value_apimachinery(v, self.spec.replicas, false) {
                Ok(n) => Some(n.max(1)),
                Err(e) => {
                    self.out.errors.push(e.to_string());
                    return;
                }
            },
        };
        let monotonic = self.spec.pod_management_policy != PodManagementPolicy::Parallel;
        let update = name_of(self.input.update).to_owned();
        let current = name_of(self.input.current).to_owned();
        let status_current = set.status.as_ref().map_or(0, |s| s.current_replicas);

        // Missing pods, in ordinal order, at the revision each needs.
        let range = replicas_range(&self.spec, gates);
        let mut new_at: BTreeMap<usize, String> = BTreeMap::new();
        for idx in 0..slots.len() {
            let ordinal = range.start + i32::try_from(idx).unwrap_or(i32::MAX);
            if slots[idx].is_some() || !range.contains(ordinal) {
                continue;
            }
            let from_current = is_current_revision_needed(
                &self.spec,
                gates,
                status_current,
                &update,
                ordinal,
                slots,
            );
            let revision = if from_current { &current } else { &update };
            slots[idx] = Some(AstsPod {
                name: pods::pod_name(set, ordinal),
                revision: revision.clone(),
                ..AstsPod::default()
            });
            new_at.insert(idx, revision.clone());
        }
        let first_unhealthy = slots
            .iter()
            .flatten()
            .chain(condemned)
            .filter(|p| !p.is_healthy())
            .min_by_key(|p| p.ordinal())
            .map(|p| p.name.clone());

        let mut budget = scale_budget;
        for (idx, slot) in slots.iter().enumerate() {
            let Some(pod) = slot.clone() else {
                continue;
            };
            let flow = match new_at.get(&idx) {
                Some(revision) => self.create(&pod, revision),
                None => self.process_replica(&pod, monotonic, &mut budget),
            };
            let flow = match flow {
                Flow::Continue if new_at.contains_key(&idx) && monotonic => Flow::Exit,
                Flow::Continue if new_at.contains_key(&idx) && spend(&mut budget) => Flow::Break,
                other => other,
            };
            // `runForAllWithBreak`: v1.9.0 (#2109) ignores shouldExit in Parallel mode.
            let exit_ends_pass = monotonic || self.input.version == KruiseVersion::V1_8;
            match flow {
                Flow::Continue => {}
                Flow::Exit if !exit_ends_pass => {}
                Flow::Break => break,
                Flow::Exit | Flow::Fail => return,
            }
        }

        for pod in condemned {
            if matches!(
                self.process_condemned(pod, monotonic, first_unhealthy.as_deref()),
                Flow::Exit | Flow::Fail
            ) {
                return;
            }
        }
        if self.spec.update_strategy_type == UpdateStrategyType::OnDelete {
            return;
        }
        self.rolling_update(slots, condemned);
    }

    /// Creates the pod of a missing slot (claims first).
    fn create(&mut self, pod: &AstsPod, revision: &str) -> Flow {
        let set = self.input.set;
        let ordinal = pod.ordinal();
        let template = if revision == name_of(self.input.update) {
            template_of(self.input.update)
        } else {
            template_of(self.input.current)
        };
        let Some(template) = template else {
            self.out
                .errors
                .push(format!("revision {revision} holds no pod template"));
            return Flow::Fail;
        };
        let claims = match self.missing_claims(ordinal) {
            Ok(c) => c,
            Err(e) => {
                let w = PodWrite {
                    name: pod.name.clone(),
                    op: Op::Claims { claims: Vec::new() },
                    why: Why::Create,
                };
                let set_name = set.metadata.name.as_deref().unwrap_or_default();
                self.out.events.extend(w.failure_events(set_name, &e));
                self.conditions.extend(w.failure_condition(&e));
                self.out.errors.push(e);
                return Flow::Fail;
            }
        };
        let mut new = pods::new_pod(
            set,
            &template,
            revision,
            ordinal,
            state::NORMAL,
            self.input.gates,
            self.input.now,
        );
        let pre_normal = self.lifecycle.as_ref().and_then(|l| l.pre_normal.as_ref());
        if pre_normal.is_some() {
            let labels = new.metadata.labels.clone().unwrap_or_default();
            let finalizers = new.metadata.finalizers.clone().unwrap_or_default();
            if !lifecycle::is_pod_all_hooked(pre_normal, &labels, &finalizers)
                && let Some(l) = new.metadata.labels.as_mut()
            {
                l.insert(
                    crate::kruise::statefulset::LIFECYCLE_STATE_LABEL.to_owned(),
                    state::PREPARING_NORMAL.to_owned(),
                );
            }
        }
        self.out.pods.push(PodWrite {
            name: pod.name.clone(),
            op: Op::Create {
                pod: Box::new(new),
                claims,
            },
            why: Why::Create,
        });
        Flow::Continue
    }

    /// Port of `processReplica` for a pod that exists.
    fn process_replica(&mut self, ap: &AstsPod, monotonic: bool, budget: &mut Option<i32>) -> Flow {
        let Some(pod) = self.by_name.get(ap.name.as_str()).copied() else {
            return Flow::Continue;
        };
        if matches!(ap.phase.as_str(), "Failed" | "Succeeded") {
            // v1.9.0: a failed pod uses up the scale budget first; when that leaves none, wait
            // (break) without deleting it.
            if self.input.version == KruiseVersion::V1_9 && spend(budget) {
                return Flow::Break;
            }
            if !ap.terminating {
                self.delete_pod(pod);
            }
            return Flow::Exit;
        }
        if ap.phase == "Pending" {
            match self.missing_claims(ap.ordinal()) {
                Ok(claims) if !claims.is_empty() => self.out.pods.push(PodWrite {
                    name: ap.name.clone(),
                    op: Op::Claims { claims },
                    why: Why::Claims,
                }),
                Ok(_) => {}
                Err(e) => {
                    self.out.errors.push(e);
                    return Flow::Fail;
                }
            }
        }
        if ap.terminating && monotonic {
            return Flow::Exit;
        }
        if ap.terminating && spend(budget) {
            return Flow::Break;
        }
        let mut model = pod_model(pod);
        if let Err(flow) = self.refresh(&mut model) {
            return flow;
        }
        let mut flow = Flow::Continue;
        if (monotonic || budget.is_some()) && !ap.is_running_and_available(self.min_ready()) {
            self.requeue_for_availability(ap);
            if monotonic {
                flow = Flow::Exit;
            } else if spend(budget) {
                flow = Flow::Break;
            }
        }
        let mut why = Why::Refresh;
        if flow == Flow::Continue && !pods::identity_matches(self.input.set, pod, ap.ordinal()) {
            pods::identity_labels(&mut model.labels, &ap.name, ap.ordinal(), self.input.gates);
            why = Why::Identity;
        }
        self.push_model(pod, &model, why);
        flow
    }

    /// Refreshes `model`; a failure stops the reconcile.
    fn refresh(&mut self, model: &mut PodModel) -> Result<(), Flow> {
        self.seen.insert(model.name.clone());
        let before = model.clone();
        match inplace::refresh(
            model,
            self.lifecycle.as_ref(),
            name_of(self.input.update),
            self.input.now,
        ) {
            Ok(delay) => self.requeue(delay),
            Err(e) => {
                self.out.errors.push(format!("pod {}: {e}", model.name));
                return Err(Flow::Fail);
            }
        }
        if *model != before {
            self.refreshed = true;
        }
        Ok(())
    }

    /// Port of `deletePod`: parks the pod in PreparingDelete for its hook, or deletes it.
    /// Returns (modified, actually deleting).
    fn delete_pod(&mut self, pod: &Pod) -> (bool, bool) {
        let mut model = pod_model(pod);
        match inplace::pre_delete(&mut model, self.lifecycle.as_ref(), self.input.now) {
            Some(changed) => {
                self.push_model(pod, &model, Why::Refresh);
                (changed, false)
            }
            None => {
                self.out.pods.push(PodWrite {
                    name: model.name.clone(),
                    op: Op::Delete {
                        uid: pod.metadata.uid.clone().unwrap_or_default(),
                    },
                    why: Why::Delete,
                });
                (true, true)
            }
        }
    }

    /// Port of `processCondemned`.
    fn process_condemned(
        &mut self,
        ap: &AstsPod,
        monotonic: bool,
        first_unhealthy: Option<&str>,
    ) -> Flow {
        if ap.terminating {
            return if monotonic {
                Flow::Exit
            } else {
                Flow::Continue
            };
        }
        let is_first = first_unhealthy == Some(ap.name.as_str());
        if monotonic && !is_first {
            if !(ap.phase == "Running" && ap.ready) {
                return Flow::Exit;
            }
            if !ap.is_running_and_available(self.min_ready()) {
                self.requeue_for_availability(ap);
                return Flow::Exit;
            }
        }
        let Some(pod) = self.by_name.get(ap.name.as_str()).copied() else {
            return Flow::Continue;
        };
        let (modified, _) = self.delete_pod(pod);
        if monotonic && modified {
            Flow::Exit
        } else {
            Flow::Continue
        }
    }

    /// Port of `rollingUpdateStatefulsetPods`.
    fn rolling_update(&mut self, slots: &[Option<AstsPod>], condemned: &[AstsPod]) {
        // Every pod not refreshed while processed (the condemned ones, those past a break).
        for ap in slots.iter().flatten().chain(condemned) {
            let Some(pod) = self.by_name.get(ap.name.as_str()).copied() else {
                continue;
            };
            if self.seen.contains(&ap.name) {
                continue;
            }
            let mut model = pod_model(pod);
            if self.refresh(&mut model).is_err() {
                return;
            }
            self.push_model(pod, &model, Why::Refresh);
        }
        if self.refreshed || self.spec.rolling_update.as_ref().is_some_and(|r| r.paused) {
            return;
        }
        let update = self.input.update;
        let update_name = name_of(update).to_owned();
        let grace = self.grace();
        let templates = self.templates.clone();
        let target = templates
            .iter()
            .find(|t| t.name == update_name)
            .cloned()
            .unwrap_or_default();
        let old_of = |revision: &str| templates.iter().find(|t| t.name == revision);
        let can_in_place = |p: &AstsPod| {
            crate::kruise::cloneset::inplace::calculate_spec(old_of(&p.revision), &target, grace)
                .is_some()
        };
        let step = match rolling_update_step(
            &self.spec,
            self.input.gates,
            self.input.version,
            &update_name,
            slots,
            &can_in_place,
        ) {
            Ok(step) => step,
            Err(e) => {
                self.out.errors.push(e);
                return;
            }
        };
        for ap in slots.iter().flatten() {
            if step.unavailable_before.contains(&ap.name) {
                self.requeue_for_availability(ap);
            }
        }
        let current_name = name_of(self.input.current).to_owned();
        let at = |ordinal: i32| {
            slots
                .iter()
                .flatten()
                .find(|p| p.ordinal() == ordinal)
                .cloned()
        };
        for ordinal in &step.specified_deleted {
            let Some(ap) = at(*ordinal) else { continue };
            let Some(pod) = self.by_name.get(ap.name.as_str()).copied() else {
                continue;
            };
            if let (_, true) = self.delete_pod(pod) {
                if ap.revision == current_name {
                    self.current_gone += 1;
                } else if ap.revision == update_name {
                    self.updated_gone += 1;
                }
            }
        }
        let lifecycle = self.lifecycle.clone();
        for (ordinal, action) in &step.updated {
            let Some(ap) = at(*ordinal) else { continue };
            let Some(pod) = self.by_name.get(ap.name.as_str()).copied() else {
                continue;
            };
            let mut decrease = false;
            let mut delete = *action == UpdateAction::Delete;
            if *action == UpdateAction::InPlace {
                let mut model = pod_model(pod);
                match inplace::update_in_place(
                    &mut model,
                    old_of(&ap.revision),
                    &target,
                    grace,
                    lifecycle.as_ref(),
                    self.input.now,
                ) {
                    Ok(InPlace::NotPossible) => delete = true,
                    Ok(InPlace::Hooked) => {
                        self.push_model(pod, &model, Why::Refresh);
                        decrease = true;
                    }
                    Ok(InPlace::Updated(delay)) => {
                        self.requeue(delay);
                        self.push_model(
                            pod,
                            &model,
                            Why::InPlaceUpdate {
                                revision: update_name.clone(),
                            },
                        );
                        decrease = true;
                    }
                    Err(e) => {
                        self.out.errors.push(e);
                        return;
                    }
                }
            }
            if delete {
                decrease = self.delete_pod(pod).1;
            }
            if decrease && ap.revision == current_name {
                self.current_gone += 1;
            }
        }
    }
}

/// `decreaseAndCheckMaxUnavailable`: spends one of the budget; true once it is used up.
fn spend(budget: &mut Option<i32>) -> bool {
    match budget {
        None => false,
        Some(left) => {
            *left -= 1;
            *left <= 0
        }
    }
}
