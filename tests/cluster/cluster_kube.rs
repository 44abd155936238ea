//! The embedded API server driven by the kube-rs client: CRUD, selectors, paging, every patch
//! type, conflicts, finalizers, garbage collection, subresources, schema validation.

use crate::common;

use common::*;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, PodTemplate};
use kube::{
    Api, Error,
    api::{DeleteParams, DynamicObject, EvictParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

fn code(e: Error) -> (u16, String) {
    match e {
        Error::Api(s) => (s.code, s.reason.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn create_get_list_with_metadata() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let api = clonesets(&client, "default");
    let created = api
        .create(&PostParams::default(), &cloneset("web", 3))
        .await
        .unwrap();
    let m = &created.metadata;
    assert!(m.uid.as_deref().is_some_and(|u| u.len() == 36));
    assert!(m.creation_timestamp.is_some());
    assert_eq!(m.generation, Some(1));
    let rv1: u64 = m.resource_version.as_deref().unwrap().parse().unwrap();

    let err = api
        .create(&PostParams::default(), &cloneset("web", 3))
        .await
        .unwrap_err();
    assert_eq!(code(err), (409, "AlreadyExists".into()));

    let mut gen_named = cloneset("x", 1);
    gen_named.metadata.name = None;
    gen_named.metadata.generate_name = Some("gen-".into());
    let g = api
        .create(&PostParams::default(), &gen_named)
        .await
        .unwrap();
    assert!(g.metadata.name.as_deref().unwrap().starts_with("gen-"));
    let rv2: u64 = g
        .metadata
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv2 > rv1, "one global counter");

    let list = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 2);
    let got = api.get("web").await.unwrap();
    assert_eq!(got.data["spec"]["replicas"], 3);

    let err = api.get("missing").await.unwrap_err();
    assert_eq!(code(err), (404, "NotFound".into()));
    let other_ns = clonesets(&client, "nope");
    let err = other_ns
        .create(&PostParams::default(), &cloneset("a", 1))
        .await
        .unwrap_err();
    assert_eq!(code(err).0, 404);
}

#[tokio::test]
async fn selectors_and_paging() {
    let c = start().await;
    let store = c.store();
    for i in 0..25 {
        let tier = if i % 2 == 0 { "fe" } else { "be" };
        let mut p = pod_json(&format!("p{i:02}"), json!({"app": "web", "tier": tier}));
        if i < 5 {
            p["spec"]["nodeName"] = json!("node-a");
        }
        store.create(p).unwrap();
    }
    let client = c.client().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let n = |lp: ListParams| {
        let pods = pods.clone();
        async move { pods.list(&lp).await.unwrap().items.len() }
    };
    assert_eq!(n(ListParams::default().labels("tier=fe")).await, 13);
    assert_eq!(n(ListParams::default().labels("tier!=fe")).await, 12);
    assert_eq!(
        n(ListParams::default().labels("tier in (fe,be),app==web")).await,
        25
    );
    assert_eq!(n(ListParams::default().labels("tier notin (fe)")).await, 12);
    assert_eq!(n(ListParams::default().labels("!tier")).await, 0);
    assert_eq!(n(ListParams::default().labels("app")).await, 25);
    assert_eq!(
        n(ListParams::default().fields("spec.nodeName=node-a")).await,
        5
    );
    assert_eq!(
        n(ListParams::default().fields("metadata.name=p03,metadata.namespace=default")).await,
        1
    );
    assert_eq!(
        n(ListParams::default().fields("status.phase!=Running")).await,
        25
    );

    let mut names = Vec::new();
    let mut lp = ListParams::default().limit(10);
    loop {
        let page = pods.list(&lp).await.unwrap();
        names.extend(page.items.iter().map(|p| p.metadata.name.clone().unwrap()));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(tok) => lp = ListParams::default().limit(10).continue_token(&tok),
            None => break,
        }
    }
    assert_eq!(names.len(), 25);
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, names, "pages are disjoint and ordered");
}

#[tokio::test]
async fn patches_of_every_type() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let api = clonesets(&client, "default");
    api.create(&PostParams::default(), &cloneset("web", 1))
        .await
        .unwrap();
    let pp = PatchParams::default();

    let o = api
        .patch("web", &pp, &Patch::Merge(json!({"spec": {"replicas": 2}})))
        .await
        .unwrap();
    assert_eq!(o.data["spec"]["replicas"], 2);
    assert_eq!(o.metadata.generation, Some(2));
    let o = api
        .patch(
            "web",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        o.metadata.generation,
        Some(2),
        "metadata changes keep generation"
    );

    let jp: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/replicas", "value": 2},
        {"op": "replace", "path": "/spec/replicas", "value": 4}
    ]))
    .unwrap();
    let o = api.patch("web", &pp, &Patch::Json::<()>(jp)).await.unwrap();
    assert_eq!(o.data["spec"]["replicas"], 4);
    let failing: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/replicas", "value": 99}
    ]))
    .unwrap();
    let err = api
        .patch("web", &pp, &Patch::Json::<()>(failing))
        .await
        .unwrap_err();
    assert_eq!(code(err).0, 422);

    let err = api
        .patch(
            "web",
            &pp,
            &Patch::Strategic(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        code(err),
        (415, "UnsupportedMediaType".into()),
        "CRs take no strategic merge"
    );

    let ssa = PatchParams::apply("tester");
    let mut applied = cloneset_json("web", 6);
    applied["metadata"] = json!({"name": "web"});
    // The creator (kube-rs sends no User-Agent: manager "unknown") owns spec.replicas; another
    // value is a conflict unless forced.
    let err = api
        .patch("web", &ssa, &Patch::Apply(&applied))
        .await
        .unwrap_err();
    let Error::Api(s) = err else {
        panic!("API error expected")
    };
    assert_eq!(s.code, 409);
    assert!(
        s.message
            .contains(r#"conflict with "unknown" using apps.kruise.io/v1alpha1"#),
        "{}",
        s.message
    );
    let o = api
        .patch("web", &ssa.clone().force(), &Patch::Apply(&applied))
        .await
        .unwrap();
    assert_eq!(o.data["spec"]["replicas"], 6);
    let owners: Vec<String> = o
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "{}/{}",
                e.manager.as_deref().unwrap_or(""),
                e.operation.as_deref().unwrap_or("")
            )
        })
        .collect();
    assert!(owners.contains(&"tester/Apply".to_string()), "{owners:?}");
    assert_eq!(
        o.metadata.labels.as_ref().unwrap()["x"],
        "y",
        "apply keeps other fields"
    );
    let mut fresh = cloneset_json("applied", 2);
    fresh["metadata"] = json!({"name": "applied"});
    let o = api
        .patch("applied", &ssa, &Patch::Apply(&fresh))
        .await
        .unwrap();
    assert_eq!(
        o.metadata.generation,
        Some(1),
        "apply creates a missing object"
    );

    // Strategic merge on a built-in kind merges containers by name (and their env by name).
    // A PodTemplate, not a Pod: a real server refuses any pod spec change but an image.
    let templates: Api<PodTemplate> = Api::default_namespaced(client.clone());
    templates
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "p"},
                "template": {"spec": {"containers": [
                    {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
                    {"name": "b", "image": "b:1"}
                ]}}
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    let p = templates
        .patch(
            "p",
            &pp,
            &Patch::Strategic(json!({"template": {"spec": {"containers": [
                {"name": "a", "image": "a:2", "env": [{"name": "Y", "value": "2"}]}
            ]}}})),
        )
        .await
        .unwrap();
    let cs = p.template.unwrap().spec.unwrap().containers;
    assert_eq!(cs.len(), 2);
    assert_eq!(cs[0].image.as_deref(), Some("a:2"));
    assert_eq!(cs[0].env.as_ref().unwrap().len(), 2);
    assert_eq!(cs[1].image.as_deref(), Some("b:1"));
}

#[tokio::test]
async fn conflicts_on_stale_resource_version() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "c"}, "data": {"a": "1"}})).unwrap();
    let v1 = cms.create(&PostParams::default(), &cm).await.unwrap();
    let mut stale = v1.clone();
    let mut fresh = v1.clone();
    fresh.data = Some([("a".to_string(), "2".to_string())].into());
    cms.replace("c", &PostParams::default(), &fresh)
        .await
        .unwrap();
    stale.data = Some([("a".to_string(), "3".to_string())].into());
    let err = cms
        .replace("c", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert_eq!(code(err), (409, "Conflict".into()));
    let rv = v1.metadata.resource_version.clone().unwrap();
    let err = cms
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"resourceVersion": rv}, "data": {"a": "4"}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        code(err).0,
        409,
        "a resourceVersion in a patch is a precondition"
    );
    assert_eq!(cms.get("c").await.unwrap().data.unwrap()["a"], "2");
}

#[tokio::test]
async fn finalizers_hold_deleted_objects() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let api = clonesets(&client, "default");
    let mut cs = cloneset("held", 1);
    cs.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.create(&PostParams::default(), &cs).await.unwrap();
    api.delete("held", &DeleteParams::default()).await.unwrap();
    let o = api.get("held").await.unwrap();
    assert!(o.metadata.deletion_timestamp.is_some());
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(code(api.get("held").await.unwrap_err()).0, 404);
}

fn owned_pod(name: &str, owner: &DynamicObject) -> Value {
    let mut p = pod_json(name, json!({"app": "web"}));
    p["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "name": owner.metadata.name, "uid": owner.metadata.uid, "controller": true,
        "blockOwnerDeletion": true
    }]);
    p
}

#[tokio::test]
async fn garbage_collection_follows_owner_references() {
    let c = start().await;
    let client = c.client().await.unwrap();
    let api = clonesets(&client, "default");
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let count = |pods: Api<Pod>| async move {
        pods.list(&ListParams::default()).await.unwrap().items.len()
    };

    // Background: the owner goes at once, the dependents after.
    let owner = api
        .create(&PostParams::default(), &cloneset("bg", 1))
        .await
        .unwrap();
    c.store().create(owned_pod("bg-1", &owner)).unwrap();
    c.store().create(owned_pod("bg-2", &owner)).unwrap();
    api.delete("bg", &DeleteParams::background()).await.unwrap();
    eventually("background dependents deleted", || {
        count(pods.clone()).map_zero()
    })
    .await;

    // Foreground: the owner waits (deletionTimestamp, foregroundDeletion) until dependents go.
    let owner = api
        .create(&PostParams::default(), &cloneset("fg", 1))
        .await
        .unwrap();
    let mut p = owned_pod("fg-1", &owner);
    p["metadata"]["finalizers"] = json!(["example.com/slow"]);
    c.store().create(p).unwrap();
    api.delete("fg", &DeleteParams::foreground()).await.unwrap();
    let o = api.get("fg").await.unwrap();
    assert!(
        o.metadata
            .finalizers
            .unwrap()
            .contains(&"foregroundDeletion".to_string())
    );
    eventually("dependent marked for deletion", || {
        let pods = pods.clone();
        async move {
            pods.get("fg-1")
                .await
                .unwrap()
                .metadata
                .deletion_timestamp
                .is_some()
        }
    })
    .await;
    assert!(api.get("fg").await.is_ok(), "owner waits for the dependent");
    pods.patch(
        "fg-1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": []}})),
    )
    .await
    .unwrap();
    eventually("foreground owner gone", || {
        let api = api.clone();
        async move { api.get_opt("fg").await.unwrap().is_none() }
    })
    .await;

    // Orphan: dependents stay and lose their ownerReferences.
    let owner = api
        .create(&PostParams::default(), &cloneset("or", 1))
        .await
        .unwrap();
    c.store().create(owned_pod("or-1", &owner)).unwrap();
    api.delete("or", &DeleteParams::orphan()).await.unwrap();
    eventually("orphan owner gone", || {
        let api = api.clone();
        async move { api.get_opt("or").await.unwrap().is_none() }
    })
    .await;
    let p = pods.get("or-1").await.unwrap();
    assert!(p.metadata.owner_references.unwrap_or_default().is_empty());
}

trait MapZero {
    fn map_zero(self) -> impl std::future::Future<Output = bool>;
}

impl<F: std::future::Future<Output = usize>> MapZero for F {
    async fn map_zero(self) -> bool {
        self.await == 0
    }
}

mod subresources;
