//! sidecarset.json flows that need pods built from a description: the nextUpgradePods pod
//! factory, single-pod reconciles, the multi-step cold/hot upgrade scenarios and injection.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use kruise_tui::kruise::sidecarset::{
    self as ss, SidecarContainer, SidecarSet, inject, matching, pod_state, reconcile, upgrade,
};
use kruise_tui::kruise::{FeatureGates, KruiseVersion};
use serde_json::{Value, json};

use super::sidecarset_eval::{now, set_named, strings};
use crate::eval::common::{expect_subset, parse};

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

pub fn next_upgrade_pods(i: &Value, e: &Value) -> Result<Value, String> {
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
            Some((a, b)) => pod_index(a).zip(pod_index(b)),
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

pub fn reconcile_upgrade(i: &Value) -> Result<Value, String> {
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
        version: KruiseVersion::V1_8,
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

pub fn upgrade_scenario(i: &Value) -> Result<(), String> {
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
            version: KruiseVersion::V1_8,
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

pub fn inject_pod_create(i: &Value, e: &Value, version: KruiseVersion) -> Result<(), String> {
    let mut gates = FeatureGates::new();
    for (k, v) in i["featureGates"].as_object().into_iter().flatten() {
        gates.set(k, v.as_bool().unwrap_or(false));
    }
    let sets: Vec<SidecarSet> = parse("sidecarSets", &i["sidecarSets"])?;
    let pod: Pod = parse("pod", &i["pod"])?;
    let no_history = |_: &SidecarSet| None;
    let ctx = inject::InjectContext {
        sets: &sets,
        namespaces: &matching::NamespaceLabels::new(),
        historic: &no_history,
        random: 0.5,
        now: now(),
        version,
        gates,
    };
    let out = match inject::inject_pod_create(&pod, &ctx) {
        Ok(out) => out.ok_or("nothing injected")?,
        // a rejected creation (e.g. a resourcesPolicy that cannot be applied)
        Err(err) if e.get("error").is_some() => {
            return expect_subset(e, &json!({ "error": err.to_string() }));
        }
        Err(err) => return Err(err.to_string()),
    };
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
        "containers": spec.containers,
        "volumeNames": spec.volumes.iter().flatten().map(|v| v.name.clone()).collect::<Vec<_>>(),
        "alsoDerivedFromSource": {
            "containerNames": names(&spec.containers),
            "initContainerNames": names(spec.init_containers.as_deref().unwrap_or_default()),
            "annotations": ann,
            "dns-f-1.env": env_of("dns-f-1"),
        },
    });
    expect_subset(e, &actual)
}
