//! The embedded Advanced StatefulSet controller end to end: sets created through the API of the
//! embedded cluster (kube-rs and kubectl, as a user would), the simulated nodes running the pods.
//! OrderedReady scale-up in ordinal order around reserved ordinals, a partitioned image rollout by
//! recreation within maxUnavailable and in place, the status numbers, upstream's events, the
//! claims' labels (v1.9.0 keeps the template's), and the plan's prediction against what the
//! controller then does.

use crate::kubectl;
use crate::workloads;

use std::{collections::BTreeSet, time::Duration};

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kruise_tui::{
    actions::preview::asts_plan_input_from_objects,
    api::StatefulSet,
    kruise::{KruiseVersion, plan},
};
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};
use workloads::{
    Cluster, UnavailableSampler, image, is_ready, label, name, restarts, uid, wait_for,
};

const REVISION: &str = "controller-revision-hash";

fn asts(name: &str, spec: Value) -> StatefulSet {
    let mut v = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": 1,
                         "containers": [{"name": "app", "image": "nginx:1"}]}
            }
        }
    });
    if let (Some(base), Value::Object(extra)) =
        (v.pointer_mut("/spec").and_then(Value::as_object_mut), spec)
    {
        base.extend(extra);
    }
    serde_json::from_value(v).expect("a valid Advanced StatefulSet")
}

fn sets(c: &Cluster) -> Api<StatefulSet> {
    Api::default_namespaced(c.client.clone())
}

async fn create(c: &Cluster, set: &StatefulSet) {
    sets(c)
        .create(&PostParams::default(), set)
        .await
        .expect("the set is created");
}

/// Waits until `name` has `replicas` ready pods and its status says so for the set's generation.
async fn wait_settled(c: &Cluster, set_name: &str, replicas: i32) -> StatefulSet {
    wait_for(
        90,
        &format!("{set_name} settled with {replicas} ready"),
        || async {
            let set = sets(c).get(set_name).await.ok()?;
            let st = set.status.clone()?;
            let ready = c
                .pods_of(set_name)
                .await
                .iter()
                .filter(|p| is_ready(p))
                .count();
            (st.ready_replicas == replicas
                && st.replicas == replicas
                && usize::try_from(replicas).ok() == Some(ready)
                && st.observed_generation == set.metadata.generation.unwrap_or(0))
            .then_some(set)
        },
    )
    .await
}

async fn set_image(c: &Cluster, set_name: &str, image: &str) {
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}});
    sets(c)
        .patch(set_name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("image patched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordered_ready_scale_up_goes_one_pod_at_a_time_around_reserved_ordinals() {
    let c = Cluster::start().await;
    create(
        &c,
        &asts(
            "db",
            json!({"replicas": 3, "reserveOrdinals": [1],
                   "volumeClaimTemplates": [{"metadata": {"name": "data",
                                                          "labels": {"backup": "daily", "app": "x"}},
                                             "spec": {"accessModes": ["ReadWriteOnce"],
                                                      "resources": {"requests": {"storage": "1Gi"}}}}]}),
        ),
    )
    .await;
    // Sample the pods while they come: each pod appears only once every lower one is Ready,
    // and never two unready pods at once.
    let mut first_seen: Vec<String> = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let pods = c.pods_of("db").await;
        let unready = pods.iter().filter(|p| !is_ready(p)).count();
        assert!(
            unready <= 1,
            "two pods starting at once: {:?}",
            pods.iter().map(name).collect::<Vec<_>>()
        );
        for p in &pods {
            let n = name(p).to_owned();
            if !first_seen.contains(&n) {
                for earlier in &first_seen {
                    let ready = pods.iter().any(|q| name(q) == earlier && is_ready(q));
                    assert!(ready, "{n} appeared before {earlier} was Ready");
                }
                first_seen.push(n);
            }
        }
        if pods.len() == 3 && pods.iter().all(is_ready) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out: {first_seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        first_seen,
        ["db-0", "db-2", "db-3"],
        "ordinal 1 is reserved"
    );

    let set = wait_settled(&c, "db", 3).await;
    let st = set.status.clone().expect("status");
    assert_eq!(
        (
            st.replicas,
            st.ready_replicas,
            st.available_replicas,
            st.current_replicas,
            st.updated_replicas
        ),
        (3, 3, 3, 3, 3)
    );
    assert_eq!(st.current_revision, st.update_revision);
    assert!(st.update_revision.starts_with("db-"));
    assert_eq!(st.label_selector.as_deref(), Some("app=db"));
    for p in c.pods_of("db").await {
        assert_eq!(label(&p, REVISION), Some(st.update_revision.as_str()));
        assert_eq!(
            label(&p, "statefulset.kubernetes.io/pod-name"),
            Some(name(&p))
        );
    }
    let events = c.events_of("db").await;
    assert!(
        events
            .iter()
            .any(|(r, m)| r == "SuccessfulCreate"
                && m == "create Pod db-2 in StatefulSet db successful"),
        "{events:?}"
    );
    // Each pod got its claim from the volumeClaimTemplate, bound by name.
    let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(c.client.clone());
    let mut names: Vec<String> = claims
        .list(&Default::default())
        .await
        .expect("claims")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    names.sort();
    assert_eq!(names, ["data-db-0", "data-db-2", "data-db-3"]);
    // Their labels: v1.9.0 merges the selector's over the template's (#2257), v1.8.4 takes the
    // selector's alone.
    let claim = claims.get("data-db-0").await.expect("claim");
    let want: &[(&str, &str)] = if c.tb.kruise_version() == KruiseVersion::V1_9 {
        &[("app", "db"), ("backup", "daily")]
    } else {
        &[("app", "db")]
    };
    assert_eq!(
        claim.metadata.labels.unwrap_or_default(),
        want.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    );
    // kubectl reads the same status.
    let k = kubectl::Kubectl::at(c.tb.kubeconfig(), c.ns());
    k.assert_jsonpath(
        &["statefulsets.apps.kruise.io", "db"],
        "{.status.readyReplicas}",
        "3",
    )
    .await;
    // Settled, the controller writes nothing more: the set and its pods stay as they are.
    let versions = |set: &StatefulSet, pods: &[k8s_openapi::api::core::v1::Pod]| {
        let mut v = vec![set.metadata.resource_version.clone()];
        v.extend(pods.iter().map(|p| p.metadata.resource_version.clone()));
        v
    };
    let before = versions(
        &sets(&c).get("db").await.expect("set"),
        &c.pods_of("db").await,
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = versions(
        &sets(&c).get("db").await.expect("set"),
        &c.pods_of("db").await,
    );
    assert_eq!(before, after, "a settled set is left alone");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_two_recreates_ordinals_three_and_two_within_max_unavailable() {
    let c = Cluster::start().await;
    create(
        &c,
        &asts(
            "web",
            json!({"replicas": 4, "updateStrategy": {"rollingUpdate": {"partition": 2}}}),
        ),
    )
    .await;
    let before = wait_settled(&c, "web", 4).await;
    let old_revision = before.status.clone().expect("status").update_revision;
    let old_uids: Vec<String> = c
        .pods_of("web")
        .await
        .iter()
        .map(|p| uid(p).to_owned())
        .collect();

    let sampler = UnavailableSampler::start(c.pods(), "web", 4);
    // The image change, with kubectl as a user would.
    let k = kubectl::Kubectl::at(c.tb.kubeconfig(), c.ns());
    k.ok(&[
        "patch",
        "statefulsets.apps.kruise.io",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}"#,
    ])
    .await;
    let set = wait_for(90, "two pods updated and ready", || async {
        let set = sets(&c).get("web").await.ok()?;
        let st = set.status.clone()?;
        (st.updated_replicas == 2 && st.updated_ready_replicas == 2 && st.ready_replicas == 4)
            .then_some(set)
    })
    .await;
    // Nothing more moves: partition 2 holds ordinals 0 and 1.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let worst = sampler.finish().await;
    assert!(
        worst <= 1,
        "maxUnavailable 1 exceeded: {worst} unavailable at once"
    );

    let st = set.status.clone().expect("status");
    assert_ne!(st.update_revision, old_revision);
    assert_eq!(
        st.current_revision, old_revision,
        "the rollout is not complete"
    );
    assert_eq!((st.current_replicas, st.updated_replicas), (2, 2));
    let pods = c.pods_of("web").await;
    assert_eq!(pods.len(), 4);
    for (i, p) in pods.iter().enumerate() {
        let updated = i >= 2;
        assert_eq!(name(p), format!("web-{i}"));
        assert_eq!(
            image(p),
            if updated { "nginx:2" } else { "nginx:1" },
            "{}",
            name(p)
        );
        let rev = if updated {
            &st.update_revision
        } else {
            &old_revision
        };
        assert_eq!(label(p, REVISION), Some(rev.as_str()), "{}", name(p));
        assert_eq!(
            uid(p) == old_uids[i],
            !updated,
            "{} recreated iff updated",
            name(p)
        );
    }
    let events = c.events_of("web").await;
    for n in ["web-3", "web-2"] {
        let msg = format!("delete Pod {n} in StatefulSet web successful");
        assert!(
            events
                .iter()
                .any(|(r, m)| r == "SuccessfulDelete" && *m == msg),
            "{events:?}"
        );
    }
    for n in ["web-0", "web-1"] {
        let msg = format!("delete Pod {n} in StatefulSet web successful");
        assert!(
            !events.iter().any(|(_, m)| *m == msg),
            "{n} was held by the partition"
        );
    }
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_place_if_possible_updates_above_the_partition_keeping_the_pods() {
    let c = Cluster::start().await;
    let mut set = asts(
        "api",
        json!({
            "replicas": 4,
            "podManagementPolicy": "Parallel",
            "updateStrategy": {"rollingUpdate": {"partition": 2, "podUpdatePolicy": "InPlaceIfPossible"}}
        }),
    );
    if let Some(spec) = set.spec.template.spec.as_mut() {
        spec.readiness_gates = Some(vec![k8s_openapi::api::core::v1::PodReadinessGate {
            condition_type: "InPlaceUpdateReady".into(),
        }]);
    }
    create(&c, &set).await;
    wait_settled(&c, "api", 4).await;
    let before = c.pods_of("api").await;
    let sampler = UnavailableSampler::start(c.pods(), "api", 4);
    set_image(&c, "api", "nginx:2").await;
    let set = wait_for(90, "two pods updated in place and ready", || async {
        let set = sets(&c).get("api").await.ok()?;
        let st = set.status.clone()?;
        (st.updated_replicas == 2 && st.updated_ready_replicas == 2 && st.ready_replicas == 4)
            .then_some(set)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let worst = sampler.finish().await;
    assert!(worst <= 1, "maxUnavailable 1 exceeded: {worst}");
    let st = set.status.clone().expect("status");
    let after = c.pods_of("api").await;
    for (b, a) in before.iter().zip(&after) {
        let updated = name(a) == "api-2" || name(a) == "api-3";
        assert_eq!(uid(a), uid(b), "{} keeps its UID", name(a));
        assert_eq!(restarts(a), restarts(b) + i32::from(updated), "{}", name(a));
        assert_eq!(
            image(a),
            if updated { "nginx:2" } else { "nginx:1" },
            "{}",
            name(a)
        );
        assert_eq!(
            label(a, REVISION) == Some(st.update_revision.as_str()),
            updated
        );
        let state = a
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|x| x.contains_key("apps.kruise.io/inplace-update-state"));
        assert_eq!(state, updated, "{}", name(a));
    }
    let events = c.events_of("api").await;
    let msg = format!(
        "successfully update pod api-3 in-place(revision {})",
        st.update_revision
    );
    assert!(
        events
            .iter()
            .any(|(r, m)| r == "SuccessfulUpdatePodInPlace" && *m == msg),
        "{events:?}"
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_predicts_which_pods_the_controller_updates() {
    let c = Cluster::start().await;
    create(
        &c,
        &asts(
            "shop",
            json!({"replicas": 4, "podManagementPolicy": "Parallel",
                   "updateStrategy": {"rollingUpdate": {"partition": 4}}}),
        ),
    )
    .await;
    wait_settled(&c, "shop", 4).await;
    set_image(&c, "shop", "nginx:2").await;
    // Partition 4 holds every pod: the new revision is recorded, nothing moves.
    let held = wait_for(30, "the new update revision in the status", || async {
        let set = sets(&c).get("shop").await.ok()?;
        let st = set.status.clone()?;
        (st.update_revision != st.current_revision).then_some(set)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(held.status.as_ref().map(|s| s.updated_replicas), Some(0));

    // The plan for partition 2, from the objects as the CLI reads them.
    let json = serde_json::to_value(sets(&c).get("shop").await.expect("set")).expect("json");
    let pods = c.pods_of("shop").await;
    let input = asts_plan_input_from_objects(json, &pods, "2", jiff::Timestamp::now().as_second())
        .expect("plan input");
    let planned = plan::plan(&input).expect("a plan");
    let predicted: BTreeSet<String> = planned.moves.iter().map(|m| m.name.clone()).collect();
    assert_eq!(planned.status.updated_at_convergence, 2);
    // The binary prints the same plan.
    let kubeconfig = c.tb.kubeconfig_in_ns().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
            .args(["plan", "asts/shop", "--partition", "2", "--kubeconfig"])
            .arg(&kubeconfig)
            .env_remove("KUBECONFIG")
            .output()
            .expect("the binary runs")
    })
    .await
    .expect("joins");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for n in &predicted {
        assert!(stdout.contains(n.as_str()), "{n} missing from:\n{stdout}");
    }

    // Apply it and see exactly the predicted pods move.
    sets(&c)
        .patch(
            "shop",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}})),
        )
        .await
        .expect("partition patched");
    let set = wait_for(90, "the partition applied", || async {
        let set = sets(&c).get("shop").await.ok()?;
        let st = set.status.clone()?;
        (st.updated_replicas == 2 && st.updated_ready_replicas == 2 && st.ready_replicas == 4)
            .then_some(set)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let update = set.status.expect("status").update_revision;
    let updated: BTreeSet<String> = c
        .pods_of("shop")
        .await
        .iter()
        .filter(|p| label(p, REVISION) == Some(update.as_str()))
        .map(|p| name(p).to_owned())
        .collect();
    assert_eq!(updated, predicted);
    assert_eq!(
        predicted,
        BTreeSet::from(["shop-2".to_owned(), "shop-3".to_owned()])
    );
    c.shutdown().await;
}
