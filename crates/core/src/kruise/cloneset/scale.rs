//! Scale(): cancelling scale-downs, creating pods (instance ids, revisions, PVCs), specified
//! delete and scale-in, one reconcile at a time.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{
    CloneSetParams, ExpectationDiffs, IsPodUpdateMode, PodInfo, calculate_diffs,
    lifecycle::{Lifecycle, is_pod_hooked},
    pod_sort::{self, DeletionOrder, SpreadConstraint},
    state,
};
use crate::kruise::{FeatureGates, revision};

/// Pod / PVC label holding the CloneSet instance id.
pub const INSTANCE_ID_LABEL: &str = "apps.kruise.io/cloneset-instance-id";

/// Everything one Scale() pass reads.
pub struct ScaleInput<'a> {
    pub cs: &'a CloneSetParams,
    /// Active pods (not terminating, not Succeeded/Failed).
    pub pods: &'a [PodInfo],
    pub current_revision: &'a str,
    pub update_revision: &'a str,
    pub gates: &'a FeatureGates,
    pub lifecycle: Option<&'a Lifecycle>,
    /// The template's topology spread constraints (empty: same-node ranking).
    pub spread_constraints: &'a [SpreadConstraint],
    /// Node name and labels, for the spread ranker.
    pub nodes: &'a [(String, BTreeMap<String, String>)],
    pub now: i64,
}

/// One change Scale() makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScaleAction {
    /// Move a PreparingDelete pod back to PreparingNormal (a cancelled scale-down).
    RevertPreparingDelete(usize),
    /// Create pods: `total`, of which the first `from_current` use the current revision.
    Create { total: i32, from_current: i32 },
    /// Delete the pod now.
    Delete(usize),
    /// Move the pod to PreparingDelete (its PreDelete hook holds it).
    PrepareDelete(usize),
}

/// What one Scale() pass does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleOutcome {
    pub diffs: ExpectationDiffs,
    pub actions: Vec<ScaleAction>,
}

impl ScaleOutcome {
    /// Whether this pass changed anything (then Update() does not run this reconcile).
    pub fn modified(&self) -> bool {
        !self.actions.is_empty()
    }

    /// The pods deleted outright.
    pub fn deleted(&self) -> Vec<usize> {
        self.actions
            .iter()
            .filter_map(|a| match a {
                ScaleAction::Delete(i) => Some(*i),
                _ => None,
            })
            .collect()
    }
}

/// Port of sync/cloneset_scale.go::Scale (v1.8.4): one pass, returning the changes it makes.
pub fn scale(input: &ScaleInput<'_>) -> ScaleOutcome {
    let cs = input.cs;
    let pods = input.pods;
    let specified: Vec<usize> = (0..pods.len())
        .filter(|&i| cs.is_specified_delete(&pods[i]))
        .collect();
    let pre_delete: Vec<usize> = (0..pods.len())
        .filter(|&i| pods[i].lifecycle_state == state::PREPARING_DELETE)
        .collect();
    let num_to_delete = specified
        .iter()
        .chain(&pre_delete)
        .collect::<BTreeSet<_>>()
        .len();
    let mut actions = Vec::new();

    // 1. Cancel scale-downs of PreparingDelete pods that are still wanted.
    if !input.lifecycle.is_some_and(Lifecycle::any_marks_not_ready) {
        let mut diff = i64::from(cs.replicas) - pods.len() as i64 + num_to_delete as i64;
        for &i in &pre_delete {
            if diff <= 0 {
                break;
            }
            if cs.is_specified_delete(&pods[i]) {
                continue;
            }
            actions.push(ScaleAction::RevertPreparingDelete(i));
            diff -= 1;
        }
    }
    let diffs = calculate_diffs(
        cs,
        pods,
        input.current_revision,
        input.update_revision,
        IsPodUpdateMode::RevisionOrPreparingUpdate,
        input.gates,
        input.now,
    );
    if !actions.is_empty() {
        return ScaleOutcome { diffs, actions };
    }

    // 3. Scale out.
    if diffs.scale_up_num > 0 {
        if diffs.scale_up_limit > 0 {
            actions.push(ScaleAction::Create {
                total: diffs.scale_up_limit,
                from_current: diffs.scale_up_num_old_revision.min(diffs.scale_up_limit),
            });
        }
        return ScaleOutcome { diffs, actions };
    }
    // 4. Pods already in PreparingDelete go once their hook lets them.
    if !pre_delete.is_empty() {
        delete_pods(input, &pre_delete, &mut actions);
        if !actions.is_empty() {
            return ScaleOutcome { diffs, actions };
        }
    }
    // 5. Specified delete (those not already in PreparingDelete), within the ready-delete budget.
    let mut ready_limit = diffs.delete_ready_limit;
    let specified: Vec<usize> = specified
        .into_iter()
        .filter(|i| !pre_delete.contains(i))
        .collect();
    if !specified.is_empty() {
        let chosen = limit_ready(pods, &specified, &mut ready_limit);
        delete_pods(input, &chosen, &mut actions);
        if !actions.is_empty() {
            return ScaleOutcome { diffs, actions };
        }
    }
    // 6. Scale in.
    if diffs.scale_down_num > 0 && num_to_delete == 0 {
        let chosen = choose_pods_to_delete(input, &diffs);
        let mut ready_limit = diffs.delete_ready_limit;
        let chosen = limit_ready(pods, &chosen, &mut ready_limit);
        delete_pods(input, &chosen, &mut actions);
    }
    ScaleOutcome { diffs, actions }
}

/// Not-ready pods always go; ready ones while the budget lasts.
fn limit_ready(pods: &[PodInfo], chosen: &[usize], limit: &mut i32) -> Vec<usize> {
    chosen
        .iter()
        .copied()
        .filter(|&i| {
            if !pods[i].is_ready_for_delete() {
                true
            } else if *limit > 0 {
                *limit -= 1;
                true
            } else {
                false
            }
        })
        .collect()
}

/// Port of sync/cloneset_scale.go::deletePods (v1.8.4): a pod hooked for PreDelete moves to
/// PreparingDelete (once) instead of going away.
fn delete_pods(input: &ScaleInput<'_>, chosen: &[usize], actions: &mut Vec<ScaleAction>) {
    let hook = input.lifecycle.and_then(|l| l.pre_delete.as_ref());
    for &i in chosen {
        let pod = &input.pods[i];
        if is_pod_hooked(hook, &pod.labels, &pod.finalizers) {
            if pod.lifecycle_state != state::PREPARING_DELETE {
                actions.push(ScaleAction::PrepareDelete(i));
            }
        } else {
            actions.push(ScaleAction::Delete(i));
        }
    }
}

/// Port of sync/cloneset_scale.go::choosePodsToDelete (v1.8.4): old-revision pods first (up to
/// `scaleDownNumOldRevision`), then updated ones for the rest of `scaleDownNum`, each group in
/// deletion order. As upstream, a group smaller than its share gives all it has and the other
/// group does not make up the difference.
pub fn choose_pods_to_delete(input: &ScaleInput<'_>, diffs: &ExpectationDiffs) -> Vec<usize> {
    let (updated, not_updated): (Vec<usize>, Vec<usize>) = (0..input.pods.len()).partition(|&i| {
        let p = &input.pods[i];
        revision::is_pod_update(
            &p.revision,
            &p.lifecycle_state,
            input.update_revision,
            input.gates,
        )
    });
    let diff = usize::try_from(diffs.scale_down_num).unwrap_or(0);
    let old_diff = usize::try_from(diffs.scale_down_num_old_revision).unwrap_or(0);
    if old_diff >= diff {
        choose(input, &not_updated, diff)
    } else if old_diff > 0 {
        let mut out = choose(input, &not_updated, old_diff);
        out.extend(choose(input, &updated, diff - old_diff));
        out
    } else {
        choose(input, &updated, diff)
    }
}

fn choose(input: &ScaleInput<'_>, group: &[usize], diff: usize) -> Vec<usize> {
    if diff >= group.len() {
        return group.to_vec();
    }
    let refs: Vec<&PodInfo> = group.iter().map(|&i| &input.pods[i]).collect();
    let ranks = if input.spread_constraints.is_empty() {
        pod_sort::same_node_ranks(&refs)
    } else {
        pod_sort::spread_ranks(&refs, input.spread_constraints, input.nodes)
    };
    let min_ready = input.cs.min_ready_seconds;
    let now = input.now;
    let available = move |p: &PodInfo| p.is_available(min_ready, now);
    let order = DeletionOrder {
        ranks: Some(&ranks),
        available: Some(&available),
    };
    let mut sorted: Vec<usize> = group.to_vec();
    sorted.sort_by(|&a, &b| {
        pod_sort::ordering(|x, y| order.less(x, y), &input.pods[a], &input.pods[b])
    });
    sorted.truncate(diff);
    sorted
}

/// Inputs of [`plan_pod_creations`].
pub struct CreationInput<'a> {
    pub cloneset_name: &'a str,
    pub expected_creations: usize,
    pub expected_current_creations: usize,
    pub current_revision: &'a str,
    pub update_revision: &'a str,
    /// Instance ids to use, in order.
    pub available_ids: &'a [String],
    /// `volumeClaimTemplates` names.
    pub volume_claim_templates: &'a [String],
    /// PVC names that already exist.
    pub existing_pvcs: &'a [String],
    /// `spec.template.spec.readinessGates` condition types.
    pub template_readiness_gates: &'a [String],
    pub gates: &'a FeatureGates,
}

/// A pod Scale() will create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPod {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// Volume name → claim name.
    pub claim_names: BTreeMap<String, String>,
    /// The pod's `readinessGates`: the template's plus `InPlaceUpdateReady`
    /// (`inplaceupdate.InjectReadinessGate`).
    pub readiness_gates: Vec<String>,
    pub from_current: bool,
}

/// The pods and PVCs one creation batch makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreationPlan {
    pub pods: Vec<NewPod>,
    pub pvcs_to_create: Vec<String>,
}

/// Port of sync/cloneset_scale.go::createPods + clonesetutils NewPodsFromRevision (v1.8.4): the
/// first `expected_current_creations` pods use the current revision; every pod is named
/// `<cs>-<id>`, starts in PreparingNormal, and gets `<vct>-<cs>-<id>` claims (existing ones
/// reused).
pub fn plan_pod_creations(input: &CreationInput<'_>) -> CreationPlan {
    let mut pods = Vec::new();
    let mut pvcs_to_create = Vec::new();
    for (n, id) in input
        .available_ids
        .iter()
        .take(input.expected_creations)
        .enumerate()
    {
        let from_current = n < input.expected_current_creations;
        let rev = if from_current {
            input.current_revision
        } else {
            input.update_revision
        };
        let mut labels = BTreeMap::new();
        labels.insert(INSTANCE_ID_LABEL.to_owned(), id.clone());
        labels.insert(
            revision::CONTROLLER_REVISION_HASH_LABEL.to_owned(),
            revision::pod_revision_label(rev, input.gates),
        );
        labels.insert(
            revision::POD_TEMPLATE_HASH_LABEL.to_owned(),
            revision::short_hash(rev).to_owned(),
        );
        labels.insert(
            revision::LIFECYCLE_STATE_LABEL.to_owned(),
            state::PREPARING_NORMAL.to_owned(),
        );
        let mut claim_names = BTreeMap::new();
        for vct in input.volume_claim_templates {
            let claim = format!("{vct}-{}-{id}", input.cloneset_name);
            if !input.existing_pvcs.contains(&claim) {
                pvcs_to_create.push(claim.clone());
            }
            claim_names.insert(vct.clone(), claim);
        }
        pods.push(NewPod {
            name: format!("{}-{id}", input.cloneset_name),
            labels,
            claim_names,
            readiness_gates: inject_readiness_gate(input.template_readiness_gates),
            from_current,
        });
    }
    CreationPlan {
        pods,
        pvcs_to_create,
    }
}

/// Port of inplaceupdate.InjectReadinessGate (v1.8.4): `InPlaceUpdateReady` is appended unless
/// the gates already hold it.
pub fn inject_readiness_gate(gates: &[String]) -> Vec<String> {
    let mut out = gates.to_vec();
    if !out
        .iter()
        .any(|g| g == super::inplace::IN_PLACE_UPDATE_READY)
    {
        out.push(super::inplace::IN_PLACE_UPDATE_READY.to_owned());
    }
    out
}

/// Port of the PVC clean-up in sync/cloneset_scale.go::deletePods (v1.8.4): when a pod is
/// deleted, every PVC whose instance-id label equals the pod's goes with it. As upstream, the
/// labels are compared as strings, so a pod without the label takes the PVCs without it.
/// `pvcs` are (name, instance-id label or "") pairs; returns the names to delete.
pub fn pvcs_deleted_with_pod(pod_instance_id: &str, pvcs: &[(String, String)]) -> Vec<String> {
    pvcs.iter()
        .filter(|(_, id)| id == pod_instance_id)
        .map(|(name, _)| name.clone())
        .collect()
}

const ID_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Port of sync/cloneset_scale.go::getOrGenAvailableIDs (v1.8.4): ids of PVCs whose pod is gone
/// first, then random 5-character ids (from `rng`) colliding with nothing. Returns fewer than
/// `num` only if `rng` keeps producing collisions. Upstream returns a set and creates pods in its
/// sorted order (`sets.String.List()`), so the result is sorted: the first ids in that order are
/// the ones that get the current revision.
pub fn available_ids(
    num: usize,
    pod_ids: &[String],
    pvc_ids: &[String],
    rng: &mut dyn FnMut() -> u64,
) -> Vec<String> {
    let used: BTreeSet<&str> = pod_ids.iter().map(String::as_str).collect();
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    for id in pvc_ids {
        if out.len() >= num {
            break;
        }
        if !used.contains(id.as_str()) && seen.insert(id.clone(), ()).is_none() {
            out.push(id.clone());
        }
    }
    // A broken `rng` (e.g. constant) must not spin forever.
    let mut attempts = 0usize;
    while out.len() < num && attempts < num.saturating_mul(1000).max(1000) {
        attempts += 1;
        let id: String = (0..5)
            .map(|_| char::from(ID_ALPHABET[(rng() % ID_ALPHABET.len() as u64) as usize]))
            .collect();
        let taken = used.contains(id.as_str()) || pvc_ids.contains(&id) || seen.contains_key(&id);
        if !taken {
            seen.insert(id.clone(), ());
            out.push(id);
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kruise::cloneset::lifecycle::LifecycleHook;

    fn run(cs: &CloneSetParams, pods: &[PodInfo], lifecycle: Option<&Lifecycle>) -> ScaleOutcome {
        scale(&ScaleInput {
            cs,
            pods,
            current_revision: "cs-old",
            update_revision: "cs-new",
            gates: &FeatureGates::new(),
            lifecycle,
            spread_constraints: &[],
            nodes: &[],
            now: 1_000,
        })
    }

    fn cs(replicas: i32) -> CloneSetParams {
        CloneSetParams {
            replicas,
            max_unavailable: Some(
                k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(5),
            ),
            ..CloneSetParams::default()
        }
    }

    #[test]
    fn scale_in_takes_old_revision_pods_first_then_by_deletion_order() {
        let mut pods = vec![
            PodInfo::ready_at("new-0", "cs-new"),
            PodInfo::ready_at("old-0", "cs-old"),
            PodInfo::ready_at("old-1", "cs-old"),
            PodInfo::ready_at("old-2", "cs-old"),
        ];
        pods[2].ready = false;
        let out = run(&cs(2), &pods, None);
        assert_eq!(out.diffs.scale_down_num, 2);
        // Two of the three old pods go: the not-ready one, then the one crowding the node most.
        assert_eq!(
            out.actions,
            vec![ScaleAction::Delete(2), ScaleAction::Delete(1)]
        );
        // Deleting a whole group needs no sort: upstream keeps list order.
        let out = run(&cs(1), &pods, None);
        assert_eq!(
            out.actions,
            vec![
                ScaleAction::Delete(1),
                ScaleAction::Delete(2),
                ScaleAction::Delete(3)
            ]
        );
    }

    #[test]
    fn pre_delete_hook_parks_pods_and_scale_up_cancels_it() {
        let hook = Lifecycle {
            pre_delete: Some(LifecycleHook {
                labels_handler: [("hold".to_owned(), "yes".to_owned())].into(),
                ..LifecycleHook::default()
            }),
            ..Lifecycle::default()
        };
        let mut pods = vec![
            PodInfo::ready_at("a", "cs-new"),
            PodInfo::ready_at("b", "cs-new"),
        ];
        pods[1].labels.insert("hold".to_owned(), "yes".to_owned());
        pods[1].specified_delete = true;
        let out = run(&cs(2), &pods, Some(&hook));
        assert_eq!(out.actions, vec![ScaleAction::PrepareDelete(1)]);

        // Parked but no longer specified for deletion, and still wanted: back to PreparingNormal.
        pods[1].specified_delete = false;
        pods[1].lifecycle_state = state::PREPARING_DELETE.to_owned();
        let out = run(&cs(2), &pods, Some(&hook));
        assert_eq!(out.actions, vec![ScaleAction::RevertPreparingDelete(1)]);
    }

    #[test]
    fn scale_up_splits_revisions_and_pvcs_are_reused() {
        let pods = vec![PodInfo::ready_at("a", "cs-new")];
        let mut params = cs(3);
        params.partition = Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1));
        let out = run(&params, &pods, None);
        assert_eq!(
            out.actions,
            vec![ScaleAction::Create {
                total: 2,
                from_current: 1
            }]
        );
        let plan = plan_pod_creations(&CreationInput {
            cloneset_name: "cs",
            expected_creations: 2,
            expected_current_creations: 1,
            current_revision: "cs-old",
            update_revision: "cs-new",
            available_ids: &["x1".to_owned(), "x2".to_owned()],
            volume_claim_templates: &["data".to_owned()],
            existing_pvcs: &["data-cs-x2".to_owned()],
            template_readiness_gates: &[],
            gates: &FeatureGates::new(),
        });
        assert_eq!(
            plan.pods[0].labels[revision::CONTROLLER_REVISION_HASH_LABEL],
            "cs-old"
        );
        assert_eq!(
            plan.pods[1].labels[revision::POD_TEMPLATE_HASH_LABEL],
            "new"
        );
        assert_eq!(plan.pvcs_to_create, vec!["data-cs-x1".to_owned()]);
        let mut constant = || 0u64;
        let ids = available_ids(2, &[], &[], &mut constant);
        assert_eq!(
            ids,
            vec!["bbbbb".to_owned()],
            "a constant rng cannot make a second id"
        );
    }
}
