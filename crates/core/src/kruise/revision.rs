//! Revision identity: hash equality for pods, `IsPodUpdate`, ControllerRevision naming and the
//! FNV-32 revision hash.

use super::FeatureGates;

/// Pod label holding the revision a pod was built from.
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller-revision-hash";
/// Pod label holding the short hash (CloneSet).
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";
/// Pod lifecycle state label.
pub const LIFECYCLE_STATE_LABEL: &str = "lifecycle.apps.kruise.io/state";
/// The PreparingUpdate lifecycle state.
pub const PREPARING_UPDATE: &str = "PreparingUpdate";

/// The part of a revision name after its last `-` (the whole string when there is none).
pub fn short_hash(revision: &str) -> &str {
    revision.rsplit('-').next().unwrap_or(revision)
}

/// Port of pkg/controller/cloneset/utils/cloneset_utils.go::EqualToRevisionHash (v1.8.4): equal,
/// or equal after the last `-` on both sides.
pub fn equal_to_revision_hash(pod_hash: &str, revision: &str) -> bool {
    pod_hash == revision || short_hash(pod_hash) == short_hash(revision)
}

/// Port of pkg/util/revision/revision.go::IsPodUpdate (v1.8.4): a PreparingUpdate pod counts as
/// updated when `PreparingUpdateAsUpdate` is on.
pub fn is_pod_update(
    pod_hash: &str,
    lifecycle_state: &str,
    update_revision: &str,
    gates: &FeatureGates,
) -> bool {
    if gates.enabled("PreparingUpdateAsUpdate") && lifecycle_state == PREPARING_UPDATE {
        return true;
    }
    equal_to_revision_hash(pod_hash, update_revision)
}

/// Port of k8s controller/history ControllerRevisionName: `<prefix>-<hash>`, prefix cut to 223.
pub fn controller_revision_name(workload: &str, hash: &str) -> String {
    let prefix: String = if workload.len() > 223 {
        workload.chars().take(223).collect()
    } else {
        workload.to_owned()
    };
    format!("{prefix}-{hash}")
}

/// The value CloneSet writes into `controller-revision-hash`: the full revision name, or only the
/// short hash when the `CloneSetShortHash` gate is on (`WriteRevisionHash`).
pub fn pod_revision_label(revision: &str, gates: &FeatureGates) -> String {
    if gates.enabled("CloneSetShortHash") {
        short_hash(revision).to_owned()
    } else {
        revision.to_owned()
    }
}

const SAFE_ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Port of apimachinery util/rand::SafeEncodeString: each byte maps to `SAFE_ALPHANUMS[b % 27]`.
pub fn safe_encode_string(s: &str) -> String {
    s.bytes()
        .map(|b| char::from(SAFE_ALPHANUMS[usize::from(b) % SAFE_ALPHANUMS.len()]))
        .collect()
}

/// Port of k8s controller/history::HashControllerRevision: FNV-1 (32-bit) over `data.raw`, then the
/// collision count's decimal string, printed in decimal and safe-encoded.
pub fn hash_controller_revision(data_raw: &[u8], collision_count: Option<i32>) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash = hash.wrapping_mul(0x0100_0193);
            hash ^= u32::from(*b);
        }
    };
    feed(data_raw);
    if let Some(count) = collision_count {
        feed(count.to_string().as_bytes());
    }
    safe_encode_string(&hash.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_and_short_hash() {
        assert!(equal_to_revision_hash("cs-7d9f", "7d9f"));
        assert!(equal_to_revision_hash("", ""));
        assert!(!equal_to_revision_hash("cs-a", "cs-b"));
        assert_eq!(short_hash("a-b-c"), "c");
        assert_eq!(short_hash("abc"), "abc");
        let gates = FeatureGates::new().with("PreparingUpdateAsUpdate", true);
        assert!(is_pod_update("x-old", PREPARING_UPDATE, "x-new", &gates));
        assert!(!is_pod_update(
            "x-old",
            PREPARING_UPDATE,
            "x-new",
            &FeatureGates::new()
        ));
    }

    #[test]
    fn fnv1_hash_is_stable() {
        // FNV-1 32 of "" is the offset basis 2166136261.
        assert_eq!(
            hash_controller_revision(b"", None),
            safe_encode_string("2166136261")
        );
        assert_ne!(
            hash_controller_revision(b"{}", None),
            hash_controller_revision(b"{}", Some(1))
        );
        assert_eq!(controller_revision_name(&"x".repeat(300), "h").len(), 225);
        assert_eq!(
            pod_revision_label(
                "cs-abc",
                &FeatureGates::new().with("CloneSetShortHash", true)
            ),
            "abc"
        );
    }
}
