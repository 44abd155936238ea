//! Sidecar injection at pod CREATE (the pod mutating webhook): which sets apply, which of
//! their revisions, and how containers, volumes, secrets and annotations are merged in.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Container, EnvVar, EnvVarSource, ObjectFieldSelector, Pod, VolumeDevice,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::kruise::{FeatureGates, KruiseVersion, selector};

use super::{
    SIDECAR_ENV_KEY, SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION,
    SIDECARSET_LIST_ANNOTATION, SIDECARSET_VERSION_ALT_PREFIX, SIDECARSET_VERSION_PREFIX,
    SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER,
    control::hot_upgrade_twin_names,
    matching::{NamespaceLabels, pod_matched_sidecar_set},
    metadata::patch_pod_metadata,
    pod_state::{SidecarSetUpgradeSpec, sidecar_list, sidecarset_upgrade_specs},
    resources,
};
use crate::api::sidecarset::{BEFORE_APP_CONTAINER, SidecarContainer, SidecarSet};

/// Which spec to inject at pod creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectRevision {
    /// The set's current spec.
    Latest,
    /// The spec restored from `injectionStrategy.revision`.
    Historic,
}

/// Chooses the revision to inject. `random` is a uniform draw in `[0, 1)` (used only for a
/// Partial policy with a percent partition: historic with probability p).
///
/// Port of pkg/webhook/pod/mutating/sidecarset.go::getSuitableRevisionSidecarSet, CREATE branch (v1.8.4).
pub fn injection_revision_choice(
    set: &SidecarSet,
    pod_labels: &BTreeMap<String, String>,
    random: f64,
) -> InjectRevision {
    let Some(rev) = &set.spec.injection_strategy.revision else {
        return InjectRevision::Latest;
    };
    let named = rev.revision_name.as_deref().is_some_and(|n| !n.is_empty())
        || rev.custom_version.as_deref().is_some_and(|v| !v.is_empty());
    if !named {
        return InjectRevision::Latest;
    }
    let strategy = &set.spec.update_strategy;
    if strategy.paused || rev.policy.is_empty() || rev.policy == "Always" {
        return InjectRevision::Historic;
    }
    if let Some(sel) = &strategy.selector
        && !selector::matches(sel, pod_labels).unwrap_or(false)
    {
        return InjectRevision::Historic;
    }
    if let Some(IntOrString::String(p)) = &strategy.partition
        && let Some(p) = p.strip_suffix('%').and_then(|v| v.parse::<f64>().ok())
        && random <= p / 100.0
    {
        return InjectRevision::Historic;
    }
    InjectRevision::Latest
}

/// Merges injected sidecars into the pod's containers: an existing name is replaced in
/// place, new BeforeAppContainer sidecars are prepended, the rest appended.
///
/// Port of pkg/webhook/pod/mutating/sidecarset.go::mergeSidecarContainers (v1.8.4).
pub fn merge_sidecar_containers(
    origins: &[Container],
    injected: &[SidecarContainer],
) -> Vec<Container> {
    let mut origins = origins.to_vec();
    let mut before = Vec::new();
    let mut after = Vec::new();
    for sidecar in injected {
        if let Some(slot) = origins
            .iter_mut()
            .find(|c| c.name == sidecar.container.name)
        {
            *slot = sidecar.container.clone();
        } else if sidecar.pod_inject_policy == BEFORE_APP_CONTAINER {
            before.push(sidecar.container.clone());
        } else {
            after.push(sidecar.container.clone());
        }
    }
    before.extend(origins);
    before.extend(after);
    before
}

/// Why injection failed (the webhook answers with an error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InjectError {
    #[error("sidecarSet {0}: cannot find the ControllerRevision to inject")]
    RevisionNotFound(String),
    #[error("sidecarSet {set}: {reason}")]
    Metadata { set: String, reason: String },
    /// v1.9.0: a sidecar's resourcesPolicy cannot be applied (the pod creation is rejected).
    #[error("{0}")]
    ResourcesPolicy(String),
}

/// Everything injection needs besides the pod.
pub struct InjectContext<'a> {
    /// All SidecarSets (defaulted, with hash annotations).
    pub sets: &'a [SidecarSet],
    pub namespaces: &'a NamespaceLabels,
    /// Restores a set's historic spec from its injectionStrategy.revision (None: not found).
    pub historic: &'a dyn Fn(&SidecarSet) -> Option<SidecarSet>,
    /// A uniform draw in `[0, 1)`.
    pub random: f64,
    pub now: jiff::Timestamp,
    /// v1.9.0 adds resourcesPolicy, volumeDevices sharing and (gated) the sort by name.
    pub version: KruiseVersion,
    pub gates: FeatureGates,
}

fn env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: Some(value.to_owned()),
        value_from: None,
    }
}

fn field_env(name: &str, path: String) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: None,
                field_path: path,
            }),
            ..Default::default()
        }),
    }
}

fn is_injected(c: &Container) -> bool {
    c.env
        .iter()
        .flatten()
        .any(|e| e.name == SIDECAR_ENV_KEY && e.value.as_deref() == Some("true"))
}

fn merge_env(original: &mut Vec<EnvVar>, extra: Vec<EnvVar>) {
    for e in extra {
        if !original.iter().any(|o| o.name == e.name) {
            original.push(e);
        }
    }
}

/// `metadata.name`, `metadata.labels['k']`, `metadata.annotations['k']` of the pod.
fn field_of_pod(pod: &Pod, path: &str) -> Option<String> {
    if path == "metadata.name" {
        return pod.metadata.name.clone();
    }
    let lookup = |prefix: &str, map: Option<&BTreeMap<String, String>>| {
        path.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix("']"))
            .and_then(|k| map.and_then(|m| m.get(k)).cloned())
    };
    lookup("metadata.labels['", pod.metadata.labels.as_ref())
        .or_else(|| lookup("metadata.annotations['", pod.metadata.annotations.as_ref()))
}

/// Env and mounts a sidecar receives from the app containers: transferEnv and, with
/// shareVolumePolicy enabled, every app mount (plus env named by `$(VAR)` in subPathExpr).
///
/// Port of pkg/control/sidecarcontrol/util.go::GetInjectedVolumeMountsAndEnvs,
/// GetSidecarTransferEnvs and (v1.9.0) GetInjectedVolumeDevices, merged with
/// pkg/util/pods.go::MergeVolumeMounts / MergeVolumeDevices.
fn prepare_sidecar(
    sidecar: &SidecarContainer,
    pod: &Pod,
    version: KruiseVersion,
) -> SidecarContainer {
    let mut out = sidecar.clone();
    let app: Vec<&Container> = pod
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .filter(|c| !is_injected(c))
        .collect();
    let mut transfer = Vec::new();
    for t in &sidecar.transfer_env {
        let mut names: BTreeSet<&str> = t.env_names.iter().map(String::as_str).collect();
        if !t.env_name.is_empty() {
            names.insert(&t.env_name);
        }
        let source = match t
            .source_container_name_from
            .as_ref()
            .and_then(|f| f.field_ref.as_ref())
        {
            Some(f) => field_of_pod(pod, &f.field_path).unwrap_or_default(),
            None => t.source_container_name.clone(),
        };
        for c in app.iter().filter(|c| c.name == source) {
            transfer.extend(
                c.env
                    .iter()
                    .flatten()
                    .filter(|e| names.contains(e.name.as_str()))
                    .cloned(),
            );
        }
    }
    let mut mounts = out.container.volume_mounts.take().unwrap_or_default();
    // v1.9.0: the sidecar's own device paths are occupied mount points too
    let own_devices: Vec<String> = match version {
        KruiseVersion::V1_8 => Vec::new(),
        KruiseVersion::V1_9 => sidecar
            .container
            .volume_devices
            .iter()
            .flatten()
            .map(|d| d.device_path.clone())
            .collect(),
    };
    if sidecar.share_volume_policy.type_ == "enabled" {
        for c in &app {
            for m in c.volume_mounts.iter().flatten() {
                if !mounts.iter().any(|o| o.mount_path == m.mount_path)
                    && !own_devices.contains(&m.mount_path)
                {
                    mounts.push(m.clone());
                }
                let expr = m.sub_path_expr.as_deref().unwrap_or_default();
                for var in expr
                    .split("$(")
                    .skip(1)
                    .filter_map(|r| r.split_once(')'))
                    .map(|(v, _)| v)
                {
                    transfer.extend(c.env.iter().flatten().filter(|e| e.name == var).cloned());
                }
            }
        }
    }
    out.container.volume_mounts = (!mounts.is_empty()).then_some(mounts);
    if version == KruiseVersion::V1_9 {
        let shared: Vec<VolumeDevice> = if sidecar
            .share_volume_device_policy
            .as_ref()
            .is_some_and(|p| p.type_ == "enabled")
        {
            app.iter()
                .flat_map(|c| c.volume_devices.iter().flatten().cloned())
                .collect()
        } else {
            Vec::new()
        };
        let devices = merge_volume_devices(&out.container, &shared);
        out.container.volume_devices = (!devices.is_empty()).then_some(devices);
    }
    // Upstream appends IS_INJECTED to the sidecar's own env, then the transferred env.
    let mut envs = out.container.env.take().unwrap_or_default();
    envs.push(env(SIDECAR_ENV_KEY, "true"));
    merge_env(&mut envs, transfer);
    out.container.env = Some(envs);
    out
}

/// The sidecar's own volumeDevices, then each additional device whose devicePath is neither an
/// existing devicePath nor one of the sidecar's mountPaths.
///
/// Port of pkg/util/pods.go::MergeVolumeDevices (v1.9.0).
pub fn merge_volume_devices(
    container: &Container,
    additional: &[VolumeDevice],
) -> Vec<VolumeDevice> {
    let mut points: BTreeSet<String> = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| m.mount_path.clone())
        .collect();
    let mut out: Vec<VolumeDevice> = container.volume_devices.clone().unwrap_or_default();
    points.extend(out.iter().map(|d| d.device_path.clone()));
    for d in additional {
        if points.insert(d.device_path.clone()) {
            out.push(d.clone());
        }
    }
    out
}

/// The result of injection: the mutated pod (None when no set applies).
pub type InjectOutcome = Option<Pod>;

/// Injects every matching SidecarSet into a pod being created.
///
/// Port of pkg/webhook/pod/mutating/sidecarset.go::sidecarsetMutatingPod and buildSidecars (v1.8.4).
pub fn inject_pod_create(pod: &Pod, ctx: &InjectContext<'_>) -> Result<InjectOutcome, InjectError> {
    let ns = pod
        .metadata
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "default".to_owned());
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let mut chosen = Vec::new();
    for set in ctx.sets {
        let scope = set.spec.namespace.as_deref().unwrap_or_default();
        if (!scope.is_empty() && scope != ns) || set.spec.injection_strategy.paused {
            continue;
        }
        if !pod_matched_sidecar_set(set, &ns, &labels, ctx.namespaces).unwrap_or(false) {
            continue;
        }
        let set = match injection_revision_choice(set, &labels, ctx.random) {
            InjectRevision::Latest => set.clone(),
            InjectRevision::Historic => (ctx.historic)(set)
                .ok_or_else(|| InjectError::RevisionNotFound(set.name().to_owned()))?,
        };
        chosen.push(set);
    }
    if chosen.is_empty() {
        return Ok(None);
    }
    let mut out = pod.clone();
    let mut annotations = out.metadata.annotations.take().unwrap_or_default();
    for set in &chosen {
        patch_pod_metadata(&mut annotations, &set.spec.patch_pod_metadata).map_err(|e| {
            InjectError::Metadata {
                set: set.name().to_owned(),
                reason: e.to_string(),
            }
        })?;
    }
    let stamp = Some(Time(ctx.now));
    let mut hashes = sidecarset_upgrade_specs(
        annotations
            .get(SIDECARSET_HASH_ANNOTATION)
            .map(String::as_str),
    );
    let mut without = sidecarset_upgrade_specs(
        annotations
            .get(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION)
            .map(String::as_str),
    );
    let mut working: BTreeMap<String, String> = BTreeMap::new();
    let mut init_sidecars = Vec::new();
    let mut sidecars = Vec::new();
    let mut volume_names = BTreeSet::new();
    let device_volumes = std::cell::RefCell::new(BTreeSet::new());
    let matched: Vec<&SidecarSet> = chosen.iter().collect();
    let with_policy = |c: &SidecarContainer| -> Result<SidecarContainer, InjectError> {
        let mut c = c.clone();
        if ctx.version == KruiseVersion::V1_9 {
            resources::apply_resources_policy(pod, &mut c, &matched)
                .map_err(InjectError::ResourcesPolicy)?;
            // volumes a sidecar's own volumeDevices reference are injected like its mounts
            device_volumes.borrow_mut().extend(
                c.container
                    .volume_devices
                    .iter()
                    .flatten()
                    .map(|d| d.name.clone()),
            );
        }
        Ok(c)
    };
    for set in &chosen {
        for c in &set.spec.init_containers {
            init_sidecars.push(prepare_sidecar(&with_policy(c)?, &out, ctx.version));
        }
        for c in &set.spec.containers {
            let c = &with_policy(c)?;
            let prepared = prepare_sidecar(c, &out, ctx.version);
            if !c.is_hot_upgrade() {
                sidecars.push(prepared);
                continue;
            }
            let (one, two) = hot_upgrade_twin_names(c.name());
            for (twin, version, alt, image) in [
                (&one, "1", "0", prepared.container.image.clone()),
                (
                    &two,
                    "0",
                    "1",
                    Some(c.upgrade_strategy.hot_upgrade_empty_image.clone()),
                ),
            ] {
                let mut t = prepared.clone();
                t.container.name = twin.clone();
                t.container.image = image;
                let envs = t.container.env.get_or_insert_with(Vec::new);
                envs.push(field_env(
                    "SIDECARSET_VERSION",
                    format!("metadata.annotations['{SIDECARSET_VERSION_PREFIX}{twin}']"),
                ));
                envs.push(field_env(
                    "SIDECARSET_VERSION_ALT",
                    format!("metadata.annotations['{SIDECARSET_VERSION_ALT_PREFIX}{twin}']"),
                ));
                annotations.insert(
                    format!("{SIDECARSET_VERSION_PREFIX}{twin}"),
                    version.to_owned(),
                );
                annotations.insert(
                    format!("{SIDECARSET_VERSION_ALT_PREFIX}{twin}"),
                    alt.to_owned(),
                );
                sidecars.push(t);
            }
            working.insert(c.name().to_owned(), one);
        }
        hashes.insert(
            set.name().to_owned(),
            SidecarSetUpgradeSpec::current(set, stamp.clone()),
        );
        without.insert(
            set.name().to_owned(),
            SidecarSetUpgradeSpec {
                update_timestamp: stamp.clone(),
                hash: set
                    .annotation(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION)
                    .to_owned(),
                sidecar_set_name: set.name().to_owned(),
                sidecar_list: Some(sidecar_list(set)),
                controller_revision: String::new(),
            },
        );
    }
    for c in init_sidecars.iter().chain(&sidecars) {
        volume_names.extend(
            c.container
                .volume_mounts
                .iter()
                .flatten()
                .map(|m| m.name.clone()),
        );
    }
    volume_names.extend(device_volumes.take());
    init_sidecars.sort_by(|a, b| a.container.name.cmp(&b.container.name));
    if ctx.version == KruiseVersion::V1_9 && ctx.gates.enabled("EnableSortSidecarContainerByName") {
        sidecars.sort_by(|a, b| a.container.name.cmp(&b.container.name));
    }
    let spec = out.spec.get_or_insert_with(Default::default);
    spec.init_containers = Some(merge_sidecar_containers(
        spec.init_containers.as_deref().unwrap_or_default(),
        &init_sidecars,
    ))
    .filter(|v| !v.is_empty());
    spec.containers = merge_sidecar_containers(&spec.containers, &sidecars);
    let mut volumes = spec.volumes.take().unwrap_or_default();
    let mut secrets = spec.image_pull_secrets.take().unwrap_or_default();
    for set in &chosen {
        for v in set
            .spec
            .volumes
            .iter()
            .filter(|v| volume_names.contains(&v.name))
        {
            if !volumes.iter().any(|o| o.name == v.name) {
                volumes.push(v.clone());
            }
        }
        for s in &set.spec.image_pull_secrets {
            if !secrets.iter().any(|o| o.name == s.name) {
                secrets.push(s.clone());
            }
        }
    }
    spec.volumes = (!volumes.is_empty()).then_some(volumes);
    spec.image_pull_secrets = (!secrets.is_empty()).then_some(secrets);
    let mut names: Vec<&str> = chosen.iter().map(SidecarSet::name).collect();
    names.sort_unstable();
    annotations.insert(SIDECARSET_LIST_ANNOTATION.to_owned(), names.join(","));
    if !working.is_empty()
        && let Ok(v) = serde_json::to_string(&working)
    {
        annotations.insert(SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER.to_owned(), v);
    }
    if let Ok(v) = serde_json::to_string(&hashes) {
        annotations.insert(SIDECARSET_HASH_ANNOTATION.to_owned(), v);
    }
    if let Ok(v) = serde_json::to_string(&without) {
        annotations.insert(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION.to_owned(), v);
    }
    out.metadata.annotations = Some(annotations);
    Ok(Some(out))
}
