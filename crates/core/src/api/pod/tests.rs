use serde_json::json;

use super::*;

fn pod_json() -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-abc", "namespace": "default", "uid": "u-1",
                     "labels": {"controller-revision-hash": "web-7d9"}},
        "spec": {
            "nodeName": "node-1",
            "terminationGracePeriodSeconds": 30,
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "containers": [{"name": "main", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]
        },
        "status": {
            "phase": "Running", "podIP": "10.0.0.5", "hostIP": "192.168.0.2",
            "startTime": "2024-05-06T07:08:09Z",
            "conditions": [{"type": "game.io/idle", "status": "True", "message": "idle",
                            "lastProbeTime": "2024-05-06T07:09:00Z",
                            "lastTransitionTime": "2024-05-06T07:09:00Z"}],
            "containerStatuses": [{
                "name": "main", "ready": true, "restartCount": 3, "started": true,
                "image": "nginx:1.25", "imageID": "docker.io/nginx@sha256:1",
                "containerID": "containerd://abc",
                "state": {"running": {"startedAt": "2024-05-06T07:08:30Z"}},
                "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "message": "boom",
                              "startedAt": "2024-05-06T07:08:10Z", "finishedAt": "2024-05-06T07:08:20Z"}}
            }]
        }
    })
}

fn meta_json() -> serde_json::Value {
    json!({
        "name": "web-abc", "namespace": "default", "uid": "u-1", "generateName": "web-",
        "resourceVersion": "42", "generation": 2, "creationTimestamp": "2024-05-06T07:08:09Z",
        "deletionTimestamp": "2024-05-06T08:00:00Z", "deletionGracePeriodSeconds": 30,
        "finalizers": ["a/b"], "labels": {"app": "web", "tier": "front"}, "annotations": {"k": "v"},
        "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                             "name": "web", "uid": "u-0", "controller": true,
                             "blockOwnerDeletion": true}],
        "managedFields": [{"manager": "kubelet", "operation": "Update",
                           "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}]
    })
}

#[test]
fn metadata_is_read_whole_except_managed_fields() {
    let mut full: ObjectMeta = serde_json::from_value(meta_json()).unwrap();
    assert!(full.managed_fields.is_some());
    full.managed_fields = None;
    let pod: SlimPod = serde_json::from_value(json!({"metadata": meta_json()})).unwrap();
    assert_eq!(pod.metadata.to_object_meta(), full);
    assert_eq!(pod.metadata.labels.get("tier"), Some("front"));
    assert_eq!(
        pod.metadata.controller().map(|r| r.name.as_str()),
        Some("web")
    );
    // null and absent metadata read as empty.
    let pod: SlimPod = serde_json::from_value(json!({"metadata": null})).unwrap();
    assert_eq!(pod.metadata, SlimPodMeta::default());
    let pod: SlimPod =
        serde_json::from_value(json!({"metadata": {"labels": null, "ownerReferences": null}}))
            .unwrap();
    assert!(pod.metadata.labels.is_empty() && pod.metadata.owner_references.is_empty());
}

#[test]
fn reads_what_the_views_and_logic_need_from_a_pod() {
    let pod: SlimPod = serde_json::from_value(pod_json()).unwrap();
    assert_eq!(pod.spec.node_name.as_deref(), Some("node-1"));
    assert_eq!(pod.spec.termination_grace_period_seconds, Some(30));
    assert_eq!(
        pod.spec.readiness_gates[0].condition_type,
        "InPlaceUpdateReady"
    );
    let cond = &pod.status.conditions[0];
    assert_eq!(cond.message.as_deref(), Some("idle"));
    assert!(cond.last_probe_time.is_some());
    let cs = &pod.status.container_statuses[0];
    assert_eq!(cs.container_id.as_deref(), Some("containerd://abc"));
    assert_eq!(cs.restart_count, 3);
    let last = cs
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .unwrap();
    assert_eq!(
        (last.exit_code, last.message.as_deref()),
        (Some(1), Some("boom"))
    );
    assert!(last.finished_at.is_some());
    assert_eq!(pod.status.host_ip.as_deref(), Some("192.168.0.2"));
    assert_eq!(pod.status.pod_ip.as_deref(), Some("10.0.0.5"));
}

#[test]
fn slim_pod_is_a_lossless_projection_of_a_full_pod() {
    // Every field SlimPod keeps reads back identically through k8s-openapi's Pod.
    let mut input = pod_json();
    input["metadata"] = meta_json();
    let slim: SlimPod = serde_json::from_value(input).unwrap();
    let out = serde_json::to_value(&slim).unwrap();
    assert_eq!(
        (&out["apiVersion"], &out["kind"]),
        (&json!("v1"), &json!("Pod"))
    );
    let full: Pod = serde_json::from_value(out.clone()).unwrap();
    let again: SlimPod = serde_json::from_value(serde_json::to_value(&full).unwrap()).unwrap();
    assert_eq!(again, slim);
    // JSON → compact → JSON keeps every kept field as it was (managedFields is not kept).
    let mut expected = meta_json();
    expected.as_object_mut().unwrap().remove("managedFields");
    assert_eq!(out["metadata"], expected);
    assert_eq!(out["status"], pod_json()["status"]);
    let mut spec = pod_json()["spec"].clone();
    spec["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("ports");
    assert_eq!(out["spec"], spec);
}

#[test]
fn repeated_strings_are_shared_and_unique_ones_are_not_interned() {
    let a: SlimPod = serde_json::from_value(pod_json()).unwrap();
    let mut other = pod_json();
    other["metadata"]["name"] = json!("web-def");
    let b: SlimPod = serde_json::from_value(other).unwrap();
    let shared = |f: fn(&SlimPod) -> &Str| Str::ptr_eq(f(&a), f(&b));
    assert!(shared(|p| p.metadata.namespace.as_ref().unwrap()));
    assert!(shared(|p| p.spec.node_name.as_ref().unwrap()));
    assert!(shared(|p| &p.spec.containers[0].image));
    assert!(shared(|p| &p.status.conditions[0].type_));
    assert!(shared(|p| p
        .metadata
        .labels
        .get_str("controller-revision-hash")
        .unwrap()));
    // Names, UIDs and IPs are each pod's own.
    assert!(!shared(|p| p.metadata.uid.as_ref().unwrap()));
    assert!(!shared(|p| p.status.pod_ip.as_ref().unwrap()));
}

#[test]
fn watched_pod_carries_the_meta_the_watcher_reads() {
    let mut input = pod_json();
    input["metadata"]["resourceVersion"] = json!("77");
    let w: WatchedPod = serde_json::from_value(input).unwrap();
    assert_eq!(w.metadata.resource_version.as_deref(), Some("77"));
    assert_eq!(w.metadata.name.as_deref(), Some("web-abc"));
    assert_eq!(w.metadata.namespace.as_deref(), Some("default"));
    assert!(w.metadata.labels.is_none(), "only what the watcher needs");
    let pod = w.into_pod();
    assert_eq!(pod.key(), ("default", "web-abc"));
}

#[test]
fn str_map_gets_by_binary_search_iterates_in_key_order_and_keeps_the_last_duplicate() {
    let m: StrMap = serde_json::from_str(r#"{"b": "2", "a": "1", "c": "3", "a": "one"}"#).unwrap();
    assert_eq!(m.len(), 3);
    assert_eq!(m.get("a"), Some("one"), "the last of a repeated key wins");
    assert_eq!(m.get("b"), Some("2"));
    assert_eq!(m.get("c"), Some("3"));
    assert_eq!(m.get("d"), None);
    assert_eq!(m.get(""), None);
    assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
    let btree = m.to_btree();
    assert!(
        btree
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .eq(m.iter())
    );
    assert_eq!(StrMap::from(btree), m);
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        r#"{"a":"one","b":"2","c":"3"}"#
    );
    let empty: StrMap = serde_json::from_str("null").unwrap();
    assert!(empty.is_empty() && empty.get("a").is_none());
    let many: StrMap = (0..50)
        .rev()
        .map(|i| (format!("k{i:02}"), format!("{i}")))
        .collect();
    for i in 0..50 {
        assert_eq!(many.get(&format!("k{i:02}")), Some(format!("{i}").as_str()));
    }
}

#[test]
fn the_interner_sweeps_strings_nobody_holds_once_it_has_doubled() {
    let mut interner = intern::Interner::with_floor(8);
    let kept: Vec<Str> = (0..4)
        .map(|i| interner.intern(&format!("kept-{i}")))
        .collect();
    // Strings interned and dropped at once: the table may not grow past twice what is held.
    for i in 0..10_000 {
        drop(interner.intern(&format!("gone-{i}")));
        assert!(
            interner.len() <= 8 + 1,
            "{} strings after {i}",
            interner.len()
        );
    }
    // What is still held survives every sweep and is still shared.
    interner.sweep();
    assert_eq!(interner.len(), kept.len());
    for (i, k) in kept.iter().enumerate() {
        assert!(Str::ptr_eq(&interner.intern(&format!("kept-{i}")), k));
    }
    // Held strings grow the table; the bound follows them (twice what is held).
    let held: Vec<Str> = (0..100)
        .map(|i| interner.intern(&format!("held-{i}")))
        .collect();
    for i in 0..1000 {
        drop(interner.intern(&format!("again-{i}")));
        assert!(interner.len() <= 2 * (held.len() + kept.len()) + 1);
    }
    // Long strings are never interned.
    let long = "x".repeat(intern::INTERN_MAX + 1);
    assert!(!Str::ptr_eq(&intern(&long), &intern(&long)));
    assert!(Str::ptr_eq(&intern("short"), &intern("short")));
}

#[test]
fn ready_is_the_first_ready_condition_and_running_and_ready_adds_phase_and_deletion() {
    let pod = |phase: &str, conditions: serde_json::Value| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"},
            "status": {"phase": phase, "conditions": conditions}}))
        .unwrap()
    };
    let ready = pod(
        "Running",
        json!([{"type": "PodScheduled", "status": "True"},
               {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}]),
    );
    assert!(is_ready(&ready) && is_running_and_ready(&ready));
    let since = ready_condition(&ready).and_then(|c| c.last_transition_time.as_ref());
    assert_eq!(since.map(|t| t.0.as_second()), Some(1_735_689_600));
    assert!(!is_ready(&pod(
        "Running",
        json!([{"type": "Ready", "status": "False"}])
    )));
    assert!(!is_ready(&pod("Running", json!([]))));
    assert!(!is_ready(&Pod::default()));
    let pending = pod("Pending", json!([{"type": "Ready", "status": "True"}]));
    assert!(is_ready(&pending) && !is_running_and_ready(&pending));
    let mut deleting = ready.clone();
    deleting.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
    assert!(is_ready(&deleting) && !is_running_and_ready(&deleting));
}

#[test]
fn the_interner_bound_falls_when_what_is_held_falls() {
    let mut interner = intern::Interner::with_floor(8);
    let held: Vec<Str> = (0..100)
        .map(|i| interner.intern(&format!("held-{i}")))
        .collect();
    drop(held);
    for i in 0..1000 {
        drop(interner.intern(&format!("next-{i}")));
    }
    assert!(interner.len() <= 2 * 8 + 1, "{}", interner.len());
}

#[test]
fn container_resources_keep_cpu_and_memory_only() {
    let pod: SlimPod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [
            {"name": "a", "resources": {
                "requests": {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"},
                "limits": {"cpu": 2}}},
            {"name": "b", "resources": {}},
            {"name": "c", "resources": {"requests": null}},
            {"name": "d"}
        ]}
    }))
    .unwrap();
    let c = &pod.spec.containers;
    let a = c[0].resources.as_deref().unwrap();
    assert_eq!(a.requests.cpu.as_deref(), Some("100m"));
    assert_eq!(a.requests.memory.as_deref(), Some("64Mi"));
    assert_eq!(a.limits.cpu.as_deref(), Some("2"));
    assert_eq!(a.limits.memory, None);
    assert!(c[1..].iter().all(|c| c.resources.is_none()), "{c:?}");
    let back = serde_json::to_value(&pod).unwrap();
    assert_eq!(
        back["spec"]["containers"][0]["resources"],
        json!({"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "2"}})
    );
    assert!(back["spec"]["containers"][1].get("resources").is_none());
}
