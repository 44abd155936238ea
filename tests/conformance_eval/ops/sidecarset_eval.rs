//! sidecarset.json: every op runs the ported function on the case input.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::kruise::sidecarset::{
    self as ss, SidecarContainer, SidecarSet, SidecarSetSpec, control, hash, history, inject,
    matching, metadata, pod_state, reconcile, types, upgrade, validate,
};
use kruise_tui::kruise::{FeatureGates, KruiseVersion};
use serde_json::{Value, json};

use crate::eval::common::{expect_eq, expect_subset, expected, input, parse};

fn now() -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_735_689_600).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

fn strings(v: &Value) -> BTreeMap<String, String> {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

fn set_named(name: &str, annotations: BTreeMap<String, String>) -> SidecarSet {
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
    let e = expected(case)?;
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
            let errs = validate::validate_sidecar_conflict(
                &set,
                &others,
                &matching::NamespaceLabels::new(),
            );
            json!({"errorCount": errs.len()})
        }
        "validateSidecarSet" => {
            let set: SidecarSet = parse("object", i)?;
            let mut gates = FeatureGates::new();
            for (k, v) in i["featureGates"].as_object().into_iter().flatten() {
                gates.set(k, v.as_bool().unwrap_or(false));
            }
            let ctx = validate::ValidationContext {
                gates,
                version: KruiseVersion::V1_8,
                ..Default::default()
            };
            json!({"errorCount": validate::validate_sidecar_set(&set, &ctx).len()})
        }
        "validateSidecarContainerConflict" => {
            let old: Vec<SidecarContainer> = parse("oldContainers", &i["oldContainers"])?;
            let new: Vec<SidecarContainer> = parse("newContainers", &i["newContainers"])?;
            json!({"errorCount": validate::validate_sidecar_container_conflict(&new, &old).len()})
        }
        "nextUpgradePods" => next_upgrade_pods(i, e)?,
        "reconcileUpgrade" => reconcile_upgrade(i)?,
        "parseUpdateScatterTerms" => {
            let terms: Vec<types::UpdateScatterTerm> = parse("scatter", &i["scatter"])?;
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
            match upgrade::calculate_partition_replicas(partition.as_ref(), replicas) {
                Ok(v) => json!({"value": v, "error": false}),
                Err(_) => json!({"value": e["value"], "error": true}),
            }
        }
        "truncateHistory" => truncate_history(i)?,
        "coldUpgradeScenario" | "hotUpgradeScenario" => return upgrade_scenario(i),
        "injectPodCreate" => return inject_pod_create(i, e),
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
    let map = raw
        .and_then(|r| pod_state::parse_upgrade_specs(r))
        .unwrap_or_default();
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
    let without = if e["withoutImageHashAfter"].is_string() {
        if after.get(without_key) == before.get(without_key) {
            e["withoutImageHashAfter"].clone()
        } else {
            json!(format!("changed to {:?}", after.get(without_key)))
        }
    } else {
        hashes_of(after.get(without_key))
    };
    Ok(
        json!({"hashAfter": hashes_of(after.get(ss::SIDECARSET_HASH_ANNOTATION)), "withoutImageHashAfter": without}),
    )
}

fn patch_pod_metadata(i: &Value) -> Result<Value, String> {
    let mut annotations = strings(&i["podAnnotations"]);
    let groups: Vec<Vec<types::SidecarSetPatchPodMetadata>> =
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

fn factory_set(i: &Value) -> Result<SidecarSet, String> {
    let mut set = set_named("test-sidecarset", strings(&i["sidecarSet"]["annotations"]));
    set.spec.selector = Some(LabelSelector {
        match_labels: Some(BTreeMap::from([("app".to_owned(), "sidecar".to_owned())])),
        ..Default::default()
    });
    set.spec.update_strategy = parse("updateStrategy", &i["sidecarSet"]["updateStrategy"])?;
    set.spec.containers = vec![sidecar("test-sidecar", "test-image:v2")];
    Ok(set)
}

fn sidecar(name: &str, image: &str) -> SidecarContainer {
    SidecarContainer {
        container: Container {
            name: name.to_owned(),
            image: Some(image.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn status(name: &str, image: &str, image_id: &str) -> ContainerStatus {
    ContainerStatus {
        name: name.to_owned(),
        image: image.to_owned(),
        image_id: image_id.to_owned(),
        ready: true,
        ..Default::default()
    }
}

/// A Running, Ready pod with an app container and the `test-sidecar` sidecar.
fn base_pod(
    name: &str,
    created: i64,
    sidecar_image: &str,
    status_image: &str,
    status_id: &str,
) -> Pod {
    let ts = |s: i64| {
        Time(jiff::Timestamp::from_second(1_700_000_000 + s).unwrap_or(jiff::Timestamp::UNIX_EPOCH))
    };
    Pod {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            labels: Some(BTreeMap::from([("app".to_owned(), "sidecar".to_owned())])),
            creation_timestamp: Some(ts(created)),
            annotations: Some(BTreeMap::new()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![
                Container {
                    name: "nginx".to_owned(),
                    image: Some("nginx:1.15.1".to_owned()),
                    ..Default::default()
                },
                Container {
                    name: "test-sidecar".to_owned(),
                    image: Some(sidecar_image.to_owned()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".to_owned()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".to_owned(),
                status: "True".to_owned(),
                ..Default::default()
            }]),
            container_statuses: Some(vec![
                status(
                    "nginx",
                    "nginx:1.15.1",
                    "docker-pullable://nginx@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d",
                ),
                status("test-sidecar", status_image, status_id),
            ]),
            ..Default::default()
        }),
    }
}

const V1_ID: &str = "docker-pullable://test-image@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d";
const V2_ID: &str = "docker-pullable://test-image@sha256:f7988fb6c02e0ce69257d9bd9cf37ae20a60f1df7563c3a2a6abe24160306b8d";

fn set_labels(pod: &mut Pod, labels: &Value) {
    let target = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    target.extend(strings(labels));
}

fn pod_index(name: &str) -> Option<usize> {
    name.strip_prefix("pod-")?.parse().ok()
}

fn next_upgrade_pods(i: &Value, e: &Value) -> Result<Value, String> {
    let set = factory_set(i)?;
    let f = &i["podFactory"];
    let count = f["count"].as_u64().ok_or("podFactory.count")? as usize;
    let updated = f["updated"].as_u64().unwrap_or(0) as usize;
    let consistent = f["updatedAndConsistent"].as_u64().unwrap_or(0) as usize;
    let mut pods = Vec::with_capacity(count);
    for k in 0..count {
        let mut pod = base_pod(
            &format!("pod-{k}"),
            k as i64,
            "test-image:v1",
            "test-image:v1",
            V1_ID,
        );
        let ann = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
        ann.insert(
            ss::SIDECARSET_HASH_ANNOTATION.to_owned(),
            r#"{"test-sidecarset":{"hash":"aaa"}}"#.to_owned(),
        );
        ann.insert(
            ss::SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION.to_owned(),
            r#"{"test-sidecarset":{"hash":"without-aaa"}}"#.to_owned(),
        );
        pods.push(pod);
    }
    for (k, pod) in pods.iter_mut().enumerate().take(updated) {
        if let Some(c) = pod.spec.as_mut().and_then(|s| s.containers.get_mut(1)) {
            c.image = Some("test-image:v2".to_owned());
        }
        pod_state::update_pod_annotations_in_upgrade(
            pod,
            &set,
            &["test-sidecar".to_owned()],
            now(),
        );
        if k < consistent
            && let Some(cs) = pod
                .status
                .as_mut()
                .and_then(|s| s.container_statuses.as_mut())
                .and_then(|c| c.get_mut(1))
        {
            cs.image = "test-image:v2".to_owned();
            cs.image_id = V2_ID.to_owned();
        }
    }
    let not_ready: Vec<usize> = match &f["readyConditionFalse"] {
        Value::Null => Vec::new(),
        Value::Number(n) => (0..n.as_u64().unwrap_or(0) as usize).collect(),
        Value::Array(names) => names
            .iter()
            .filter_map(|n| n.as_str().and_then(pod_index))
            .collect(),
        other => return Err(format!("cannot read readyConditionFalse {other}")),
    };
    for k in not_ready {
        if let Some(c) = pods
            .get_mut(k)
            .and_then(|p| p.status.as_mut())
            .and_then(|s| s.conditions.as_mut())
        {
            c[0].status = "False".to_owned();
        }
    }
    for (selector, labels) in f["labelOverrides"].as_object().into_iter().flatten() {
        let range = match selector.split_once("..") {
            Some((a, b)) => pod_index(a).zip(pod_index(b)).map(|(a, b)| (a, b)),
            None => pod_index(selector).map(|k| (k, k)),
        };
        let (a, b) = range.ok_or_else(|| format!("cannot read pod selector {selector}"))?;
        for pod in pods.iter_mut().take(b + 1).skip(a) {
            set_labels(pod, labels);
        }
    }
    let next = upgrade::next_upgrade_pods(&set, &pods);
    let mut out = json!({"upgradeCount": next.upgrade.len(), "notUpgradableCount": next.not_upgradable.len()});
    if e.get("upgradeOrder").is_some() {
        out["upgradeOrder"] = json!(
            next.upgrade
                .iter()
                .map(|&k| format!("pod-{k}"))
                .collect::<Vec<_>>()
        );
    }
    Ok(out)
}

fn injected_pod(
    name: &str,
    hash: &str,
    spec_image: &str,
    status_image: &str,
    status_id: &str,
) -> Pod {
    let mut pod = base_pod(name, 0, spec_image, status_image, status_id);
    let ann = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    ann.insert(
        ss::SIDECARSET_HASH_ANNOTATION.to_owned(),
        format!(r#"{{"test-sidecarset":{{"hash":"{hash}"}}}}"#),
    );
    pod
}

fn scenario_set(hash: &str, image: &str, strategy: &Value) -> Result<SidecarSet, String> {
    let mut set = set_named(
        "test-sidecarset",
        BTreeMap::from([(ss::SIDECARSET_HASH_ANNOTATION.to_owned(), hash.to_owned())]),
    );
    set.spec.selector = Some(LabelSelector {
        match_labels: Some(BTreeMap::from([("app".to_owned(), "sidecar".to_owned())])),
        ..Default::default()
    });
    set.spec.containers = vec![sidecar("test-sidecar", image)];
    set.spec.update_strategy = parse("updateStrategy", strategy)?;
    Ok(set)
}

fn reconcile_upgrade(i: &Value) -> Result<Value, String> {
    let set = scenario_set(
        i["sidecarSetHash"].as_str().unwrap_or_default(),
        i["sidecarSetImage"].as_str().unwrap_or_default(),
        &i["updateStrategy"],
    )?;
    let p = &i["pod"];
    let image = p["sidecarImage"].as_str().unwrap_or_default();
    let mut pod = injected_pod(
        "test-pod",
        p["hash"].as_str().unwrap_or_default(),
        image,
        image,
        V1_ID,
    );
    if let Some(s) = pod.status.as_mut() {
        s.phase = p["phase"].as_str().map(str::to_owned);
        if p["ready"].as_bool() == Some(false) {
            s.conditions = None;
        }
    }
    let pods = vec![pod];
    let ctx = reconcile::ReconcileContext {
        all_sets: std::slice::from_ref(&set),
        namespaces: &matching::NamespaceLabels::new(),
        now: now(),
    };
    let out = reconcile::reconcile(&set, &pods, ctx);
    let after = out
        .pod_updates
        .iter()
        .find(|(k, _)| *k == 0)
        .map_or(&pods[0], |(_, p)| p);
    Ok(json!({"podSidecarImageAfter": sidecar_image(after)}))
}

fn sidecar_image(pod: &Pod) -> String {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .find(|c| c.name == "test-sidecar")
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
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

fn scenario_pod(name: &str, p: &Value) -> Pod {
    let s = |k: &str| p[k].as_str().unwrap_or_default();
    let mut pod = injected_pod(
        name,
        s("podHash"),
        s("specImage"),
        s("statusImage"),
        s("statusImageID"),
    );
    if let Some(recorded) = p["recordedLastImageID"].as_str() {
        let state = json!({"test-sidecarset": {"revision": s("podHash"), "updateTimestamp": "2025-01-01T00:00:00Z",
            "lastContainerStatuses": {"test-sidecar": {"imageID": recorded}}}});
        pod.metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(
                ss::SIDECARSET_INPLACE_UPDATE_STATE_KEY.to_owned(),
                state.to_string(),
            );
    }
    pod
}

fn upgrade_scenario(i: &Value) -> Result<(), String> {
    let s = &i["sidecarSet"];
    let set = scenario_set(
        s["hash"].as_str().unwrap_or_default(),
        s["image"].as_str().unwrap_or_default(),
        &s["updateStrategy"],
    )?;
    let mut failures = Vec::new();
    for step in i["steps"].as_array().ok_or("no steps")? {
        let step_name = step["name"].as_str().unwrap_or_default();
        let before = step["podsBefore"].as_object().ok_or("no podsBefore")?;
        let names: Vec<&String> = before.keys().collect();
        let pods: Vec<Pod> = before.iter().map(|(n, p)| scenario_pod(n, p)).collect();
        let ctx = reconcile::ReconcileContext {
            all_sets: std::slice::from_ref(&set),
            namespaces: &matching::NamespaceLabels::new(),
            now: now(),
        };
        let out = reconcile::reconcile(&set, &pods, ctx);
        let st = &out.status;
        let mut actual = json!({"status": {"matchedPods": st.matched_pods, "updatedPods": st.updated_pods,
            "readyPods": st.ready_pods, "updatedReadyPods": st.updated_ready_pods}, "podsAfter": {}});
        for (k, name) in names.iter().enumerate() {
            let pod = out
                .pod_updates
                .iter()
                .find(|(j, _)| *j == k)
                .map_or(&pods[k], |(_, p)| p);
            let ann = pod.metadata.annotations.clone().unwrap_or_default();
            let state = control_state(&ann);
            let env_kept = pods[k].spec.as_ref().map(|s| &s.containers[1].env)
                == pod.spec.as_ref().map(|s| &s.containers[1].env);
            actual["podsAfter"][name.as_str()] = json!({
                "specImage": sidecar_image(pod),
                "podHash": pod_state::pod_sidecar_set_revision("test-sidecarset", pod),
                "recordedLastImageID": state,
                "envAndMountsPreserved": env_kept,
                "injectedList": ann.get(ss::SIDECARSET_LIST_ANNOTATION),
            });
        }
        if let Err(diff) = expect_subset(&step["expected"], &actual) {
            failures.push(format!("step {step_name:?}:\n{diff}"));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

fn control_state(ann: &BTreeMap<String, String>) -> Value {
    ann.get(ss::SIDECARSET_INPLACE_UPDATE_STATE_KEY)
        .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
        .map(|v| v["test-sidecarset"]["lastContainerStatuses"]["test-sidecar"]["imageID"].clone())
        .unwrap_or(Value::Null)
}

fn inject_pod_create(i: &Value, e: &Value) -> Result<(), String> {
    let sets: Vec<SidecarSet> = parse("sidecarSets", &i["sidecarSets"])?;
    let pod: Pod = parse("pod", &i["pod"])?;
    let no_history = |_: &SidecarSet| None;
    let ctx = inject::InjectContext {
        sets: &sets,
        namespaces: &matching::NamespaceLabels::new(),
        historic: &no_history,
        random: 0.5,
        now: now(),
    };
    let out = inject::inject_pod_create(&pod, &ctx)
        .map_err(|e| e.to_string())?
        .ok_or("nothing injected")?;
    let spec = out.spec.clone().unwrap_or_default();
    let ann = out.metadata.annotations.clone().unwrap_or_default();
    let names = |cs: &[Container]| cs.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    let env_of = |name: &str| {
        spec.containers
            .iter()
            .find(|c| c.name == name)
            .map(|c| serde_json::to_value(&c.env).unwrap_or_default())
    };
    let set_name = "sidecarset1";
    let working: Value = ann
        .get(ss::SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER)
        .and_then(|w| serde_json::from_str(w).ok())
        .unwrap_or(Value::Null);
    let actual = json!({
        "containerCount": spec.containers.len(),
        "containers[0].image": spec.containers.first().and_then(|c| c.image.clone()),
        "containers[1].image": spec.containers.get(1).and_then(|c| c.image.clone()),
        "podSidecarSetRevision[sidecarset1]": pod_state::pod_sidecar_set_revision(set_name, &out),
        "podSidecarSetWithoutImageRevision[sidecarset1]": pod_state::pod_sidecar_set_without_image_revision(set_name, &out),
        "annotations": ann,
        "workingHotUpgradeContainer": working,
        "alsoDerivedFromSource": {
            "containerNames": names(&spec.containers),
            "initContainerNames": names(spec.init_containers.as_deref().unwrap_or_default()),
            "annotations": ann,
            "dns-f-1.env": env_of("dns-f-1"),
        },
    });
    expect_subset(e, &actual)
}
