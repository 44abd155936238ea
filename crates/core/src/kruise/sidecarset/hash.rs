//! The SidecarSet content hashes written by the SidecarSet mutating webhook
//! (`kruise.io/sidecarset-hash` and `kruise.io/sidecarset-hash-without-image`).

use serde_json::Value;

use sha2::{Digest, Sha256};

use super::gojson;
use crate::{api::sidecarset::SidecarSetSpec, kruise::revision::safe_encode_string};

/// The exact JSON Kruise hashes for a spec given as Kubernetes JSON (`containers`,
/// `initContainers` as stored).
///
/// Port of pkg/control/sidecarcontrol/hash.go::encodeSidecarSet (v1.8.4).
pub fn canonical_json(spec: &Value, without_image: bool) -> String {
    let strip = |list: Option<&Value>| -> Vec<Value> {
        let mut items = list.and_then(Value::as_array).cloned().unwrap_or_default();
        if without_image {
            for item in &mut items {
                if let Some(obj) = item.as_object_mut() {
                    obj.remove("image");
                }
            }
        }
        items
    };
    let containers = strip(spec.get("containers"));
    let init_containers = strip(spec.get("initContainers"));
    // Upstream computes the native-sidecar subset but then hashes every init container once
    // at least one of them has restartPolicy=Always.
    let has_native_sidecar = init_containers
        .iter()
        .any(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always"));
    let mut out = String::from("{\"containers\":");
    out.push_str(&gojson::encode_sidecar_containers(&containers));
    if has_native_sidecar {
        out.push_str(",\"initContainers\":");
        out.push_str(&gojson::encode_sidecar_containers(&init_containers));
    }
    out.push('}');
    out
}

/// The hash of a canonical JSON string: hex SHA-256 mapped through `SafeEncodeString`.
///
/// Port of pkg/control/sidecarcontrol/hash.go::hash (v1.8.4).
pub fn hash_canonical(canonical: &str) -> String {
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    safe_encode_string(&hex)
}

/// `kruise.io/sidecarset-hash` of a spec given as Kubernetes JSON.
///
/// Port of pkg/control/sidecarcontrol/hash.go::SidecarSetHash (v1.8.4).
pub fn sidecar_set_hash_json(spec: &Value) -> String {
    hash_canonical(&canonical_json(spec, false))
}

/// `kruise.io/sidecarset-hash-without-image` of a spec given as Kubernetes JSON.
///
/// Port of pkg/control/sidecarcontrol/hash.go::SidecarSetHashWithoutImage (v1.8.4).
pub fn sidecar_set_hash_without_image_json(spec: &Value) -> String {
    hash_canonical(&canonical_json(spec, true))
}

/// Both hashes of a typed spec: `(hash, hashWithoutImage)`. The spec is hashed as given; the
/// webhook applies the defaults first.
pub fn sidecar_set_hashes(spec: &SidecarSetSpec) -> (String, String) {
    let value = serde_json::to_value(spec).unwrap_or(Value::Null);
    (
        sidecar_set_hash_json(&value),
        sidecar_set_hash_without_image_json(&value),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn upstream_example() {
        let spec = json!({"containers": [{"name": "container1", "image": "test-image"}]});
        assert_eq!(
            sidecar_set_hash_json(&spec),
            "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78"
        );
    }

    #[test]
    fn typed_spec_hashes_like_its_json() {
        let value = json!({"containers": [{"name": "container1", "image": "test-image"}]});
        let spec: SidecarSetSpec = serde_json::from_value(value.clone()).unwrap();
        let (hash, without) = sidecar_set_hashes(&spec);
        assert_eq!(hash, sidecar_set_hash_json(&value));
        assert_eq!(without, sidecar_set_hash_without_image_json(&value));
        assert_ne!(hash, without);
    }
}
