use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use super::*;
use crate::api::keys;
use crate::api::rollout::{BatchRelease, Rollout, batch};
use crate::kruise::rollout::workload::{TargetKind, WorkloadInfo};

fn s(v: &str) -> IntOrString {
    IntOrString::String(v.into())
}

fn now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap())
}

fn br(batches: &[IntOrString], partition: Option<i32>) -> BatchRelease {
    serde_json::from_value(json!({
        "metadata": {"name": "demo", "namespace": "d", "uid": "br-uid", "generation": 1,
                     "finalizers": [keys::BATCH_RELEASE_FINALIZER]},
        "spec": {"workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo"},
                 "releasePlan": {"batches": batches.iter().map(|b| json!({"canaryReplicas": b})).collect::<Vec<_>>(),
                                 "batchPartition": partition, "rolloutID": "r1"}}
    }))
    .unwrap()
}

/// A CloneSet whose controller has caught up with `partition`: R − resolved(partition) pods
/// updated, all ready.
fn cloneset(r: i32, partition: Option<IntOrString>, control: Option<String>) -> WorkloadInfo {
    let kept = partition
        .as_ref()
        .map(|p| crate::kruise::intstr::scaled_value_kruise(p, r, true).unwrap_or(0))
        .unwrap_or(0)
        .clamp(0, r);
    let mut w = WorkloadInfo {
        kind: Some(TargetKind::CloneSet),
        name: "demo".into(),
        generation: 2,
        observed_generation: 2,
        replicas: r,
        status_replicas: r,
        updated_replicas: r - kept,
        updated_ready_replicas: r - kept,
        current_revision: "demo-v1".into(),
        update_revision: "demo-v2".into(),
        partition,
        ..WorkloadInfo::default()
    };
    if let Some(c) = control {
        w.annotations
            .insert(keys::BATCH_RELEASE_CONTROL_INFO.into(), c);
    }
    w
}

fn pods(n: usize, updated: usize, labelled: &[(usize, &str)]) -> Vec<Pod> {
    (0..n)
        .map(|i| {
            let rev = if i < updated { "v2" } else { "v1" };
            let mut labels = json!({"controller-revision-hash": format!("demo-{rev}")});
            if let Some((_, b)) = labelled.iter().find(|(j, _)| *j == i) {
                labels[keys::ROLLOUT_ID] = json!("r1");
                labels[keys::ROLLOUT_BATCH_ID] = json!(b);
            }
            serde_json::from_value(json!({"metadata": {"name": format!("p{i}"), "labels": labels}}))
                .unwrap()
        })
        .collect()
}

#[test]
fn percentages_follow_upstream_including_the_one_percent_floor() {
    let b = s("50%");
    assert_eq!(parse_integer_as_percentage_if_possible(1, 3, &b), s("33%"));
    assert_eq!(
        parse_integer_as_percentage_if_possible(98, 99, &b),
        s("98%")
    );
    assert_eq!(parse_integer_as_percentage_if_possible(1, 101, &b), s("1%"));
    assert_eq!(
        parse_integer_as_percentage_if_possible(10, 10, &b),
        s("100%")
    );
    assert_eq!(parse_integer_as_percentage_if_possible(0, 10, &b), s("0%"));
    assert!(is_current_more_than_or_equal_to_desired(
        &s("80%"),
        &s("79%")
    ));
    assert!(!is_current_more_than_or_equal_to_desired(
        &IntOrString::Int(2),
        &IntOrString::Int(3)
    ));
}

#[test]
fn rollback_in_batch_counts_only_the_pods_that_need_it() {
    let mut r = br(&[s("20%")], Some(0));
    r.status = Some(
        serde_json::from_value(
            json!({"canaryStatus": {"currentBatch": 0, "noNeedUpdateReplicas": 10}}),
        )
        .unwrap(),
    );
    let w = cloneset(20, Some(s("100%")), None);
    let ctx = calculate_batch_context(&r, &w, &[]);
    assert_eq!(
        (ctx.planned_updated_replicas, ctx.desired_updated_replicas),
        (4, 12)
    );
    assert_eq!(ctx.desired_partition, s("40%"));
    let mut sts = w.clone();
    sts.kind = Some(TargetKind::StatefulSet);
    sts.partition = Some(IntOrString::Int(100));
    let ctx = calculate_batch_context(&r, &sts, &[]);
    assert_eq!(
        (ctx.desired_updated_replicas, ctx.desired_partition.clone()),
        (12, IntOrString::Int(18))
    );
    sts.unordered_update = true;
    let ctx = calculate_batch_context(&r, &sts, &[]);
    assert_eq!(ctx.desired_partition, IntOrString::Int(8));
}

#[test]
fn labels_go_from_the_highest_batch_down_and_are_never_removed() {
    let batches = labels::batches(&[IntOrString::Int(2), IntOrString::Int(5)]);
    let ctx = BatchContext {
        rollout_id: "r1".into(),
        current_batch: 1,
        replicas: 10,
        ..BatchContext::default()
    };
    let p = pods(10, 5, &[(0, "1"), (1, "1")]);
    let patches = batch_label_patches(&batches, &ctx, &p, "demo-v2");
    let ids: Vec<_> = patches
        .iter()
        .map(|x| x.body["metadata"]["labels"][keys::ROLLOUT_BATCH_ID].clone())
        .collect();
    assert_eq!(ids, vec![json!("2"), json!("2"), json!("2")]);
    let p = pods(10, 5, &[(0, "1"), (1, "1"), (2, "1")]);
    assert_eq!(batch_label_patches(&batches, &ctx, &p, "demo-v2").len(), 2);
}

/// Drives the executor against a CloneSet that follows its partition at once: the worked
/// example of research §3.12 rows 5–9.
#[test]
fn the_worked_example_moves_the_partition_9_then_50_then_0_percent() {
    let batches = [IntOrString::Int(1), s("50%"), s("100%")];
    let mut release = br(&batches, Some(0));
    let mut w = cloneset(10, None, None);
    let mut seen = Vec::new();
    let mut written = vec![std::collections::BTreeMap::<String, String>::new(); 10];
    for step in 0..3 {
        release.spec.release_plan.batch_partition = Some(step);
        for _ in 0..12 {
            let updated = usize::try_from(w.updated_replicas).unwrap();
            let mut p = pods(10, updated, &[]);
            for (pod, labels) in p.iter_mut().zip(&written) {
                pod.metadata.labels.as_mut().unwrap().extend(labels.clone());
            }
            let out = reconcile(&release, Some(&w), &p, now());
            for patch in &out.pod_patches {
                let i: usize = patch.name[1..].parse().unwrap();
                for (k, v) in patch.body["metadata"]["labels"].as_object().unwrap() {
                    written[i].insert(k.clone(), v.as_str().unwrap().to_owned());
                }
            }
            if let Some(patch) = &out.workload_patch {
                if let Some(c) = patch.pointer(&format!(
                    "/metadata/annotations/{}",
                    keys::BATCH_RELEASE_CONTROL_INFO.replace('/', "~1")
                )) {
                    w.annotations.insert(
                        keys::BATCH_RELEASE_CONTROL_INFO.into(),
                        c.as_str().unwrap().into(),
                    );
                }
                if let Some(part) = patch.pointer("/spec/updateStrategy/partition") {
                    let part: IntOrString = serde_json::from_value(part.clone()).unwrap();
                    seen.push(part.clone());
                    w = cloneset(10, Some(part), w.control_info().map(str::to_owned));
                }
            }
            release.status = Some(out.status);
        }
        let st = release.status.clone().unwrap();
        assert_eq!(st.phase.as_deref(), Some(batch::PROGRESSING));
        let c = st.canary_status.unwrap();
        assert_eq!(
            (c.current_batch, c.batch_state.as_deref()),
            (step, Some(batch::READY))
        );
    }
    assert_eq!(
        seen,
        vec![s("100%"), IntOrString::Int(9), s("50%"), s("0%")]
    );
    release.spec.release_plan.batch_partition = None;
    let out = reconcile(&release, Some(&w), &[], now());
    assert_eq!(out.status.phase.as_deref(), Some(batch::FINALIZING));
    release.status = Some(out.status);
    let out = reconcile(&release, Some(&w), &[], now());
    assert_eq!(out.status.phase.as_deref(), Some(batch::COMPLETED));
    assert_eq!(
        out.workload_patch,
        Some(
            json!({"metadata": {"annotations": {keys::BATCH_RELEASE_CONTROL_INFO: null}},
                    "spec": {"updateStrategy": {"partition": null, "paused": false}}})
        )
    );
}

#[test]
fn the_finalizer_is_added_first_and_removed_only_once_completed_and_deleted() {
    let mut r = br(&[IntOrString::Int(1)], Some(0));
    r.metadata.finalizers = None;
    assert_eq!(
        reconcile(&r, None, &[], now()).finalizer,
        FinalizerChange::Add
    );
    r.metadata.finalizers = Some(vec![keys::BATCH_RELEASE_FINALIZER.into()]);
    r.metadata.deletion_timestamp = Some(now());
    r.status = Some(serde_json::from_value(json!({"phase": "Completed"})).unwrap());
    assert_eq!(
        reconcile(&r, None, &[], now()).finalizer,
        FinalizerChange::Remove
    );
}

#[test]
fn a_template_change_is_intercepted_only_for_a_canary_rollout_naming_the_workload() {
    let rollout: Rollout = serde_json::from_value(json!({
        "metadata": {"name": "rollout-demo", "namespace": "d"},
        "spec": {"workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo"},
                 "strategy": {"canary": {"steps": [{"replicas": 1}]}}}
    }))
    .unwrap();
    let old = json!({"metadata": {"name": "demo", "uid": "u1"}, "spec": {"replicas": 5,
        "template": {"spec": {"containers": [{"name": "c", "image": "v1"}]}}}});
    let mut new = old.clone();
    new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("v2");
    new["metadata"].as_object_mut().unwrap().remove("uid");
    let out = intercept(
        TargetKind::CloneSet,
        &old,
        &new,
        std::slice::from_ref(&rollout),
    )
    .unwrap();
    assert_eq!(out["spec"]["updateStrategy"]["partition"], json!("100%"));
    assert_eq!(
        out["metadata"]["annotations"][keys::ROLLOUT_IN_PROGRESSING],
        json!("{\"rolloutName\":\"rollout-demo\"}")
    );
    assert_eq!(out["metadata"]["uid"], json!("u1"));
    assert!(
        intercept(
            TargetKind::CloneSet,
            &old,
            &old,
            std::slice::from_ref(&rollout)
        )
        .is_none()
    );
    assert!(
        intercept(
            TargetKind::AdvancedStatefulSet,
            &old,
            &new,
            std::slice::from_ref(&rollout)
        )
        .is_none()
    );
}

fn sts_pod(name: &str, revision: &str, ready: bool) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"controller-revision-hash": revision}},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}
    }))
    .unwrap()
}

/// A native StatefulSet has no updatedReadyReplicas: the batch is ready only once the pod on
/// the update revision reports Ready, and the partition is an int (R − P).
#[test]
fn a_statefulset_batch_waits_for_its_updated_pod_to_be_ready() {
    let mut release = br(&[IntOrString::Int(1), s("100%")], Some(0));
    release.spec.workload_ref.as_mut().unwrap().api_version = "apps/v1".into();
    release.spec.workload_ref.as_mut().unwrap().kind = "StatefulSet".into();
    release.spec.release_plan.rollout_id = None;
    let w = WorkloadInfo {
        kind: Some(TargetKind::StatefulSet),
        name: "demo".into(),
        replicas: 4,
        status_replicas: 4,
        updated_replicas: 0,
        current_revision: "demo-1".into(),
        update_revision: "demo-2".into(),
        ..WorkloadInfo::default()
    };
    // Preparing (after the reset) → Initialize: control-info and partition 32767.
    release.status = Some(reconcile(&release, Some(&w), &[], now()).status);
    let out = reconcile(&release, Some(&w), &[], now());
    let patch = out.workload_patch.clone().unwrap();
    assert_eq!(
        patch["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        json!(32767)
    );
    assert!(
        patch["spec"]["updateStrategy"]["rollingUpdate"]
            .get("paused")
            .is_none()
    );
    release.status = Some(out.status);
    let mut w = w;
    w.partition = Some(IntOrString::Int(32767));
    w.annotations.insert(
        keys::BATCH_RELEASE_CONTROL_INFO.into(),
        control_info(&release),
    );
    let out = reconcile(&release, Some(&w), &[], now());
    assert_eq!(
        out.workload_patch,
        Some(json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 3}}}}))
    );
    release.status = Some(out.status);
    w.partition = Some(IntOrString::Int(3));
    w.updated_replicas = 1;
    let unready = [
        sts_pod("demo-3", "demo-2", false),
        sts_pod("demo-0", "demo-1", true),
    ];
    // The refreshed counts are written first, then Verifying finds no ready updated pod.
    for _ in 0..2 {
        release.status = Some(reconcile(&release, Some(&w), &unready, now()).status);
    }
    let c = release.status.clone().unwrap().canary_status.unwrap();
    assert_eq!(c.batch_state.as_deref(), Some(batch::UPGRADING));
    let ready = [
        sts_pod("demo-3", "demo-2", true),
        sts_pod("demo-0", "demo-1", true),
    ];
    for _ in 0..4 {
        release.status = Some(reconcile(&release, Some(&w), &ready, now()).status);
    }
    let c = release.status.clone().unwrap().canary_status.unwrap();
    assert_eq!(
        (c.batch_state.as_deref(), c.updated_ready_replicas),
        (Some(batch::READY), Some(1))
    );
}
