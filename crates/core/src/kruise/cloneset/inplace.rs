//! In-place update mechanics (`pkg/util/inplaceupdate`, v1.8.4): the state and grace
//! annotations, starting an update, finishing a grace period, completion and the
//! `InPlaceUpdateReady` condition, on a small pod model.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// `pkg/util/inplaceupdate::UpdateSpec`: the `apps.kruise.io/inplace-update-grace` value.
pub use crate::api::podstate::InPlaceUpdateGraceSpec as UpdateSpec;
pub use crate::api::podstate::{
    InPlaceUpdateContainerBatch, InPlaceUpdateContainerStatus, InPlaceUpdateState,
};

use super::{PodInfo, state};
use crate::api::keys;
use crate::kruise::{FeatureGates, revision};

/// The in-place update record annotation (and its legacy key).
pub const STATE_KEY: &str = keys::INPLACE_UPDATE_STATE;
pub const STATE_KEY_OLD: &str = keys::INPLACE_UPDATE_STATE_LEGACY;
/// The pending-update annotation used during a grace period (and its legacy key).
pub const GRACE_KEY: &str = keys::INPLACE_UPDATE_GRACE;
pub const GRACE_KEY_OLD: &str = keys::INPLACE_UPDATE_GRACE_LEGACY;
/// The readiness gate / condition type CloneSet injects.
pub const IN_PLACE_UPDATE_READY: &str = keys::CONDITION_INPLACE_UPDATE_READY;

/// RFC 3339 (seconds) as metav1.Time marshals.
pub fn rfc3339(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).map_or_else(|_| String::new(), |t| t.to_string())
}

/// `secs` as a `metav1.Time` (None when out of range); it marshals exactly as [`rfc3339`].
fn time(secs: i64) -> Option<Time> {
    jiff::Timestamp::from_second(secs).ok().map(Time)
}

/// One pod condition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Condition {
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub last_transition: Option<i64>,
}

/// One container's spec image and status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Container {
    pub name: String,
    pub image: String,
    pub status_image: String,
    pub image_id: String,
}

/// The pod fields an in-place update reads and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodModel {
    pub name: String,
    pub node_name: String,
    pub phase: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub finalizers: Vec<String>,
    pub readiness_gates: Vec<String>,
    pub conditions: Vec<Condition>,
    pub containers: Vec<Container>,
    pub created: Option<i64>,
}

impl PodModel {
    /// The condition of `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    fn set_condition(&mut self, cond: Condition) {
        match self.conditions.iter_mut().find(|c| c.type_ == cond.type_) {
            Some(existing) => *existing = cond,
            None => self.conditions.push(cond),
        }
    }

    fn annotation(&self, key: &str, old: &str) -> Option<&str> {
        self.annotations
            .get(key)
            .or_else(|| self.annotations.get(old))
            .map(String::as_str)
    }

    /// The lifecycle state label (`""` when absent).
    pub fn lifecycle_state(&self) -> &str {
        self.labels
            .get(revision::LIFECYCLE_STATE_LABEL)
            .map_or("", String::as_str)
    }

    /// Sets the lifecycle state label (and its timestamp annotation).
    pub fn set_lifecycle_state(&mut self, state: &str, now: i64) {
        self.labels
            .insert(revision::LIFECYCLE_STATE_LABEL.to_owned(), state.to_owned());
        self.annotations.insert(
            "lifecycle.apps.kruise.io/timestamp".to_owned(),
            rfc3339(now),
        );
    }

    /// The projection the CloneSet counting logic reads.
    pub fn info(&self) -> PodInfo {
        let ready = self.condition("Ready");
        PodInfo {
            name: self.name.clone(),
            uid: self.name.clone(),
            revision: self
                .labels
                .get(revision::CONTROLLER_REVISION_HASH_LABEL)
                .cloned()
                .unwrap_or_default(),
            lifecycle_state: self.lifecycle_state().to_owned(),
            phase: self.phase.clone(),
            node_name: self.node_name.clone(),
            ready: ready.is_some_and(|c| c.status == "True"),
            in_place_update_ready: self
                .condition(IN_PLACE_UPDATE_READY)
                .is_none_or(|c| c.status == "True"),
            ready_since: ready.and_then(|c| c.last_transition),
            created: self.created,
            specified_delete: self.labels.contains_key(super::SPECIFIED_DELETE_LABEL),
            in_place_grace: self.annotation(GRACE_KEY, GRACE_KEY_OLD).is_some(),
            labels: self.labels.clone(),
            finalizers: self.finalizers.clone(),
            ..PodInfo::default()
        }
    }

    fn has_gate(&self) -> bool {
        self.readiness_gates
            .iter()
            .any(|g| g == IN_PLACE_UPDATE_READY)
    }
}

/// Port of inplace_update_defaults.go::DefaultCheckInPlaceUpdateCompleted (v1.8.4, image path).
pub fn check_update_completed(pod: &PodModel) -> Result<(), String> {
    if pod.annotation(GRACE_KEY, GRACE_KEY_OLD).is_some() {
        return Err("still in grace period of in-place update".to_owned());
    }
    let Some(raw) = pod.annotation(STATE_KEY, STATE_KEY_OLD) else {
        return Ok(());
    };
    let st: InPlaceUpdateState =
        serde_json::from_str(raw).map_err(|e| format!("bad {STATE_KEY}: {e}"))?;
    if !st.next_container_images.is_empty()
        || !st.next_container_ref_metadata.is_empty()
        || !st.next_container_resources.is_empty()
    {
        return Err("existing containers to in-place update in next batches".to_owned());
    }
    let mut last = st.last_container_statuses.unwrap_or_default();
    for c in &pod.containers {
        if let Some(old) = last.remove(&c.name) {
            let spec_image = if c.image.contains(':') {
                c.image.clone()
            } else {
                format!("{}:latest", c.image)
            };
            if old.image_id == c.image_id && spec_image != c.status_image {
                return Err(format!("container {} imageID not changed", c.name));
            }
        }
    }
    if last.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "not found statuses of containers {:?}",
            last.keys()
        ))
    }
}

/// Port of inplace_update.go::Refresh (v1.8.4): sets `InPlaceUpdateReady=True` once an update is
/// complete, and finishes a grace period whose time is up. Returns the requeue delay in seconds.
pub fn refresh(pod: &mut PodModel, now: i64) -> Result<Option<i64>, String> {
    if pod.has_gate()
        && check_update_completed(pod).is_ok()
        && pod
            .condition(IN_PLACE_UPDATE_READY)
            .is_none_or(|c| c.status != "True")
    {
        pod.set_condition(Condition {
            type_: IN_PLACE_UPDATE_READY.to_owned(),
            status: "True".to_owned(),
            reason: String::new(),
            last_transition: Some(now),
        });
    }
    if pod.annotation(GRACE_KEY, GRACE_KEY_OLD).is_some() {
        return finish_grace_period(pod, now);
    }
    Ok(None)
}

/// Port of inplace_update.go::finishGracePeriod (v1.8.4).
fn finish_grace_period(pod: &mut PodModel, now: i64) -> Result<Option<i64>, String> {
    let raw = pod.annotation(GRACE_KEY, GRACE_KEY_OLD).unwrap_or_default();
    let spec: UpdateSpec =
        serde_json::from_str(raw).map_err(|e| format!("bad {GRACE_KEY}: {e}"))?;
    let raw_state = pod
        .annotation(STATE_KEY, STATE_KEY_OLD)
        .ok_or_else(|| format!("pod has {GRACE_KEY} but {STATE_KEY} not found"))?;
    let Ok(mut st) = serde_json::from_str::<InPlaceUpdateState>(raw_state) else {
        return Ok(None);
    };
    let pod_revision = pod.labels.get(revision::CONTROLLER_REVISION_HASH_LABEL);
    if pod_revision != Some(&spec.revision) {
        remove_grace(pod);
        return Ok(None);
    }
    let started = st.update_timestamp.as_ref().map_or(0, |t| t.0.as_second());
    let span = now - started;
    if span < i64::from(spec.grace_seconds) {
        return Ok(Some(i64::from(spec.grace_seconds) - span));
    }
    patch_spec_to_pod(pod, &spec, &mut st, now);
    remove_grace(pod);
    Ok(None)
}

fn remove_grace(pod: &mut PodModel) {
    pod.annotations.remove(GRACE_KEY);
    pod.annotations.remove(GRACE_KEY_OLD);
}

/// Port of inplace_update_defaults.go::defaultPatchUpdateSpecToPod (v1.8.4, images; every
/// container has the same launch priority, so all go in one batch).
fn patch_spec_to_pod(pod: &mut PodModel, spec: &UpdateSpec, st: &mut InPlaceUpdateState, now: i64) {
    st.next_container_images.clear();
    let mut batch = Vec::new();
    for c in &mut pod.containers {
        if let Some(image) = spec.container_images.get(&c.name) {
            c.image = image.clone();
            batch.push(c.name.clone());
            st.last_container_statuses
                .get_or_insert_with(BTreeMap::new)
                .entry(c.name.clone())
                .or_insert_with(|| InPlaceUpdateContainerStatus {
                    image_id: c.image_id.clone(),
                })
                .image_id = c.image_id.clone();
        }
    }
    batch.sort();
    st.pre_check_before_next = None;
    st.container_batches_record
        .push(InPlaceUpdateContainerBatch {
            timestamp: time(now),
            containers: batch,
        });
    if let Ok(json) = serde_json::to_string(st) {
        pod.annotations.insert(STATE_KEY.to_owned(), json);
    }
}

/// A ControllerRevision as the in-place decision sees it: its container images, or `None` when
/// its template cannot be compared image by image (any non-image difference).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RevisionTemplate {
    pub name: String,
    pub containers: Option<Vec<(String, String)>>,
}

/// Port of inplace_update.go::CanUpdateInPlace + defaultCalculateInPlaceUpdateSpec (v1.8.4,
/// image-only): the spec when only container images differ; `None` when the old revision is gone
/// or anything else changed.
pub fn calculate_spec(
    old: Option<&RevisionTemplate>,
    new: &RevisionTemplate,
    grace_seconds: i32,
) -> Option<UpdateSpec> {
    let old_containers = old?.containers.as_ref()?;
    let new_containers = new.containers.as_ref()?;
    if old_containers.len() != new_containers.len()
        || old_containers
            .iter()
            .zip(new_containers)
            .any(|((a, _), (b, _))| a != b)
    {
        return None;
    }
    let container_images = old_containers
        .iter()
        .zip(new_containers)
        .filter(|((_, a), (_, b))| a != b)
        .map(|(_, (name, image))| (name.clone(), image.clone()))
        .collect();
    Some(UpdateSpec {
        revision: new.name.clone(),
        container_images,
        update_env_from_metadata: false,
        grace_seconds,
        ..UpdateSpec::default()
    })
}

/// Port of inplace_update.go::Update + updatePodInPlace (v1.8.4) for CloneSet: condition False,
/// revision labels, lifecycle Updating, the state annotation, then the images now or after the
/// grace period. Returns the requeue delay in seconds.
pub fn start_update(
    pod: &mut PodModel,
    spec: &UpdateSpec,
    gates: &FeatureGates,
    now: i64,
) -> Option<i64> {
    if pod.has_gate() {
        pod.set_condition(Condition {
            type_: IN_PLACE_UPDATE_READY.to_owned(),
            status: "False".to_owned(),
            reason: "StartInPlaceUpdate".to_owned(),
            last_transition: Some(now),
        });
    }
    pod.labels.insert(
        revision::CONTROLLER_REVISION_HASH_LABEL.to_owned(),
        revision::pod_revision_label(&spec.revision, gates),
    );
    pod.labels.insert(
        revision::POD_TEMPLATE_HASH_LABEL.to_owned(),
        revision::short_hash(&spec.revision).to_owned(),
    );
    pod.set_lifecycle_state(state::UPDATING, now);
    let mut st = InPlaceUpdateState {
        revision: spec.revision.clone(),
        update_timestamp: time(now),
        update_env_from_metadata: spec.update_env_from_metadata,
        update_images: !spec.container_images.is_empty(),
        ..InPlaceUpdateState::default()
    };
    pod.annotations.remove(STATE_KEY_OLD);
    if spec.grace_seconds <= 0 {
        patch_spec_to_pod(pod, spec, &mut st, now);
        remove_grace(pod);
        None
    } else {
        if let Ok(json) = serde_json::to_string(&st) {
            pod.annotations.insert(STATE_KEY.to_owned(), json);
        }
        if let Ok(json) = serde_json::to_string(spec) {
            pod.annotations.insert(GRACE_KEY.to_owned(), json);
        }
        Some(i64::from(spec.grace_seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> PodModel {
        PodModel {
            name: "p".to_owned(),
            phase: "Running".to_owned(),
            readiness_gates: vec![IN_PLACE_UPDATE_READY.to_owned()],
            labels: [(
                revision::CONTROLLER_REVISION_HASH_LABEL.to_owned(),
                "cs-a".to_owned(),
            )]
            .into(),
            containers: vec![Container {
                name: "c".to_owned(),
                image: "nginx".to_owned(),
                status_image: "nginx:latest".to_owned(),
                image_id: "id-1".to_owned(),
            }],
            ..PodModel::default()
        }
    }

    #[test]
    fn image_update_completes_when_the_image_id_changes() {
        let old = RevisionTemplate {
            name: "cs-a".to_owned(),
            containers: Some(vec![("c".to_owned(), "nginx".to_owned())]),
        };
        let new = RevisionTemplate {
            name: "cs-b".to_owned(),
            containers: Some(vec![("c".to_owned(), "nginx:2".to_owned())]),
        };
        let spec = calculate_spec(Some(&old), &new, 0).expect("image-only diff");
        let mut p = pod();
        assert_eq!(start_update(&mut p, &spec, &FeatureGates::new(), 100), None);
        assert_eq!(p.containers[0].image, "nginx:2");
        assert_eq!(p.lifecycle_state(), state::UPDATING);
        assert!(check_update_completed(&p).is_err(), "imageID unchanged");
        p.containers[0].image_id = "id-2".to_owned();
        p.containers[0].status_image = "nginx:2".to_owned();
        assert_eq!(check_update_completed(&p), Ok(()));
        assert_eq!(refresh(&mut p, 200), Ok(None));
        assert_eq!(
            p.condition(IN_PLACE_UPDATE_READY)
                .map(|c| c.status.as_str()),
            Some("True")
        );
        // A changed container list is not an in-place update; a pruned old revision neither.
        let other = RevisionTemplate {
            name: "cs-c".to_owned(),
            containers: Some(vec![("d".to_owned(), "x".to_owned())]),
        };
        assert!(calculate_spec(Some(&old), &other, 0).is_none());
        assert!(calculate_spec(None, &new, 0).is_none());
    }

    #[test]
    fn grace_period_parks_the_spec_then_applies_it() {
        let spec = UpdateSpec {
            revision: "cs-b".to_owned(),
            container_images: [("c".to_owned(), "nginx:2".to_owned())].into(),
            update_env_from_metadata: false,
            grace_seconds: 30,
            ..UpdateSpec::default()
        };
        let mut p = pod();
        assert_eq!(
            start_update(&mut p, &spec, &FeatureGates::new(), 100),
            Some(30)
        );
        assert_eq!(p.containers[0].image, "nginx");
        assert_eq!(refresh(&mut p, 110), Ok(Some(20)));
        assert_eq!(refresh(&mut p, 131), Ok(None));
        assert_eq!(p.containers[0].image, "nginx:2");
        assert!(!p.annotations.contains_key(GRACE_KEY));
    }
}
