//! The status and scale subresources, schema validation and namespace deletion.

use super::*;

#[tokio::test]
async fn status_and_scale_subresources() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let api = clonesets(&client, "default");
    api.create(&PostParams::default(), &cloneset("web", 2))
        .await
        .unwrap();
    let pp = PatchParams::default();

    // The main endpoint ignores status; /status ignores everything else.
    let o = api
        .patch(
            "web",
            &pp,
            &Patch::Merge(json!({"status": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert!(
        o.data
            .get("status")
            .is_none_or(|s| s.get("replicas").is_none())
    );
    let full = json!({"status": {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2,
        "updatedReplicas": 2, "updatedReadyReplicas": 2, "labelSelector": "app=web"}, "spec": {"replicas": 9}});
    let o = api
        .patch_status("web", &pp, &Patch::Merge(full))
        .await
        .unwrap();
    assert_eq!(o.data["status"]["readyReplicas"], 2);
    assert_eq!(o.data["spec"]["replicas"], 2);
    assert_eq!(o.metadata.generation, Some(1));

    // Required status fields are enforced (422 Invalid).
    let err = api
        .patch_status(
            "web",
            &pp,
            &Patch::Merge(json!({"status": {"readyReplicas": null}})),
        )
        .await
        .unwrap_err();
    assert_eq!(code(err), (422, "Invalid".into()));

    let s = api.get_scale("web").await.unwrap();
    assert_eq!(s.spec.unwrap().replicas, Some(2));
    assert_eq!(s.status.unwrap().selector.as_deref(), Some("app=web"));
    let s = api
        .patch_scale("web", &pp, &Patch::Merge(json!({"spec": {"replicas": 7}})))
        .await
        .unwrap();
    assert_eq!(s.spec.unwrap().replicas, Some(7));
    assert_eq!(api.get("web").await.unwrap().data["spec"]["replicas"], 7);

    // Eviction deletes the pod.
    c.store().create(pod_json("victim", json!({}))).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    pods.evict("victim", &EvictParams::default()).await.unwrap();
    assert!(pods.get_opt("victim").await.unwrap().is_none());

    // Binding assigns a node once.
    c.store().create(pod_json("unbound", json!({}))).unwrap();
    let binding = json!({"apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "unbound"}, "target": {"kind": "Node", "name": "node-1"}});
    let pp = PostParams::default();
    let _: Value = pods
        .create_subresource("binding", "unbound", &pp, &binding)
        .await
        .unwrap();
    let p = pods.get("unbound").await.unwrap();
    assert_eq!(p.spec.unwrap().node_name.as_deref(), Some("node-1"));
    let err = pods
        .create_subresource::<Value, Value>("binding", "unbound", &pp, &binding)
        .await
        .unwrap_err();
    assert_eq!(code(err).0, 409);
}

#[tokio::test]
async fn schema_validation_refuses_bad_objects() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let api = clonesets(&client, "default");
    let mut bad = cloneset_json("bad", 1);
    bad["spec"]["replicas"] = json!("three");
    let err = api
        .create(
            &PostParams::default(),
            &serde_json::from_value(bad).unwrap(),
        )
        .await
        .unwrap_err();
    let Error::Api(s) = err else {
        panic!("API error expected")
    };
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    assert!(s.message.contains("spec.replicas"), "{}", s.message);

    // An applied configuration is checked against the schema whatever fieldValidation says: a
    // field it does not declare is upstream's (unclassified) 500.
    let mut unknown = cloneset_json("unk", 1);
    unknown["spec"]["bogus"] = json!(1);
    for pp in [
        PatchParams::apply("t").validation_strict(),
        PatchParams::apply("t"),
    ] {
        let err = api
            .patch("unk", &pp, &Patch::Apply(&unknown))
            .await
            .unwrap_err();
        let Error::Api(s) = err else {
            panic!("API error expected")
        };
        assert_eq!(s.code, 500);
        assert!(
            s.message
                .ends_with(".spec.bogus: field not declared in schema"),
            "{}",
            s.message
        );
    }
    assert!(api.get_opt("unk").await.unwrap().is_none());
}

#[tokio::test]
async fn deleting_a_namespace_empties_it_first() {
    use k8s_openapi::api::core::v1::Namespace;
    let c = start().await;
    let client = c.client().await.unwrap();
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "tmp"}})).unwrap(),
    )
    .await
    .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "tmp");
    let mut held = pod_json("held", json!({}));
    held["metadata"]["namespace"] = json!("tmp");
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(held).unwrap(),
    )
    .await
    .unwrap();
    let mut free = pod_json("free", json!({}));
    free["metadata"]["namespace"] = json!("tmp");
    pods.create(
        &PostParams::default(),
        &serde_json::from_value(free.clone()).unwrap(),
    )
    .await
    .unwrap();

    nss.delete("tmp", &DeleteParams::default()).await.unwrap();
    let ns = nss.get("tmp").await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Terminating"));
    free["metadata"]["name"] = json!("late");
    let err = pods
        .create(
            &PostParams::default(),
            &serde_json::from_value(free).unwrap(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        code(err).0,
        403,
        "no new content in a terminating namespace"
    );
    eventually("free pod deleted", || {
        let pods = pods.clone();
        async move { pods.get_opt("free").await.unwrap().is_none() }
    })
    .await;
    assert!(
        nss.get_opt("tmp").await.unwrap().is_some(),
        "the held pod keeps the namespace"
    );
    pods.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    eventually("namespace gone", || {
        let nss = nss.clone();
        async move { nss.get_opt("tmp").await.unwrap().is_none() }
    })
    .await;
}
