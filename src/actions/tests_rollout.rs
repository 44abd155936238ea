//! The actions on a Kruise Rollout and the Rollout guard of workload actions, on hand-made
//! objects: the exact writes (path, content type, body), the refusals, the notes.

use serde_json::{Value, json};

use super::{
    guard::{RolloutGuard, rollout_guard},
    rollout::{Approval, approval, prepare_undo, workload_of},
    *,
};
use crate::api::{kinds, rollout::Rollout};

fn rollout_target() -> Target {
    Target::new(&kinds::ROLLOUT, Some("demo"), "web-rollout")
}

fn cs_target() -> Target {
    Target::new(&kinds::CLONESET, Some("demo"), "web")
}

/// A Rollout of demo/web, steps 1, 50% (60 s), 100%, at `step` in `state`.
fn rollout(step: i32, step_state: &str) -> Value {
    json!({
        "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
        "metadata": {"name": "web-rollout", "namespace": "demo", "resourceVersion": "77",
                     "generation": 1},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {"canary": {"steps": [
                {"replicas": 1},
                {"replicas": "50%", "pause": {"duration": 60}},
                {"replicas": "100%"},
            ]}},
        },
        "status": {
            "observedGeneration": 1,
            "phase": "Progressing",
            "conditions": [{"type": "Progressing", "status": "True", "reason": "InRolling"}],
            "canaryStatus": {"currentStepIndex": step, "nextStepIndex": step + 1,
                             "currentStepState": step_state, "stableRevision": "5d8f6c",
                             "canaryRevision": "7b9c4d", "podTemplateHash": "7b9c4d",
                             "lastUpdateTime": "2026-01-01T00:00:00Z"},
        },
    })
}

fn rollout_state(object: Value) -> ObjectState {
    ObjectState {
        version: "v1beta1".into(),
        plural: "rollouts".into(),
        object,
        revisions: Vec::new(),
    }
}

fn approve(step: i32, object: Value) -> Result<Prepared, ActionError> {
    prepare(
        &rollout_target(),
        &Action::Approve { step },
        &rollout_state(object),
    )
}

fn refused(result: Result<Prepared, ActionError>) -> String {
    match result {
        Err(e) => e.to_string(),
        Ok(p) => panic!("not refused: {:?}", p.request),
    }
}

#[test]
fn an_approval_is_kubectl_kruises_status_merge_patch_pinned_by_resource_version() {
    let p = approve(1, rollout(1, "StepPaused")).expect("prepared");
    assert_eq!(p.request.verb, "PATCH");
    assert_eq!(
        p.request.path,
        "/apis/rollouts.kruise.io/v1beta1/namespaces/demo/rollouts/web-rollout/status"
    );
    assert_eq!(p.request.content_type, "application/merge-patch+json");
    assert_eq!(
        p.request.body,
        json!({"metadata": {"resourceVersion": "77"},
               "status": {"canaryStatus": {"currentStepState": "StepReady"}}})
    );
    assert_eq!(p.inverse, None);
    assert_eq!(p.changes, vec!["step 1/3 (1 pod): StepPaused → StepReady"]);
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("then starts step 2/3: 50% on the new revision")),
        "{:?}",
        p.notes
    );
    // Step 2 has a timed pause: approving skips the rest of it; the last step completes.
    let p = approve(2, rollout(2, "StepPaused")).expect("prepared");
    assert!(p.notes.iter().any(|n| n.contains("60s after it paused")));
    assert!(p.notes.iter().any(|n| n.contains("starts step 3/3: 100%")));
    let mut last = rollout(3, "StepPaused");
    last["status"]["canaryStatus"]["nextStepIndex"] = json!(-1);
    let p = approve(3, last).expect("prepared");
    assert!(p.notes.iter().any(|n| n.contains("this is the last step")));
}

#[test]
fn an_approval_is_refused_unless_the_step_the_user_saw_waits_for_it() {
    let line = refused(approve(1, rollout(1, "StepUpgrade")));
    assert!(
        line.contains("step 1/3 is StepUpgrade, not StepPaused"),
        "{line}"
    );
    let line = refused(approve(1, rollout(2, "StepPaused")));
    assert!(
        line.contains("at step 2/3 (StepPaused) now, not at step 1 you saw"),
        "{line}"
    );
    let mut healthy = rollout(3, "Completed");
    healthy["status"]["phase"] = json!("Healthy");
    let line = refused(approve(3, healthy));
    assert!(line.contains("it is Healthy, not Progressing"), "{line}");
    let mut paused = rollout(1, "StepPaused");
    paused["status"]["conditions"][0]["reason"] = json!("Paused");
    let line = refused(approve(1, paused));
    assert!(line.contains("resume it first"), "{line}");
    let mut finalising = rollout(3, "Completed");
    finalising["status"]["conditions"][0]["reason"] = json!("Finalising");
    let line = refused(approve(3, finalising));
    assert!(line.contains("Finalising (Progressing reason)"), "{line}");
    let mut none = rollout(1, "StepPaused");
    none["status"]
        .as_object_mut()
        .expect("status")
        .remove("canaryStatus");
    let line = refused(approve(1, none));
    assert!(
        line.contains("no need to approve: not in canary or blue-green progress"),
        "{line}"
    );
    assert!(line.starts_with("cannot approve Rollout demo/web-rollout"));
}

#[test]
fn an_approval_holds_once_the_step_moved_on_and_is_resent_when_wiped() {
    assert_eq!(approval(2, &rollout(2, "StepPaused")), Approval::Wiped);
    assert_eq!(
        approval(2, &rollout(2, "StepReady")),
        Approval::MovedOn("step 2/3 (StepReady)".into())
    );
    assert_eq!(
        approval(2, &rollout(3, "StepUpgrade")),
        Approval::MovedOn("step 3/3 (StepUpgrade)".into())
    );
    // Paused again at a later step: that is a new step, not the approval lost.
    assert!(matches!(
        approval(2, &rollout(3, "StepPaused")),
        Approval::MovedOn(_)
    ));
}

#[test]
fn pause_and_resume_are_merge_patches_of_the_strategy() {
    let p = prepare(
        &rollout_target(),
        &Action::Pause,
        &rollout_state(rollout(2, "StepPaused")),
    )
    .expect("prepared");
    assert_eq!(
        p.request.path,
        "/apis/rollouts.kruise.io/v1beta1/namespaces/demo/rollouts/web-rollout"
    );
    assert_eq!(p.request.content_type, "application/merge-patch+json");
    assert_eq!(
        p.request.body,
        json!({"spec": {"strategy": {"paused": true}}})
    );
    assert_eq!(p.inverse, Some(Action::Resume));
    assert!(p.notes[0].contains("the batch in flight still finishes"));
    let mut paused = rollout(2, "StepPaused");
    paused["spec"]["strategy"]["paused"] = json!(true);
    let r = prepare(
        &rollout_target(),
        &Action::Resume,
        &rollout_state(paused.clone()),
    )
    .expect("prepared");
    assert_eq!(
        r.request.body,
        json!({"spec": {"strategy": {"paused": false}}})
    );
    assert_eq!(r.inverse, Some(Action::Pause));
    let line = refused(prepare(
        &rollout_target(),
        &Action::Pause,
        &rollout_state(paused),
    ));
    assert!(
        line.contains("Rollout demo/web-rollout is already paused"),
        "{line}"
    );
    let line = refused(prepare(
        &rollout_target(),
        &Action::Resume,
        &rollout_state(rollout(2, "StepPaused")),
    ));
    assert!(line.contains("is not paused"), "{line}");
}

#[test]
fn other_actions_are_not_for_a_rollout_and_approve_is_only_for_one() {
    let line = refused(prepare(
        &rollout_target(),
        &Action::Scale {
            replicas: 3,
            pods: vec![],
        },
        &rollout_state(rollout(1, "StepPaused")),
    ));
    assert!(
        line.contains("Rollout demo/web-rollout has no scale"),
        "{line}"
    );
    let cs = ObjectState {
        version: "v1alpha1".into(),
        plural: "clonesets".into(),
        object: json!({"metadata": {"name": "web"}}),
        revisions: Vec::new(),
    };
    let line = refused(prepare(&cs_target(), &Action::Approve { step: 1 }, &cs));
    assert!(
        line.contains("CloneSet demo/web has no approve step 1"),
        "{line}"
    );
}

fn template(image: &str) -> Value {
    json!({"metadata": {"labels": {"app": "web"}},
           "spec": {"containers": [{"name": "nginx", "image": image}]}})
}

/// demo/web mid-release: v1 (web-5d8f6c, revision 1) stable, v2 (web-7b9c4d, revision 2) new.
fn cloneset_mid_release(annotations: Value) -> ObjectState {
    ObjectState {
        version: "v1alpha1".into(),
        plural: "clonesets".into(),
        object: json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "demo", "resourceVersion": "41",
                         "annotations": annotations},
            "spec": {"replicas": 10, "template": template("nginx:2"),
                     "updateStrategy": {"partition": 9}},
            "status": {"currentRevision": "web-5d8f6c", "updateRevision": "web-7b9c4d"},
        }),
        revisions: vec![
            RevisionInfo {
                name: "web-5d8f6c".into(),
                number: 1,
                template: template("nginx:1"),
            },
            RevisionInfo {
                name: "web-7b9c4d".into(),
                number: 2,
                template: template("nginx:2"),
            },
        ],
    }
}

#[test]
fn a_rollouts_undo_reverts_the_workload_to_the_stable_revision_then_resumes() {
    let object = rollout(2, "StepPaused");
    assert_eq!(
        workload_of(&rollout_target(), &object).expect("workload"),
        cs_target()
    );
    let cs = cloneset_mid_release(json!({}));
    let p = prepare_undo(
        &rollout_target(),
        &rollout_state(object.clone()),
        &cs_target(),
        &cs,
        None,
    )
    .expect("prepared");
    assert_eq!(p.target, cs_target());
    assert_eq!(
        p.request.path,
        "/apis/apps.kruise.io/v1alpha1/namespaces/demo/clonesets/web"
    );
    assert_eq!(p.request.content_type, "application/json-patch+json");
    let mut patched = cs.object.clone();
    let patch: json_patch::Patch = serde_json::from_value(p.request.body.clone()).expect("patch");
    json_patch::patch(&mut patched, &patch).expect("applies");
    assert_eq!(patched["spec"]["template"], template("nginx:1"));
    assert!(
        p.notes[0].starts_with("fast rollback: the Rollout cancels, its BatchRelease releases"),
        "{:?}",
        p.notes
    );
    assert!(p.notes[0].contains("the CloneSet rolls every new pod back"));
    assert!(p.then.is_empty(), "not paused: nothing after the write");
    assert!(matches!(p.inverse, Some(Action::SetTemplate { .. })));
    assert!(
        p.action
            .describe()
            .contains("web-5d8f6c (revision 1, the stable one)")
    );

    // Paused, in batches: resumed after the write, and said so.
    let mut paused = object.clone();
    paused["spec"]["strategy"]["paused"] = json!(true);
    paused["metadata"]["annotations"] = json!({"rollouts.kruise.io/rollback-in-batch": "true"});
    let p = prepare_undo(
        &rollout_target(),
        &rollout_state(paused),
        &cs_target(),
        &cs,
        None,
    )
    .expect("prepared");
    assert_eq!(
        p.notes[0],
        "rollback in batches: the Rollout restarts at step 1 with the stable revision"
    );
    assert_eq!(p.then.len(), 1);
    assert_eq!(p.then[0].target, rollout_target());
    assert_eq!(
        p.then[0].request.body,
        json!({"spec": {"strategy": {"paused": false}}})
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("then Rollout demo/web-rollout is resumed"))
    );
}

#[test]
fn a_template_change_on_a_workload_with_a_rollout_id_changes_it_too() {
    let cs = cloneset_mid_release(json!({"rollouts.kruise.io/rollout-id": "v2"}));
    let p = prepare_undo(
        &rollout_target(),
        &rollout_state(rollout(2, "StepPaused")),
        &cs_target(),
        &cs,
        None,
    )
    .expect("prepared");
    let mut patched = cs.object.clone();
    let patch: json_patch::Patch = serde_json::from_value(p.request.body.clone()).expect("patch");
    json_patch::patch(&mut patched, &patch).expect("applies");
    let id = patched["metadata"]["annotations"]["rollouts.kruise.io/rollout-id"]
        .as_str()
        .expect("an id");
    assert_ne!(id, "v2");
    assert!(
        p.changes
            .iter()
            .any(|c| c == &format!("rollout-id v2 → {id}"))
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("rollout-id annotation changes"))
    );
    // The same on an image change; none without the annotation.
    let set = prepare(
        &cs_target(),
        &Action::SetImage {
            images: vec![("nginx".into(), "nginx:3".into())],
        },
        &cs,
    )
    .expect("prepared");
    assert!(
        set.changes
            .iter()
            .any(|c| c.starts_with("rollout-id v2 → "))
    );
    let plain = prepare(
        &cs_target(),
        &Action::SetImage {
            images: vec![("nginx".into(), "nginx:3".into())],
        },
        &cloneset_mid_release(json!({})),
    )
    .expect("prepared");
    assert!(!plain.changes.iter().any(|c| c.starts_with("rollout-id")));
}

fn rollouts(object: Value) -> Vec<Rollout> {
    vec![serde_json::from_value(object).expect("a Rollout")]
}

#[test]
fn direct_edits_of_what_a_releasing_rollout_owns_are_refused_naming_it() {
    let cs = cloneset_mid_release(json!({}));
    let rs = rollouts(rollout(2, "StepPaused"));
    let partition = Action::Partition {
        value: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(0),
    };
    assert_eq!(
        rollout_guard(&cs_target(), &partition, &cs.object, &rs),
        RolloutGuard::Refused(
            "refused: CloneSet demo/web is released by Rollout demo/web-rollout (step 2/3, \
             StepPaused); approve, pause or undo the Rollout instead (kruise-tui rollout \
             approve rollout/web-rollout)"
                .into()
        )
    );
    match rollout_guard(&cs_target(), &Action::Pause, &cs.object, &rs) {
        RolloutGuard::Refused(l) => {
            assert!(l.ends_with("(kruise-tui rollout pause rollout/web-rollout)"))
        }
        other => panic!("{other:?}"),
    }
    // An image change is how a release starts: allowed, with a note.
    let image = Action::SetImage {
        images: vec![("nginx".into(), "nginx:3".into())],
    };
    assert!(matches!(
        rollout_guard(&cs_target(), &image, &cs.object, &rs),
        RolloutGuard::Note(n) if n.contains("Rollout demo/web-rollout is mid-release (step 2/3, StepPaused)")
    ));
    // A Healthy Rollout, no annotation: the partition is the workload's own; a template change
    // is intercepted.
    let mut healthy = rollout(3, "Completed");
    healthy["status"]["phase"] = json!("Healthy");
    let rs = rollouts(healthy.clone());
    assert_eq!(
        rollout_guard(&cs_target(), &partition, &cs.object, &rs),
        RolloutGuard::Free
    );
    assert_eq!(
        rollout_guard(&cs_target(), &image, &cs.object, &rs),
        RolloutGuard::Note(
            "Rollout demo/web-rollout intercepts this change: no pod moves until the Rollout's \
             step 1"
                .into()
        )
    );
    // ... but the BatchRelease's control-info on the workload means it is held.
    let held = cloneset_mid_release(
        json!({"batchrelease.rollouts.kruise.io/control-info": "{\"name\":\"web-rollout\"}"}),
    );
    assert!(matches!(
        rollout_guard(&cs_target(), &partition, &held.object, &rs),
        RolloutGuard::Refused(_)
    ));
    // A disabled Rollout, or one of another workload, controls nothing.
    let mut disabled = healthy.clone();
    disabled["status"]["phase"] = json!("Disabled");
    assert_eq!(
        rollout_guard(&cs_target(), &partition, &held.object, &rollouts(disabled)),
        RolloutGuard::Free
    );
    let other = Target::new(&kinds::CLONESET, Some("demo"), "api");
    assert_eq!(
        rollout_guard(&other, &partition, &held.object, &rs),
        RolloutGuard::Free
    );
}
