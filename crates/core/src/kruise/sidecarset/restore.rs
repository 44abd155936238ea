//! A SidecarSet as one of its ControllerRevisions recorded it: what pod creation injects when
//! `injectionStrategy.revision` names a revision (by name or by custom version).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use serde_json::Value;

use super::{
    SIDECARSET_CUSTOM_VERSION_LABEL, SIDECARSET_HASH_ANNOTATION,
    SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, SIDECARSET_NAME_LABEL, hash::sidecar_set_hashes,
};
use crate::api::sidecarset::{SidecarSet, SidecarSetSpec};

/// The namespace SidecarSet ControllerRevisions live in (upstream: kruise-manager's own
/// namespace, `kruise-system` by default).
pub const REVISION_NAMESPACE: &str = "kruise-system";

/// The spec fields a SidecarSet revision records (`copySidecarSetSpecRevision`).
pub const RECORDED_FIELDS: [&str; 5] = [
    "volumes",
    "containers",
    "initContainers",
    "imagePullSecrets",
    "patchPodMetadata",
];

fn label<'a>(rev: &'a ControllerRevision, key: &str) -> Option<&'a str> {
    rev.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

fn annotation<'a>(rev: &'a ControllerRevision, key: &str) -> &'a str {
    rev.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
        .unwrap_or_default()
}

/// The revision `injectionStrategy.revision` points at among `revisions` (every
/// ControllerRevision of [`REVISION_NAMESPACE`]): the one named `revisionName`, else the newest
/// of the set's revisions labelled with `customVersion`. None when the strategy names nothing
/// or the revision does not exist.
///
/// Port of pkg/control/sidecarcontrol/history_control.go::getControllerRevision (v1.8.4).
pub fn injection_revision<'a>(
    set: &SidecarSet,
    revisions: &'a [ControllerRevision],
) -> Option<&'a ControllerRevision> {
    let wanted = set.spec.injection_strategy.revision.as_ref()?;
    if let Some(name) = &wanted.revision_name {
        return revisions
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name.as_str()));
    }
    let custom = wanted.custom_version.as_deref()?;
    revisions
        .iter()
        .filter(|r| {
            label(r, SIDECARSET_NAME_LABEL) == Some(set.name())
                && label(r, SIDECARSET_CUSTOM_VERSION_LABEL) == Some(custom)
        })
        .max_by(|a, b| {
            a.revision
                .cmp(&b.revision)
                .then_with(|| a.metadata.name.cmp(&b.metadata.name))
        })
}

/// The set with the recorded spec fields of `rev`, its hash annotations (the revision's, else
/// computed from the restored spec) and `status.latestRevision` = the revision's name.
///
/// Port of pkg/control/sidecarcontrol/history_control.go::GetHistorySidecarSet and
/// restoreRevisionInfo (v1.8.4). Upstream's `$patch: replace` leaves only the recorded fields
/// in the restored spec; injection reads nothing else, so the other fields are kept here.
pub fn restore_from_revision(
    set: &SidecarSet,
    rev: &ControllerRevision,
) -> Result<SidecarSet, String> {
    let rev_name = rev.metadata.name.clone().unwrap_or_default();
    let recorded = rev
        .data
        .as_ref()
        .map(|d| &d.0)
        .and_then(|d| d.get("spec"))
        .and_then(Value::as_object)
        .ok_or_else(|| format!("controllerRevision {rev_name} has no recorded spec"))?;
    let mut spec = serde_json::to_value(&set.spec).map_err(|e| e.to_string())?;
    let Some(fields) = spec.as_object_mut() else {
        return Err("the SidecarSet spec is not an object".to_owned());
    };
    for key in RECORDED_FIELDS {
        match recorded.get(key).filter(|v| !v.is_null()) {
            Some(v) => fields.insert(key.to_owned(), v.clone()),
            None => fields.remove(key),
        };
    }
    let spec: SidecarSetSpec = serde_json::from_value(spec)
        .map_err(|e| format!("controllerRevision {rev_name} does not restore: {e}"))?;
    let mut restored = set.clone();
    restored.spec = spec;
    let (hash, without) = sidecar_set_hashes(&restored.spec);
    let annotations = restored
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new);
    for (key, computed) in [
        (SIDECARSET_HASH_ANNOTATION, hash),
        (SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, without),
    ] {
        let recorded = annotation(rev, key);
        let value = if recorded.is_empty() {
            computed
        } else {
            recorded.to_owned()
        };
        annotations.insert(key.to_owned(), value);
    }
    restored
        .status
        .get_or_insert_with(Default::default)
        .latest_revision = rev_name;
    Ok(restored)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
    use serde_json::json;

    use super::*;
    use crate::kruise::sidecarset::revision::revision_data;

    fn set(image: &str, revision: Value) -> SidecarSet {
        serde_json::from_value(json!({
            "metadata": {"name": "log", "annotations": {
                SIDECARSET_HASH_ANNOTATION: "current-hash",
                SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION: "current-without"}},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "containers": [{"name": "agent", "image": image}],
                "injectionStrategy": {"revision": revision},
            },
            "status": {"latestRevision": "log-new"},
        }))
        .unwrap()
    }

    fn revision(name: &str, number: i64, image: &str, custom: Option<&str>) -> ControllerRevision {
        let mut labels = BTreeMap::from([(SIDECARSET_NAME_LABEL.to_owned(), "log".to_owned())]);
        if let Some(c) = custom {
            labels.insert(SIDECARSET_CUSTOM_VERSION_LABEL.to_owned(), c.to_owned());
        }
        ControllerRevision {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.to_owned()),
                labels: Some(labels),
                annotations: Some(BTreeMap::from([(
                    SIDECARSET_HASH_ANNOTATION.to_owned(),
                    format!("hash-of-{name}"),
                )])),
                ..Default::default()
            },
            data: Some(RawExtension(revision_data(&set(image, Value::Null)))),
            revision: number,
        }
    }

    #[test]
    fn a_named_revision_restores_its_containers_hashes_and_name() {
        let revisions = [
            revision("log-old", 1, "agent:1", None),
            revision("log-new", 2, "agent:2", None),
        ];
        let s = set("agent:2", json!({"revisionName": "log-old"}));
        let rev = injection_revision(&s, &revisions).unwrap();
        let restored = restore_from_revision(&s, rev).unwrap();
        assert_eq!(
            restored.spec.containers[0].container.image.as_deref(),
            Some("agent:1")
        );
        assert_eq!(restored.latest_revision(), "log-old");
        assert_eq!(
            restored.annotation(SIDECARSET_HASH_ANNOTATION),
            "hash-of-log-old"
        );
        // No recorded without-image hash: computed from the restored spec.
        let (_, without) = sidecar_set_hashes(&restored.spec);
        assert_eq!(
            restored.annotation(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION),
            without
        );
        // The selector is kept: matching already happened on the current set.
        assert!(restored.spec.selector.is_some());
    }

    #[test]
    fn a_custom_version_picks_the_newest_labelled_revision() {
        let revisions = [
            revision("log-a", 1, "agent:1", Some("v1")),
            revision("log-b", 3, "agent:3", Some("v1")),
            revision("log-c", 2, "agent:2", Some("v2")),
        ];
        let s = set("agent:4", json!({"customVersion": "v1"}));
        let rev = injection_revision(&s, &revisions).unwrap();
        assert_eq!(rev.metadata.name.as_deref(), Some("log-b"));
        let missing = set("agent:4", json!({"customVersion": "v9"}));
        assert!(injection_revision(&missing, &revisions).is_none());
        let none = set("agent:4", Value::Null);
        assert!(injection_revision(&none, &revisions).is_none());
    }
}
