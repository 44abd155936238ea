//! `vdaemonset.kb.io` on the embedded cluster, seen by kube-rs as a real Kruise install shows
//! it: at v1.9.0 a percent partition is admitted and a malformed one refused with upstream's
//! text, v1beta1 requests refuse the deprecated `Surging` and name `scaleStrategy` in the update
//! allow-list; at v1.8.4 the CRD schema refuses a string partition before any webhook runs.

use kruise_tui::{
    cluster::{
        install_kruise_webhooks,
        server::{EmbeddedCluster, ServerOptions},
    },
    kruise::{FeatureGates, KruiseVersion},
};
use kube::{
    Api, Client, Error,
    api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

async fn cluster(version: KruiseVersion) -> (EmbeddedCluster, Client) {
    let c = EmbeddedCluster::start(ServerOptions {
        kruise_version: version,
        ..ServerOptions::default()
    })
    .await
    .expect("embedded cluster starts");
    install_kruise_webhooks(&c, FeatureGates::new());
    let client = c.client().await.expect("client");
    (c, client)
}

fn sets(client: &Client, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps.kruise.io", version, "DaemonSet");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "daemonsets");
    Api::namespaced_with(client.clone(), "default", &ar)
}

fn ads(version: &str, name: &str, rolling: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("apps.kruise.io/{version}"),
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name, "tier": "node"}},
                         "spec": {"containers": [{"name": "c", "image": "agent:1"}]}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling},
        },
    }))
    .expect("a DaemonSet")
}

async fn create(client: &Client, version: &str, object: &DynamicObject) -> Result<(), Error> {
    sets(client, version)
        .create(&PostParams::default(), object)
        .await
        .map(|_| ())
}

fn api_error(r: Result<(), Error>) -> (u16, String) {
    match r {
        Err(Error::Api(s)) => (s.code, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

const DENIED: &str = "admission webhook \"vdaemonset.kb.io\" denied the request: ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_9_admits_a_percent_partition_and_refuses_a_malformed_one() {
    let (c, client) = cluster(KruiseVersion::V1_9).await;
    create(
        &client,
        "v1alpha1",
        &ads("v1alpha1", "pct", json!({"partition": "25%"})),
    )
    .await
    .expect("a percent partition is admitted");
    let (code, message) = api_error(
        create(
            &client,
            "v1alpha1",
            &ads("v1alpha1", "bad", json!({"partition": "25"})),
        )
        .await,
    );
    assert_eq!(code, 500, "{message}");
    assert_eq!(
        message,
        format!(
            "{DENIED}spec.updateStrategy.rollingUpdate.rollingUpdate.partition: Invalid value: \
             intstr.IntOrString{{Type:1, IntVal:0, StrVal:\"25\"}}: a valid percent string must \
             be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for \
             validation is '[0-9]+%')"
        )
    );
    let (code, message) = api_error(
        create(
            &client,
            "v1alpha1",
            &ads("v1alpha1", "big", json!({"partition": "120%"})),
        )
        .await,
    );
    assert_eq!(code, 500, "{message}");
    assert!(
        message.starts_with(DENIED) && message.ends_with("must not be greater than 100%"),
        "{message}"
    );

    // An update to a percent over 100% is a 422.
    let patch = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": "101%"}}}});
    let r = sets(&client, "v1alpha1")
        .patch("pct", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ());
    let (code, message) = api_error(r);
    assert_eq!(code, 422, "{message}");
    assert!(message.starts_with(DENIED), "{message}");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1beta1_requests_refuse_surging_and_allow_scale_strategy_updates() {
    let (c, client) = cluster(KruiseVersion::V1_9).await;
    let (code, message) = api_error(
        create(
            &client,
            "v1beta1",
            &ads("v1beta1", "surge", json!({"rollingUpdateType": "Surging"})),
        )
        .await,
    );
    assert_eq!(code, 500, "{message}");
    assert_eq!(
        message,
        format!(
            "{DENIED}spec.updateStrategy.rollingUpdate.rollingUpdate.type: Unsupported value: \
             \"Surging\": supported values: \"Standard\", \"InPlaceIfPossible\""
        )
    );
    // The deprecated type still reads through v1alpha1 (its defaulter makes it Standard).
    create(
        &client,
        "v1alpha1",
        &ads("v1alpha1", "old", json!({"rollingUpdateType": "Surging"})),
    )
    .await
    .expect("v1alpha1 Surging is admitted");

    create(&client, "v1beta1", &ads("v1beta1", "agent", json!({})))
        .await
        .expect("created");
    let api = sets(&client, "v1beta1");
    let scale = json!({"spec": {"scaleStrategy": {"partitionedScaling": true}}});
    api.patch("agent", &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .expect("scaleStrategy is mutable");
    let selector = json!({"spec": {"selector": {"matchLabels": {"app": "agent", "tier": "node"}}}});
    let r = api
        .patch("agent", &PatchParams::default(), &Patch::Merge(&selector))
        .await
        .map(|_| ());
    let (code, message) = api_error(r);
    assert_eq!(code, 422, "{message}");
    assert_eq!(
        message,
        format!(
            "{DENIED}spec: Forbidden: updates to daemonset spec for fields other than \
             'BurstReplicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', \
             'minReadySeconds', and 'revisionHistoryLimit' are forbidden"
        )
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_8_refuses_a_string_partition_by_schema_and_a_negative_one_by_webhook() {
    let (c, client) = cluster(KruiseVersion::V1_8).await;
    let (code, message) = api_error(
        create(
            &client,
            "v1alpha1",
            &ads("v1alpha1", "pct", json!({"partition": "25%"})),
        )
        .await,
    );
    assert_eq!(code, 422, "{message}");
    assert!(
        !message.contains("vdaemonset.kb.io")
            && message.contains("spec.updateStrategy.rollingUpdate.partition"),
        "the schema refuses it: {message}"
    );
    let (code, message) = api_error(
        create(
            &client,
            "v1alpha1",
            &ads("v1alpha1", "neg", json!({"partition": -1})),
        )
        .await,
    );
    assert_eq!(code, 500, "{message}");
    assert_eq!(
        message,
        format!(
            "{DENIED}spec.updateStrategy.rollingUpdate.rollingUpdate.partition: Invalid value: \
             -1: must be greater than or equal to 0"
        )
    );
    create(
        &client,
        "v1alpha1",
        &ads("v1alpha1", "int", json!({"partition": 2})),
    )
    .await
    .expect("an int partition is admitted");
    c.shutdown().await;
}
