//! Evaluators for the Advanced StatefulSet files of v1.9.0's changes: statefulset-parallel (S1,
//! one reconcile pass with a Failed pod) and statefulset-pvc-labels (S2, the claims' labels).
//! Both run at v1.9.0 and v1.8.4 ([`at_both_versions`]).

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::apis::meta::v1::Time,
};
use serde_json::{Value, json};

use kruise_tui::{
    api::StatefulSet,
    kruise::{
        FeatureGates,
        cloneset::reconcile::revisions::template_of,
        statefulset::reconcile::{self, Input, Op, Why, pods, revisions},
    },
};

use super::super::common::{input, parse};
use super::daemonset::at_both_versions;
use super::{int, str_field};

/// The set `web` (selector and template label `app: web`) with `image`, over `input`'s fields.
fn set_of(input: &Value, image: &str) -> Result<StatefulSet, String> {
    let mut scale = json!({});
    if let Some(v) = input.get("scaleMaxUnavailable").filter(|v| !v.is_null()) {
        scale["maxUnavailable"] = v.clone();
    }
    parse(
        "statefulset",
        &json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "u-web", "generation": 2},
            "spec": {
                "replicas": int(input, "replicas")?,
                "podManagementPolicy": str_field(input, "podManagementPolicy")?,
                "selector": {"matchLabels": {"app": "web"}},
                "scaleStrategy": scale,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                    "maxUnavailable": input.get("maxUnavailable").cloned().unwrap_or(json!(1)),
                }},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "c", "image": image}]}},
            },
        }),
    )
}

fn name_of(rev: &ControllerRevision) -> &str {
    rev.metadata.name.as_deref().unwrap_or_default()
}

/// A pod of `set` at `ordinal` on `rev`, in `phase` (Ready when `ready`) since t=0.
fn pod_of(set: &StatefulSet, rev: &ControllerRevision, p: &Value) -> Result<Pod, String> {
    let ordinal = int(p, "ordinal")?;
    let phase = str_field(p, "phase")?;
    let ready = p.get("ready").and_then(Value::as_bool).unwrap_or(false);
    let template = template_of(rev).unwrap_or_default();
    let mut pod = pods::new_pod(
        set,
        &template,
        name_of(rev),
        ordinal,
        "Normal",
        &FeatureGates::new(),
        0,
    );
    pod.metadata.uid = Some(format!("uid-{ordinal}"));
    pod.metadata.resource_version = Some("1".to_owned());
    pod.metadata.creation_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
    let image = template
        .spec
        .and_then(|s| s.containers.first().and_then(|c| c.image.clone()))
        .unwrap_or_default();
    let status = if ready { "True" } else { "False" };
    pod.status = Some(parse(
        "pod status",
        &json!({
            "phase": phase,
            "conditions": [
                {"type": "Ready", "status": status, "lastTransitionTime": "1970-01-01T00:00:00Z"},
                {"type": "InPlaceUpdateReady", "status": "True",
                 "lastTransitionTime": "1970-01-01T00:00:00Z"}],
            "containerStatuses": [{"name": "c", "image": image, "imageID": format!("id-{image}"),
                                   "ready": ready, "restartCount": 0}],
        }),
    )?);
    Ok(pod)
}

/// One write as the vectors name it: `<verb> <pod>`.
fn write_name(w: &reconcile::PodWrite) -> String {
    let verb = match (&w.op, &w.why) {
        (Op::Create { .. }, _) => "create",
        (Op::Claims { .. }, _) => "claims",
        (Op::Delete { .. }, _) => "delete",
        (Op::Update { .. }, Why::InPlaceUpdate { .. }) => "inPlaceUpdate",
        (Op::Update { .. }, _) => "update",
    };
    format!("{verb} {}", w.name)
}

pub fn statefulset_parallel(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    if op != Some("parallelPass") {
        return Err(format!("unknown op {op:?} for statefulset-parallel"));
    }
    // The update revision has image v2; pods on "current" run v1.
    let set = set_of(input, "web:v2")?;
    let update = revisions::new_revision(&set, 2, 0);
    let old_set = set_of(input, "web:v1")?;
    let old = revisions::new_revision(&old_set, 1, 0);
    let listed = input
        .get("pods")
        .and_then(Value::as_array)
        .ok_or("input.pods is missing")?;
    let mut pods = Vec::new();
    let mut any_current = false;
    for p in listed {
        let on_current = str_field(p, "revision")? == "current";
        any_current |= on_current;
        let (s, rev) = if on_current {
            (&old_set, &old)
        } else {
            (&set, &update)
        };
        pods.push(pod_of(s, rev, p)?);
    }
    let current = if any_current { &old } else { &update };
    let revisions = vec![old.clone(), update.clone()];
    let gates = FeatureGates::new();
    at_both_versions(case, |version| {
        let out = reconcile::reconcile(&Input {
            set: &set,
            pods: &pods,
            claims: &[],
            revisions: &revisions,
            current,
            update: &update,
            collision_count: 0,
            label_selector: "app=web".to_owned(),
            gates: &gates,
            version,
            now: 100,
        });
        if !out.errors.is_empty() {
            return Err(format!("reconcile errors: {:?}", out.errors));
        }
        let writes: Vec<String> = out.pods.iter().map(write_name).collect();
        Ok(json!({ "writes": writes }))
    })
}

pub fn statefulset_pvc_labels(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    if op != Some("pvcLabels") {
        return Err(format!("unknown op {op:?} for statefulset-pvc-labels"));
    }
    let mut template = json!({"metadata": {"name": "data"}});
    if let Some(labels) = input.get("templateLabels").filter(|v| !v.is_null()) {
        template["metadata"]["labels"] = labels.clone();
    }
    let set: StatefulSet = parse(
        "statefulset",
        &json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {
                "selector": {"matchLabels": input.get("selectorMatchLabels").cloned()
                    .unwrap_or(Value::Null)},
                "volumeClaimTemplates": [template],
            },
        }),
    )?;
    at_both_versions(case, |version| {
        let claims = pods::claims(&set, 1, version);
        let claim = claims.get("data").ok_or("no claim for template data")?;
        Ok(json!({
            "name": claim.metadata.name,
            "labels": claim.metadata.labels,
        }))
    })
}
