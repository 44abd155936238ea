//! The action layer on hand-made objects: the exact patches, their pins, inverses, rechecks.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use super::*;

fn cloneset() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "demo", "resourceVersion": "41"},
        "spec": {
            "replicas": 10,
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "nginx", "image": "nginx:1.25"}, {"name": "logtail", "image": "logtail:1"}]}},
            "updateStrategy": {"partition": 6, "maxUnavailable": 2},
        },
    })
}

fn target(kind: &str) -> Target {
    Target {
        kind: crate::api::kinds::find("apps.kruise.io", kind).expect("a Kruise kind"),
        namespace: Some("demo".to_owned()),
        name: "web".to_owned(),
    }
}

fn state(object: Value, version: &str, plural: &str) -> ObjectState {
    ObjectState {
        version: version.to_owned(),
        plural: plural.to_owned(),
        object,
        revisions: Vec::new(),
    }
}

fn cs_state() -> ObjectState {
    state(cloneset(), "v1alpha1", "clonesets")
}

#[test]
fn a_partition_is_a_pinned_replace_with_its_inverse() {
    let p = prepare(
        &target("CloneSet"),
        &Action::Partition {
            value: IntOrString::Int(3),
        },
        &cs_state(),
    )
    .expect("prepared");
    assert_eq!(p.request.verb, "PATCH");
    assert_eq!(
        p.request.path,
        "/apis/apps.kruise.io/v1alpha1/namespaces/demo/clonesets/web"
    );
    assert_eq!(p.request.content_type, "application/json-patch+json");
    assert_eq!(
        p.request.body,
        json!([
            {"op": "test", "path": "/spec/updateStrategy/partition", "value": 6},
            {"op": "replace", "path": "/spec/updateStrategy/partition", "value": 3},
        ])
    );
    assert_eq!(p.changes, ["partition 6 → 3"]);
    assert_eq!(
        p.inverse,
        Some(Action::Partition {
            value: IntOrString::Int(6)
        })
    );
    assert!(p.notes.is_empty(), "lowering needs no rollback warning");
    let up = prepare(
        &target("CloneSet"),
        &Action::Partition {
            value: IntOrString::String("90%".into()),
        },
        &cs_state(),
    )
    .expect("prepared");
    assert!(
        up.notes[0].contains("CloneSetPartitionRollback"),
        "{:?}",
        up.notes
    );
}

#[test]
fn bad_partitions_are_refused_with_the_reason() {
    for (value, why) in [
        (IntOrString::String("150%".into()), "over 100%"),
        (IntOrString::Int(-1), "negative"),
        (IntOrString::String("abc".into()), "not a number"),
        (IntOrString::Int(11), "more than the 10 replicas"),
    ] {
        let err = prepare(
            &target("CloneSet"),
            &Action::Partition { value },
            &cs_state(),
        )
        .expect_err("refused");
        assert!(err.to_string().contains(why), "{err}");
    }
    let asts = state(cloneset(), "v1beta1", "statefulsets");
    let err = prepare(
        &target("StatefulSet"),
        &Action::Partition {
            value: IntOrString::String("50%".into()),
        },
        &asts,
    )
    .expect_err("percent refused");
    assert!(err.to_string().contains("not a percent"), "{err}");
}

#[test]
fn an_absent_field_is_added_with_its_parents_under_a_resource_version_pin() {
    let mut asts = cloneset();
    asts["spec"]["updateStrategy"] = json!({"type": "RollingUpdate"});
    let p = prepare(
        &target("StatefulSet"),
        &Action::Pause,
        &state(asts, "v1beta1", "statefulsets"),
    )
    .expect("prepared");
    assert_eq!(
        p.request.body,
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "41"},
            {"op": "add", "path": "/spec/updateStrategy/rollingUpdate", "value": {"paused": true}},
        ])
    );
    assert_eq!(p.inverse, Some(Action::Resume));
    let again = prepare(&target("StatefulSet"), &Action::Resume, &cs_state());
    assert!(matches!(again, Err(ActionError::NoChange(_))));
}

#[test]
fn images_by_container_name_and_unknown_containers_are_named() {
    let p = prepare(
        &target("CloneSet"),
        &Action::SetImage {
            images: vec![("logtail".into(), "logtail:2".into())],
        },
        &cs_state(),
    )
    .expect("prepared");
    assert_eq!(
        p.request.body,
        json!([
            {"op": "test", "path": "/spec/template/spec/containers/1/image", "value": "logtail:1"},
            {"op": "replace", "path": "/spec/template/spec/containers/1/image", "value": "logtail:2"},
        ])
    );
    assert_eq!(
        p.inverse,
        Some(Action::SetImage {
            images: vec![("logtail".into(), "logtail:1".into())]
        })
    );
    let err = prepare(
        &target("CloneSet"),
        &Action::SetImage {
            images: vec![("app".into(), "x".into())],
        },
        &cs_state(),
    )
    .expect_err("no such container");
    assert!(
        err.to_string().contains("containers: nginx, logtail"),
        "{err}"
    );
}

#[test]
fn undo_replaces_the_whole_template_and_warns_about_the_partition() {
    let mut s = cs_state();
    let current = s.object["spec"]["template"].clone();
    let mut old = current.clone();
    old["spec"]["containers"][0]["image"] = json!("nginx:1.24");
    s.revisions = vec![
        RevisionInfo {
            name: "web-old".into(),
            number: 1,
            template: old.clone(),
        },
        RevisionInfo {
            name: "web-new".into(),
            number: 2,
            template: current.clone(),
        },
    ];
    let p = prepare(&target("CloneSet"), &Action::Undo { to_revision: None }, &s).expect("undo");
    assert_eq!(
        p.request.body,
        json!([
            {"op": "test", "path": "/spec/template", "value": current},
            {"op": "replace", "path": "/spec/template", "value": old},
        ])
    );
    assert!(
        p.changes
            .iter()
            .any(|c| c == "spec.containers[nginx].image: nginx:1.25 → nginx:1.24"),
        "{:?}",
        p.changes
    );
    assert!(
        p.notes[0].contains("partition (6) still applies"),
        "{:?}",
        p.notes
    );
    assert_eq!(
        p.inverse,
        Some(Action::SetTemplate {
            template: current,
            revision: None
        })
    );
    let err = prepare(
        &target("CloneSet"),
        &Action::Undo {
            to_revision: Some(7),
        },
        &s,
    )
    .expect_err("no such revision");
    assert!(err.to_string().contains("revisions: 1, 2"), "{err}");
}

#[test]
fn scale_with_named_pods_only_for_clonesets() {
    let p = prepare(
        &target("CloneSet"),
        &Action::Scale {
            replicas: 8,
            pods: vec!["web-a".into(), "web-b".into()],
        },
        &cs_state(),
    )
    .expect("prepared");
    assert_eq!(
        p.request.body,
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "41"},
            {"op": "add", "path": "/spec/scaleStrategy", "value": {"podsToDelete": ["web-a", "web-b"]}},
            {"op": "test", "path": "/spec/replicas", "value": 10},
            {"op": "replace", "path": "/spec/replicas", "value": 8},
        ])
    );
    let ads = state(cloneset(), "v1alpha1", "daemonsets");
    let err = prepare(
        &target("DaemonSet"),
        &Action::Scale {
            replicas: 2,
            pods: vec![],
        },
        &ads,
    )
    .expect_err("no replicas");
    assert!(err.to_string().contains("one pod per node"), "{err}");
}

#[test]
fn recheck_tells_a_moved_resource_version_from_a_changed_field() {
    let s = cs_state();
    let p = prepare(
        &target("CloneSet"),
        &Action::Partition {
            value: IntOrString::Int(3),
        },
        &s,
    )
    .expect("prepared");
    let mut fresh = s.object.clone();
    fresh["metadata"]["resourceVersion"] = json!("42");
    fresh["spec"]["replicas"] = json!(12);
    assert_eq!(recheck(&p, &s.object, &fresh), Recheck::Same);
    fresh["spec"]["updateStrategy"]["partition"] = json!(5);
    assert_eq!(
        recheck(&p, &s.object, &fresh),
        Recheck::Changed(
            "CloneSet demo/web changed meanwhile: updateStrategy.partition changed from 6 to 5"
                .into()
        )
    );
}

#[test]
fn v1beta1_clonesets_keep_the_strategy_under_rolling_update() {
    let mut obj = cloneset();
    obj["spec"]["updateStrategy"] = json!({"rollingUpdate": {"partition": "50%"}});
    let p = prepare(
        &target("CloneSet"),
        &Action::Pause,
        &state(obj, "v1beta1", "clonesets"),
    )
    .expect("prepared");
    assert_eq!(
        p.request.body[1],
        json!({"op": "add", "path": "/spec/updateStrategy/rollingUpdate/paused", "value": true})
    );
}

#[test]
fn an_advanced_cron_job_pauses_its_schedule() {
    let acj = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
        "metadata": {"name": "web", "namespace": "demo", "resourceVersion": "7"},
        "spec": {"schedule": "0 9 * * *", "template": {}},
    });
    let p = prepare(
        &target("AdvancedCronJob"),
        &Action::Pause,
        &state(acj.clone(), "v1alpha1", "advancedcronjobs"),
    )
    .expect("prepared");
    assert_eq!(
        p.request.body,
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
            {"op": "add", "path": "/spec/paused", "value": true},
        ])
    );
    assert_eq!(
        p.request.path,
        "/apis/apps.kruise.io/v1alpha1/namespaces/demo/advancedcronjobs/web"
    );
    assert_eq!(p.changes, vec!["paused false → true".to_owned()]);
    assert_eq!(p.inverse, Some(Action::Resume));
    let err = prepare(
        &target("AdvancedCronJob"),
        &Action::Resume,
        &state(acj, "v1alpha1", "advancedcronjobs"),
    )
    .expect_err("already running");
    assert_eq!(
        err,
        ActionError::NoChange("the schedule is already running".to_owned())
    );
}
