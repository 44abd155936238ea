//! One SidecarSet controller pass, sans IO: the matched pods, the status to write (computed
//! before this pass upgrades anything), the hot-upgrade flips and the in-place upgrades.
//! The caller writes the returned pods and status.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{
    SIDECARSET_LIST_ANNOTATION, SIDECARSET_UPGRADABLE_CONDITION, SIDECARSET_VERSION_ALT_PREFIX,
    SIDECARSET_VERSION_PREFIX, SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER,
    control::{
        is_pod_active, is_pod_consistent_with_sidecar_set, is_pod_ready, is_pod_state_consistent,
        pod_hot_upgrade_containers, sidecar_containers_in_pod,
    },
    matching::{NamespaceLabels, pod_matched_sidecar_set},
    metadata::patch_pod_metadata,
    pod_state::{
        is_pod_injected_sidecar_set, is_pod_sidecar_updated, record_inplace_update_state,
        update_pod_annotations_in_upgrade,
    },
    upgrade::next_upgrade_pods,
};
use crate::api::{
    pod::is_running_and_ready,
    sidecarset::{NOT_UPDATE, SidecarContainer, SidecarSet, SidecarSetStatus},
};
use crate::kruise::KruiseVersion;

/// What one pass decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReconcileOutcome {
    /// The status to write (only when it differs from the current one).
    pub status: SidecarSetStatus,
    /// Indexes (into the input pods) of the matched pods.
    pub matched: Vec<usize>,
    /// Pods to write back: `(index into the input pods, new pod)`. Spec and metadata go
    /// through an update, the `SidecarSetUpgradable` condition through the status subresource.
    pub pod_updates: Vec<(usize, Pod)>,
    /// Matched pods that cannot be upgraded in place (non-image fields changed).
    pub not_upgradable: Vec<usize>,
}

/// Whether a pod is one the controller manages for the set: in scope (namespace and
/// namespaceSelector), selected, active, injected with the set (its hash annotation has an
/// entry for the set) and still carrying its containers.
///
/// Port of pkg/controller/sidecarset/sidecarset_processor.go::getMatchingPods (v1.8.4).
pub fn is_matching_pod(set: &SidecarSet, pod: &Pod, namespaces: &NamespaceLabels) -> bool {
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(scope) = set.spec.namespace.as_deref().filter(|n| !n.is_empty())
        && scope != ns
    {
        return false;
    }
    if let Some(ns_selector) = &set.spec.namespace_selector {
        let in_scope = namespaces
            .get(ns)
            .is_some_and(|l| crate::kruise::selector::matches(ns_selector, l).unwrap_or(false));
        if !in_scope {
            return false;
        }
    }
    let empty = BTreeMap::new();
    let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
    let selected = set
        .spec
        .selector
        .as_ref()
        .is_some_and(|s| crate::kruise::selector::matches(s, labels).unwrap_or(false));
    selected
        && is_pod_active(pod)
        && is_pod_injected_sidecar_set(pod, set)
        && is_pod_consistent_with_sidecar_set(pod, set)
}

/// matched / updated / ready / updatedReady counts of the matched pods.
///
/// Port of pkg/controller/sidecarset/sidecarset_processor.go::calculateStatus (v1.8.4).
pub fn calculate_status(
    set: &SidecarSet,
    matched: &[&Pod],
    latest_revision: &str,
    collision_count: i32,
) -> SidecarSetStatus {
    let all = BTreeSet::new();
    let mut status = SidecarSetStatus {
        observed_generation: set.metadata.generation.unwrap_or_default(),
        matched_pods: matched.len() as i32,
        latest_revision: latest_revision.to_owned(),
        collision_count: Some(collision_count),
        ..Default::default()
    };
    for pod in matched {
        let updated = is_pod_sidecar_updated(set, pod);
        if updated {
            status.updated_pods += 1;
        }
        if is_pod_ready(set, pod) && is_pod_state_consistent(set, pod, &all) {
            status.ready_pods += 1;
            if updated {
                status.updated_ready_pods += 1;
            }
        }
    }
    status
}

/// Cluster context one pass needs beyond the set and its candidate pods.
#[derive(Debug, Clone, Copy)]
pub struct ReconcileContext<'a> {
    /// Every SidecarSet (to rebuild a missing injected-list annotation).
    pub all_sets: &'a [SidecarSet],
    /// Namespace labels (for namespaceSelector matching).
    pub namespaces: &'a NamespaceLabels,
    /// The controller clock.
    pub now: jiff::Timestamp,
    /// v1.9.0 checks NotUpdate and paused before the hot-upgrade flips, and a pass that flips
    /// upgrades nothing else (SS5).
    pub version: KruiseVersion,
}

/// One pass over `pods` (any pods; the matching ones are selected here).
///
/// Port of pkg/controller/sidecarset/sidecarset_processor.go::UpdateSidecarSet (v1.8.4; at
/// v1.9.0 NotUpdate/paused return before the hot-upgrade flips, and flips end the pass),
/// without ControllerRevision registration: run [`super::revision::plan_latest_revision`]
/// first and put the resulting name in `set.status.latestRevision`.
pub fn reconcile(set: &SidecarSet, pods: &[Pod], ctx: ReconcileContext<'_>) -> ReconcileOutcome {
    let matched: Vec<usize> = (0..pods.len())
        .filter(|&i| is_matching_pod(set, &pods[i], ctx.namespaces))
        .collect();
    let matched_pods: Vec<&Pod> = matched.iter().map(|&i| &pods[i]).collect();
    let prior = set.status.clone().unwrap_or_default();
    let status = calculate_status(
        set,
        &matched_pods,
        &prior.latest_revision,
        prior.collision_count.unwrap_or(0),
    );
    let mut outcome = ReconcileOutcome {
        status: status.clone(),
        matched: matched.clone(),
        ..Default::default()
    };
    let mut current: BTreeMap<usize, Pod> = BTreeMap::new();
    let strategy = &set.spec.update_strategy;
    let held = strategy.type_ == NOT_UPDATE || strategy.paused;
    if ctx.version == KruiseVersion::V1_9 && held {
        return outcome;
    }
    if set
        .spec
        .containers
        .iter()
        .any(SidecarContainer::is_hot_upgrade)
    {
        for &i in &matched {
            let mut pod = pods[i].clone();
            if flip_hot_upgrading(set, &mut pod, ctx.now) {
                current.insert(i, pod);
            }
        }
    }
    let flipped = ctx.version == KruiseVersion::V1_9 && !current.is_empty();
    let done = held || status.updated_pods >= status.matched_pods || flipped;
    if !done {
        let view: Vec<Pod> = matched
            .iter()
            .map(|i| current.get(i).cloned().unwrap_or_else(|| pods[*i].clone()))
            .collect();
        let next = next_upgrade_pods(set, &view);
        outcome.not_upgradable = next.not_upgradable.iter().map(|&k| matched[k]).collect();
        for &k in &next.not_upgradable {
            let mut pod = view[k].clone();
            if set_upgradable_condition(&mut pod, set.name(), false, ctx.now) {
                current.insert(matched[k], pod);
            }
        }
        for k in next.upgrade {
            let mut pod = view[k].clone();
            upgrade_pod(set, &mut pod, ctx);
            current.insert(matched[k], pod);
        }
    }
    outcome.pod_updates = current.into_iter().collect();
    outcome
}

/// Upgrades one pod's sidecars to the set, records the state, restores the injected list
/// and applies patchPodMetadata.
///
/// Port of pkg/controller/sidecarset/sidecarset_processor.go::updatePodSidecarAndHash (v1.8.4).
pub fn upgrade_pod(set: &SidecarSet, pod: &mut Pod, ctx: ReconcileContext<'_>) {
    let mut changed = Vec::new();
    for sidecar in &set.spec.containers {
        let target = if sidecar.is_hot_upgrade() {
            find_container_to_hot_upgrade(sidecar, pod, set)
        } else {
            sidecar.name().to_owned()
        };
        let image = sidecar.container.image.clone();
        let Some(container) = pod
            .spec
            .as_mut()
            .and_then(|s| s.containers.iter_mut().find(|c| c.name == target))
        else {
            continue;
        };
        if container.image == image {
            continue;
        }
        container.image = image;
        if sidecar.is_hot_upgrade() {
            mark_hot_upgrade_working(set, sidecar, pod, &target);
        }
        changed.push(target);
    }
    update_pod_annotations_in_upgrade(pod, set, &changed, ctx.now);
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if annotations
        .get(SIDECARSET_LIST_ANNOTATION)
        .is_none_or(String::is_empty)
    {
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let mut names: Vec<&str> = ctx
            .all_sets
            .iter()
            .filter(|s| pod_matched_sidecar_set(s, &ns, &labels, ctx.namespaces).unwrap_or(false))
            .map(SidecarSet::name)
            .collect();
        if !names.contains(&set.name()) {
            names.push(set.name());
        }
        names.sort_unstable();
        annotations.insert(SIDECARSET_LIST_ANNOTATION.to_owned(), names.join(","));
    }
    // A patch that cannot be applied leaves the annotations as they were.
    let mut patched = annotations.clone();
    if patch_pod_metadata(&mut patched, &set.spec.patch_pod_metadata).is_ok() {
        *annotations = patched;
    }
    set_upgradable_condition(pod, set.name(), true, ctx.now);
}

/// Pod condition reason when every set can upgrade the pod in place.
pub const ALL_UPGRADABLE_REASON: &str = "AllSidecarsetUpgradable";
/// Pod condition reason when some set changed more than images.
pub const IMMUTABLE_FIELD_REASON: &str = "UpdateImmutableField";

/// Records in the `SidecarSetUpgradable` condition (message: JSON map set -> bool) whether
/// this set can upgrade the pod in place. Returns whether the pod changed.
///
/// Port of pkg/controller/sidecarset/sidecarset_processor.go::updatePodSidecarSetUpgradableCondition (v1.8.4).
pub fn set_upgradable_condition(
    pod: &mut Pod,
    set_name: &str,
    upgradable: bool,
    now: jiff::Timestamp,
) -> bool {
    let conditions = pod
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    let existing = conditions
        .iter()
        .position(|c| c.type_ == SIDECARSET_UPGRADABLE_CONDITION);
    let mut messages: BTreeMap<String, bool> = existing
        .and_then(|i| conditions[i].message.as_deref())
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default();
    if messages.get(set_name) == Some(&upgradable) {
        return false;
    }
    messages.insert(set_name.to_owned(), upgradable);
    let all = messages.values().all(|v| *v);
    let condition = PodCondition {
        type_: SIDECARSET_UPGRADABLE_CONDITION.to_owned(),
        status: if all { "True" } else { "False" }.to_owned(),
        reason: Some(
            if all {
                ALL_UPGRADABLE_REASON
            } else {
                IMMUTABLE_FIELD_REASON
            }
            .to_owned(),
        ),
        message: serde_json::to_string(&messages).ok(),
        last_transition_time: Some(Time(now)),
        ..Default::default()
    };
    match existing {
        Some(i) => conditions[i] = condition,
        None => conditions.push(condition),
    }
    true
}

/// Which twin of a hot sidecar receives the new image: the one holding the empty image
/// (`-1` first), else the other one when exactly one twin is ready and consistent, else
/// the idle one.
///
/// Port of pkg/control/sidecarcontrol/util_hotupgrade.go::findContainerToHotUpgrade (v1.8.4).
pub fn find_container_to_hot_upgrade(
    sidecar: &SidecarContainer,
    pod: &Pod,
    set: &SidecarSet,
) -> String {
    let (_, idle) = pod_hot_upgrade_containers(sidecar.name(), pod);
    let (one, two) = super::control::hot_upgrade_twin_names(sidecar.name());
    let empty = &sidecar.upgrade_strategy.hot_upgrade_empty_image;
    for twin in [&one, &two] {
        if &image_of(pod, twin) == empty {
            return twin.clone();
        }
    }
    let ready: BTreeMap<&str, bool> = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .map(|c| (c.name.as_str(), c.ready))
        .collect();
    let ok = |name: &String| {
        ready.get(name.as_str()).copied().unwrap_or(false)
            && is_pod_state_consistent(set, pod, &BTreeSet::from([name.clone()]))
    };
    match (ok(&one), ok(&two)) {
        (true, false) => two,
        (false, true) => one,
        _ => idle,
    }
}

fn set_annotation(pod: &mut Pod, key: String, value: String) {
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(key, value);
}

/// After upgrading twin `target`: it becomes the working one and the version counters move.
///
/// Port of pkg/controller/sidecarset/sidecarset_hotupgrade.go::updateHotUpgradeContainerInPod (v1.8.4).
fn mark_hot_upgrade_working(
    set: &SidecarSet,
    sidecar: &SidecarContainer,
    pod: &mut Pod,
    target: &str,
) {
    let (one, two) = super::control::hot_upgrade_twin_names(sidecar.name());
    let other = if target == one { two } else { one };
    let annotation = |pod: &Pod, key: &str| super::pod_state::pod_annotation(pod, key).to_owned();
    let mut working: BTreeMap<String, String> =
        serde_json::from_str(&annotation(pod, SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER))
            .unwrap_or_default();
    working.insert(sidecar.name().to_owned(), target.to_owned());
    if let Ok(encoded) = serde_json::to_string(&working) {
        set_annotation(
            pod,
            SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER.to_owned(),
            encoded,
        );
    }
    let rv = set.metadata.resource_version.clone().unwrap_or_default();
    let old_version = annotation(pod, &format!("{SIDECARSET_VERSION_PREFIX}{other}"));
    set_annotation(
        pod,
        format!("{SIDECARSET_VERSION_PREFIX}{target}"),
        rv.clone(),
    );
    set_annotation(
        pod,
        format!("{SIDECARSET_VERSION_ALT_PREFIX}{target}"),
        old_version,
    );
    set_annotation(pod, format!("{SIDECARSET_VERSION_ALT_PREFIX}{other}"), rv);
}

/// Once a hot upgrade has landed (non-idle sidecars consistent, and the pod RunningAndReady
/// or those containers ready), resets the idle twin to the empty image. Returns whether the
/// pod changed. The hash annotation is left alone.
///
/// Port of pkg/controller/sidecarset/sidecarset_hotupgrade.go::flipHotUpgradingContainers (v1.8.4).
pub fn flip_hot_upgrading(set: &SidecarSet, pod: &mut Pod, now: jiff::Timestamp) -> bool {
    let mut non_idle = sidecar_containers_in_pod(set);
    let mut idle_twins = Vec::new();
    for sidecar in set.spec.containers.iter().filter(|c| c.is_hot_upgrade()) {
        let (working, idle) = pod_hot_upgrade_containers(sidecar.name(), pod);
        non_idle.remove(&idle);
        idle_twins.push((
            working,
            idle,
            sidecar.upgrade_strategy.hot_upgrade_empty_image.clone(),
        ));
    }
    let upgrading = idle_twins
        .iter()
        .any(|(_, idle, empty)| &image_of(pod, idle) != empty);
    if !upgrading || !is_pod_state_consistent(set, pod, &non_idle) {
        return false;
    }
    let all_ready = pod
        .status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .filter(|c| non_idle.contains(&c.name))
        .all(|c| c.ready);
    if !(is_running_and_ready(pod) || all_ready) {
        return false;
    }
    let mut changed = Vec::new();
    for (working, idle, empty) in &idle_twins {
        if &image_of(pod, idle) == empty {
            continue;
        }
        if let Some(c) = pod
            .spec
            .as_mut()
            .and_then(|s| s.containers.iter_mut().find(|c| &c.name == idle))
        {
            c.image = Some(empty.clone());
        }
        set_annotation(
            pod,
            format!("{SIDECARSET_VERSION_PREFIX}{idle}"),
            "0".to_owned(),
        );
        set_annotation(
            pod,
            format!("{SIDECARSET_VERSION_ALT_PREFIX}{working}"),
            "0".to_owned(),
        );
        changed.push(idle.clone());
    }
    record_inplace_update_state(pod, set, &changed, now);
    true
}

/// The spec image of the pod's container `name` ("" when absent).
fn image_of(pod: &Pod, name: &str) -> String {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .find(|c| c.name == name)
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}
