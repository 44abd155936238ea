//! The reverse of `api_schema.rs`: every field of the upstream CRD schema is modelled by our type.
//!
//! From each CRD's openAPIV3Schema we build an instance with every property set (non-default
//! values), read it into our type, write it back, and list the leaf paths that were lost. A field
//! we do not model would be dropped silently on read (and lost on a read-modify-write), so the
//! lists must be empty. Subtrees typed by k8s-openapi (pod templates, volumes, PVC templates) get
//! a small realistic sample instead, since upstream leaves them unspecified.

use kruise_tui::api;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};

fn load_crd(file: &str) -> Value {
    let dir = if file.starts_with("rollouts.kruise.io_") {
        "rollouts-v0.6.2"
    } else {
        "v1.9.0"
    };
    let path = format!("{}/crds/{dir}/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A value for `schema` with every property present and nothing at its default.
fn sample(schema: &Value, path: &str) -> Value {
    if schema["x-kubernetes-int-or-string"] == true {
        return json!("25%");
    }
    if schema["x-kubernetes-preserve-unknown-fields"] == true && schema.get("properties").is_none()
    {
        // Pod templates, volumeClaimTemplates, patches: typed by k8s-openapi or opaque.
        return opaque_sample(path);
    }
    match schema["type"].as_str() {
        Some("string") if schema["format"] == "date-time" => json!("2024-05-06T07:08:09Z"),
        Some("string") => json!(format!("s-{}", path.rsplit('.').next().unwrap_or(""))),
        Some("integer") => json!(7),
        Some("boolean") => json!(true),
        Some("array") => json!([sample(&schema["items"], &format!("{path}[]"))]),
        Some("object") => {
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (k, v) in props {
                    if path.is_empty() && (k == "apiVersion" || k == "kind") {
                        continue;
                    }
                    out.insert(k.clone(), sample(v, &format!("{path}.{k}")));
                }
            } else if let Some(item) = schema.get("additionalProperties").filter(|v| v.is_object())
            {
                out.insert("key-1".into(), sample(item, &format!("{path}{{}}")));
            } else {
                out.insert("name".into(), json!("obj-1")); // embedded ObjectMeta
            }
            Value::Object(out)
        }
        _ => opaque_sample(path),
    }
}

fn opaque_sample(path: &str) -> Value {
    let pod_template = json!({
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]}
    });
    let last = path.rsplit('.').next().unwrap_or("");
    match last {
        "volumeClaimTemplates" => {
            json!([{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}])
        }
        "volumes" => json!([{"name": "v", "emptyDir": {"medium": "Memory"}}]),
        "patch" => json!({"metadata": {"labels": {"zone": "a"}}}),
        "metadata" => json!({"name": "obj-1", "labels": {"a": "b"}}),
        // Native StatefulSet / Deployment templates of a UnitedDeployment.
        "spec" => json!({
            "replicas": 2,
            "selector": {"matchLabels": {"app": "x"}},
            "template": pod_template
        }),
        "jobTemplate" => json!({"metadata": {"name": "j"}, "spec": {"template": pod_template}}),
        _ => pod_template,
    }
}

/// Leaf paths of `input` that are missing or different in `output`.
fn lost(input: &Value, output: &Value, path: &str, out: &mut Vec<String>) {
    match (input, output) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => lost(v, w, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, v) in a.iter().enumerate() {
                match b.get(i) {
                    Some(w) => lost(v, w, &format!("{path}[]"), out),
                    None => out.push(format!("{path}[]")),
                }
            }
        }
        (a, b) if a != b => out.push(format!("{path} ({a} -> {b})")),
        _ => {}
    }
}

fn assert_covered<T: DeserializeOwned + Serialize>(file: &str, version: &str) {
    let crd = load_crd(file);
    let schema = crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == version))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .unwrap();
    let input = sample(&schema, "");
    let typed: T = serde_json::from_value(input.clone())
        .unwrap_or_else(|e| panic!("{file} {version}: sample does not read: {e}"));
    let output = serde_json::to_value(&typed).unwrap();
    let mut missing = Vec::new();
    lost(&input, &output, "", &mut missing);
    assert!(
        missing.is_empty(),
        "{file} {version}: fields lost: {missing:#?}"
    );
}

/// Like [`assert_covered`] for a version the type is mapped from and back (`api::conversion`):
/// a v1beta1 object read into the model and written back as v1beta1 keeps every field.
fn assert_covered_served<T>(
    file: &str,
    version: &str,
    from: fn(&str, Value) -> Result<T, serde_json::Error>,
    to: fn(&str, &T) -> Result<Value, serde_json::Error>,
) {
    let crd = load_crd(file);
    let schema = crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == version))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .unwrap();
    let input = sample(&schema, "");
    let typed = from(version, input.clone())
        .unwrap_or_else(|e| panic!("{file} {version}: sample does not read: {e}"));
    let output = to(version, &typed).unwrap();
    let mut missing = Vec::new();
    lost(&input, &output, "", &mut missing);
    assert!(
        missing.is_empty(),
        "{file} {version} (mapped): fields lost: {missing:#?}"
    );
}

#[test]
fn kruise_v1_9_storage_versions_map_without_loss() {
    assert_covered_served(
        "apps.kruise.io_daemonsets.yaml",
        "v1beta1",
        api::daemonset::from_served_json,
        api::daemonset::to_served_json,
    );
    assert_covered_served(
        "apps.kruise.io_sidecarsets.yaml",
        "v1beta1",
        api::sidecarset::from_served_json,
        api::sidecarset::to_served_json,
    );
}

#[test]
fn workloads_model_every_upstream_field() {
    assert_covered::<api::CloneSet>("apps.kruise.io_clonesets.yaml", "v1alpha1");
    assert_covered::<api::StatefulSet>("apps.kruise.io_statefulsets.yaml", "v1beta1");
    assert_covered::<api::StatefulSet>("apps.kruise.io_statefulsets.yaml", "v1alpha1");
    assert_covered::<api::DaemonSet>("apps.kruise.io_daemonsets.yaml", "v1alpha1");
}

#[test]
fn ops_kinds_model_every_upstream_field() {
    assert_covered::<api::SidecarSet>("apps.kruise.io_sidecarsets.yaml", "v1alpha1");
    assert_covered::<api::PodProbeMarker>("apps.kruise.io_podprobemarkers.yaml", "v1alpha1");
    assert_covered::<api::NodePodProbe>("apps.kruise.io_nodepodprobes.yaml", "v1alpha1");
    assert_covered::<api::ContainerRecreateRequest>(
        "apps.kruise.io_containerrecreaterequests.yaml",
        "v1alpha1",
    );
    assert_covered::<api::PodUnavailableBudget>(
        "policy.kruise.io_podunavailablebudgets.yaml",
        "v1alpha1",
    );
}

#[test]
fn other_kinds_model_every_upstream_field() {
    assert_covered::<api::PersistentPodState>(
        "apps.kruise.io_persistentpodstates.yaml",
        "v1alpha1",
    );
    assert_covered::<api::WorkloadSpread>("apps.kruise.io_workloadspreads.yaml", "v1alpha1");
    assert_covered::<api::UnitedDeployment>("apps.kruise.io_uniteddeployments.yaml", "v1alpha1");
    assert_covered::<api::BroadcastJob>("apps.kruise.io_broadcastjobs.yaml", "v1alpha1");
    assert_covered::<api::AdvancedCronJob>("apps.kruise.io_advancedcronjobs.yaml", "v1alpha1");
    assert_covered::<api::ImagePullJob>("apps.kruise.io_imagepulljobs.yaml", "v1alpha1");
    assert_covered::<api::ImageListPullJob>("apps.kruise.io_imagelistpulljobs.yaml", "v1alpha1");
    assert_covered::<api::NodeImage>("apps.kruise.io_nodeimages.yaml", "v1alpha1");
    assert_covered::<api::ResourceDistribution>(
        "apps.kruise.io_resourcedistributions.yaml",
        "v1alpha1",
    );
}

#[test]
fn kruise_rollout_kinds_model_every_upstream_field() {
    use api::rollout::{BatchRelease, Rollout};
    assert_covered::<Rollout>("rollouts.kruise.io_rollouts.yaml", "v1beta1");
    assert_covered::<BatchRelease>("rollouts.kruise.io_batchreleases.yaml", "v1beta1");
}

/// A v1alpha1 Rollout or BatchRelease, converted to v1beta1 (the stored version), read into the
/// model, written back and converted to v1alpha1, loses exactly what upstream's conversion
/// loses: the Rollout's `rolloutID`, `disableGenerateCanaryService`, and the rolling-style
/// annotation's stand-in `releasePlan.rollingStyle` of a v1alpha1 BatchRelease (ConvertTo
/// reads the annotation instead).
#[test]
fn kruise_rollout_v1alpha1_loses_only_what_upstream_loses() {
    use api::rollout::{BatchRelease, Rollout, conversion::convert};
    fn round_trip<T: DeserializeOwned + Serialize>(file: &str, kind: &str) -> Vec<String> {
        let crd = load_crd(file);
        let schema = crd["spec"]["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["name"] == "v1alpha1"))
            .map(|v| v["schema"]["openAPIV3Schema"].clone())
            .unwrap();
        let mut input = sample(&schema, "");
        // A partition-style object, as the v1alpha1 API spells it.
        input["metadata"] = json!({"name": "x", "annotations": {
            "rollouts.kruise.io/rolling-style": "partition"}});
        let mut v = input.clone();
        convert(kind, "v1alpha1", "v1beta1", &mut v);
        let typed: T = serde_json::from_value(v).unwrap();
        let mut back = serde_json::to_value(&typed).unwrap();
        convert(kind, "v1beta1", "v1alpha1", &mut back);
        let mut missing = Vec::new();
        lost(&input, &back, "", &mut missing);
        missing
    }
    assert_eq!(
        round_trip::<Rollout>("rollouts.kruise.io_rollouts.yaml", "Rollout"),
        [
            ".spec.rolloutID",
            ".spec.strategy.canary.disableGenerateCanaryService"
        ]
    );
    assert_eq!(
        round_trip::<BatchRelease>("rollouts.kruise.io_batchreleases.yaml", "BatchRelease"),
        [".spec.releasePlan.rollingStyle (\"s-rollingStyle\" -> \"Partition\")"]
    );
}

#[test]
fn a_dropped_field_is_reported() {
    #[derive(serde::Deserialize, Serialize)]
    struct OnlyMetadata {
        metadata: Value,
    }
    let result = std::panic::catch_unwind(|| {
        assert_covered::<OnlyMetadata>("apps.kruise.io_clonesets.yaml", "v1alpha1")
    });
    assert!(result.is_err());
}
