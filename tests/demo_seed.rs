//! The demo scenario against the embedded server: written through the API (so every object
//! passes the server's CRD schemas and the status subresource) and straight into the store
//! (what `demo-server` does, for speed), with the same result.

use std::collections::BTreeSet;

use jiff::Timestamp;
use kruise_tui::cluster::{
    demo::{
        NAMESPACE,
        scenario::{count_pods, scenario},
        seed,
    },
    server::{EmbeddedCluster, ServerOptions},
};
use kube::{
    Api,
    api::{DynamicObject, ListParams},
    core::ApiResource,
};

async fn names(cluster: &EmbeddedCluster, resource: &ApiResource, ns: &str) -> BTreeSet<String> {
    let client = cluster.client().await.unwrap();
    let api: Api<DynamicObject> = Api::namespaced_with(client, ns, resource);
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scenario_passes_the_api_and_matches_the_store_path() {
    let now = Timestamp::now();
    let objects = scenario(NAMESPACE, Some(250), now);
    let total = objects.len();
    let pods = count_pods(&objects);

    let via_api = EmbeddedCluster::start(ServerOptions::default())
        .await
        .unwrap();
    let client = via_api.client().await.unwrap();
    let created = seed::apply(&client, objects.clone(), now).await.unwrap();
    assert_eq!(created, total, "every object was accepted");
    // Seeding again keeps what exists.
    assert_eq!(seed::apply(&client, objects.clone(), now).await.unwrap(), 0);

    let via_store = EmbeddedCluster::start(ServerOptions::default())
        .await
        .unwrap();
    let created = seed::apply_to_store(&via_store.store(), objects.clone(), now).unwrap();
    assert_eq!(created, total);

    let pod_res = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    let cs_res = ApiResource {
        group: "apps.kruise.io".into(),
        version: "v1alpha1".into(),
        api_version: "apps.kruise.io/v1alpha1".into(),
        kind: "CloneSet".into(),
        plural: "clonesets".into(),
    };
    for ns in [NAMESPACE, "demo-scale-0"] {
        assert_eq!(
            names(&via_api, &pod_res, ns).await,
            names(&via_store, &pod_res, ns).await
        );
        assert_eq!(
            names(&via_api, &cs_res, ns).await,
            names(&via_store, &cs_res, ns).await
        );
    }
    let all = names(&via_api, &pod_res, NAMESPACE).await.len()
        + names(&via_api, &pod_res, "demo-scale-0").await.len();
    assert_eq!(all, pods);

    // Statuses went through the status subresource: the web CloneSet reports its rollout.
    let api: Api<DynamicObject> = Api::namespaced_with(client, NAMESPACE, &cs_res);
    let web = api.get("web").await.unwrap();
    assert_eq!(web.data["status"]["updatedReplicas"], 4);
    assert_eq!(web.data["status"]["replicas"], 10);
    via_api.shutdown().await;
    via_store.shutdown().await;
}
