//! Checks our Kruise API types against the upstream CRD schemas in `crds/`.
//!
//! For each kind we generate OUR JSON schema (schemars) and walk every property path in it,
//! requiring the same path in the CRD's openAPIV3Schema with a compatible type: same JSON type,
//! int-or-string on both sides or neither, same integer width, date-time where upstream has it,
//! maps where upstream has maps. An upstream subtree marked `x-kubernetes-preserve-unknown-fields`
//! without properties (pod templates, volumeClaimTemplates) or an opaque `type: object`
//! (embedded `metadata`) ends the walk. Negative tests prove that a misspelled field or a wrong
//! type fails. The types' `Resource` constants are checked against the CRD names and scope.

use k8s_openapi::Resource;
use kruise_tui::api;
use schemars::JsonSchema;
use serde_json::{Map, Value};

fn load_crd(file: &str) -> Value {
    let path = format!("{}/crds/v1.9.0/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn upstream_schema<'a>(crd: &'a Value, version: &str) -> &'a Value {
    crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == version))
        .map(|v| &v["schema"]["openAPIV3Schema"])
        .unwrap_or_else(|| panic!("version {version} not in CRD"))
}

fn our_schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).expect("schema serializes")
}

/// Walks our schema against the upstream one, collecting mismatches and the visited paths.
struct Walker {
    defs: Map<String, Value>,
    errors: Vec<String>,
    visited: Vec<String>,
}

impl Walker {
    fn new(ours: &Value) -> Self {
        let defs = ours
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Walker {
            defs,
            errors: Vec::new(),
            visited: Vec::new(),
        }
    }

    /// Follows `$ref`s and strips the `null` alternative of optional fields.
    fn norm(&self, node: &Value) -> Value {
        let mut node = node.clone();
        for _ in 0..16 {
            if let Some(r) = node.get("$ref").and_then(Value::as_str) {
                let name = r.trim_start_matches("#/$defs/").replace("~1", "/");
                node = self.defs.get(&name).cloned().unwrap_or(Value::Null);
                continue;
            }
            let alternatives = ["anyOf", "oneOf", "allOf"]
                .iter()
                .find_map(|k| node.get(*k).and_then(Value::as_array).cloned());
            if let Some(alts) = alternatives {
                let non_null: Vec<_> = alts.into_iter().filter(|a| a["type"] != "null").collect();
                if non_null.len() == 1 {
                    node = non_null[0].clone();
                    continue;
                }
            }
            if let Some(types) = node.get("type").and_then(Value::as_array).cloned() {
                let non_null: Vec<_> = types.into_iter().filter(|t| t != "null").collect();
                if non_null.len() == 1 {
                    node["type"] = non_null[0].clone();
                }
            }
            break;
        }
        node
    }

    fn walk(&mut self, path: &str, ours: &Value, theirs: &Value) {
        let ours = self.norm(ours);
        self.visited.push(path.to_string());
        let preserve = theirs["x-kubernetes-preserve-unknown-fields"] == true;
        if preserve && theirs.get("properties").is_none() {
            return;
        }
        let our_ios = ours["x-kubernetes-int-or-string"] == true;
        let their_ios = theirs["x-kubernetes-int-or-string"] == true;
        if our_ios || their_ios {
            if our_ios != their_ios {
                self.errors.push(format!(
                    "{path}: int-or-string mismatch (ours {}, upstream {})",
                    describe(&ours),
                    describe(theirs)
                ));
            }
            return;
        }
        let our_type = ours["type"].as_str().unwrap_or("");
        let their_type = theirs["type"].as_str().unwrap_or("");
        if our_type != their_type {
            self.errors.push(format!(
                "{path}: type mismatch (ours {}, upstream {})",
                describe(&ours),
                describe(theirs)
            ));
            return;
        }
        match our_type {
            "integer" => match (ours["format"].as_str(), theirs["format"].as_str()) {
                (Some(a), Some(b)) if a != b => self
                    .errors
                    .push(format!("{path}: integer format ours {a}, upstream {b}")),
                _ => {}
            },
            "string" if theirs["format"] == "date-time" && ours["format"] != "date-time" => {
                self.errors.push(format!(
                    "{path}: upstream is date-time, ours a plain string"
                ));
            }
            "array" => self.walk(&format!("{path}[]"), &ours["items"], &theirs["items"]),
            "object" => self.walk_object(path, &ours, theirs, preserve),
            _ => {}
        }
    }

    fn walk_object(&mut self, path: &str, ours: &Value, theirs: &Value, preserve: bool) {
        let their_props = theirs.get("properties").and_then(Value::as_object);
        let their_map = theirs.get("additionalProperties").filter(|v| v.is_object());
        if their_props.is_none() && their_map.is_none() {
            return; // opaque embedded object (metadata)
        }
        if let Some(our_props) = ours.get("properties").and_then(Value::as_object) {
            let Some(their_props) = their_props else {
                self.errors
                    .push(format!("{path}: ours is a struct, upstream a map"));
                return;
            };
            for (name, sub) in our_props {
                let sub_path = format!("{path}.{name}");
                match their_props.get(name) {
                    Some(their_sub) => self.walk(&sub_path, sub, their_sub),
                    None if preserve => {}
                    None => self
                        .errors
                        .push(format!("{sub_path}: not in upstream schema")),
                }
            }
        }
        if let Some(our_map) = ours.get("additionalProperties").filter(|v| v.is_object()) {
            match their_map {
                Some(their_map) => self.walk(&format!("{path}{{}}"), our_map, their_map),
                None => self
                    .errors
                    .push(format!("{path}: ours is a map, upstream is not")),
            }
        }
    }
}

fn describe(node: &Value) -> String {
    if node["x-kubernetes-int-or-string"] == true {
        return "int-or-string".into();
    }
    match (node["type"].as_str(), node["format"].as_str()) {
        (Some(t), Some(f)) => format!("{t}/{f}"),
        (Some(t), None) => t.into(),
        _ => "untyped".into(),
    }
}

/// Our schema of `T` checked against `file`'s `version`; returns (errors, visited paths).
fn check<T: JsonSchema>(file: &str, version: &str) -> (Vec<String>, Vec<String>) {
    let crd = load_crd(file);
    let ours = our_schema::<T>();
    let mut walker = Walker::new(&ours);
    walker.walk("", &ours, upstream_schema(&crd, version));
    (walker.errors, walker.visited)
}

/// Fields of v1.8.4 objects that the v1.9.0 schemas (checked here) renamed: kept so objects
/// of either release read.
const V1_8_ONLY: [&str; 1] = [
    "UnitedDeployment .spec.topology.scheduleStrategy.adaptive.unschedulableLastSeconds: not in upstream schema",
];

fn assert_matches<T: JsonSchema + Resource>(file: &str, must_visit: &[&str]) {
    let (errors, visited) = check::<T>(file, T::VERSION);
    let errors: Vec<_> = errors
        .into_iter()
        .filter(|e| !V1_8_ONLY.contains(&format!("{} {e}", T::KIND).as_str()))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:#?}", T::KIND);
    for path in must_visit {
        assert!(
            visited.iter().any(|v| v == path),
            "{}: path {path} was not checked; visited {visited:#?}",
            T::KIND
        );
    }
    assert_resource_names::<T>(file);
}

fn assert_resource_names<T: Resource>(file: &str) {
    let crd = load_crd(file);
    let spec = &crd["spec"];
    assert_eq!(spec["group"], T::GROUP, "{file}");
    assert_eq!(spec["names"]["kind"], T::KIND, "{file}");
    assert_eq!(spec["names"]["plural"], T::URL_PATH_SEGMENT, "{file}");
    let served = spec["versions"].as_array().is_some_and(|vs| {
        vs.iter()
            .any(|v| v["name"] == T::VERSION && v["served"] == true)
    });
    assert!(served, "{file}: {} not served", T::VERSION);
    let scope = std::any::type_name::<T::Scope>();
    let expected = if spec["scope"] == "Cluster" {
        "ClusterResourceScope"
    } else {
        "NamespaceResourceScope"
    };
    assert!(scope.ends_with(expected), "{file}: scope {scope}");
}

#[test]
fn cloneset_matches_upstream() {
    assert_matches::<api::CloneSet>(
        "apps.kruise.io_clonesets.yaml",
        &[
            ".spec.updateStrategy.partition",
            ".spec.updateStrategy.paused",
            ".spec.updateStrategy.priorityStrategy.weightPriority[].matchSelector.matchLabels{}",
            ".spec.updateStrategy.scatterStrategy[].key",
            ".spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds",
            ".spec.scaleStrategy.podsToDelete[]",
            ".spec.scaleStrategy.disablePVCReuse",
            ".spec.lifecycle.preDelete.labelsHandler{}",
            ".spec.lifecycle.inPlaceUpdate.markPodNotReady",
            ".spec.volumeClaimTemplates",
            ".status.updatedAvailableReplicas",
            ".status.conditions[].lastTransitionTime",
        ],
    );
}

#[test]
fn advanced_statefulset_matches_upstream_v1beta1() {
    assert_matches::<api::StatefulSet>(
        "apps.kruise.io_statefulsets.yaml",
        &[
            ".spec.reserveOrdinals[]",
            ".spec.ordinals.start",
            ".spec.podManagementPolicy",
            ".spec.persistentVolumeClaimRetentionPolicy.whenScaled",
            ".spec.updateStrategy.rollingUpdate.partition",
            ".spec.updateStrategy.rollingUpdate.podUpdatePolicy",
            ".spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy.orderPriority[].orderedKey",
            ".spec.updateStrategy.rollingUpdate.minReadySeconds",
            ".spec.scaleStrategy.maxUnavailable",
            ".spec.lifecycle.preNormal.finalizersHandler[]",
            ".status.updatedReadyReplicas",
        ],
    );
}

#[test]
fn advanced_statefulset_v1alpha1_differs_only_by_the_listed_fields() {
    let crd = load_crd("apps.kruise.io_statefulsets.yaml");
    let keys = |version: &str| -> Vec<String> {
        upstream_schema(&crd, version)["properties"]["spec"]["properties"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let alpha = keys("v1alpha1");
    let only_beta: Vec<String> = keys("v1beta1")
        .into_iter()
        .filter(|k| !alpha.contains(k))
        .collect();
    assert_eq!(only_beta, api::statefulset::V1BETA1_ONLY_SPEC_FIELDS);
    // The v1alpha1 fields read through the v1beta1 model must have the same shapes there.
    let (errors, _) = check::<api::StatefulSet>("apps.kruise.io_statefulsets.yaml", "v1alpha1");
    let allowed = |e: &String| {
        api::statefulset::V1BETA1_ONLY_SPEC_FIELDS
            .iter()
            .any(|f| e.starts_with(&format!(".spec.{f}:")))
            || [
                ".status.updatedReadyReplicas:",
                ".status.updatedAvailableReplicas:",
                ".status.volumeClaims:",
            ]
            .iter()
            .any(|p| e.starts_with(p))
    };
    let unexpected: Vec<_> = errors.iter().filter(|e| !allowed(e)).collect();
    assert!(unexpected.is_empty(), "{unexpected:#?}");
}

#[test]
fn advanced_daemonset_matches_upstream() {
    assert_matches::<api::DaemonSet>(
        "apps.kruise.io_daemonsets.yaml",
        &[
            ".spec.burstReplicas",
            ".spec.updateStrategy.rollingUpdate.rollingUpdateType",
            ".spec.updateStrategy.rollingUpdate.selector.matchLabels{}",
            ".spec.updateStrategy.rollingUpdate.partition",
            ".spec.updateStrategy.rollingUpdate.maxSurge",
            ".spec.updateStrategy.rollingUpdate.paused",
            ".spec.lifecycle.preDelete.markPodNotReady",
            ".status.daemonSetHash",
        ],
    );
}

#[test]
fn sidecarset_matches_upstream() {
    assert_matches::<api::SidecarSet>(
        "apps.kruise.io_sidecarsets.yaml",
        &[
            ".spec.namespaceSelector.matchLabels{}",
            ".spec.containers[].podInjectPolicy",
            ".spec.containers[].upgradeStrategy.hotUpgradeEmptyImage",
            ".spec.containers[].shareVolumePolicy.type",
            ".spec.containers[].transferEnv[].sourceContainerNameFrom.fieldRef.fieldPath",
            ".spec.initContainers[].upgradeStrategy.upgradeType",
            ".spec.updateStrategy.partition",
            ".spec.updateStrategy.scatterStrategy[].value",
            ".spec.updateStrategy.priorityStrategy.weightPriority[].weight",
            ".spec.injectionStrategy.revision.customVersion",
            ".spec.patchPodMetadata[].patchPolicy",
            ".status.latestRevision",
            ".status.updatedReadyPods",
        ],
    );
}

#[test]
fn podprobemarker_and_nodepodprobe_match_upstream() {
    assert_matches::<api::PodProbeMarker>(
        "apps.kruise.io_podprobemarkers.yaml",
        &[
            ".spec.probes[].probe.exec.command[]",
            ".spec.probes[].probe.httpGet.port",
            ".spec.probes[].probe.periodSeconds",
            ".spec.probes[].markerPolicy[].labels{}",
            ".spec.probes[].podConditionType",
            ".status.matchedPods",
        ],
    );
    assert_matches::<api::NodePodProbe>(
        "apps.kruise.io_nodepodprobes.yaml",
        &[
            ".spec.podProbes[].IP",
            ".spec.podProbes[].probes[].probe.tcpSocket.port",
            ".status.podProbeStatuses[].probeStates[].lastProbeTime",
        ],
    );
}

#[test]
fn containerrecreaterequest_matches_upstream() {
    assert_matches::<api::ContainerRecreateRequest>(
        "apps.kruise.io_containerrecreaterequests.yaml",
        &[
            ".spec.containers[].preStop.httpGet.port",
            ".spec.containers[].ports[].containerPort",
            ".spec.containers[].statusContext.containerID",
            ".spec.strategy.unreadyGracePeriodSeconds",
            ".spec.strategy.minStartedSeconds",
            ".spec.activeDeadlineSeconds",
            ".spec.ttlSecondsAfterFinished",
            ".status.containerRecreateStates[].isKilled",
            ".status.completionTime",
        ],
    );
}

#[test]
fn podunavailablebudget_matches_upstream() {
    assert_matches::<api::PodUnavailableBudget>(
        "policy.kruise.io_podunavailablebudgets.yaml",
        &[
            ".spec.targetRef.apiVersion",
            ".spec.maxUnavailable",
            ".spec.minAvailable",
            ".status.disruptedPods{}",
            ".status.unavailableAllowed",
        ],
    );
}

mod negative {
    //! Deliberately wrong types: the walker must report each defect.
    #![allow(dead_code)]
    use super::*;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    #[derive(JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct BadCloneSet {
        spec: BadSpec,
    }

    #[derive(JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct BadSpec {
        replicas: Option<String>,
        min_ready_seconds: i64,
        update_strategy: BadStrategy,
        lifecycle: Option<BadLifecycle>,
    }

    #[derive(JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct BadStrategy {
        partiton: Option<IntOrString>,
        paused: Option<IntOrString>,
        max_surge: Option<i32>,
        scatter_strategy: Vec<String>,
    }

    #[derive(JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct BadLifecycle {
        pre_delete: Option<Vec<String>>,
    }

    #[test]
    fn misspelled_fields_and_wrong_types_are_reported() {
        let (errors, _) = check::<BadCloneSet>("apps.kruise.io_clonesets.yaml", "v1alpha1");
        let expect = [
            ".spec.replicas: type mismatch",
            ".spec.minReadySeconds: integer format ours int64, upstream int32",
            ".spec.updateStrategy.partiton: not in upstream schema",
            ".spec.updateStrategy.paused: int-or-string mismatch",
            ".spec.updateStrategy.maxSurge: int-or-string mismatch",
            ".spec.updateStrategy.scatterStrategy[]: type mismatch",
            ".spec.lifecycle.preDelete: type mismatch",
        ];
        for e in expect {
            assert!(
                errors.iter().any(|x| x.starts_with(e)),
                "missing {e:?} in {errors:#?}"
            );
        }
        assert_eq!(errors.len(), expect.len(), "{errors:#?}");
    }

    #[derive(JsonSchema)]
    struct BadPub {
        status: BadPubStatus,
    }

    #[derive(JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct BadPubStatus {
        disrupted_pods: Vec<String>,
        unavailable_pods: std::collections::BTreeMap<String, String>,
    }

    #[test]
    fn maps_and_date_times_are_checked() {
        let (errors, _) =
            check::<BadPub>("policy.kruise.io_podunavailablebudgets.yaml", "v1alpha1");
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(".status.disruptedPods: type mismatch")),
            "{errors:#?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(".status.unavailablePods{}: upstream is date-time")),
            "{errors:#?}"
        );
    }
}

mod seed_kinds;
