//! Hot upgrades and the revision the injection strategy names.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_upgrade_swaps_the_working_container_and_resets_the_old_one() {
    let Some((tb, client, kubectl)) = start().await else {
        return;
    };
    kubectl.apply(&[], ENVOY_SET).await;
    create_cloneset(&client, "shop", 2).await;
    let before = ready_pods(&client, "shop", 2).await;
    status_is(&client, "mesh", (2, 2, 2, 2)).await;
    for p in &before {
        assert_eq!(spec_image(p, "envoy-1"), "envoy:1");
        assert_eq!(spec_image(p, "envoy-2"), "envoy:empty");
        assert_eq!(
            annotation(p, "kruise.io/sidecarset-working-hotupgrade-container"),
            r#"{"envoy":"envoy-1"}"#
        );
        assert_eq!(annotation(p, "version.sidecarset.kruise.io/envoy-1"), "1");
    }
    let sets: Api<SidecarSet> = Api::all(client.clone());
    sets.patch(
        "mesh",
        &PatchParams::default(),
        &Patch::Json::<()>(
            serde_json::from_value(
                json!([{"op": "replace", "path": "/spec/containers/0/image", "value": "envoy:2"}]),
            )
            .unwrap(),
        ),
    )
    .await
    .unwrap();
    // Both pods end with envoy-2 working on envoy:2 and envoy-1 back on the empty image.
    let after = wait_for("the hot upgrade and the reset", || async {
        let pods = pods_of(&client, "shop").await;
        let done = pods.len() == 2
            && pods.iter().all(|p| {
                ready(p)
                    && spec_image(p, "envoy-2") == "envoy:2"
                    && cstatus(p, "envoy-2").0 == "envoy:2"
                    && spec_image(p, "envoy-1") == "envoy:empty"
                    && cstatus(p, "envoy-1").0 == "envoy:empty"
            });
        done.then_some(pods)
    })
    .await;
    for p in &after {
        let old = before
            .iter()
            .find(|b| b.metadata.uid == p.metadata.uid)
            .expect("same pods");
        assert_eq!(
            annotation(p, "kruise.io/sidecarset-working-hotupgrade-container"),
            r#"{"envoy":"envoy-2"}"#
        );
        assert_eq!(annotation(p, "version.sidecarset.kruise.io/envoy-1"), "0");
        assert_eq!(cstatus(p, "envoy-2").2, cstatus(old, "envoy-2").2 + 1);
        assert_eq!(cstatus(p, "envoy-1").2, cstatus(old, "envoy-1").2 + 1);
        assert_eq!(cstatus(p, "app"), cstatus(old, "app"));
    }
    status_is(&client, "mesh", (2, 2, 2, 2)).await;
    // Each reset is reported on its pod, by the sidecarset controller.
    let events: Api<Event> = Api::default_namespaced(client.clone());
    wait_for("ResetContainerSucceed events", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        let reset: Vec<&Event> = list
            .items
            .iter()
            .filter(|e| e.reason.as_deref() == Some("ResetContainerSucceed"))
            .filter(|e| e.involved_object.kind.as_deref() == Some("Pod"))
            .collect();
        let ok = reset.len() == 2
            && reset.iter().all(|e| {
                e.message.as_deref() == Some("reset sidecar container image empty successfully")
                    && e.source.as_ref().and_then(|s| s.component.as_deref())
                        == Some("sidecarset-controller")
            });
        ok.then_some(())
    })
    .await;
    tb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_pods_get_the_revision_the_injection_strategy_names_and_history_is_pruned() {
    let Some((tb, client, kubectl)) = start().await else {
        return;
    };
    let set_yaml = |image: &str, version: &str| {
        format!(
            "apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata:\n  name: log\n  labels:\n    \
             apps.kruise.io/sidecarset-custom-version: {version}\nspec:\n  selector:\n    matchLabels:\n      \
             app: api\n  revisionHistoryLimit: 2\n  updateStrategy:\n    type: NotUpdate\n  containers:\n  - name: agent\n    \
             image: {image}\n"
        )
    };
    let latest = |v: SidecarSet| v.status.map(|s| s.latest_revision).unwrap_or_default();
    kubectl.apply(&[], &set_yaml("agent:1", "v1")).await;
    let r1 = wait_for("the first revision", || async {
        Some(latest(sidecarset(&client, "log").await)).filter(|r| !r.is_empty())
    })
    .await;
    kubectl.apply(&[], &set_yaml("agent:2", "v2")).await;
    let r2 = wait_for("the second revision", || async {
        Some(latest(sidecarset(&client, "log").await)).filter(|r| !r.is_empty() && *r != r1)
    })
    .await;
    let labels = |revs: &[ControllerRevision]| -> BTreeMap<String, String> {
        revs.iter()
            .map(|r| {
                (
                    r.metadata.name.clone().unwrap(),
                    r.metadata.labels.clone().unwrap()["apps.kruise.io/sidecarset-custom-version"]
                        .clone(),
                )
            })
            .collect()
    };
    let revs = revisions_of(&client, "log").await;
    assert_eq!(
        labels(&revs),
        BTreeMap::from([(r1.clone(), "v1".into()), (r2.clone(), "v2".into())])
    );

    // New pods get the set as custom version v1 recorded it, not the current agent:2.
    let sets: Api<SidecarSet> = Api::all(client.clone());
    sets.patch(
        "log",
        &PatchParams::default(),
        &Patch::Merge(
            json!({"spec": {"injectionStrategy": {"revision": {"customVersion": "v1"}}}}),
        ),
    )
    .await
    .unwrap();
    create_cloneset(&client, "api", 1).await;
    let pods = ready_pods(&client, "api", 1).await;
    assert_eq!(spec_image(&pods[0], "agent"), "agent:1");
    assert_eq!(hash_entry(&pods[0], "log")["controllerRevision"], json!(r1));
    let r1_hash = revs
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(r1.as_str()))
        .and_then(|r| r.metadata.annotations.clone())
        .unwrap()["kruise.io/sidecarset-hash"]
        .clone();
    assert_eq!(hash_entry(&pods[0], "log")["hash"], json!(r1_hash));
    // The set says NotUpdate: its status counts the pod as not updated, and it stays so.
    status_is(&client, "log", (1, 0, 1, 0)).await;

    // A third spec with revisionHistoryLimit 2: the oldest revision the pod does not use goes.
    kubectl.apply(&[], &set_yaml("agent:3", "v3")).await;
    let r3 = wait_for("the third revision", || async {
        Some(latest(sidecarset(&client, "log").await))
            .filter(|r| !r.is_empty() && *r != r2 && *r != r1)
    })
    .await;
    let kept = wait_for("history pruned to 2", || async {
        let revs = revisions_of(&client, "log").await;
        (revs.len() == 2).then_some(revs)
    })
    .await;
    let mut names: Vec<String> = kept.into_iter().filter_map(|r| r.metadata.name).collect();
    names.sort();
    let mut want = vec![r1, r3];
    want.sort();
    assert_eq!(names, want, "r1 is kept: the pod runs it");
    tb.shutdown().await;
}
