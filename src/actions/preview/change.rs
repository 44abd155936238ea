//! An [`Action`] as the plan API's [`Change`], and the plan input for an action on the object it
//! was prepared on.
//!
//! A template change (set image, undo, a journal revert) gets the revision the controller will
//! give it: the same hash of the same revision data the embedded controllers compute, so the
//! planner compares it with the pods' `controller-revision-hash` exactly as the controller will.

use anyhow::{Result, anyhow};
use k8s_openapi::{
    api::core::v1::{Node, Pod, PodTemplateSpec},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use serde_json::Value;

use super::{ads::ads_workload, asts_workload, cloneset_workload, plan_input};
use crate::{
    actions::{Action, ActionError, ObjectState, Target, intstr, prepare::undo_target},
    api::DaemonSet,
    kruise::{
        cloneset::reconcile::revisions as cloneset_revisions,
        daemonset::reconcile::history,
        plan::{Change, PlanInput, PlanWorkload, WorkloadKind},
        statefulset::reconcile::revisions as statefulset_revisions,
    },
};

const TEMPLATE: &str = "/spec/template";

/// The planner's kind of `target`, for the kinds with a rollout.
pub fn workload_kind(target: &Target) -> Option<WorkloadKind> {
    target.kind.workload
}

/// The plan API's change for `action` on `target` as `state` shows it: Partition →
/// `Change::Partition`, Pause/Resume → `Change::Pause`/`Resume`, SetImage and SetTemplate →
/// `Change::NewRevision` (the revision the controller will make, and whether pods can move to
/// it in place), Undo → `Change::Undo` to the revision the undo restores (the same one
/// [`crate::actions::prepare`] picks). Scale has no change of revision: `Change::Nothing`
/// ([`preview_input`] applies the new replica count and the pods to delete to the workload).
pub fn change_for(
    target: &Target,
    action: &Action,
    state: &ObjectState,
) -> Result<Change, ActionError> {
    match action {
        Action::Partition { value } => Ok(Change::Partition(intstr(value))),
        Action::Pause => Ok(Change::Pause),
        Action::Resume => Ok(Change::Resume),
        Action::Scale { .. } => Ok(Change::Nothing),
        Action::SetImage { images } => {
            let mut template = current_template(target, state)?.clone();
            for (container, image) in images {
                let slot = template
                    .pointer_mut("/spec/containers")
                    .and_then(Value::as_array_mut)
                    .and_then(|cs| cs.iter_mut().find(|c| c["name"] == *container))
                    .ok_or_else(|| {
                        ActionError::Invalid(format!(
                            "{} has no container {container:?}",
                            target.describe()
                        ))
                    })?;
                slot["image"] = Value::String(image.clone());
            }
            new_revision(target, state, &template)
        }
        Action::SetTemplate { template, .. } => new_revision(target, state, template),
        Action::Undo { to_revision } => {
            let current = current_template(target, state)?;
            let rev = undo_target(target, &state.revisions, current, *to_revision)?;
            Ok(Change::Undo {
                to: Some(rev.name.clone()),
            })
        }
        Action::Restart { .. }
        | Action::Protect { .. }
        | Action::Delete
        | Action::Approve { .. } => Err(ActionError::NotApplicable {
            kind: target.describe(),
            what: format!("rollout prediction for {}", action.describe()),
        }),
    }
}

fn current_template<'s>(target: &Target, state: &'s ObjectState) -> Result<&'s Value, ActionError> {
    state
        .object
        .pointer(TEMPLATE)
        .filter(|t| t.is_object())
        .ok_or_else(|| ActionError::NotApplicable {
            kind: target.describe(),
            what: "pod template".to_owned(),
        })
}

/// `Change::NewRevision` for the object with its template replaced by `template`.
fn new_revision(
    target: &Target,
    state: &ObjectState,
    template: &Value,
) -> Result<Change, ActionError> {
    let current = current_template(target, state)?.clone();
    let mut object = state.object.clone();
    if let Some(slot) = object.pointer_mut(TEMPLATE) {
        *slot = template.clone();
    }
    let collision = object
        .pointer("/status/collisionCount")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok());
    let unreadable = |e: serde_json::Error| {
        ActionError::Invalid(format!("cannot read {}: {e}", target.describe()))
    };
    let revision = match workload_kind(target) {
        Some(WorkloadKind::CloneSet) => {
            let cs = crate::api::cloneset::from_served_json(&state.version, object)
                .map_err(unreadable)?;
            cloneset_revisions::new_revision(&cs, 0, collision.unwrap_or(0))
                .metadata
                .name
        }
        Some(WorkloadKind::AdvancedStatefulSet) => {
            let set = crate::api::statefulset::from_served_json(&state.version, object)
                .map_err(unreadable)?;
            statefulset_revisions::new_revision(&set, 0, collision.unwrap_or(0))
                .metadata
                .name
        }
        Some(WorkloadKind::AdvancedDaemonSet) => {
            let ds: DaemonSet = crate::api::daemonset::from_served_json(&state.version, object)
                .map_err(unreadable)?;
            Some(history::template_hash(&ds, collision))
        }
        None => {
            return Err(ActionError::NotApplicable {
                kind: target.describe(),
                what: "rollout".to_owned(),
            });
        }
    };
    Ok(Change::NewRevision {
        revision: revision.unwrap_or_default(),
        in_place_possible: images_only(&current, template),
    })
}

/// Whether two pod templates differ in container images at most (what an in-place update can
/// apply; the controllers decide the same way).
fn images_only(a: &Value, b: &Value) -> bool {
    let spec = |v: &Value| {
        let mut t: PodTemplateSpec = serde_json::from_value(v.clone()).ok()?;
        let mut spec = t.spec.take()?;
        for c in &mut spec.containers {
            c.image = None;
        }
        Some(spec)
    };
    match (spec(a), spec(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The plan input for `action` on `target` as `state` shows it (the object the action was
/// prepared on), with the workload's `pods` and, for an Advanced DaemonSet, the cluster's
/// `nodes`. `now` is the clock in unix seconds.
pub fn preview_input(
    target: &Target,
    action: &Action,
    state: &ObjectState,
    pods: &[Pod],
    nodes: &[Node],
    now: i64,
) -> Result<PlanInput> {
    let (kind, mut workload, meta) = read_workload(target, state, nodes)?;
    let change = change_for(target, action, state)?;
    if let Action::Scale {
        replicas,
        pods: doomed,
    } = action
        && kind != WorkloadKind::AdvancedDaemonSet
    {
        workload.replicas = *replicas;
        if let Some(asts) = &mut workload.asts {
            asts.replicas = *replicas;
        }
        for pod in doomed {
            if !workload.pods_to_delete.contains(pod) {
                workload.pods_to_delete.push(pod.clone());
            }
        }
    }
    Ok(plan_input(workload, &meta, pods, change, now))
}

/// The planner's input for `change` on `target` as read (no action applied to it: what the
/// rollout view asks of the next step, or of nothing), with its pods and nodes.
pub fn live_input(
    target: &Target,
    state: &ObjectState,
    pods: &[Pod],
    nodes: &[Node],
    change: Change,
    now: i64,
) -> Result<PlanInput> {
    let (_, workload, meta) = read_workload(target, state, nodes)?;
    Ok(plan_input(workload, &meta, pods, change, now))
}

/// The workload as the planner reads it, by its kind.
fn read_workload(
    target: &Target,
    state: &ObjectState,
    nodes: &[Node],
) -> Result<(WorkloadKind, PlanWorkload, ObjectMeta)> {
    let kind = workload_kind(target)
        .ok_or_else(|| anyhow!("{} has no rollout to plan", target.describe()))?;
    let (workload, meta) = match kind {
        WorkloadKind::CloneSet => cloneset_workload(&state.version, &state.object)?,
        WorkloadKind::AdvancedStatefulSet => asts_workload(&state.object)?,
        WorkloadKind::AdvancedDaemonSet => ads_workload(&state.object, nodes)?,
    };
    Ok((kind, workload, meta))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use serde_json::json;

    use super::*;
    use crate::{actions::RevisionInfo, api::kinds::parse_kind};

    fn template(image: &str) -> Value {
        json!({
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": image}]},
        })
    }

    fn state(revisions: Vec<RevisionInfo>) -> ObjectState {
        ObjectState {
            version: "v1alpha1".into(),
            plural: "clonesets".into(),
            object: json!({
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "CloneSet",
                "metadata": {"name": "web", "namespace": "demo", "uid": "u1"},
                "spec": {
                    "replicas": 4,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": template("nginx:1.26"),
                    "updateStrategy": {"type": "InPlaceIfPossible", "partition": 2},
                },
                "status": {"replicas": 4, "currentRevision": "web-old", "updateRevision": "web-new"},
            }),
            revisions,
        }
    }

    fn web() -> Target {
        Target::new(parse_kind("cs").expect("kind"), Some("demo"), "web")
    }

    #[test]
    fn simple_actions_map_one_to_one() {
        let s = state(Vec::new());
        let change = |a: Action| change_for(&web(), &a, &s).expect("maps");
        assert_eq!(
            change(Action::Partition {
                value: IntOrString::String("50%".into())
            }),
            Change::Partition("50%".into())
        );
        assert_eq!(change(Action::Pause), Change::Pause);
        assert_eq!(change(Action::Resume), Change::Resume);
        assert_eq!(
            change(Action::Scale {
                replicas: 2,
                pods: vec!["web-a".into()]
            }),
            Change::Nothing
        );
    }

    #[test]
    fn a_new_image_is_the_revision_the_controller_will_name_and_moves_in_place() {
        let s = state(Vec::new());
        let image = |i: &str| Action::SetImage {
            images: vec![("main".into(), i.into())],
        };
        let Change::NewRevision {
            revision,
            in_place_possible,
        } = change_for(&web(), &image("nginx:1.27"), &s).expect("maps")
        else {
            panic!("a new revision");
        };
        assert!(in_place_possible, "only the image differs");
        assert!(
            revision.starts_with("web-") && revision.len() > 4,
            "{revision}"
        );
        // The same template names the same revision; another image another one.
        assert_eq!(
            change_for(&web(), &image("nginx:1.27"), &s),
            Ok(Change::NewRevision {
                revision: revision.clone(),
                in_place_possible: true
            })
        );
        let Ok(Change::NewRevision {
            revision: other, ..
        }) = change_for(&web(), &image("nginx:1.28"), &s)
        else {
            panic!("a new revision");
        };
        assert_ne!(revision, other);
        // What SetTemplate names for the same template is what SetImage named.
        assert_eq!(
            change_for(
                &web(),
                &Action::SetTemplate {
                    template: template("nginx:1.27"),
                    revision: None
                },
                &s
            ),
            Ok(Change::NewRevision {
                revision,
                in_place_possible: true
            })
        );
        let mut env = template("nginx:1.26");
        env["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
        let Ok(Change::NewRevision {
            in_place_possible, ..
        }) = change_for(
            &web(),
            &Action::SetTemplate {
                template: env,
                revision: None,
            },
            &s,
        )
        else {
            panic!("a new revision");
        };
        assert!(!in_place_possible, "an env change recreates");
        assert!(matches!(
            change_for(&web(), &image_of("nope"), &s),
            Err(ActionError::Invalid(m)) if m.contains("no container \"nope\"")
        ));
    }

    fn image_of(container: &str) -> Action {
        Action::SetImage {
            images: vec![(container.into(), "x:1".into())],
        }
    }

    #[test]
    fn undo_goes_to_the_revision_the_action_restores() {
        let revisions = vec![
            RevisionInfo {
                name: "web-old".into(),
                number: 1,
                template: template("nginx:1.25"),
            },
            RevisionInfo {
                name: "web-new".into(),
                number: 2,
                template: template("nginx:1.26"),
            },
        ];
        let s = state(revisions);
        assert_eq!(
            change_for(&web(), &Action::Undo { to_revision: None }, &s),
            Ok(Change::Undo {
                to: Some("web-old".into())
            })
        );
        assert!(matches!(
            change_for(
                &web(),
                &Action::Undo {
                    to_revision: Some(2)
                },
                &s
            ),
            Err(ActionError::NoChange(_))
        ));
    }

    #[test]
    fn the_preview_input_carries_the_change_and_a_scale_down() {
        let s = state(Vec::new());
        let input = preview_input(
            &web(),
            &Action::Scale {
                replicas: 2,
                pods: vec!["web-a".into(), "web-b".into()],
            },
            &s,
            &[],
            &[],
            0,
        )
        .expect("input");
        assert_eq!(input.change, Change::Nothing);
        assert_eq!(input.workload.replicas, 2);
        assert_eq!(input.workload.pods_to_delete, vec!["web-a", "web-b"]);
        let input = preview_input(&web(), &Action::Pause, &s, &[], &[], 0).expect("input");
        assert_eq!((input.change, input.workload.replicas), (Change::Pause, 4));
        let pod = Target::new(parse_kind("pod").expect("kind"), Some("demo"), "p");
        assert!(preview_input(&pod, &Action::Pause, &s, &[], &[], 0).is_err());
    }
}
