//! Kruise's webhooks installed on the embedded cluster (`install_kruise_webhooks`), seen by
//! kube-rs and by kubectl (on PATH or named by $KUBECTL) as a real Kruise install shows them:
//! deletion protection, PodUnavailableBudget on evictions and deletes, SidecarSet injection,
//! ContainerRecreateRequest defaulting and PodProbeMarker validation, and the v1.9 changes to
//! them.

use crate::common;
use crate::kubectl as support_kubectl;

use k8s_openapi::api::core::v1::Pod;
use kruise_tui::{
    cluster::{
        install_kruise_webhooks,
        server::{EmbeddedCluster, ServerOptions},
    },
    kruise::{FeatureGates, KruiseVersion},
};
use kube::{
    Api, Client, Error,
    api::{
        ApiResource, DeleteParams, DynamicObject, EvictParams, GroupVersionKind, Patch,
        PatchParams, PostParams,
    },
};
use serde_json::{Value, json};
use support_kubectl::kubectl;

const PROTECTION: &str = "policy.kruise.io/delete-protection";

async fn cluster(gates: FeatureGates) -> (EmbeddedCluster, Client) {
    let c = common::start().await;
    install_kruise_webhooks(&c, gates);
    let client = c.client().await.unwrap();
    (c, client)
}

fn protection_on() -> FeatureGates {
    FeatureGates::new().with("ResourcesDeletionProtection", true)
}

fn api(
    client: &Client,
    group: &str,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
) -> Api<DynamicObject> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, "v1alpha1", kind), plural);
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

fn dynamic(v: Value) -> DynamicObject {
    serde_json::from_value(v).unwrap()
}

fn api_error(e: Error) -> (u16, String) {
    match e {
        Error::Api(s) => (s.code, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn protected_cloneset(name: &str, policy: &str) -> Value {
    let mut cs = common::cloneset_json(name, 2);
    cs["metadata"]["namespace"] = json!("default");
    cs["metadata"]["labels"][PROTECTION] = json!(policy);
    cs
}

/// Stores CloneSets named `names` with deletion protection `Always`.
fn seed_always_protected(c: &EmbeddedCluster, names: &[&str]) {
    for name in names {
        c.store()
            .create(protected_cloneset(name, "Always"))
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_cloneset_delete_is_denied_until_the_label_goes() {
    let (c, client) = cluster(protection_on()).await;
    let clonesets = common::clonesets(&client, "default");
    seed_always_protected(&c, &["web", "db"]);
    let expected = "admission webhook \"vcloneset.kb.io\" denied the request: \
                    forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always";

    let (code, message) = api_error(
        clonesets
            .delete("web", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert_eq!(message, expected);

    let (code, _, err) = kubectl(&c, &["delete", "cloneset", "db"]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("Error from server (Forbidden): {expected}")),
        "{err}"
    );
    assert!(clonesets.get_opt("db").await.unwrap().is_some());

    let (code, _, err) = kubectl(&c, &["label", "cloneset", "db", &format!("{PROTECTION}-")]).await;
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = kubectl(&c, &["delete", "cloneset", "db"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("deleted"), "{out}");

    // Cascading with replicas > 0 is refused with the replica count.
    c.store()
        .create(protected_cloneset("cascade", "Cascading"))
        .unwrap();
    let (_, message) = api_error(
        clonesets
            .delete("cascade", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert!(
        message.ends_with("=Cascading and replicas 2>0"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protection_is_off_without_its_feature_gate() {
    let (c, client) = cluster(FeatureGates::new()).await;
    seed_always_protected(&c, &["web", "db"]);
    common::clonesets(&client, "default")
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    let (code, _, err) = kubectl(&c, &["delete", "cloneset", "db"]).await;
    assert_eq!(code, 0, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cascading_namespace_with_active_pods_is_refused() {
    let (c, client) = cluster(protection_on()).await;
    c.store()
        .create(json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "shop", "labels": {PROTECTION: "Cascading"}}}))
        .unwrap();
    let mut pod = common::pod_json("p", json!({}));
    pod["metadata"]["namespace"] = json!("shop");
    pod["status"] = json!({"phase": "Running"});
    c.store().create(pod).unwrap();
    let (code, _, err) = kubectl(&c, &["delete", "namespace", "shop"]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("admission webhook \"vnamespace.kb.io\" denied the request: forbidden by \
                      ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active pods 1>0"),
        "{err}"
    );
    // Once the pod is gone the namespace may go.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    pods.delete("p", &DeleteParams::default()).await.unwrap();
    let (code, _, err) = kubectl(&c, &["delete", "namespace", "shop", "--wait=false"]).await;
    assert_eq!(code, 0, "{err}");
}

fn ready_pod(name: &str) -> Value {
    let mut pod = common::pod_json(name, json!({"app": "web"}));
    pod["status"] = json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]});
    pod
}

fn seed_pub(c: &EmbeddedCluster, allowed: i64) {
    c.store()
        .create(json!({
            "apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "web-pub", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
            "status": {"unavailableAllowed": allowed, "desiredAvailable": 2,
                "currentAvailable": 2 + allowed, "totalReplicas": 3, "observedGeneration": 1}
        }))
        .unwrap();
}

fn pub_status(c: &EmbeddedCluster) -> Value {
    c.store()
        .get_value(
            "policy.kruise.io/v1alpha1",
            "PodUnavailableBudget",
            "default",
            "web-pub",
        )
        .unwrap()["status"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pub_blocks_disruption_at_zero_and_records_an_allowed_one() {
    let (c, client) = cluster(FeatureGates::new()).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    for name in ["a", "b", "c"] {
        c.store().create(ready_pod(name)).unwrap();
    }
    seed_pub(&c, 0);
    let (code, message) = api_error(pods.evict("a", &EvictParams::default()).await.unwrap_err());
    assert_eq!(code, 403);
    assert!(
        message.starts_with("admission webhook \"vpodeviction.kb.io\" denied the request: "),
        "{message}"
    );
    assert!(message.contains("web-pub"), "{message}");
    let (code, _, err) = kubectl(&c, &["delete", "pod", "b"]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("admission webhook \"vpod.kb.io\" denied the request"),
        "{err}"
    );
    assert!(pods.get_opt("a").await.unwrap().is_some());
    assert!(pods.get_opt("b").await.unwrap().is_some());

    // One disruption allowed: the eviction passes and the PUB records the pod.
    let mut budget = c
        .store()
        .get_value(
            "policy.kruise.io/v1alpha1",
            "PodUnavailableBudget",
            "default",
            "web-pub",
        )
        .unwrap();
    budget["status"]["unavailableAllowed"] = json!(1);
    c.store().update(budget).unwrap();
    pods.evict("a", &EvictParams::default()).await.unwrap();
    assert!(pods.get_opt("a").await.unwrap().is_none());
    let status = pub_status(&c);
    assert_eq!(status["unavailableAllowed"], json!(0));
    assert!(status["disruptedPods"]["a"].is_string(), "{status}");
    // The budget is spent again.
    let (code, _) = api_error(
        pods.delete("c", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
}

#[tokio::test]
async fn pods_created_get_matching_sidecars() {
    let (_c, client) = cluster(FeatureGates::new()).await;
    let sets = api(&client, "apps.kruise.io", "SidecarSet", "sidecarsets", None);
    let set = sets
        .create(
            &PostParams::default(),
            &dynamic(json!({
                "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
                "metadata": {"name": "logger"},
                "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "containers": [{"name": "log-agent", "image": "busybox:1.36"}]}
            })),
        )
        .await
        .unwrap();
    let annotations = set.metadata.annotations.clone().unwrap_or_default();
    assert!(
        annotations.contains_key("kruise.io/sidecarset-hash"),
        "{annotations:?}"
    );
    assert!(annotations.contains_key("kruise.io/sidecarset-hash-without-image"));

    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod: Pod =
        serde_json::from_value(common::pod_json("web-1", json!({"app": "web"}))).unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.unwrap();
    let names: Vec<String> = created
        .spec
        .unwrap()
        .containers
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert!(names.contains(&"log-agent".to_string()), "{names:?}");
    let pod_annotations = created.metadata.annotations.unwrap_or_default();
    assert!(
        pod_annotations["kruise.io/sidecarset-hash"].contains("logger"),
        "{pod_annotations:?}"
    );

    let other: Pod =
        serde_json::from_value(common::pod_json("db-1", json!({"app": "db"}))).unwrap();
    let created = pods.create(&PostParams::default(), &other).await.unwrap();
    assert_eq!(created.spec.unwrap().containers.len(), 1);
}

#[tokio::test]
async fn crr_is_defaulted_and_refused_for_a_missing_pod() {
    let (c, client) = cluster(FeatureGates::new()).await;
    c.store()
        .create(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}}))
        .unwrap();
    let mut pod = common::pod_json("web-1", json!({"app": "web"}));
    pod["spec"]["nodeName"] = json!("node-a");
    pod["status"] = json!({"phase": "Running", "containerStatuses": [{"name": "main",
        "image": "nginx", "imageID": "docker.io/library/nginx@sha256:1", "ready": true,
        "restartCount": 0, "containerID": "containerd://abc", "state": {"running": {}}}]});
    let pod = c.store().create(pod).unwrap();
    let crrs = api(
        &client,
        "apps.kruise.io",
        "ContainerRecreateRequest",
        "containerrecreaterequests",
        Some("default"),
    );
    let crr = |name: &str, pod: &str| {
        dynamic(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ContainerRecreateRequest",
            "metadata": {"name": name},
            "spec": {"podName": pod, "containers": [{"name": "main"}]}
        }))
    };
    let created = crrs
        .create(&PostParams::default(), &crr("restart", "web-1"))
        .await
        .unwrap();
    let labels = created.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels["crr.apps.kruise.io/node-name"], "node-a");
    assert_eq!(
        labels["crr.apps.kruise.io/pod-uid"],
        pod["metadata"]["uid"].as_str().unwrap()
    );
    assert_eq!(
        created.data["spec"]["strategy"]["failurePolicy"],
        json!("Fail")
    );

    let (code, message) = api_error(
        crrs.create(&PostParams::default(), &crr("lost", "nope"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 400);
    assert_eq!(
        message,
        "admission webhook \"mcontainerrecreaterequest.kb.io\" denied the request: no found Pod named nope"
    );

    // The spec is immutable afterwards.
    let patch = json!({"spec": {"containers": [{"name": "other"}]}});
    let (code, _) = api_error(
        crrs.patch("restart", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_pod_probe_marker_is_refused() {
    let (c, client) = cluster(FeatureGates::new()).await;
    let markers = api(
        &client,
        "apps.kruise.io",
        "PodProbeMarker",
        "podprobemarkers",
        Some("default"),
    );
    let bad = dynamic(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": "bad"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "probes": [{"name": "a#b", "containerName": "main",
                "probe": {"exec": {"command": ["true"]}}}]}
    }));
    let (code, message) = api_error(
        markers
            .create(&PostParams::default(), &bad)
            .await
            .unwrap_err(),
    );
    // Upstream's handler answers admission.Errored(400, errs.ToAggregate()).
    assert_eq!(code, 400);
    assert_eq!(
        message,
        "admission webhook \"vpodprobemarker.kb.io\" denied the request: spec.probes: Invalid value: \"a#b\": probe name can't contains '#'."
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ppm.json");
    std::fs::write(&file, serde_json::to_string(&bad).unwrap()).unwrap();
    let (code, _, err) = kubectl(&c, &["create", "-f", file.to_str().unwrap()]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains(
            "denied the request: spec.probes: Invalid value: \"a#b\": probe name can't contains '#'."
        ),
        "{err}"
    );
}

#[tokio::test]
async fn pub_with_a_target_ref_guards_the_workloads_pods() {
    let (c, client) = cluster(FeatureGates::new()).await;
    let cs = c.store().create(common::cloneset_json("shop", 2)).unwrap();
    c.store()
        .create(json!({
            "apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
            "metadata": {"name": "shop-pub", "namespace": "default"},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                "name": "shop"}, "maxUnavailable": 1},
            "status": {"unavailableAllowed": 0, "desiredAvailable": 2, "currentAvailable": 2,
                "totalReplicas": 2}
        }))
        .unwrap();
    let mut owned = ready_pod("shop-1");
    owned["metadata"]["labels"] = json!({"app": "shop"});
    owned["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet", "name": "shop", "uid": cs["metadata"]["uid"], "controller": true}]);
    c.store().create(owned).unwrap();
    let mut loose = ready_pod("loose");
    loose["metadata"]["labels"] = json!({"app": "shop"});
    c.store().create(loose).unwrap();
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let (code, message) = api_error(
        pods.delete("shop-1", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert!(message.contains("shop-pub"), "{message}");
    pods.delete("loose", &DeleteParams::default())
        .await
        .unwrap();
    assert!(pods.get_opt("loose").await.unwrap().is_none());
}

/// The v1.9 edges through the embedded webhooks: a CRR naming a container twice is denied, a
/// PUB may protect RESIZE (an unknown operation is refused), and a SidecarSet's
/// `resourcesPolicy` sizes the sidecar from the pod's containers at creation.
/// A node and a running pod `web-1` on it, and a CRR naming its container twice.
fn seed_crr_target(c: &EmbeddedCluster) -> DynamicObject {
    c.store()
        .create(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}}))
        .unwrap();
    let mut pod = common::pod_json("web-1", json!({"app": "web"}));
    pod["spec"]["nodeName"] = json!("node-a");
    pod["status"] = json!({"phase": "Running", "containerStatuses": [{"name": "main",
        "image": "nginx", "imageID": "docker.io/library/nginx@sha256:1", "ready": true,
        "restartCount": 0, "containerID": "containerd://abc", "state": {"running": {}}}]});
    c.store().create(pod).unwrap();
    dynamic(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": "twice"},
        "spec": {"podName": "web-1", "containers": [{"name": "main"}, {"name": "main"}]}
    }))
}

fn crr_api(client: &Client) -> Api<DynamicObject> {
    api(
        client,
        "apps.kruise.io",
        "ContainerRecreateRequest",
        "containerrecreaterequests",
        Some("default"),
    )
}

fn resize_budget() -> DynamicObject {
    dynamic(json!({
        "apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "resize",
            "annotations": {"kruise.io/pub-protect-operations": "RESIZE,DELETE"}},
        "spec": {"selector": {"matchLabels": {"app": "resize"}}, "maxUnavailable": 1}
    }))
}

/// On a cluster serving Kruise v1.8.4 the same webhooks follow v1.8.4: the duplicate container
/// passes (its check never fires there) and RESIZE is not an operation a PUB may name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_8_accepts_a_duplicate_crr_container_and_refuses_resize() {
    let c = EmbeddedCluster::start(ServerOptions {
        kruise_version: KruiseVersion::V1_8,
        ..ServerOptions::default()
    })
    .await
    .unwrap();
    install_kruise_webhooks(&c, FeatureGates::new());
    let client = c.client().await.unwrap();
    let twice = seed_crr_target(&c);
    crr_api(&client)
        .create(&PostParams::default(), &twice)
        .await
        .unwrap();
    let pubs = api(
        &client,
        "policy.kruise.io",
        "PodUnavailableBudget",
        "podunavailablebudgets",
        Some("default"),
    );
    let (code, _) = api_error(
        pubs.create(&PostParams::default(), &resize_budget())
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_9_crr_duplicates_pub_resize_and_sidecar_resources() {
    let (c, client) = cluster(FeatureGates::new()).await;
    let twice = seed_crr_target(&c);
    let crrs = crr_api(&client);
    let (code, message) = api_error(
        crrs.create(&PostParams::default(), &twice)
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 400);
    assert_eq!(
        message,
        "admission webhook \"mcontainerrecreaterequest.kb.io\" denied the request: can not recreate main multi times"
    );

    let pubs = api(
        &client,
        "policy.kruise.io",
        "PodUnavailableBudget",
        "podunavailablebudgets",
        Some("default"),
    );
    let budget = |name: &str, ops: &str| {
        dynamic(json!({
            "apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
            "metadata": {"name": name, "annotations": {"kruise.io/pub-protect-operations": ops}},
            "spec": {"selector": {"matchLabels": {"app": name}}, "maxUnavailable": 1}
        }))
    };
    pubs.create(&PostParams::default(), &resize_budget())
        .await
        .unwrap();
    let (code, message) = api_error(
        pubs.create(&PostParams::default(), &budget("odd", "REBOOT"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 400);
    assert!(
        message.contains("annotation[kruise.io/pub-protect-operations] is invalid"),
        "{message}"
    );

    let sets = api(&client, "apps.kruise.io", "SidecarSet", "sidecarsets", None);
    sets.create(
        &PostParams::default(),
        &dynamic(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "sized"},
            "spec": {"selector": {"matchLabels": {"app": "sized"}},
                "containers": [{"name": "proxy", "image": "envoy:1",
                    "resourcesPolicy": {"targetContainersMode": "sum",
                        "targetContainersNameRegex": ".*",
                        "resourcesExpr": {"limits": {"cpu": "cpu*50%"},
                            "requests": {"memory": "max(memory*20% + 100Mi, 200Mi)"}}}}]}
        })),
    )
    .await
    .unwrap();
    let mut app = common::pod_json("sized-1", json!({"app": "sized"}));
    app["spec"]["containers"][0]["resources"] =
        json!({"limits": {"cpu": "600m"}, "requests": {"memory": "800Mi"}});
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let created = pods
        .create(
            &PostParams::default(),
            &serde_json::from_value(app).unwrap(),
        )
        .await
        .unwrap();
    let proxy = created
        .spec
        .unwrap()
        .containers
        .into_iter()
        .find(|c| c.name == "proxy")
        .expect("the sidecar is injected");
    assert_eq!(
        serde_json::to_value(proxy.resources).unwrap(),
        json!({"limits": {"cpu": "300m"}, "requests": {"memory": "260Mi"}})
    );
}
