//! The scenario's ops objects: the `logtail` SidecarSet (two revisions), the `web-health`
//! PodProbeMarker, PodUnavailableBudgets and ContainerRecreateRequests, with the annotations
//! and statuses Kruise writes for them.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::{Ctx, SeedObject, SeedStatus, UidRef, UidUse, owned, resource, rfc3339, safe_hash};
use crate::cluster::sim::ids;

/// The pod condition the `web-health` probe writes.
pub const PROBE_CONDITION: &str = "game.kruise.io/healthy";

/// One revision of the `logtail` SidecarSet.
pub(crate) struct SidecarRevision {
    pub image: String,
    /// `kruise.io/sidecarset-hash` of the set at this revision.
    pub hash: String,
    pub hash_without_image: String,
    pub revision_name: String,
    pub revision_hash: String,
}

fn sidecar_containers(image: &str) -> Value {
    json!([{
        "name": "logtail",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "podInjectPolicy": "AfterAppContainer",
        "upgradeStrategy": {"upgradeType": "ColdUpgrade"},
        "shareVolumePolicy": {"type": "disabled"},
    }])
}

/// The two revisions: `logtail:1.0` (old) and `logtail:1.1` (latest).
pub(crate) fn logtail_revisions() -> [SidecarRevision; 2] {
    let without_image = safe_hash(&[&sidecar_containers("").to_string()], 64);
    [
        "registry.example.com/logtail:1.0",
        "registry.example.com/logtail:1.1",
    ]
    .map(|image| {
        let containers = sidecar_containers(image).to_string();
        let revision_hash = safe_hash(&["logtail-revision", &containers], 10);
        SidecarRevision {
            image: image.to_owned(),
            hash: safe_hash(&[&containers], 64),
            hash_without_image: without_image.clone(),
            revision_name: format!("logtail-{revision_hash}"),
            revision_hash,
        }
    })
}

/// The sidecar annotations the injection webhook writes on a pod (at `at`) for `rev`.
pub(crate) fn sidecar_pod_annotations(
    rev: &SidecarRevision,
    at: Timestamp,
) -> Vec<(String, String)> {
    let hash = json!({"logtail": {
        "updateTimestamp": rfc3339(at),
        "hash": rev.hash,
        "sidecarSetName": "logtail",
        "sidecarList": ["logtail"],
        "controllerRevision": rev.revision_name,
    }});
    let without_image = json!({"logtail": {
        "updateTimestamp": rfc3339(at),
        "hash": rev.hash_without_image,
        "sidecarSetName": "logtail",
        "sidecarList": ["logtail"],
    }});
    vec![
        ("kruise.io/sidecarset-hash".into(), hash.to_string()),
        (
            "kruise.io/sidecarset-hash-without-image".into(),
            without_image.to_string(),
        ),
        (
            "kruise.io/sidecarset-injected-list".into(),
            "logtail".into(),
        ),
    ]
}

/// `kruise.io/sidecarset-inplace-update-state` after an in-place sidecar upgrade at `at`.
pub(crate) fn sidecar_inplace_state(
    rev: &SidecarRevision,
    old_image: &str,
    at: Timestamp,
) -> String {
    json!({"logtail": {
        "revision": rev.hash,
        "updateTimestamp": rfc3339(at),
        "lastContainerStatuses": {"logtail": {"imageID": ids::image_id(old_image)}},
    }})
    .to_string()
}

/// The SidecarSet (cluster-scoped) and its two ControllerRevisions (in `kruise-system`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sidecar_set(
    ctx: &Ctx,
    revs: &[SidecarRevision; 2],
    matched: usize,
    updated: usize,
    ready: usize,
    updated_ready: usize,
    out: &mut Vec<SeedObject>,
) {
    let res = resource("apps.kruise.io", "v1alpha1", "SidecarSet", "sidecarsets");
    let latest = &revs[1];
    let annotations = |rev: &SidecarRevision| {
        json!({
            "kruise.io/sidecarset-hash": rev.hash,
            "kruise.io/sidecarset-hash-without-image": rev.hash_without_image,
        })
    };
    out.push(owned(
        res.clone(),
        json!({
            "apiVersion": res.api_version,
            "kind": "SidecarSet",
            "metadata": {"name": "logtail", "labels": {"app": "logtail"}, "annotations": annotations(latest)},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "namespace": ctx.ns,
                "containers": sidecar_containers(&latest.image),
                "updateStrategy": {"type": "RollingUpdate", "partition": matched - updated, "maxUnavailable": 1},
                "revisionHistoryLimit": 10,
            },
        }),
        None,
        SeedStatus::Fixed(json!({
            "observedGeneration": 1,
            "matchedPods": matched,
            "updatedPods": updated,
            "readyPods": ready,
            "updatedReadyPods": updated_ready,
            "latestRevision": latest.revision_name,
            "collisionCount": 0,
        })),
    ));
    for (number, rev) in revs.iter().enumerate() {
        out.push(owned(
            resource("apps", "v1", "ControllerRevision", "controllerrevisions"),
            json!({
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": rev.revision_name,
                    "namespace": "kruise-system",
                    "labels": {"app": "logtail", "kruise.io/sidecarset-name": "logtail",
                               "controller.kubernetes.io/hash": rev.revision_hash},
                    "annotations": annotations(rev),
                },
                "data": {"spec": {"$patch": "replace", "containers": sidecar_containers(&rev.image),
                                   "initContainers": null, "volumes": null,
                                   "imagePullSecrets": null, "patchPodMetadata": null}},
                "revision": number + 1,
            }),
            Some((&res, "", "logtail")),
            SeedStatus::None,
        ));
    }
}

/// The labels the probe's marker policy puts on a pod.
pub(crate) fn probe_labels(healthy: bool) -> Vec<(String, String)> {
    let state = if healthy { "idle" } else { "unhealthy" };
    vec![("gameserver-state".into(), state.into())]
}

/// `web-health`: a PodProbeMarker on the web pods.
pub(crate) fn probe_marker(ctx: &Ctx, matched: usize, out: &mut Vec<SeedObject>) {
    let res = resource(
        "apps.kruise.io",
        "v1alpha1",
        "PodProbeMarker",
        "podprobemarkers",
    );
    out.push(owned(
        res.clone(),
        json!({
            "apiVersion": res.api_version,
            "kind": "PodProbeMarker",
            "metadata": {"name": "web-health", "namespace": ctx.ns},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "probes": [{
                    "name": "healthy",
                    "containerName": "nginx",
                    "probe": {
                        "exec": {"command": ["curl", "-sf", "http://localhost/healthz"]},
                        "initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 1,
                        "successThreshold": 1, "failureThreshold": 3,
                    },
                    "podConditionType": PROBE_CONDITION,
                    "markerPolicy": [
                        {"state": "Succeeded", "labels": {"gameserver-state": "idle"},
                         "annotations": {"controller.kubernetes.io/pod-deletion-cost": "10"}},
                        {"state": "Failed", "labels": {"gameserver-state": "unhealthy"},
                         "annotations": {"controller.kubernetes.io/pod-deletion-cost": "-10"}},
                    ],
                }],
            },
        }),
        None,
        SeedStatus::Fixed(json!({"observedGeneration": 1, "matchedPods": matched})),
    ));
}

/// A PodUnavailableBudget on CloneSet `target` (`spec` holds maxUnavailable or minAvailable).
pub(crate) fn budget(
    ctx: &Ctx,
    name: &str,
    target: &str,
    spec: Value,
    total: usize,
    available: usize,
    out: &mut Vec<SeedObject>,
) {
    let res = resource(
        "policy.kruise.io",
        "v1alpha1",
        "PodUnavailableBudget",
        "podunavailablebudgets",
    );
    let desired = match (spec.get("maxUnavailable"), spec.get("minAvailable")) {
        (Some(Value::String(pct)), _) => {
            let p: usize = pct.trim_end_matches('%').parse().unwrap_or(0);
            total.saturating_sub((p * total).div_ceil(100))
        }
        (Some(n), _) => total.saturating_sub(n.as_u64().unwrap_or(0) as usize),
        (None, Some(n)) => n.as_u64().unwrap_or(0) as usize,
        (None, None) => total,
    };
    let mut full_spec = spec;
    full_spec["targetRef"] =
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": target});
    out.push(owned(
        res.clone(),
        json!({
            "apiVersion": res.api_version,
            "kind": "PodUnavailableBudget",
            "metadata": {"name": name, "namespace": ctx.ns},
            "spec": full_spec,
        }),
        None,
        SeedStatus::Fixed(json!({
            "observedGeneration": 1,
            "totalReplicas": total,
            "desiredAvailable": desired,
            "currentAvailable": available,
            "unavailableAllowed": available.saturating_sub(desired),
            "disruptedPods": {},
            "unavailablePods": {},
        })),
    ));
}

/// A ContainerRecreateRequest of one container of a pod.
pub(crate) struct Crr<'a> {
    pub name: String,
    pub pod: String,
    pub node: String,
    pub container: &'a str,
    /// The container's restartCount before the recreate.
    pub restart_count_before: i32,
    pub at: Timestamp,
    pub completed: bool,
}

pub(crate) fn crr(ctx: &Ctx, crr: Crr) -> SeedObject {
    let res = resource(
        "apps.kruise.io",
        "v1alpha1",
        "ContainerRecreateRequest",
        "containerrecreaterequests",
    );
    let mut labels = json!({
        "crr.apps.kruise.io/pod-uid": "",
        "crr.apps.kruise.io/node-name": crr.node,
    });
    let status = if crr.completed {
        json!({
            "phase": "Completed",
            "completionTime": rfc3339(crr.at + jiff::SignedDuration::from_secs(3)),
            "message": "",
            "containerRecreateStates": [{"name": crr.container, "phase": "Succeeded", "isKilled": true}],
        })
    } else {
        labels["crr.apps.kruise.io/active"] = json!("true");
        json!({
            "phase": "Recreating",
            "containerRecreateStates": [{"name": crr.container, "phase": "Recreating", "isKilled": true}],
        })
    };
    let mut seed = owned(
        res.clone(),
        json!({
            "apiVersion": res.api_version,
            "kind": "ContainerRecreateRequest",
            "metadata": {"name": crr.name, "namespace": ctx.ns, "labels": labels},
            "spec": {
                "podName": crr.pod,
                "containers": [{"name": crr.container,
                                "statusContext": {"containerID": "", "restartCount": crr.restart_count_before}}],
                "strategy": {"failurePolicy": "Fail", "orderedRecreate": false, "minStartedSeconds": 0},
                "activeDeadlineSeconds": 1800,
                "ttlSecondsAfterFinished": 86_400,
            },
        }),
        None,
        SeedStatus::Fixed(status),
    );
    let pod_ref = |pointer: &str, derive| UidRef {
        pointer: pointer.into(),
        kind: "Pod".into(),
        namespace: Some(ctx.ns.clone()),
        name: crr.pod.clone(),
        derive,
    };
    seed.uid_refs.push(pod_ref(
        "/metadata/labels/crr.apps.kruise.io~1pod-uid",
        UidUse::Uid,
    ));
    seed.uid_refs.push(pod_ref(
        "/spec/containers/0/statusContext/containerID",
        UidUse::ContainerId {
            container: crr.container.to_owned(),
            restart_count: crr.restart_count_before,
        },
    ));
    seed
}
