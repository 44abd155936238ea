//! The kube layer against the embedded API server (`cluster::server::EmbeddedCluster`), as it
//! runs against a real cluster: connect from a kubeconfig file (TLS + token), discovery, watches
//! into the stores, server restart, Kruise CRDs removed, a CloneSet served only at v1beta1, and
//! the executor's YAML and events.

use crate::kubectl;
use crate::msgs;

use std::time::Duration;

use k8s_openapi::{
    api::core::v1::{Event as CoreEvent, Pod},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    apimachinery::pkg::util::intstr::IntOrString,
};
use kruise_tui::{
    app::{
        Effect,
        msg::{EffectResult, Kind, Msg, ObjectRef},
    },
    cli::KubeArgs,
    cluster::server::{EmbeddedCluster, ServerOptions},
    kube::{Executor, WatchSet, connect::Connection},
};
use kube::{
    Api, Client,
    api::{
        ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
    },
};
use kubectl::Kubeconfig;
use msgs::{
    PATIENCE, cloneset_names, collect_after, discovered, failures, has, partition_of, ready,
    serves, until,
};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

fn clonesets(client: &Client, version: &str) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", version, "CloneSet"),
        "clonesets",
    );
    Api::namespaced_with(client.clone(), "default", &ar)
}

fn cloneset(version: &str, name: &str, partition: i64) -> DynamicObject {
    let strategy = if version == "v1beta1" {
        json!({"type": "InPlaceIfPossible", "rollingUpdate": {"partition": partition}})
    } else {
        json!({"type": "InPlaceIfPossible", "partition": partition})
    };
    serde_json::from_value(json!({
        "apiVersion": format!("apps.kruise.io/{version}"),
        "kind": "CloneSet",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}},
            "updateStrategy": strategy
        }
    }))
    .unwrap()
}

async fn cluster_with_clonesets() -> (EmbeddedCluster, Client) {
    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .expect("embedded cluster starts");
    let client = cluster.client().await.unwrap();
    let api = clonesets(&client, "v1alpha1");
    for (i, name) in ["web", "api", "worker"].iter().enumerate() {
        api.create(
            &PostParams::default(),
            &cloneset("v1alpha1", name, i as i64),
        )
        .await
        .unwrap();
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    for i in 0..2 {
        let pod: Pod = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("web-{i}"), "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
        }))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    (cluster, client)
}

fn connection(cluster: &EmbeddedCluster, client: Client) -> Connection {
    Connection {
        client,
        context: Some("embedded".into()),
        contexts: vec!["embedded".into()],
        default_namespace: "default".into(),
        cluster_url: cluster.url(),
    }
}

/// Watches of the `default` namespace over `client`, and the channel their messages arrive on.
fn watch_default(cluster: &EmbeddedCluster, client: Client) -> (WatchSet, UnboundedReceiver<Msg>) {
    let (tx, rx) = unbounded_channel();
    let watches = WatchSet::start(
        &connection(cluster, client),
        Some("default".into()),
        tx,
        false,
    );
    (watches, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_a_kubeconfig_the_stores_follow_the_cluster() {
    let (cluster, client) = cluster_with_clonesets().await;
    let config = Kubeconfig::write(&cluster, "default");
    let args = KubeArgs {
        kubeconfig: Some(config.path.clone()),
        ..KubeArgs::default()
    };
    let (tx, mut rx) = unbounded_channel();
    let mut executor = Executor::start(args, tx).await.expect("connects");
    assert_eq!(
        executor.namespace(),
        Some("default"),
        "the context's namespace"
    );
    let stores = executor.stores();
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        ready(s, Kind::CloneSet) && ready(s, Kind::Pod)
    })
    .await;
    let discovery = discovered(&seen).expect("Discovered sent");
    assert!(!discovery.kruise_missing);
    assert!(serves(&discovery, "CloneSet", "v1alpha1"));
    assert!(serves(&discovery, "DaemonSet", "v1alpha1"));
    assert!(discovery.namespaces.contains(&"default".to_owned()));
    assert!(has(&seen, |m| matches!(
        m,
        Msg::StoreChanged(Kind::CloneSet)
    )));
    assert_eq!(cloneset_names(&stores), ["api", "web", "worker"]);
    assert_eq!(stores.pods.len(), 2);

    let api = clonesets(&client, "v1alpha1");
    let changed = |s: &[Msg]| has(s, |m| matches!(m, Msg::StoreChanged(Kind::CloneSet)));
    seen.clear();
    api.create(&PostParams::default(), &cloneset("v1alpha1", "batch", 0))
        .await
        .unwrap();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        changed(s) && stores.clonesets.len() == 4
    })
    .await;
    seen.clear();
    api.delete("web", &DeleteParams::default()).await.unwrap();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        changed(s) && cloneset_names(&stores) == ["api", "batch", "worker"]
    })
    .await;
    seen.clear();
    let patch = json!({"spec": {"updateStrategy": {"partition": 3}}});
    api.patch("api", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        changed(s) && partition_of(&stores, "api") == Some(IntOrString::Int(3))
    })
    .await;

    // The executor: YAML without managedFields, events about the object.
    let target = ObjectRef {
        kind: Kind::CloneSet,
        namespace: Some("default".into()),
        name: "api".into(),
    };
    let events: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let event: CoreEvent = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "api.1"},
        "involvedObject": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                           "name": "api", "namespace": "default"},
        "reason": "SuccessfulUpdatePodInPlace", "message": "updated pod api-x in place",
        "type": "Normal", "count": 1, "lastTimestamp": "2026-01-01T00:00:00Z",
        "source": {"component": "cloneset-controller"}
    }))
    .unwrap();
    events.create(&PostParams::default(), &event).await.unwrap();
    executor.execute(Effect::FetchYaml(target.clone())).await;
    executor.execute(Effect::FetchEvents(target.clone())).await;
    seen.clear();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        s.iter().filter(|m| matches!(m, Msg::EffectDone(_))).count() == 2
    })
    .await;
    for msg in &seen {
        match msg {
            Msg::EffectDone(EffectResult::Yaml { yaml, .. }) => {
                assert!(yaml.contains("name: api"), "{yaml}");
                assert!(yaml.contains("partition: 3"), "{yaml}");
                assert!(!yaml.contains("managedFields"), "{yaml}");
            }
            Msg::EffectDone(EffectResult::Events { events, .. }) => {
                assert_eq!(events.len(), 1, "{events:?}");
                assert_eq!(events[0].reason, "SuccessfulUpdatePodInPlace");
                assert_eq!(events[0].source, "cloneset-controller");
            }
            Msg::EffectDone(other) => panic!("unexpected {other:?}"),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_of_the_embedded_server_fails_once_and_recovers() {
    let (cluster, client) = cluster_with_clonesets().await;
    let (watches, mut rx) = watch_default(&cluster, client.clone());
    let stores = watches.stores().clone();
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        ready(s, Kind::CloneSet) && ready(s, Kind::Pod)
    })
    .await;

    cluster.stop_serving().await;
    seen.clear();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        failures(s, Kind::Pod) == 1 && failures(s, Kind::CloneSet) == 1
    })
    .await;
    collect_after(&mut rx, &mut seen, Duration::from_secs(3)).await;
    assert_eq!(
        failures(&seen, Kind::Pod),
        1,
        "one report per episode: {seen:#?}"
    );
    assert!(!has(&seen, |m| matches!(m, Msg::WatchRecovered(_))));

    cluster.start_serving().await.unwrap();
    seen.clear();
    // The product bar: watches resume within 5 s of the server's return.
    until(&mut rx, &mut seen, Duration::from_secs(5), |s| {
        has(s, |m| matches!(m, Msg::WatchRecovered(Kind::Pod)))
            && has(s, |m| matches!(m, Msg::WatchRecovered(Kind::CloneSet)))
    })
    .await;
    clonesets(&client, "v1alpha1")
        .create(&PostParams::default(), &cloneset("v1alpha1", "after", 0))
        .await
        .unwrap();
    until(&mut rx, &mut seen, Duration::from_secs(5), |_| {
        stores.clonesets.len() == 4
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_kruise_crds_discovery_says_so_and_pods_still_show() {
    let (cluster, client) = cluster_with_clonesets().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds.list(&Default::default()).await.unwrap() {
        let name = crd.metadata.name.unwrap_or_default();
        if name.ends_with(".kruise.io") {
            crds.delete(&name, &DeleteParams::default()).await.unwrap();
        }
    }
    let (watches, mut rx) = watch_default(&cluster, client);
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        ready(s, Kind::CloneSet) && ready(s, Kind::Pod)
    })
    .await;
    let discovery = discovered(&seen).expect("Discovered sent");
    assert!(discovery.kruise_missing, "{discovery:?}");
    assert!(discovery.kruise_kinds.is_empty());
    assert!(watches.stores().clonesets.is_empty());
    assert_eq!(watches.stores().pods.len(), 2);
}

/// Re-serves the CloneSet CRD at v1beta1 only (partition under rollingUpdate), as upstream HEAD.
async fn serve_clonesets_at_v1beta1_only(client: &Client) {
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    let crd = crds.get("clonesets.apps.kruise.io").await.unwrap();
    let mut crd = serde_json::to_value(&crd).unwrap();
    let mut beta: Value = crd["spec"]["versions"][0].clone();
    beta["name"] = json!("v1beta1");
    beta["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["updateStrategy"] =
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    beta["served"] = json!(true);
    beta["storage"] = json!(true);
    let mut alpha = crd["spec"]["versions"][0].clone();
    alpha["served"] = json!(false);
    alpha["storage"] = json!(false);
    crd["spec"]["versions"] = json!([alpha, beta]);
    let crd: DynamicObject = serde_json::from_value(crd).unwrap();
    crds.replace("clonesets.apps.kruise.io", &PostParams::default(), &crd)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloneset_served_only_at_v1beta1_is_mapped() {
    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .unwrap();
    let client = cluster.client().await.unwrap();
    serve_clonesets_at_v1beta1_only(&client).await;
    clonesets(&client, "v1beta1")
        .create(&PostParams::default(), &cloneset("v1beta1", "beta", 4))
        .await
        .unwrap();
    let (watches, mut rx) = watch_default(&cluster, client);
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| ready(s, Kind::CloneSet)).await;
    let discovery = discovered(&seen).expect("Discovered sent");
    assert!(serves(&discovery, "CloneSet", "v1beta1"), "{discovery:?}");
    assert!(!serves(&discovery, "CloneSet", "v1alpha1"));
    assert_eq!(cloneset_names(watches.stores()), ["beta"]);
    assert_eq!(
        partition_of(watches.stores(), "beta"),
        Some(IntOrString::Int(4))
    );
}
