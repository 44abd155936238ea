//! sidecarset.json: every op runs the ported function on the case input.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::api::{common::UpdateScatterTerm, sidecarset::SidecarSetPatchPodMetadata};
use kruise_tui::kruise::sidecarset::{
    self as ss, SidecarContainer, SidecarSet, SidecarSetSpec, control, hash, history, inject,
    matching, metadata, pod_state, upgrade, validate,
};
use kruise_tui::kruise::{FeatureGates, KruiseVersion, intstr};
use serde_json::{Value, json};

use super::sidecarset_flows as flows;
use crate::eval::common::{at_versions, expect_eq, expect_field_errors, input, parse};

pub fn now() -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_735_689_600).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

pub fn strings(v: &Value) -> BTreeMap<String, String> {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

pub fn set_named(name: &str, annotations: BTreeMap<String, String>) -> SidecarSet {
    SidecarSet {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            annotations: Some(annotations),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn pod_with_annotations(annotations: BTreeMap<String, String>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            annotations: Some(annotations),
            ..Default::default()
        },
        ..Default::default()
    }
}

pub fn eval(op: &str, case: &Value) -> Result<(), String> {
    let i = input(case)?;
    at_versions(case, |version, e| eval_at(op, i, e, version))
}

fn eval_at(op: &str, i: &Value, e: &Value, version: KruiseVersion) -> Result<(), String> {
    let actual = match op {
        "sidecarSetHash" | "sidecarSetHashWithoutImage" => {
            let canonical = hash::canonical_json(&i["spec"], op == "sidecarSetHashWithoutImage");
            json!({"canonicalJson": canonical, "hash": hash::hash_canonical(&canonical)})
        }
        "podSidecarSetRevision" => {
            let pod = pod_with_annotations(strings(&i["podAnnotations"]));
            let name = i["sidecarSetName"].as_str().unwrap_or_default();
            json!({
                "revision": pod_state::pod_sidecar_set_revision(name, &pod),
                "withoutImageRevision": pod_state::pod_sidecar_set_without_image_revision(name, &pod),
            })
        }
        "updatePodSidecarSetHash" => update_pod_sidecar_set_hash(i, e)?,
        "patchPodMetadata" => patch_pod_metadata(i)?,
        "podMatchedSidecarSet" => {
            let set = SidecarSet {
                spec: parse("sidecarSetSpec", &i["sidecarSetSpec"])?,
                ..Default::default()
            };
            let namespaces = namespaces(&i["namespaces"]);
            let ns = i["pod"]["namespace"].as_str().unwrap_or_default();
            let matched = matching::pod_matched_sidecar_set(
                &set,
                ns,
                &strings(&i["pod"]["labels"]),
                &namespaces,
            )
            .map_err(|e| e.to_string())?;
            json!({"matched": matched})
        }
        "isSidecarContainerUpdateCompleted" => {
            let pod: Pod = parse("pod", &i["pod"])?;
            let sets: BTreeSet<String> = parse("sidecarSets", &i["sidecarSets"])?;
            let containers: BTreeSet<String> = parse("containers", &i["containers"])?;
            json!({"completed": control::is_sidecar_container_update_completed(&pod, &sets, &containers)})
        }
        "mergeSidecarContainers" => merge_sidecar_containers(i)?,
        "selectorOverlapping" => {
            let a: LabelSelector = parse("a", &i["a"])?;
            let b: LabelSelector = parse("b", &i["b"])?;
            json!({"overlap": matching::is_selector_overlapping(&a, &b)})
        }
        "validateSidecarConflict" => {
            let set: SidecarSet = parse("sidecarSet", &i["sidecarSet"])?;
            let others: Vec<SidecarSet> = parse("others", &i["others"])?;
            let errs =
                validate::validate_sidecar_conflict(&set, &others, &namespaces(&i["namespaces"]));
            return expect_field_errors(e, &errs);
        }
        "validateSidecarSet" | "validateSidecarSetSpec" => {
            let set: SidecarSet = parse("object", i)?;
            let mut gates = FeatureGates::new();
            for (k, v) in i["featureGates"].as_object().into_iter().flatten() {
                gates.set(k, v.as_bool().unwrap_or(false));
            }
            let old: Option<SidecarSet> =
                parse("oldObject", i.get("oldObject").unwrap_or(&Value::Null))?;
            let others: Vec<SidecarSet> = parse("others", i.get("others").unwrap_or(&json!([])))?;
            let whitelist: Option<Vec<String>> = parse(
                "patchWhitelist",
                i.get("patchWhitelist").unwrap_or(&Value::Null),
            )?;
            let revisions: Vec<history::RevisionRef> = i["controllerRevisions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| history::RevisionRef {
                    name: r["name"].as_str().unwrap_or_default().to_owned(),
                    revision: r["revision"].as_i64().unwrap_or_default(),
                    custom_version: r["customVersion"].as_str().map(str::to_owned),
                    hash: String::new(),
                })
                .collect();
            let ns = namespaces(&i["namespaces"]);
            let ctx = validate::ValidationContext {
                gates,
                version,
                old: old.as_ref(),
                others: &others,
                namespaces: Some(&ns),
                patch_whitelist: whitelist.as_deref(),
                revisions: &revisions,
            };
            let errs = if op == "validateSidecarSetSpec" {
                validate::validate_sidecar_set_spec(&set, &ctx)
            } else {
                validate::validate_sidecar_set(&set, &ctx)
            };
            return expect_field_errors(e, &errs);
        }
        "validateSidecarContainerConflict" => {
            let old: Vec<SidecarContainer> = parse("oldContainers", &i["oldContainers"])?;
            let new: Vec<SidecarContainer> = parse("newContainers", &i["newContainers"])?;
            return expect_field_errors(
                e,
                &validate::validate_sidecar_container_conflict(&new, &old),
            );
        }
        "nextUpgradePods" => flows::next_upgrade_pods(i, e)?,
        "reconcileUpgrade" => flows::reconcile_upgrade(i)?,
        "parseUpdateScatterTerms" => {
            let terms: Vec<UpdateScatterTerm> = parse("scatter", &i["scatter"])?;
            let mut pods = Vec::new();
            for (key, values) in i["podLabelValuesInOrder"].as_object().into_iter().flatten() {
                for v in values.as_array().into_iter().flatten() {
                    let labels =
                        BTreeMap::from([(key.clone(), v.as_str().unwrap_or_default().to_owned())]);
                    pods.push(Pod {
                        metadata: ObjectMeta {
                            labels: Some(labels),
                            ..Default::default()
                        },
                        ..Default::default()
                    });
                }
            }
            json!({"scatter": upgrade::parse_update_scatter_terms(&terms, &pods)})
        }
        "calculatePartitionReplicas" => {
            let partition: Option<IntOrString> = parse("partition", &i["partition"])?;
            let replicas: Option<i32> = parse("replicas", &i["replicas"])?;
            // On a parse error upstream returns (0, err).
            match intstr::calculate_partition_replicas(partition.as_ref(), replicas) {
                Ok(v) => json!({"value": v, "error": false}),
                Err(_) => json!({"value": 0, "error": true}),
            }
        }
        "truncateHistory" => truncate_history(i)?,
        "coldUpgradeScenario" | "hotUpgradeScenario" => return flows::upgrade_scenario(i),
        "injectPodCreate" => return flows::inject_pod_create(i, e, version),
        "mergeVolumeDevices" => {
            let container: Container = parse("container", &i["container"])?;
            let additional: Vec<k8s_openapi::api::core::v1::VolumeDevice> =
                parse("additional", &i["additional"])?;
            let merged = inject::merge_volume_devices(&container, &additional);
            json!({"devicePaths": merged.iter().map(|d| d.device_path.clone()).collect::<Vec<_>>()})
        }
        "applyResourcesPolicy" => {
            let pod: Pod = parse("pod", &i["pod"])?;
            let mut sidecar: SidecarContainer = parse("sidecarContainer", &i["sidecarContainer"])?;
            let sets: Vec<SidecarSet> = parse("matchedSidecarSets", &i["matchedSidecarSets"])?;
            let matched: Vec<&SidecarSet> = sets.iter().collect();
            match ss::resources::apply_resources_policy(&pod, &mut sidecar, &matched) {
                Ok(()) => json!({"resources": sidecar.container.resources}),
                Err(err) => json!({"error": err}),
            }
        }
        "evaluateResourceExpression" => {
            let value = ss::calculator::Value::quantity(i["aggregated"].as_str().unwrap_or("0"))
                .ok_or("aggregated is not a quantity")?;
            let is_limit = i["isLimit"].as_bool().unwrap_or(false);
            let expr = i["expr"].as_str().unwrap_or_default();
            match ss::resources::evaluate_resource_expression(expr, value, is_limit) {
                Ok(q) => json!({"quantity": q}),
                Err(err) => json!({"error": err}),
            }
        }
        "injectionRevisionChoice" => {
            let set = SidecarSet {
                spec: SidecarSetSpec {
                    injection_strategy: parse("injectionStrategy", &i["injectionStrategy"])?,
                    update_strategy: parse("updateStrategy", &i["updateStrategy"])?,
                    ..Default::default()
                },
                ..Default::default()
            };
            if i["operation"] != "CREATE" {
                return Err(format!(
                    "operation {} is not evaluated (the webhook is CREATE-only)",
                    i["operation"]
                ));
            }
            // Every vector is deterministic whatever the draw: check both ends of [0, 1).
            let labels = strings(&i["podLabels"]);
            let low = inject::injection_revision_choice(&set, &labels, 0.0);
            let high = inject::injection_revision_choice(&set, &labels, 0.999_999);
            if low != high {
                return Err(format!(
                    "choice depends on the random draw: {low:?} vs {high:?}"
                ));
            }
            let name = match low {
                inject::InjectRevision::Latest => "latest",
                inject::InjectRevision::Historic => "historic",
            };
            json!({"inject": name})
        }
        other => return Err(format!("unknown op {other:?}")),
    };
    expect_eq(e, &actual)
}

fn namespaces(v: &Value) -> matching::NamespaceLabels {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|n| {
            (
                n["name"].as_str().unwrap_or_default().to_owned(),
                strings(&n["labels"]),
            )
        })
        .collect()
}

fn hashes_of(raw: Option<&String>) -> Value {
    let map = pod_state::sidecarset_upgrade_specs(raw.map(String::as_str));
    Value::Object(
        map.into_iter()
            .map(|(k, v)| (k, Value::String(v.hash)))
            .collect(),
    )
}

fn update_pod_sidecar_set_hash(i: &Value, e: &Value) -> Result<Value, String> {
    let name = i["sidecarSet"]["name"].as_str().unwrap_or_default();
    let set = set_named(name, strings(&i["sidecarSet"]["annotations"]));
    let before = strings(&i["podAnnotations"]);
    let mut after = before.clone();
    pod_state::update_pod_sidecar_set_hash(&mut after, &set, now());
    let without_key = ss::SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION;
    let hash_after = hashes_of(after.get(ss::SIDECARSET_HASH_ANNOTATION));
    match &e["withoutImageHashAfter"] {
        // A prose expectation ("unchanged ...") asserts the value was left as it was.
        Value::String(prose) => {
            if !prose.starts_with("unchanged") {
                return Err(format!("cannot evaluate expectation {prose:?}"));
            }
            if after.get(without_key) != before.get(without_key) {
                return Err(format!(
                    "{without_key}: expected unchanged {:?}, got {:?}",
                    before.get(without_key),
                    after.get(without_key)
                ));
            }
            Ok(json!({"hashAfter": hash_after, "withoutImageHashAfter": prose}))
        }
        _ => Ok(
            json!({"hashAfter": hash_after, "withoutImageHashAfter": hashes_of(after.get(without_key))}),
        ),
    }
}

fn patch_pod_metadata(i: &Value) -> Result<Value, String> {
    let mut annotations = strings(&i["podAnnotations"]);
    let groups: Vec<Vec<SidecarSetPatchPodMetadata>> =
        if i.get("patchesInSidecarSetOrder").is_some() {
            parse("patchesInSidecarSetOrder", &i["patchesInSidecarSetOrder"])?
        } else {
            vec![parse("patches", &i["patches"])?]
        };
    let mut skip = true;
    for patches in &groups {
        match metadata::patch_pod_metadata(&mut annotations, patches) {
            Ok(s) => skip &= s,
            Err(_) => return Ok(json!({"annotations": annotations, "skip": false, "error": true})),
        }
    }
    Ok(json!({"annotations": annotations, "skip": skip, "error": false}))
}

fn merge_sidecar_containers(i: &Value) -> Result<Value, String> {
    let origins: Vec<Container> = i["podContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| Container {
            name: n.as_str().unwrap_or_default().to_owned(),
            ..Default::default()
        })
        .collect();
    let mut injected: Vec<SidecarContainer> = parse("injected", &i["injected"])?;
    if i["sortInjectedByName"].as_bool() == Some(true) {
        injected.sort_by(|a, b| a.name().cmp(b.name()));
    }
    let merged = inject::merge_sidecar_containers(&origins, &injected);
    Ok(json!({"containers": merged.iter().map(|c| c.name.clone()).collect::<Vec<_>>()}))
}

fn truncate_history(i: &Value) -> Result<Value, String> {
    let mut set = set_named(
        i["sidecarSetName"].as_str().unwrap_or_default(),
        BTreeMap::new(),
    );
    set.spec.revision_history_limit = parse("revisionHistoryLimit", &i["revisionHistoryLimit"])?;
    let revisions: Vec<history::RevisionRef> = i["revisionsSortedAsc"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| history::RevisionRef {
            name: r["name"].as_str().unwrap_or_default().to_owned(),
            revision: r["revision"].as_i64().unwrap_or_default(),
            custom_version: r["customVersion"].as_str().map(str::to_owned),
            hash: r["hash"].as_str().unwrap_or_default().to_owned(),
        })
        .collect();
    let referenced: BTreeSet<String> =
        parse("revisionsReferencedByPods", &i["revisionsReferencedByPods"])?;
    let t = history::truncate_history(&set, &revisions, &referenced);
    Ok(match t.error {
        Some(err) => json!({"error": err}),
        None => {
            let remaining: Vec<&str> = revisions
                .iter()
                .map(|r| r.name.as_str())
                .filter(|n| !t.delete.iter().any(|d| d == n))
                .collect();
            json!({"error": null, "remaining": remaining})
        }
    })
}
