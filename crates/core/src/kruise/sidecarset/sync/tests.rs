//! A controller pass over pods built by the injection webhook, with a kubelet that applies
//! spec images: partition and maxUnavailable, pause, not-upgradable pods and a hot upgrade
//! from injection to the reset of the old twin.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use serde_json::json;

use super::*;
use crate::kruise::sidecarset::{
    SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER,
    defaults::default_sidecar_set,
    inject::{InjectContext, inject_pod_create},
    pod_state::is_pod_sidecar_updated,
};

fn now() -> jiff::Timestamp {
    jiff::Timestamp::UNIX_EPOCH
}

fn set(sidecar: serde_json::Value, strategy: serde_json::Value) -> SidecarSet {
    let mut s: SidecarSet = serde_json::from_value(json!({
        "metadata": {"name": "log", "resourceVersion": "7", "generation": 2},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": [sidecar],
            "updateStrategy": strategy,
        },
    }))
    .unwrap();
    default_sidecar_set(&mut s);
    s
}

fn image(s: &mut SidecarSet, image: &str) {
    s.spec.containers[0].container.image = Some(image.to_owned());
    default_sidecar_set(s);
}

/// A pod of app `web` created through the injection webhook, then run by the kubelet.
fn pod(s: &SidecarSet, name: &str, created: i64) -> Pod {
    let mut p: Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "demo", "labels": {"app": "web"},
            "creationTimestamp": jiff::Timestamp::from_second(created).unwrap().to_string()},
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
    }))
    .unwrap();
    let sets = [s.clone()];
    let namespaces = NamespaceLabels::new();
    let ctx = InjectContext {
        sets: &sets,
        namespaces: &namespaces,
        historic: &|_| None,
        random: 0.5,
        now: now(),
        version: crate::kruise::KruiseVersion::V1_8,
        gates: crate::kruise::FeatureGates::new(),
    };
    p = inject_pod_create(&p, &ctx)
        .unwrap()
        .expect("the set injects");
    p.status = Some(PodStatus {
        phase: Some("Running".to_owned()),
        ..Default::default()
    });
    kubelet(&mut p, true);
    p
}

/// The kubelet runs the spec images (new image → new imageID) and reports readiness.
fn kubelet(p: &mut Pod, ready: bool) {
    let statuses: Vec<ContainerStatus> = p
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(|c| {
            let image = c.image.clone().unwrap_or_default();
            ContainerStatus {
                name: c.name.clone(),
                image_id: format!("docker.io/library/{image}@sha256:{}", image.len()),
                image,
                ready,
                ..Default::default()
            }
        })
        .collect();
    let status = p.status.get_or_insert_with(Default::default);
    status.container_statuses = Some(statuses);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != "Ready");
    conditions.push(PodCondition {
        type_: "Ready".to_owned(),
        status: if ready { "True" } else { "False" }.to_owned(),
        ..Default::default()
    });
}

fn ctx(sets: &[SidecarSet], version: KruiseVersion) -> ReconcileContext<'_> {
    static NAMESPACES: std::sync::OnceLock<NamespaceLabels> = std::sync::OnceLock::new();
    ReconcileContext {
        all_sets: sets,
        namespaces: NAMESPACES.get_or_init(NamespaceLabels::new),
        now: now(),
        version,
    }
}

fn pass(s: &SidecarSet, pods: &[Pod]) -> (SidecarSetStatus, PodPlan) {
    pass_at(KruiseVersion::V1_8, s, pods)
}

fn pass_at(version: KruiseVersion, s: &SidecarSet, pods: &[Pod]) -> (SidecarSetStatus, PodPlan) {
    let (matched, status) = matched_and_status(s, pods, &NamespaceLabels::new(), "log-rev", 0);
    let sets = [s.clone()];
    let plan = plan_pods(s, pods, &matched, &status, ctx(&sets, version));
    (status, plan)
}

fn sidecar_image(p: &Pod, name: &str) -> String {
    p.spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}

#[test]
fn partition_and_max_unavailable_bound_each_round() {
    let mut s = set(
        json!({"name": "agent", "image": "agent:1"}),
        json!({"partition": 1, "maxUnavailable": 2}),
    );
    let mut pods: Vec<Pod> = (0..4).map(|i| pod(&s, &format!("web-{i}"), i)).collect();
    let (status, plan) = pass(&s, &pods);
    assert_eq!(
        (
            status.matched_pods,
            status.updated_pods,
            status.ready_pods,
            status.updated_ready_pods
        ),
        (4, 4, 4, 4)
    );
    assert_eq!(status.observed_generation, 2);
    assert_eq!(plan.hold, Some(Hold::AllUpdated));
    assert!(!status_changed(Some(&status), &status));

    image(&mut s, "agent:2");
    let (status, plan) = pass(&s, &pods);
    assert_eq!((status.updated_pods, status.ready_pods), (0, 4));
    assert!(status_changed(Some(&SidecarSetStatus::default()), &status));
    // 3 of 4 may go (partition 1), 2 at a time (maxUnavailable 2).
    assert_eq!(plan.upgrades.len(), 2);
    for (i, upgraded) in &plan.upgrades {
        assert_eq!(sidecar_image(upgraded, "agent"), "agent:2");
        assert_eq!(
            sidecar_image(upgraded, "app"),
            "app:1",
            "the app container is untouched"
        );
        assert!(is_pod_sidecar_updated(&s, upgraded));
        assert_eq!(
            upgradable_condition(upgraded).map(|c| c.status.as_str()),
            Some("True")
        );
        pods[*i] = upgraded.clone();
    }
    // The kubelet has not restarted them yet: both count against maxUnavailable.
    let (status, plan) = pass(&s, &pods);
    assert_eq!((status.updated_pods, status.ready_pods), (2, 2));
    assert!(plan.upgrades.is_empty());
    for p in &mut pods {
        kubelet(p, true);
    }
    let (status, plan) = pass(&s, &pods);
    assert_eq!((status.updated_pods, status.updated_ready_pods), (2, 2));
    assert_eq!(
        plan.upgrades.len(),
        1,
        "the partition holds the last pod back"
    );
    let (i, upgraded) = plan.upgrades[0].clone();
    pods[i] = upgraded;
    kubelet(&mut pods[i], true);
    let (status, plan) = pass(&s, &pods);
    assert_eq!(status.updated_pods, 3);
    assert!(plan.upgrades.is_empty());

    s.spec.update_strategy.partition = None;
    s.spec.update_strategy.paused = true;
    let (_, plan) = pass(&s, &pods);
    assert_eq!(plan.hold, Some(Hold::Paused));
    s.spec.update_strategy.paused = false;
    s.spec.update_strategy.type_ = "NotUpdate".to_owned();
    assert_eq!(pass(&s, &pods).1.hold, Some(Hold::NotUpdate));
}

#[test]
fn a_changed_non_image_field_marks_pods_not_upgradable() {
    let mut s = set(json!({"name": "agent", "image": "agent:1"}), json!({}));
    let pods: Vec<Pod> = (0..2).map(|i| pod(&s, &format!("web-{i}"), i)).collect();
    s.spec.containers[0].container.args = Some(vec!["--verbose".to_owned()]);
    default_sidecar_set(&mut s);
    let (_, plan) = pass(&s, &pods);
    assert!(plan.upgrades.is_empty());
    assert_eq!(plan.not_upgradable_count, 2);
    assert_eq!(plan.not_upgradable.len(), 2);
    let condition = upgradable_condition(&plan.not_upgradable[0].1).unwrap();
    assert_eq!(
        (condition.status.as_str(), condition.reason.as_deref()),
        ("False", Some("UpdateImmutableField"))
    );
    assert_eq!(plan.events[0].reason, "NotUpgradablePods");
    assert_eq!(
        plan.events[0].message,
        "SidecarSet in-place update detected 2 not upgradable pod(s) in this round, will skip them."
    );
    // Once marked, the condition is not written again.
    let marked: Vec<Pod> = plan.not_upgradable.iter().map(|(_, p)| p.clone()).collect();
    let (_, plan) = pass(&s, &marked);
    assert!(plan.not_upgradable.is_empty());
    assert_eq!(plan.not_upgradable_count, 2);
}

#[test]
fn hot_upgrade_swaps_the_working_twin_then_resets_the_old_one() {
    let hot = |image: &str| {
        json!({"name": "envoy", "image": image,
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "envoy:empty"}})
    };
    let mut s = set(hot("envoy:1"), json!({}));
    let mut p = pod(&s, "web-0", 0);
    assert_eq!(sidecar_image(&p, "envoy-1"), "envoy:1");
    assert_eq!(sidecar_image(&p, "envoy-2"), "envoy:empty");
    let working = |p: &Pod| {
        p.metadata.annotations.as_ref().unwrap()[SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER].clone()
    };
    assert_eq!(working(&p), r#"{"envoy":"envoy-1"}"#);

    image(&mut s, "envoy:2");
    let (_, plan) = pass(&s, std::slice::from_ref(&p));
    assert!(plan.flips.is_empty());
    p = plan.upgrades[0].1.clone();
    assert_eq!(
        sidecar_image(&p, "envoy-2"),
        "envoy:2",
        "the idle twin takes the new image"
    );
    assert_eq!(
        sidecar_image(&p, "envoy-1"),
        "envoy:1",
        "the working twin keeps serving"
    );
    assert_eq!(working(&p), r#"{"envoy":"envoy-2"}"#);
    // Not restarted yet: nothing to reset.
    assert!(pass(&s, std::slice::from_ref(&p)).1.flips.is_empty());
    kubelet(&mut p, true);
    let (status, plan) = pass(&s, std::slice::from_ref(&p));
    assert_eq!(
        status.ready_pods, 0,
        "an idle twin off the empty image is not ready"
    );
    let (_, reset) = plan.flips[0].clone();
    assert_eq!(sidecar_image(&reset, "envoy-1"), "envoy:empty");
    assert_eq!(sidecar_image(&reset, "envoy-2"), "envoy:2");
    let ann = reset.metadata.annotations.clone().unwrap();
    assert_eq!(ann["version.sidecarset.kruise.io/envoy-1"], "0");
    assert_eq!(ann["versionalt.sidecarset.kruise.io/envoy-2"], "0");
    p = reset;
    kubelet(&mut p, true);
    let (status, plan) = pass(&s, std::slice::from_ref(&p));
    assert!(plan.flips.is_empty());
    assert_eq!(
        (
            status.updated_pods,
            status.ready_pods,
            status.updated_ready_pods
        ),
        (1, 1, 1)
    );
    assert_eq!(reset_event(None).reason, "ResetContainerSucceed");
    assert_eq!(
        reset_event(Some("conflict")).message,
        "reset sidecar container image empty failed: conflict"
    );
}

/// SS5 (v1.9.0, #2156): NotUpdate and paused hold the flips too, and a pass that flips
/// upgrades nothing else; v1.8.4 flipped first and went on.
#[test]
fn v1_9_checks_pause_before_flipping_and_a_flip_ends_the_pass() {
    let hot = |image: &str| {
        json!({"name": "envoy", "image": image,
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "envoy:empty"}})
    };
    let mut s = set(hot("envoy:1"), json!({"maxUnavailable": 2}));
    let mut p = pod(&s, "web-0", 0);
    let other = pod(&s, "web-1", 1);
    image(&mut s, "envoy:2");
    let (_, plan) = pass(&s, std::slice::from_ref(&p));
    p = plan.upgrades[0].1.clone();
    kubelet(&mut p, true);
    let pods = [p, other];
    // web-0 is ready to flip, web-1 still runs envoy:1
    let (_, old) = pass_at(KruiseVersion::V1_8, &s, &pods);
    assert_eq!(old.flips.len(), 1);
    assert_eq!(
        old.upgrades.len(),
        1,
        "v1.8.4 flips and upgrades in one pass"
    );
    let (_, new) = pass_at(KruiseVersion::V1_9, &s, &pods);
    assert_eq!(new.flips.len(), 1);
    assert!(new.upgrades.is_empty());
    assert_eq!(new.hold, Some(Hold::HotUpgradeFlips));

    s.spec.update_strategy.paused = true;
    let (_, old) = pass_at(KruiseVersion::V1_8, &s, &pods);
    assert_eq!((old.flips.len(), old.hold), (1, Some(Hold::Paused)));
    let (_, new) = pass_at(KruiseVersion::V1_9, &s, &pods);
    assert_eq!((new.flips.len(), new.hold), (0, Some(Hold::Paused)));
    s.spec.update_strategy.paused = false;
    s.spec.update_strategy.type_ = "NotUpdate".to_owned();
    let (_, new) = pass_at(KruiseVersion::V1_9, &s, &pods);
    assert_eq!((new.flips.len(), new.hold), (0, Some(Hold::NotUpdate)));
}
