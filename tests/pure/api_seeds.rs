//! The Kruise YAML examples from the release notes (`tests/fixtures/api/seeds/`, copied from
//! `../shared/seeds`) deserialize into our types, and their key fields carry the values written.
//!
//! Each fixture is read twice: straight from YAML into the type (serde-saphyr), and, for kinds
//! served in several versions, through `from_served_json` with the version in `apiVersion`; both
//! must agree.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::api::{
    self, CloneSet, ContainerRecreateRequest, DaemonSet, PersistentPodState, PodProbeMarker,
    PodUnavailableBudget, SidecarSet, StatefulSet, WorkloadSpread, keys,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/api/seeds");

fn text(name: &str) -> String {
    std::fs::read_to_string(format!("{DIR}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Reads a fixture as `T`, checking its `kind` (fragments have none).
fn read<T: DeserializeOwned + k8s_openapi::Resource>(name: &str) -> T {
    let text = text(name);
    let value: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    if let Some(kind) = value.get("kind") {
        assert_eq!(kind, T::KIND, "{name}");
    }
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn served_version(name: &str) -> String {
    let value: Value = serde_saphyr::from_str(&text(name)).unwrap();
    let api_version = value["apiVersion"].as_str().unwrap();
    api_version.rsplit('/').next().unwrap().to_string()
}

fn cloneset(name: &str) -> CloneSet {
    let direct: CloneSet = read(name);
    let value: Value = serde_saphyr::from_str(&text(name)).unwrap();
    let served = api::cloneset::from_served_json(&served_version(name), value).unwrap();
    assert_eq!(served, direct, "{name}");
    direct
}

fn statefulset(name: &str) -> StatefulSet {
    let direct: StatefulSet = read(name);
    let value: Value = serde_saphyr::from_str(&text(name)).unwrap();
    let served = api::statefulset::from_served_json(&served_version(name), value).unwrap();
    assert_eq!(served, direct, "{name}");
    direct
}

fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> &'a str {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
        .unwrap_or_else(|| panic!("annotation {key} missing"))
}

const FIXTURES: [&str; 19] = [
    "ads-image-predownload.yaml",
    "ads-lifecycle-predelete.yaml",
    "asts-auto-generate-pps.yaml",
    "asts-pvc-retention.yaml",
    "asts-scale-max-unavailable.yaml",
    "cloneset-container-priority.yaml",
    "cloneset-env-from-metadata.yaml",
    "cloneset-image-predownload.yaml",
    "cloneset-partition-90.yaml",
    "crr-minimal.yaml",
    "crr-strategy.fragment.yaml",
    "pps-echoserver.yaml",
    "ppm-game-server.yaml",
    "pub-web-server.yaml",
    "sidecarset-custom-version.yaml",
    "sidecarset-hot-upgrade.yaml",
    "sidecarset-injection-revision.yaml",
    "sidecarset-patch-pod-metadata.yaml",
    "workloadspread-demo.yaml",
];

#[test]
fn every_fixture_is_checked() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    let listed: BTreeSet<String> = FIXTURES.iter().map(|s| s.to_string()).collect();
    assert_eq!(on_disk, listed);
}

#[test]
fn cloneset_examples() {
    let cs = cloneset("cloneset-partition-90.yaml");
    assert_eq!(cs.spec.replicas, Some(8));
    assert_eq!(
        cs.spec.update_strategy.partition,
        Some(IntOrString::String("90%".into()))
    );
    assert!(!cs.spec.update_strategy.paused);
    let status = cs.status.unwrap();
    assert_eq!(status.expected_updated_replicas, Some(1));
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.updated_ready_replicas
        ),
        (8, 1, 1)
    );

    let cs = cloneset("cloneset-image-predownload.yaml");
    assert_eq!(
        annotation(&cs.metadata, keys::IMAGE_PREDOWNLOAD_PARALLELISM),
        "5"
    );

    let cs = cloneset("cloneset-container-priority.yaml");
    assert_eq!(
        cs.spec.update_strategy.type_.as_deref(),
        Some("InPlaceIfPossible")
    );
    let containers = &cs.spec.template.spec.as_ref().unwrap().containers;
    assert_eq!(containers.len(), 2);
    let env = containers[0].env.as_ref().unwrap();
    assert_eq!(env[0].name, "KRUISE_CONTAINER_PRIORITY");
    assert_eq!(env[0].value.as_deref(), Some("10"));
    assert_eq!(containers[1].image.as_deref(), Some("main-image:v1"));

    let cs = cloneset("cloneset-env-from-metadata.yaml");
    let container = &cs.spec.template.spec.as_ref().unwrap().containers[0];
    let field_ref = container.env.as_ref().unwrap()[0]
        .value_from
        .as_ref()
        .and_then(|v| v.field_ref.as_ref())
        .unwrap();
    assert_eq!(field_ref.field_path, "metadata.annotations['app-config']");
}

#[test]
fn advanced_statefulset_examples() {
    let sts = statefulset("asts-auto-generate-pps.yaml");
    assert_eq!(
        annotation(&sts.metadata, keys::AUTO_GENERATE_PERSISTENT_POD_STATE),
        "true"
    );
    assert_eq!(
        annotation(&sts.metadata, keys::REQUIRED_PERSISTENT_TOPOLOGY),
        "failure-domain.beta.kubernetes.io/zone[,other node labels]"
    );

    let sts = statefulset("asts-pvc-retention.yaml");
    let policy = sts.spec.pvc_retention_policy.unwrap();
    assert_eq!(policy.when_deleted.as_deref(), Some("Retain"));
    assert_eq!(policy.when_scaled.as_deref(), Some("Retain"));

    let sts = statefulset("asts-scale-max-unavailable.yaml");
    assert_eq!(sts.spec.replicas, Some(100));
    assert_eq!(
        sts.spec.scale_strategy.unwrap().max_unavailable,
        Some(IntOrString::String("10%".into()))
    );
}

#[test]
fn advanced_daemonset_examples() {
    let ds: DaemonSet = read("ads-image-predownload.yaml");
    assert_eq!(
        annotation(&ds.metadata, keys::IMAGE_PREDOWNLOAD_PARALLELISM),
        "10"
    );
    let ds: DaemonSet = read("ads-lifecycle-predelete.yaml");
    let hook = ds.spec.lifecycle.unwrap().pre_delete.unwrap();
    assert_eq!(hook.labels_handler["example.io/block-deleting"], "true");
    assert!(!hook.mark_pod_not_ready);
}

#[test]
fn sidecarset_examples() {
    let set: SidecarSet = read("sidecarset-hot-upgrade.yaml");
    let c = &set.spec.containers[0];
    assert_eq!(c.container.name, "nginx-sidecar");
    assert_eq!(c.container.image.as_deref(), Some("nginx:1.18"));
    let up = &c.upgrade_strategy;
    assert_eq!(up.upgrade_type, "HotUpgrade");
    assert_eq!(up.hot_upgrade_empty_image, "empty:1.0.0");
    let post_start = c
        .container
        .lifecycle
        .as_ref()
        .and_then(|l| l.post_start.as_ref());
    assert!(post_start.and_then(|p| p.exec.as_ref()).is_some());

    let set: SidecarSet = read("sidecarset-injection-revision.yaml");
    let rev = set.spec.injection_strategy.revision.unwrap();
    assert_eq!(
        rev.revision_name.as_deref(),
        Some("specific-controllerRevision-name")
    );
    assert_eq!(rev.custom_version, None);

    let set: SidecarSet = read("sidecarset-custom-version.yaml");
    assert_eq!(
        set.spec.update_strategy.partition,
        Some(IntOrString::String("90%".into()))
    );
    let rev = set.spec.injection_strategy.revision.unwrap();
    assert_eq!(rev.custom_version.as_deref(), Some("version-1"));
    let labels = set.metadata.labels.unwrap();
    assert_eq!(labels[keys::SIDECARSET_CUSTOM_VERSION], "version-2");

    let set: SidecarSet = read("sidecarset-patch-pod-metadata.yaml");
    assert!(set.spec.containers.is_empty());
    let patches = &set.spec.patch_pod_metadata;
    assert_eq!(patches.len(), 2);
    assert_eq!(patches[0].patch_policy, "MergePatchJson");
    assert_eq!(patches[0].annotations["oom-score"], r#"{"log-agent": 1}"#);
    assert_eq!(
        patches[1].annotations[keys::CONTAINER_LAUNCH_PRIORITY],
        "Ordered"
    );
}

#[test]
fn podprobemarker_example() {
    let ppm: PodProbeMarker = read("ppm-game-server.yaml");
    assert_eq!(ppm.metadata.name.as_deref(), Some("game-server-probe"));
    let probe = &ppm.spec.probes[0];
    assert_eq!(
        (probe.name.as_str(), probe.container_name.as_str()),
        ("Idle", "game-server")
    );
    assert_eq!(probe.pod_condition_type, "game.io/idle");
    let spec = probe.probe.as_ref().unwrap();
    let command = spec.exec.as_ref().and_then(|e| e.command.as_ref()).unwrap();
    assert_eq!(command, &vec!["/home/game/idle.sh".to_string()]);
    assert_eq!(spec.period_seconds, Some(10));
    assert_eq!(spec.failure_threshold, Some(3));
    let failed = &probe.marker_policy[1];
    assert_eq!(failed.state, "Failed");
    assert_eq!(failed.labels["gameserver-idle"], "false");
    assert_eq!(failed.annotations[keys::POD_DELETION_COST], "10");
}

#[test]
fn containerrecreaterequest_examples() {
    let crr: ContainerRecreateRequest = read("crr-minimal.yaml");
    assert_eq!(crr.spec.pod_name, "pod-name");
    let names: Vec<_> = crr
        .spec
        .containers
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["app", "sidecar"]);
    assert_eq!(crr.spec.strategy, None);

    let crr: ContainerRecreateRequest = read("crr-strategy.fragment.yaml");
    let s = crr.spec.strategy.unwrap();
    assert_eq!(s.failure_policy, "Fail");
    assert!(!s.ordered_recreate);
    assert_eq!(s.termination_grace_period_seconds, Some(30));
    assert_eq!(s.unready_grace_period_seconds, Some(3));
    assert_eq!(s.min_started_seconds, 10);
    assert_eq!(crr.spec.active_deadline_seconds, Some(300));
    assert_eq!(crr.spec.ttl_seconds_after_finished, Some(1800));
}

#[test]
fn protection_and_placement_examples() {
    let pub_: PodUnavailableBudget = read("pub-web-server.yaml");
    let target = pub_.spec.target_ref.unwrap();
    assert_eq!(
        (target.kind.as_str(), target.name.as_str()),
        ("Deployment", "web-server")
    );
    assert_eq!(
        pub_.spec.max_unavailable,
        Some(IntOrString::String("60%".into()))
    );
    assert_eq!(pub_.spec.min_available, None);
    assert_eq!(pub_.spec.selector, None);

    let pps: PersistentPodState = read("pps-echoserver.yaml");
    assert_eq!(pps.spec.target_ref.api_version, "apps.kruise.io/v1beta1");
    let required = pps.spec.required_persistent_topology.unwrap();
    assert_eq!(required.node_topology_keys.len(), 1);
    assert_eq!(pps.spec.preferred_persistent_topology[0].weight, 100);

    let ws: WorkloadSpread = read("workloadspread-demo.yaml");
    assert_eq!(ws.spec.subsets.len(), 2);
    assert_eq!(ws.spec.subsets[0].max_replicas, Some(IntOrString::Int(10)));
    assert_eq!(ws.spec.subsets[1].max_replicas, None);
    let term = ws.spec.subsets[1]
        .required_node_selector_term
        .as_ref()
        .unwrap();
    let expr = &term.match_expressions.as_ref().unwrap()[0];
    assert_eq!(expr.values.as_ref().unwrap(), &vec!["zone-b".to_string()]);
}
