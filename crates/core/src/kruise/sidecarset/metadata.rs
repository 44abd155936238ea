//! `patchPodMetadata`: how a SidecarSet writes pod annotations at injection and upgrade.

use std::collections::BTreeMap;

use serde_json::Value;

use super::gojson;
use crate::api::sidecarset::{
    PATCH_MERGE_JSON, PATCH_OVERWRITE, PATCH_RETAIN, SidecarSetPatchPodMetadata,
};

/// Why a merge patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("annotation {key}: {reason}")]
pub struct PatchError {
    pub key: String,
    pub reason: String,
}

/// Applies the patches in order and returns `skip` (true when nothing changed).
///
/// - Retain (or empty): set a key only when absent;
/// - Overwrite: always set it;
/// - MergePatchJson: RFC 7386 merge onto a non-empty existing value (re-encoded as Go does:
///   sorted keys, no spaces), else set it.
///
/// Port of pkg/control/sidecarcontrol/util.go::PatchPodMetadata (v1.8.4).
pub fn patch_pod_metadata(
    annotations: &mut BTreeMap<String, String>,
    patches: &[SidecarSetPatchPodMetadata],
) -> Result<bool, PatchError> {
    if patches.is_empty() {
        return Ok(true);
    }
    let before = annotations.clone();
    for patch in patches {
        match patch.patch_policy.as_str() {
            PATCH_RETAIN | "" => {
                for (k, v) in &patch.annotations {
                    annotations.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            PATCH_OVERWRITE => {
                for (k, v) in &patch.annotations {
                    annotations.insert(k.clone(), v.clone());
                }
            }
            PATCH_MERGE_JSON => {
                for (k, v) in &patch.annotations {
                    let merged = match annotations.get(k).filter(|o| !o.is_empty()) {
                        Some(origin) => merge_patch(k, origin, v)?,
                        None => v.clone(),
                    };
                    annotations.insert(k.clone(), merged);
                }
            }
            _ => {}
        }
    }
    Ok(*annotations == before)
}

/// Port of github.com/evanphx/json-patch::MergePatch as PatchPodMetadata uses it (re-encoded
/// as Go does).
fn merge_patch(key: &str, origin: &str, patch: &str) -> Result<String, PatchError> {
    let err = |reason: String| PatchError {
        key: key.to_owned(),
        reason,
    };
    let mut doc: Value =
        serde_json::from_str(origin).map_err(|e| err(format!("invalid JSON value: {e}")))?;
    let patch: Value =
        serde_json::from_str(patch).map_err(|e| err(format!("invalid JSON patch: {e}")))?;
    json_patch::merge(&mut doc, &patch);
    Ok(gojson::encode_any(&doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(policy: &str, pairs: &[(&str, &str)]) -> SidecarSetPatchPodMetadata {
        SidecarSetPatchPodMetadata {
            patch_policy: policy.to_owned(),
            annotations: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn retain_keeps_existing_and_overwrite_replaces() {
        let mut ann = BTreeMap::from([("a".to_owned(), "1".to_owned())]);
        let skip = patch_pod_metadata(&mut ann, &[patch("Retain", &[("a", "2")])]).unwrap();
        assert!(skip);
        assert_eq!(ann["a"], "1");
        let skip = patch_pod_metadata(&mut ann, &[patch("Overwrite", &[("a", "2")])]).unwrap();
        assert!(!skip);
        assert_eq!(ann["a"], "2");
    }

    #[test]
    fn merge_patch_rejects_invalid_json() {
        let mut ann = BTreeMap::from([("a".to_owned(), "not json".to_owned())]);
        assert!(patch_pod_metadata(&mut ann, &[patch("MergePatchJson", &[("a", "{}")])]).is_err());
    }
}
