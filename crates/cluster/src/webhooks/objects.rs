//! Kruise's object webhooks: SidecarSet defaulting (`msidecarset.kb.io`) and validation
//! (`vsidecarset.kb.io`), SidecarSet injection into pods at CREATE (`mpod.kb.io`),
//! ContainerRecreateRequest defaulting + validation (`mcontainerrecreaterequest.kb.io`, which
//! reads the pod and its node from the store) and PodProbeMarker validation
//! (`vpodprobemarker.kb.io`).

use std::sync::Arc;

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{Node, Pod},
};

use super::{Hook, decode, list_typed, mutated, namespace_labels};
use crate::kruise::{
    FeatureGates,
    admission::json_patch,
    crr::{
        ContainerRecreateRequest,
        admission::{Lookup, admit_create, admit_update},
    },
    probe_marker::{PodProbeMarker, validate::admit as admit_probe_marker},
    sidecarset::{
        SIDECARSET_NAME_LABEL, SidecarSet,
        admission::{admit_pod_create, admit_sidecar_set, mutate_sidecar_set},
        inject::InjectContext,
        restore::{REVISION_NAMESPACE, injection_revision, restore_from_revision},
        sync::revisions::revision_ref,
        validate::ValidationContext,
    },
};
use crate::server::{AdmissionHook, AdmissionRequest, Operation, Store, Verdict};

const SIDECARSETS: (&str, &str) = ("apps.kruise.io/v1alpha1", "SidecarSet");

fn port(v: crate::kruise::crr::Verdict) -> Verdict {
    super::verdict(v.allowed, v.code, v.message.as_deref())
}

fn writes(req: &AdmissionRequest) -> bool {
    matches!(req.operation, Operation::Create | Operation::Update) && req.subresource.is_empty()
}

pub(super) fn mutating(store: &Arc<Store>, gates: &FeatureGates) -> Vec<Arc<dyn AdmissionHook>> {
    let sidecarset = Hook::shared(
        "msidecarset.kb.io",
        "apps.kruise.io",
        "sidecarsets",
        |req| {
            if !writes(req) {
                return Verdict::Allow;
            }
            match decode::<SidecarSet>(req.object.as_ref()) {
                Ok(Some(set)) => mutated(req.object.as_ref(), &set, &mutate_sidecar_set(&set).1),
                Ok(None) => Verdict::Allow,
                Err(denied) => denied,
            }
        },
    );
    let pods = {
        let store = store.clone();
        let gates = gates.clone();
        Hook::shared("mpod.kb.io", "", "pods", move |req| {
            if req.operation != Operation::Create || !req.subresource.is_empty() {
                return Verdict::Allow;
            }
            inject_sidecars(&store, &gates, req)
        })
    };
    let crr = {
        let store = store.clone();
        let gates = gates.clone();
        Hook::shared(
            "mcontainerrecreaterequest.kb.io",
            "apps.kruise.io",
            "containerrecreaterequests",
            move |req| {
                if !writes(req) {
                    return Verdict::Allow;
                }
                admit_crr(&store, &gates, req)
            },
        )
    };
    vec![sidecarset, pods, crr]
}

pub(super) fn validating(store: &Arc<Store>, gates: &FeatureGates) -> Vec<Arc<dyn AdmissionHook>> {
    let sidecarset = {
        let store = store.clone();
        let gates = gates.clone();
        Hook::shared(
            "vsidecarset.kb.io",
            "apps.kruise.io",
            "sidecarsets",
            move |req| {
                if !writes(req) {
                    return Verdict::Allow;
                }
                validate_sidecar_set(&store, &gates, req)
            },
        )
    };
    let marker = {
        let gates = gates.clone();
        let version = store.kruise_version();
        Hook::shared(
            "vpodprobemarker.kb.io",
            "apps.kruise.io",
            "podprobemarkers",
            move |req| {
                if !writes(req) {
                    return Verdict::Allow;
                }
                let decoded = decode::<PodProbeMarker>(req.object.as_ref())
                    .and_then(|new| Ok((new, decode::<PodProbeMarker>(req.old_object.as_ref())?)));
                match decoded {
                    Ok((Some(new), old)) => {
                        port(admit_probe_marker(version, &gates, &new, old.as_ref()).0)
                    }
                    Ok((None, _)) => Verdict::Allow,
                    Err(denied) => denied,
                }
            },
        )
    };
    vec![sidecarset, marker]
}

fn validate_sidecar_set(store: &Store, gates: &FeatureGates, req: &AdmissionRequest) -> Verdict {
    let (set, old) = match (
        decode::<SidecarSet>(req.object.as_ref()),
        decode::<SidecarSet>(req.old_object.as_ref()),
    ) {
        (Ok(Some(set)), Ok(old)) => (set, old),
        (Ok(None), _) => return Verdict::Allow,
        (Err(denied), _) | (_, Err(denied)) => return denied,
    };
    let others: Vec<SidecarSet> =
        list_typed::<SidecarSet>(store, SIDECARSETS.0, SIDECARSETS.1, None)
            .into_iter()
            .filter(|s| s.metadata.name != set.metadata.name)
            .collect();
    let namespaces = namespace_labels(store);
    // injectionStrategy.revision must name an existing revision: one of the set's, or any of
    // the revision namespace by name (as upstream's lookup reads them).
    let wanted_name = set
        .spec
        .injection_strategy
        .revision
        .as_ref()
        .and_then(|r| r.revision_name.clone());
    let revisions: Vec<_> = list_typed::<ControllerRevision>(
        store,
        "apps/v1",
        "ControllerRevision",
        Some(REVISION_NAMESPACE),
    )
    .iter()
    .filter(|r| {
        let labelled = r
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SIDECARSET_NAME_LABEL))
            .is_some_and(|n| Some(n.as_str()) == set.metadata.name.as_deref());
        labelled || (wanted_name.is_some() && r.metadata.name == wanted_name)
    })
    .map(revision_ref)
    .collect();
    let ctx = ValidationContext {
        gates: gates.clone(),
        version: store.kruise_version(),
        old: old.as_ref(),
        others: &others,
        namespaces: Some(&namespaces),
        patch_whitelist: None,
        revisions: &revisions,
    };
    port(admit_sidecar_set(&set, &ctx))
}

fn inject_sidecars(store: &Store, gates: &FeatureGates, req: &AdmissionRequest) -> Verdict {
    let pod = match decode::<Pod>(req.object.as_ref()) {
        Ok(Some(pod)) => pod,
        Ok(None) => return Verdict::Allow,
        Err(denied) => return denied,
    };
    let sets = list_typed::<SidecarSet>(store, SIDECARSETS.0, SIDECARSETS.1, None);
    if sets.is_empty() {
        return Verdict::Allow;
    }
    let namespaces = namespace_labels(store);
    let now = jiff::Timestamp::now();
    // injectionStrategy.revision: the set as the named revision recorded it.
    let revisions: Vec<ControllerRevision> = list_typed(
        store,
        "apps/v1",
        "ControllerRevision",
        Some(REVISION_NAMESPACE),
    );
    let historic = |set: &SidecarSet| {
        let rev = injection_revision(set, &revisions)?;
        restore_from_revision(set, rev)
            .inspect_err(|e| tracing::warn!(sidecarset = set.name(), "{e}"))
            .ok()
    };
    let ctx = InjectContext {
        sets: &sets,
        namespaces: &namespaces,
        historic: &historic,
        random: f64::from(now.subsec_nanosecond().unsigned_abs() % 1_000_000) / 1_000_000.0,
        now,
        version: store.kruise_version(),
        gates: gates.clone(),
    };
    // The request's namespace applies when the pod body leaves it out.
    let mut pod = pod;
    if pod.metadata.namespace.is_none() {
        pod.metadata.namespace = Some(req.namespace.clone());
    }
    let mut object = req.object.clone();
    if let Some(o) = object.as_mut() {
        o["metadata"]["namespace"] = serde_json::json!(req.namespace);
    }
    match admit_pod_create(&pod, &ctx) {
        (v, _) if !v.allowed => port(v),
        (_, Some(patch)) => mutated(object.as_ref(), &pod, &patch),
        (_, None) => Verdict::Allow,
    }
}

fn admit_crr(store: &Store, gates: &FeatureGates, req: &AdmissionRequest) -> Verdict {
    let crr = match decode::<ContainerRecreateRequest>(req.object.as_ref()) {
        Ok(Some(crr)) => crr,
        Ok(None) => return Verdict::Allow,
        Err(denied) => return denied,
    };
    if req.operation == Operation::Update {
        return match decode::<ContainerRecreateRequest>(req.old_object.as_ref()) {
            Ok(Some(old)) => port(admit_update(gates, &old, &crr)),
            Ok(None) => Verdict::Allow,
            Err(denied) => denied,
        };
    }
    let pod: Option<Pod> = store
        .get_value("v1", "Pod", &req.namespace, &crr.spec.pod_name)
        .and_then(|v| serde_json::from_value(v).ok());
    let lookup = pod.as_ref().map_or(Lookup::NotFound, Lookup::Found);
    let node = |name: &str| -> Result<Option<Node>, String> {
        store
            .get_value("v1", "Node", "", name)
            .map(|v| serde_json::from_value(v).map_err(|e| e.to_string()))
            .transpose()
    };
    let outcome = admit_create(store.kruise_version(), gates, &crr, lookup, node);
    match outcome.patched {
        Some(patched) if outcome.verdict.allowed => {
            mutated(req.object.as_ref(), &crr, &json_patch(&crr, &patched))
        }
        _ => port(outcome.verdict),
    }
}
