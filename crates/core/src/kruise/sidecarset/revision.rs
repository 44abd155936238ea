//! SidecarSet ControllerRevisions: the stored data, the name, and whether the controller
//! reuses, rolls back to, or creates a revision.

use serde_json::{Value, json};

use super::{gojson, history::RevisionRef};
use crate::{
    api::sidecarset::SidecarSet,
    kruise::revision::{controller_revision_name, hash_controller_revision},
};

/// A stored revision as registration needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRevision {
    pub reference: RevisionRef,
    /// The revision's `data`.
    pub data: Value,
}

/// What registering the set's current spec does.
#[derive(Debug, Clone, PartialEq)]
pub enum RevisionPlan {
    /// The newest revision already holds this spec.
    Reuse { name: String },
    /// An older revision holds it: bump its `revision` number (a rollback).
    Bump { name: String, revision: i64 },
    /// Create a new revision.
    Create {
        name: String,
        revision: i64,
        data: Value,
    },
}

/// The revision `data`: a replace patch of the spec parts that define injected pods.
///
/// Port of pkg/control/sidecarcontrol/history_control.go::getPatch (v1.8.4).
pub fn revision_data(set: &SidecarSet) -> Value {
    let spec = serde_json::to_value(&set.spec).unwrap_or(Value::Null);
    let pick = |k: &str| spec.get(k).cloned().unwrap_or(Value::Null);
    json!({"spec": {
        "$patch": "replace",
        "containers": pick("containers"),
        "initContainers": pick("initContainers"),
        "volumes": pick("volumes"),
        "imagePullSecrets": pick("imagePullSecrets"),
        "patchPodMetadata": pick("patchPodMetadata"),
    }})
}

/// The bytes that are hashed and compared. Upstream round-trips the object through a
/// generic map, so every object ends up with sorted keys, after Go's omitempty rules were
/// applied to the containers (volumes, secrets and patches are taken as stored).
fn raw(data: &Value) -> String {
    let mut spec = data["spec"].clone();
    for key in ["containers", "initContainers"] {
        if let Some(list) = spec.get(key).and_then(Value::as_array) {
            let go = gojson::encode_sidecar_containers(list);
            spec[key] = serde_json::from_str(&go).unwrap_or(Value::Null);
        }
    }
    gojson::encode_any(&json!({"spec": spec}))
}

/// `<set>-<hash>` for the data and collision count.
///
/// Port of k8s pkg/controller/history/controller_history.go::HashControllerRevision and
/// ControllerRevisionName.
pub fn revision_name(set_name: &str, data: &Value, collision_count: i32) -> String {
    let hash = hash_controller_revision(raw(data).as_bytes(), Some(collision_count));
    controller_revision_name(set_name, &hash)
}

/// Decides how the set's current spec is registered against its stored revisions (sorted
/// by revision ascending), and the collision count to keep in status.
///
/// Port of pkg/controller/sidecarset/sidecarset_processor.go::registerLatestRevision (v1.8.4).
pub fn plan_latest_revision(
    set: &SidecarSet,
    stored: &[StoredRevision],
    collision_count: i32,
) -> (RevisionPlan, i32) {
    let data = revision_data(set);
    let wanted = raw(&data);
    let next = stored
        .iter()
        .map(|r| r.reference.revision)
        .max()
        .unwrap_or(0)
        + 1;
    let equal: Vec<&StoredRevision> = stored.iter().filter(|r| raw(&r.data) == wanted).collect();
    if let Some(last_equal) = equal.last() {
        let newest = stored.last().map(|r| r.reference.name.as_str());
        let plan = if newest == Some(last_equal.reference.name.as_str()) {
            RevisionPlan::Reuse {
                name: last_equal.reference.name.clone(),
            }
        } else {
            RevisionPlan::Bump {
                name: last_equal.reference.name.clone(),
                revision: next,
            }
        };
        return (plan, collision_count);
    }
    let mut collisions = collision_count;
    loop {
        let name = revision_name(set.name(), &data, collisions);
        if !stored.iter().any(|r| r.reference.name == name) {
            return (
                RevisionPlan::Create {
                    name,
                    revision: next,
                    data,
                },
                collisions,
            );
        }
        collisions = collisions.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(image: &str) -> SidecarSet {
        serde_json::from_value(json!({"metadata": {"name": "s"},
            "spec": {"containers": [{"name": "c", "image": image}]}}))
        .unwrap()
    }

    fn stored(name: &str, revision: i64, s: &SidecarSet) -> StoredRevision {
        StoredRevision {
            reference: RevisionRef {
                name: name.to_owned(),
                revision,
                ..Default::default()
            },
            data: revision_data(s),
        }
    }

    #[test]
    fn reuse_rollback_and_create() {
        let (v1, v2) = (set("i:1"), set("i:2"));
        let (plan, _) = plan_latest_revision(&v1, &[], 0);
        let RevisionPlan::Create { name, revision, .. } = plan else {
            panic!("expected a new revision");
        };
        assert!(name.starts_with("s-"));
        assert_eq!(revision, 1);
        let history = [stored(&name, 1, &v1)];
        assert_eq!(
            plan_latest_revision(&v1, &history, 0).0,
            RevisionPlan::Reuse { name: name.clone() }
        );
        let history = [stored(&name, 1, &v1), stored("s-two", 2, &v2)];
        assert_eq!(
            plan_latest_revision(&v1, &history, 0).0,
            RevisionPlan::Bump { name, revision: 3 }
        );
        // A name taken by different data bumps the collision count.
        let taken = revision_name("s", &revision_data(&v2), 0);
        let history = [stored(&taken, 1, &v1)];
        let (plan, collisions) = plan_latest_revision(&v2, &history, 0);
        assert_eq!(collisions, 1);
        assert!(matches!(plan, RevisionPlan::Create { name, .. } if name != taken));
    }
}
