//! Behaviour tests across the SidecarSet modules: a full hot-upgrade reconcile sequence and
//! property tests for hashing, upgrade selection and history truncation.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{
    SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
    SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER,
    control::{is_pod_ready, is_pod_state_consistent},
    hash::sidecar_set_hash_json,
    history::{RevisionRef, truncate_history},
    matching::NamespaceLabels,
    pod_state::{is_pod_sidecar_updated, update_pod_annotations_in_upgrade},
    reconcile::{ReconcileContext, reconcile},
    summary::pod_sidecar_summary,
    upgrade::next_upgrade_pods,
};
use crate::api::sidecarset::{SidecarContainer, SidecarSet};

fn now() -> jiff::Timestamp {
    jiff::Timestamp::UNIX_EPOCH
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn container(name: &str, image: &str) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(image.to_owned()),
        ..Default::default()
    }
}

fn cstatus(name: &str, image: &str, id: &str) -> ContainerStatus {
    ContainerStatus {
        name: name.to_owned(),
        image: image.to_owned(),
        image_id: id.to_owned(),
        ready: true,
        ..Default::default()
    }
}

fn set(name: &str, hash: &str, containers: Vec<SidecarContainer>) -> SidecarSet {
    let mut s = SidecarSet::default();
    s.metadata.name = Some(name.to_owned());
    s.metadata.resource_version = Some("42".to_owned());
    s.metadata.annotations = Some(labels(&[
        (SIDECARSET_HASH_ANNOTATION, hash),
        (SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, "w"),
    ]));
    s.spec.selector = Some(LabelSelector {
        match_labels: Some(labels(&[("app", "web")])),
        ..Default::default()
    });
    s.spec.containers = containers;
    s
}

fn pod(name: &str, hash: &str, containers: Vec<Container>, statuses: Vec<ContainerStatus>) -> Pod {
    let hashes = format!(r#"{{"s":{{"hash":"{hash}"}}}}"#);
    Pod {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            labels: Some(labels(&[("app", "web")])),
            annotations: Some(labels(&[
                (SIDECARSET_HASH_ANNOTATION, hashes.as_str()),
                (
                    SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
                    r#"{"s":{"hash":"w"}}"#,
                ),
            ])),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers,
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".to_owned()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".to_owned(),
                status: "True".to_owned(),
                ..Default::default()
            }]),
            container_statuses: Some(statuses),
            ..Default::default()
        }),
    }
}

type Counts = (i32, i32, i32, i32);

fn status_tuple(set: &SidecarSet, pods: &[Pod]) -> (Counts, Vec<(usize, Pod)>) {
    let ctx = ReconcileContext {
        all_sets: std::slice::from_ref(set),
        namespaces: &NamespaceLabels::new(),
        now: now(),
        version: crate::kruise::KruiseVersion::V1_8,
    };
    let out = reconcile(set, pods, ctx);
    let s = out.status;
    (
        (
            s.matched_pods,
            s.updated_pods,
            s.ready_pods,
            s.updated_ready_pods,
        ),
        out.pod_updates,
    )
}

/// The kubelet applies the spec images: new image, new imageID.
fn kubelet_applies(p: &mut Pod, names: &[&str]) {
    let spec: BTreeMap<String, String> = p
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect();
    for cs in p
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
        .into_iter()
        .flatten()
    {
        if names.contains(&cs.name.as_str()) {
            cs.image = spec[&cs.name].clone();
            cs.image_id = format!("id-of-{}", cs.image);
        }
    }
}

#[test]
fn hot_upgrade_status_sequence() {
    let mut sidecar = SidecarContainer {
        container: container("envoy", "envoy:v2"),
        ..Default::default()
    };
    sidecar.upgrade_strategy.upgrade_type = "HotUpgrade".to_owned();
    sidecar.upgrade_strategy.hot_upgrade_empty_image = "empty:1".to_owned();
    let s = set("s", "bbb", vec![sidecar]);
    let mut p = pod(
        "p",
        "aaa",
        vec![
            container("app", "app:1"),
            container("envoy-1", "envoy:v1"),
            container("envoy-2", "empty:1"),
        ],
        vec![
            cstatus("app", "app:1", "id-of-app:1"),
            cstatus("envoy-1", "envoy:v1", "id-of-envoy:v1"),
            cstatus("envoy-2", "empty:1", "id-of-empty:1"),
        ],
    );
    p.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(
            SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER.to_owned(),
            r#"{"envoy":"envoy-1"}"#.to_owned(),
        );

    // 1: the idle twin (empty image) receives the new image and becomes the working one.
    let (status, updates) = status_tuple(&s, std::slice::from_ref(&p));
    assert_eq!(status, (1, 0, 1, 0));
    p = updates.into_iter().next().expect("pod upgraded").1;
    let images: Vec<_> = p
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(|c| c.image.clone().unwrap())
        .collect();
    assert_eq!(images, ["app:1", "envoy:v1", "envoy:v2"]);
    let ann = p.metadata.annotations.clone().unwrap();
    assert_eq!(
        ann[SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER],
        r#"{"envoy":"envoy-2"}"#
    );
    assert_eq!(ann["version.sidecarset.kruise.io/envoy-2"], "42");
    assert_eq!(ann["versionalt.sidecarset.kruise.io/envoy-1"], "42");
    let conditions = p.status.as_ref().unwrap().conditions.clone().unwrap();
    let upgradable = conditions
        .iter()
        .find(|c| c.type_ == "SidecarSetUpgradable")
        .expect("condition");
    assert_eq!(
        (upgradable.status.as_str(), upgradable.message.as_deref()),
        ("True", Some(r#"{"s":true}"#))
    );

    // 2: the kubelet has not applied it yet: updated, not ready, nothing to flip.
    let (status, updates) = status_tuple(&s, std::slice::from_ref(&p));
    assert_eq!(status, (1, 1, 0, 0));
    assert!(updates.is_empty());

    // 3: applied; the old twin is flipped to the empty image.
    kubelet_applies(&mut p, &["envoy-2"]);
    let (status, updates) = status_tuple(&s, std::slice::from_ref(&p));
    assert_eq!(status, (1, 1, 0, 0));
    p = updates.into_iter().next().expect("pod flipped").1;
    let envoy1 = &p.spec.as_ref().unwrap().containers[1];
    assert_eq!(envoy1.image.as_deref(), Some("empty:1"));
    assert_eq!(
        p.metadata.annotations.as_ref().unwrap()["version.sidecarset.kruise.io/envoy-1"],
        "0"
    );

    // 4: flip applied: ready again.
    kubelet_applies(&mut p, &["envoy-1"]);
    let (status, updates) = status_tuple(&s, std::slice::from_ref(&p));
    assert_eq!(status, (1, 1, 1, 1));
    assert!(updates.is_empty());
    let summary = pod_sidecar_summary(&s, &p);
    assert!(summary.updated && summary.consistent && summary.ready && summary.upgradable);
    assert_eq!(summary.hash, "bbb");
    assert_eq!(
        summary.hot_upgrade["envoy"],
        ("envoy-2".to_owned(), "envoy-1".to_owned())
    );
}

/// Builds `n` pods of which the first `updated` carry the set's hash (the first `consistent`
/// of those have landed) and those in `not_ready` are not Ready.
fn factory(
    n: usize,
    updated: usize,
    consistent: usize,
    not_ready: &BTreeSet<usize>,
    s: &SidecarSet,
) -> Vec<Pod> {
    (0..n)
        .map(|k| {
            let mut p = pod(
                &format!("pod-{k}"),
                "aaa",
                vec![container("app", "app:1"), container("side", "side:v1")],
                vec![
                    cstatus("app", "app:1", "id-app"),
                    cstatus("side", "side:v1", "id-v1"),
                ],
            );
            if k < updated {
                p.spec.as_mut().unwrap().containers[1].image = Some("side:v2".to_owned());
                update_pod_annotations_in_upgrade(&mut p, s, &["side".to_owned()], now());
                if k < consistent {
                    kubelet_applies(&mut p, &["side"]);
                }
            }
            if not_ready.contains(&k) {
                p.status.as_mut().unwrap().conditions = None;
            }
            p
        })
        .collect()
}

proptest! {
    #[test]
    fn hash_ignores_map_and_field_order(
        limits in proptest::collection::btree_map("[a-z]{1,8}", "[0-9]{1,4}", 0..6),
        reverse_fields in any::<bool>(),
    ) {
        let forward: Map<String, Value> = limits.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let backward: Map<String, Value> = limits.iter().rev().map(|(k, v)| (k.clone(), json!(v))).collect();
        let mut fields = [
            ("name", json!("c")),
            ("image", json!("i:1")),
            ("resources", json!({"limits": Value::Object(forward)})),
            ("env", json!([{"name": "A", "value": "1"}])),
        ];
        let a: Map<String, Value> = fields.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        if reverse_fields {
            fields.reverse();
        }
        fields[if reverse_fields { 1 } else { 2 }].1 = json!({"limits": Value::Object(backward)});
        let b: Map<String, Value> = fields.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        prop_assert_eq!(
            sidecar_set_hash_json(&json!({"containers": [a]})),
            sidecar_set_hash_json(&json!({"containers": [b]}))
        );
    }

    #[test]
    fn next_upgrade_respects_budget_and_partition(
        n in 1usize..30,
        updated_frac in 0.0f64..1.0,
        consistent_frac in 0.0f64..1.0,
        not_ready in proptest::collection::btree_set(0usize..30, 0..6),
        max_unavailable in 1i32..8,
        partition in 0i32..30,
    ) {
        let updated = (n as f64 * updated_frac) as usize;
        let consistent = (updated as f64 * consistent_frac) as usize;
        let mut s = set("s", "bbb", vec![SidecarContainer { container: container("side", "side:v2"), ..Default::default() }]);
        s.spec.update_strategy.max_unavailable = Some(IntOrString::Int(max_unavailable));
        s.spec.update_strategy.partition = Some(IntOrString::Int(partition));
        let pods = factory(n, updated, consistent, &not_ready, &s);
        let next = next_upgrade_pods(&s, &pods);
        let chosen: BTreeSet<usize> = next.upgrade.iter().copied().collect();
        prop_assert_eq!(chosen.len(), next.upgrade.len());
        let all = BTreeSet::new();
        for &k in &next.upgrade {
            prop_assert!(k < n);
            prop_assert!(!is_pod_sidecar_updated(&s, &pods[k]));
        }
        let waiting = n - updated;
        prop_assert!(next.upgrade.len() <= waiting.saturating_sub(partition as usize));
        let unavailable = pods
            .iter()
            .filter(|p| is_pod_sidecar_updated(&s, p) && (!is_pod_state_consistent(&s, p, &all) || !is_pod_ready(&s, p)))
            .count() as i32;
        let ready_taken = next.upgrade.iter().filter(|&&k| is_pod_ready(&s, &pods[k])).count() as i32;
        prop_assert!(ready_taken <= (max_unavailable - unavailable).max(0));
    }

    #[test]
    fn truncation_keeps_referenced_and_newest(
        count in 1usize..25,
        limit in 0i32..12,
        referenced in proptest::collection::btree_set(1usize..25, 0..10),
    ) {
        let mut s = SidecarSet::default();
        s.metadata.name = Some("s".to_owned());
        s.spec.revision_history_limit = Some(limit);
        let revisions: Vec<RevisionRef> = (1..=count)
            .map(|k| RevisionRef { name: format!("s-{k}"), revision: k as i64, ..Default::default() })
            .collect();
        let refs: BTreeSet<String> = referenced.iter().map(|k| format!("s-{k}")).collect();
        let t = truncate_history(&s, &revisions, &refs);
        let newest = format!("s-{count}");
        prop_assert!(!t.delete.contains(&newest));
        for d in &t.delete {
            prop_assert!(!refs.contains(d));
        }
        let remaining = count - t.delete.len();
        let limit = limit.max(1) as usize;
        if t.error.is_none() {
            prop_assert!(remaining <= limit);
        } else {
            prop_assert!(remaining > limit);
        }
    }
}

#[test]
fn admission_defaults_validate_and_inject() {
    use super::admission::{admit_pod_create, admit_sidecar_set, mutate_sidecar_set};
    use super::inject::InjectContext;
    use super::validate::ValidationContext;

    let user: SidecarSet = serde_json::from_value(json!({
        "metadata": {"name": "log"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "agent", "image": "agent:1", "volumeMounts": [{"name": "logs", "mountPath": "/l"}]}],
                 "volumes": [{"name": "logs", "emptyDir": {}}, {"name": "unused", "emptyDir": {}}]}
    }))
    .unwrap();
    let (set, patch) = mutate_sidecar_set(&user);
    assert!(!patch.0.is_empty());
    assert_eq!(
        set.spec.containers[0].pod_inject_policy,
        "BeforeAppContainer"
    );
    assert_eq!(set.annotation(SIDECARSET_HASH_ANNOTATION).len(), 64);
    assert!(admit_sidecar_set(&set, &ValidationContext::default()).allowed);
    let denied = admit_sidecar_set(&user, &ValidationContext::default());
    assert_eq!(denied.code, 500);

    let p = pod("p", "", vec![container("app", "app:1")], vec![]);
    let mut p = p;
    p.metadata.annotations = None;
    let no_history = |_: &SidecarSet| None;
    let ctx = InjectContext {
        sets: std::slice::from_ref(&set),
        namespaces: &NamespaceLabels::new(),
        historic: &no_history,
        random: 0.0,
        now: now(),
        version: crate::kruise::KruiseVersion::V1_8,
        gates: crate::kruise::FeatureGates::new(),
    };
    let (verdict, patch) = admit_pod_create(&p, &ctx);
    assert!(verdict.allowed);
    let mut doc = serde_json::to_value(&p).unwrap();
    json_patch::patch(&mut doc, &patch.expect("patch")).unwrap();
    let injected: Pod = serde_json::from_value(doc).unwrap();
    let spec = injected.spec.unwrap();
    let names: Vec<_> = spec.containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["agent", "app"]);
    let volumes: Vec<_> = spec.volumes.unwrap().into_iter().map(|v| v.name).collect();
    assert_eq!(volumes, ["logs"]);
    assert_eq!(
        spec.containers[0].env.as_ref().unwrap()[0].name,
        "IS_INJECTED"
    );
    let ann = injected.metadata.annotations.unwrap();
    assert_eq!(ann["kruise.io/sidecarset-injected-list"], "log");
}
