//! Unit tests of the demo scenario: every view has data, and the data is what Kruise's
//! controllers and the kubelet would have written (consistent counts, resolvable references).

use std::collections::{HashMap, HashSet};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::*;
use crate::cluster::sim::kubelet::{self, PodAction, Timing};

fn now() -> Timestamp {
    Timestamp::from_second(1_800_000_000).unwrap()
}

fn find<'a>(objects: &'a [SeedObject], kind: &str, name: &str) -> &'a SeedObject {
    objects
        .iter()
        .find(|o| o.resource.kind == kind && o.name() == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn status(o: &SeedObject) -> &Value {
    match &o.status {
        SeedStatus::Fixed(v) => v,
        other => panic!("{} has no fixed status: {other:?}", o.name()),
    }
}

/// The pod as created (with a made-up UID) and its seeded status.
fn seeded(o: &SeedObject) -> Pod {
    let mut pod: Pod = serde_json::from_value(o.object.clone()).unwrap();
    pod.metadata.uid = Some(format!("uid-{}", o.name()));
    let SeedStatus::Pod(seed) = &o.status else {
        panic!("pod without a pod seed");
    };
    pod.status = Some(seeded_pod_status(&pod, seed, now()));
    pod
}

fn ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn pods_labelled<'a>(objects: &'a [SeedObject], key: &str, value: &str) -> Vec<&'a SeedObject> {
    objects
        .iter()
        .filter(|o| o.resource.kind == "Pod" && o.object["metadata"]["labels"][key] == value)
        .collect()
}

#[test]
fn every_view_has_something_to_show() {
    let objects = scenario("demo", None, now());
    let kinds: HashSet<&str> = objects.iter().map(|o| o.resource.kind.as_str()).collect();
    for kind in [
        "Namespace",
        "Node",
        "CloneSet",
        "StatefulSet",
        "DaemonSet",
        "ControllerRevision",
        "SidecarSet",
        "PodProbeMarker",
        "PodUnavailableBudget",
        "ContainerRecreateRequest",
        "Pod",
    ] {
        assert!(kinds.contains(kind), "no {kind}");
    }
    let phases: HashSet<&str> = objects
        .iter()
        .filter(|o| o.resource.kind == "ContainerRecreateRequest")
        .map(|o| status(o)["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, HashSet::from(["Completed", "Recreating"]));
    let protection = |kind, name| {
        find(&objects, kind, name).object["metadata"]["labels"]
            ["policy.kruise.io/delete-protection"]
            .clone()
    };
    assert_eq!(protection("CloneSet", "web"), "Cascading");
    assert_eq!(protection("StatefulSet", "db"), "Always");
}

#[test]
fn references_point_at_objects_created_earlier() {
    let objects = scenario("demo", None, now());
    let mut seen: HashSet<(String, Option<String>, String)> = HashSet::new();
    let mut names: HashSet<(String, Option<String>, String)> = HashSet::new();
    for o in &objects {
        for r in &o.uid_refs {
            assert!(
                seen.contains(&(r.kind.clone(), r.namespace.clone(), r.name.clone())),
                "{} {} refers to {} {:?}/{} before it exists",
                o.resource.kind,
                o.name(),
                r.kind,
                r.namespace,
                r.name
            );
            assert!(
                o.object.pointer(&r.pointer).is_some(),
                "{} has no {}",
                o.name(),
                r.pointer
            );
        }
        let key = (
            o.resource.kind.clone(),
            o.namespace().map(str::to_owned),
            o.name().to_owned(),
        );
        assert!(names.insert(key.clone()), "duplicate {key:?}");
        seen.insert(key);
    }
}

#[test]
fn every_workload_pod_names_an_existing_revision() {
    let objects = scenario("demo", None, now());
    let revisions: HashSet<&str> = objects
        .iter()
        .filter(|o| o.resource.kind == "ControllerRevision")
        .map(SeedObject::name)
        .collect();
    for pod in objects.iter().filter(|o| o.resource.kind == "Pod") {
        let owner = pod.object["metadata"]["ownerReferences"][0]["name"]
            .as_str()
            .unwrap();
        let hash = pod.object["metadata"]["labels"]["controller-revision-hash"]
            .as_str()
            .unwrap();
        // CloneSet and Advanced StatefulSet write the full name, Advanced DaemonSet the hash.
        let name = if hash.starts_with(&format!("{owner}-")) {
            hash.to_owned()
        } else {
            format!("{owner}-{hash}")
        };
        assert!(revisions.contains(name.as_str()), "{} → {name}", pod.name());
    }
}

#[test]
fn web_is_mid_rollout_with_consistent_status() {
    let objects = scenario("demo", None, now());
    let web = find(&objects, "CloneSet", "web");
    let st = status(web);
    assert_eq!(web.object["spec"]["updateStrategy"]["partition"], 6);
    assert_ne!(st["currentRevision"], st["updateRevision"]);
    let update = st["updateRevision"].as_str().unwrap();
    let current = st["currentRevision"].as_str().unwrap();
    let updated = pods_labelled(&objects, "controller-revision-hash", update);
    let old = pods_labelled(&objects, "controller-revision-hash", current);
    assert_eq!((updated.len(), old.len()), (4, 6));
    assert_eq!(st["updatedReplicas"], 4);
    assert_eq!(st["expectedUpdatedReplicas"], 4);
    let all = pods_labelled(&objects, "app", "web");
    assert_eq!(st["replicas"], all.len());
    let ready_count = all.iter().filter(|p| ready(&seeded(p))).count();
    assert_eq!(st["readyReplicas"], ready_count);
    assert_eq!(ready_count, 10, "every web pod is ready");
    // Updated pods were updated in place: the new image, one restart, the in-place record.
    for p in &updated {
        let pod = seeded(p);
        let nginx = &pod
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0];
        assert_eq!(nginx.image, "nginx:1.26.0");
        assert!(nginx.restart_count >= 1);
        assert!(
            p.object["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"].is_string()
        );
    }
}

#[test]
fn checkout_is_stuck_on_a_crash_looping_pod() {
    let objects = scenario("demo", None, now());
    let st = status(find(&objects, "CloneSet", "checkout"));
    assert_eq!(st["updatedReplicas"], 1);
    assert_eq!(st["updatedReadyReplicas"], 0);
    assert_eq!(st["readyReplicas"], 5);
    assert_eq!(st["expectedUpdatedReplicas"], 6);
    let update = st["updateRevision"].as_str().unwrap();
    let crashing = pods_labelled(&objects, "controller-revision-hash", update);
    let pod = seeded(crashing[0]);
    assert!(!ready(&pod));
    let c = &pod
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()[0];
    assert!(c.restart_count >= 2, "restartCount {}", c.restart_count);
    let budget = status(find(&objects, "PodUnavailableBudget", "checkout-pub"));
    assert_eq!(budget["unavailableAllowed"], 0);
    let web_budget = status(find(&objects, "PodUnavailableBudget", "web-pub"));
    assert_eq!(
        (
            web_budget["desiredAvailable"].as_u64(),
            web_budget["unavailableAllowed"].as_u64()
        ),
        (Some(8), Some(2))
    );
}

#[test]
fn sidecar_hashes_on_pods_match_the_set_revisions() {
    let objects = scenario("demo", None, now());
    let set = find(&objects, "SidecarSet", "logtail");
    let latest = set.object["metadata"]["annotations"]["kruise.io/sidecarset-hash"]
        .as_str()
        .unwrap();
    let mut by_hash: HashMap<String, usize> = HashMap::new();
    for p in pods_labelled(&objects, "app", "web") {
        let ann: Value = serde_json::from_str(
            p.object["metadata"]["annotations"]["kruise.io/sidecarset-hash"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        *by_hash
            .entry(ann["logtail"]["hash"].as_str().unwrap().to_owned())
            .or_default() += 1;
        let sidecar = &p.object["spec"]["containers"][1];
        assert_eq!(sidecar["env"][0]["name"], "IS_INJECTED");
    }
    assert_eq!(by_hash.len(), 2, "pods on two sidecar revisions");
    let st = status(set);
    assert_eq!(st["updatedPods"], by_hash[latest]);
    assert_eq!(st["matchedPods"], 10);
    assert_eq!(latest.len(), 64);
}

#[test]
fn probe_results_are_on_the_pods() {
    let objects = scenario("demo", None, now());
    let pods = pods_labelled(&objects, "app", "web");
    let failing: Vec<&&SeedObject> = pods
        .iter()
        .filter(|p| p.object["metadata"]["labels"]["gameserver-state"] == "unhealthy")
        .collect();
    assert_eq!(failing.len(), 1);
    let pod = seeded(failing[0]);
    let cond = pod
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == ops::PROBE_CONDITION)
        .unwrap();
    assert_eq!(cond.status, "False");
    assert!(cond.message.unwrap().contains("refused"));
}

#[test]
fn seeded_pods_are_what_the_simulated_kubelet_would_keep() {
    let objects = scenario("demo", None, now());
    for o in objects.iter().filter(|o| o.resource.kind == "Pod") {
        let pod = seeded(o);
        let node = o.object["spec"]["nodeName"].as_str().unwrap();
        let index = crate::cluster::sim::nodes::node_index(node).unwrap();
        let ip = crate::cluster::sim::nodes::node_ip(index);
        let decision = kubelet::decide(&pod, &ip, now(), &Timing::default());
        assert_eq!(decision.action, PodAction::Nothing, "pod {}", o.name());
    }
}

#[test]
fn pods_n_is_spread_over_bulk_clonesets_of_about_a_hundred() {
    let base = count_pods(&scenario("demo", None, now()));
    let objects = scenario("demo", Some(10_000), now());
    assert_eq!(count_pods(&objects), 10_000);
    let bulk: Vec<&SeedObject> = objects
        .iter()
        .filter(|o| o.resource.kind == "CloneSet" && o.name().starts_with("bulk-"))
        .collect();
    assert_eq!(bulk.len(), (10_000 - base).div_ceil(100));
    for cs in &bulk {
        let replicas = cs.object["spec"]["replicas"].as_u64().unwrap();
        assert!((90..=100).contains(&replicas), "{replicas}");
        assert_eq!(status(cs)["readyReplicas"], replicas);
        assert!(cs.namespace().unwrap().starts_with("demo-scale-"));
    }
    assert_eq!(node_count(Some(10_000)), 8);
    assert_eq!(
        count_pods(&scenario("demo", Some(5), now())),
        base,
        "the base is kept"
    );
}

#[test]
fn the_scenario_is_deterministic() {
    assert_eq!(
        scenario("demo", Some(300), now()),
        scenario("demo", Some(300), now())
    );
}

#[test]
fn restart_requests_name_the_container_they_replaced() {
    let objects = scenario("demo", None, now());
    for crr in objects
        .iter()
        .filter(|o| o.resource.kind == "ContainerRecreateRequest")
    {
        let pod_name = crr.object["spec"]["podName"].as_str().unwrap();
        let pod = seeded(find(&objects, "Pod", pod_name));
        let container = crr.object["spec"]["containers"][0]["name"]
            .as_str()
            .unwrap();
        let status = pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.name == container))
            .unwrap();
        let id_ref = crr
            .uid_refs
            .iter()
            .find(|r| r.pointer.ends_with("containerID"))
            .unwrap();
        let killed = status
            .last_state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .and_then(|t| t.container_id.clone());
        let uid = pod.metadata.uid.as_deref().unwrap();
        assert_eq!(Some(id_ref.value(uid)), killed, "{}", crr.name());
        let before = crr.object["spec"]["containers"][0]["statusContext"]["restartCount"]
            .as_i64()
            .unwrap();
        assert_eq!(i64::from(status.restart_count), before + 1);
    }
}
