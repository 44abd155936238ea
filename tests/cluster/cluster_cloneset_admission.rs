//! The CloneSet validating webhook (`vcloneset.kb.io`) on the embedded cluster, seen by kube-rs
//! as a real Kruise v1.9.0 install answers: a 422 whose message names the hook and the field.

use crate::common;

use kruise_tui::{cluster::install_kruise_webhooks, kruise::FeatureGates};
use kube::{
    Error,
    api::{DynamicObject, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

fn denial(e: Error) -> (u16, String) {
    match e {
        Error::Api(s) => (s.code, s.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn with_strategy(name: &str, strategy: Value) -> DynamicObject {
    let mut cs = common::cloneset_json(name, 4);
    cs["spec"]["updateStrategy"] = strategy;
    serde_json::from_value(cs).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_clonesets_are_denied_with_upstreams_message() {
    let c = common::start().await;
    install_kruise_webhooks(&c, FeatureGates::new());
    let client = c.client().await.unwrap();
    let clonesets = common::clonesets(&client, "default");
    let pp = PostParams::default();

    let (code, message) = denial(
        clonesets
            .create(&pp, &with_strategy("five", json!({"maxUnavailable": "5"})))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422);
    assert_eq!(
        message,
        "admission webhook \"vcloneset.kb.io\" denied the request: \
         [spec.updateStrategy.maxUnavailable: Invalid value: \"5\": failed \
         GetScaledValueFromIntOrPercent for maxUnavailable: invalid type: string is not a \
         percentage, spec.updateStrategy.maxUnavailable: Invalid value: \
         intstr.IntOrString{Type:1, IntVal:0, StrVal:\"5\"}: maxUnavailable and maxSurge should \
         not both be less than 1]"
    );

    let (code, message) = denial(
        clonesets
            .create(&pp, &with_strategy("ondelete", json!({"type": "OnDelete"})))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422);
    assert_eq!(
        message,
        "admission webhook \"vcloneset.kb.io\" denied the request: spec.updateStrategy.type: \
         Invalid value: \"OnDelete\": must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'"
    );

    // A fractional percent is fine at v1.9.0; the selector may not change afterwards.
    clonesets
        .create(
            &pp,
            &with_strategy("frac", json!({"maxUnavailable": "12.5%"})),
        )
        .await
        .unwrap();
    let patch = json!({"spec": {
        "selector": {"matchLabels": {"app": "other"}},
        "template": {"metadata": {"labels": {"app": "other"}}},
    }});
    let (code, message) = denial(
        clonesets
            .patch("frac", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422);
    assert!(
        message.starts_with(
            "admission webhook \"vcloneset.kb.io\" denied the request: spec: Forbidden: updates \
             to cloneset spec for fields other than 'replicas'"
        ),
        "{message}"
    );
    assert!(message.contains("'progressDeadlineSeconds'"), "{message}");
    // An image bump is an allowed update.
    let bump = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "nginx:1.26"}]}}}});
    clonesets
        .patch("frac", &PatchParams::default(), &Patch::Merge(&bump))
        .await
        .unwrap();
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_8_cluster_reads_maxunavailable_with_the_old_parser() {
    use kruise_tui::{cluster::server::ServerOptions, kruise::KruiseVersion};
    let c = kruise_tui::cluster::server::EmbeddedCluster::start(ServerOptions {
        kruise_version: KruiseVersion::V1_8,
        ..ServerOptions::default()
    })
    .await
    .unwrap();
    install_kruise_webhooks(&c, FeatureGates::new());
    let client = c.client().await.unwrap();
    let clonesets = common::clonesets(&client, "default");
    let pp = PostParams::default();
    // "5" is 5 % to v1.8.4; "12.5%" does not parse as an integer.
    clonesets
        .create(&pp, &with_strategy("five", json!({"maxUnavailable": "5"})))
        .await
        .unwrap();
    let (code, message) = denial(
        clonesets
            .create(
                &pp,
                &with_strategy("frac", json!({"maxUnavailable": "12.5%"})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 422);
    assert!(
        message.starts_with(
            "admission webhook \"vcloneset.kb.io\" denied the request: \
             [spec.updateStrategy.maxUnavailable: Invalid value: \"12.5%\": failed \
             getValueFromIntOrPercent for maxUnavailable: invalid value for IntOrString: \
             invalid value \"12.5%\": strconv.Atoi: parsing \"12.5\": invalid syntax"
        ),
        "{message}"
    );
    c.shutdown().await;
}
