//! The Kubernetes validation the SidecarSet webhook borrows: `ValidateObjectMeta` on the set
//! itself and `ValidatePodCreate` on a fake pod built from its containers and volumes
//! (k8s.io/kubernetes v1.30, `pkg/apis/core/validation`), reduced to the checks a SidecarSet can
//! trip: names, images, pull and termination-message policies, restart policies, volume mounts,
//! volume names and sources. Paths and order are upstream's; resources, probes' contents, env,
//! ports and security contexts are not checked here.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::kruise::validation::{
    FieldError, field_error as err, is_dns1123_label, label_value_errors, qualified_name_errors,
};

/// `validation.ValidateObjectMeta(meta, false, validateSidecarSetName, "metadata")` for a
/// cluster-scoped object: generateName, name, no namespace, generation, labels, annotations.
pub fn validate_object_meta(
    meta: &ObjectMeta,
    name_fn: fn(&str) -> Vec<String>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(generate) = meta.generate_name.as_deref().filter(|g| !g.is_empty()) {
        for msg in name_fn(generate) {
            errs.push(err(
                "metadata.generateName",
                format!("Invalid value: {generate:?}: {msg}"),
            ));
        }
    }
    match meta.name.as_deref().filter(|n| !n.is_empty()) {
        None => errs.push(err(
            "metadata.name",
            "Required value: name or generateName is required",
        )),
        Some(name) => {
            for msg in name_fn(name) {
                errs.push(err(
                    "metadata.name",
                    format!("Invalid value: {name:?}: {msg}"),
                ));
            }
        }
    }
    if meta.namespace.as_deref().is_some_and(|n| !n.is_empty()) {
        errs.push(err(
            "metadata.namespace",
            "Forbidden: not allowed on this type",
        ));
    }
    if let Some(generation) = meta.generation.filter(|g| *g < 0) {
        errs.push(err(
            "metadata.generation",
            format!("Invalid value: {generation}: must be greater than or equal to 0"),
        ));
    }
    // Go walks both maps in random order; key order here.
    for (k, v) in meta.labels.iter().flatten() {
        for msg in qualified_name_errors(k) {
            errs.push(err(
                "metadata.labels",
                format!("Invalid value: {k:?}: {msg}"),
            ));
        }
        for msg in label_value_errors(v) {
            errs.push(err(
                "metadata.labels",
                format!("Invalid value: {v:?}: {msg}"),
            ));
        }
    }
    errs.extend(annotation_errors(
        meta.annotations.as_ref(),
        "metadata.annotations",
    ));
    errs
}

/// apimachinery `ValidateAnnotations`: lower-cased keys as qualified names, total size ≤ 256 KiB.
pub fn annotation_errors(
    annotations: Option<&BTreeMap<String, String>>,
    path: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations.into_iter().flatten() {
        for msg in qualified_name_errors(&k.to_lowercase()) {
            errs.push(err(path, format!("Invalid value: {k:?}: {msg}")));
        }
        total += k.len() + v.len();
    }
    if total > 256 * 1024 {
        errs.push(err(path, "Too long: must have at most 262144 bytes"));
    }
    errs
}

/// The volume source fields of `core.VolumeSource`, by JSON name, in upstream's check order.
const VOLUME_SOURCES: [&str; 30] = [
    "hostPath",
    "emptyDir",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "quobyte",
    "cephfs",
    "cinder",
    "configMap",
    "downwardAPI",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "projected",
    "csi",
    "ephemeral",
    "image",
];

/// `ValidateVolumes` at `spec.volumes`: exactly one source, a DNS-1123 name, no duplicates.
/// Returns the errors and the names of the volumes that validated (the ones mounts may use).
pub fn validate_volumes(volumes: &[Volume]) -> (Vec<FieldError>, BTreeSet<String>) {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, vol) in volumes.iter().enumerate() {
        let at = format!("spec.volumes[{i}]");
        let mut el = Vec::new();
        let source = serde_json::to_value(vol).unwrap_or_default();
        let set: Vec<&str> = VOLUME_SOURCES
            .iter()
            .copied()
            .filter(|s| !source[*s].is_null())
            .collect();
        match set.as_slice() {
            [] => el.push(err(&at, "Required value: must specify a volume type")),
            [_] => {}
            [_, second, ..] => el.push(err(
                format!("{at}.{second}"),
                "Forbidden: may not specify more than 1 volume type",
            )),
        }
        let name_path = format!("{at}.name");
        if vol.name.is_empty() {
            el.push(err(&name_path, "Required value"));
        } else if !is_dns1123_label(&vol.name) {
            el.push(err(&name_path, format!("Invalid value: {:?}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", vol.name)));
        }
        if names.contains(&vol.name) {
            el.push(err(&name_path, format!("Duplicate value: {:?}", vol.name)));
        }
        if el.is_empty() {
            names.insert(vol.name.clone());
        } else {
            errs.extend(el);
        }
    }
    (errs, names)
}

/// `validateContainerCommon` (the subset above) at `path`.
fn validate_container_common(
    c: &Container,
    volumes: &BTreeSet<String>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if c.name.is_empty() {
        errs.push(err(format!("{path}.name"), "Required value"));
    } else if !is_dns1123_label(&c.name) {
        errs.push(err(format!("{path}.name"), format!("Invalid value: {:?}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", c.name)));
    }
    if c.image.as_deref().unwrap_or_default().is_empty() {
        errs.push(err(format!("{path}.image"), "Required value"));
    }
    match c.termination_message_policy.as_deref().unwrap_or_default() {
        "File" | "FallbackToLogsOnError" => {}
        "" => errs.push(err(format!("{path}.terminationMessagePolicy"), "Required value")),
        other => errs.push(err(
            format!("{path}.terminationMessagePolicy"),
            format!("Unsupported value: {other:?}: supported values: \"File\", \"FallbackToLogsOnError\""),
        )),
    }
    let mut mount_points = BTreeSet::new();
    for (i, m) in c.volume_mounts.iter().flatten().enumerate() {
        let at = format!("{path}.volumeMounts[{i}]");
        if m.name.is_empty() {
            errs.push(err(format!("{at}.name"), "Required value"));
        }
        if !volumes.contains(&m.name) {
            errs.push(err(
                format!("{at}.name"),
                format!("Not found: {:?}", m.name),
            ));
        }
        if m.mount_path.is_empty() {
            errs.push(err(format!("{at}.mountPath"), "Required value"));
        }
        if !mount_points.insert(m.mount_path.as_str()) {
            errs.push(err(
                format!("{at}.mountPath"),
                format!("Invalid value: {:?}: must be unique", m.mount_path),
            ));
        }
    }
    match c.image_pull_policy.as_deref().unwrap_or_default() {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errs.push(err(format!("{path}.imagePullPolicy"), "Required value")),
        other => errs.push(err(
            format!("{path}.imagePullPolicy"),
            format!("Unsupported value: {other:?}: supported values: \"Always\", \"IfNotPresent\", \"Never\""),
        )),
    }
}

/// `validateContainers` then `validateInitContainers` of the fake pod (`ValidatePodSpec` checks
/// regular containers before init containers): the common checks, duplicate names across both
/// lists, no restartPolicy on regular containers, only `Always` on init containers, and no
/// lifecycle or probes on init containers that are not restartable.
pub fn validate_containers(
    init: &[Container],
    containers: &[Container],
    volumes: &BTreeSet<String>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let path = format!("spec.containers[{i}]");
        validate_container_common(c, volumes, &path, &mut errs);
        if !names.insert(c.name.as_str()) {
            errs.push(err(
                format!("{path}.name"),
                format!("Duplicate value: {:?}", c.name),
            ));
        }
        if c.restart_policy.is_some() {
            errs.push(err(
                format!("{path}.restartPolicy"),
                "Forbidden: may not be set for non-init containers",
            ));
        }
    }
    for (i, c) in init.iter().enumerate() {
        let path = format!("spec.initContainers[{i}]");
        validate_container_common(c, volumes, &path, &mut errs);
        let restart_always = match c.restart_policy.as_deref() {
            None => false,
            Some("Always") => true,
            Some(other) => {
                errs.push(err(
                    format!("{path}.restartPolicy"),
                    format!("Unsupported value: {other:?}: supported values: \"Always\""),
                ));
                false
            }
        };
        if names.contains(c.name.as_str()) {
            errs.push(err(
                format!("{path}.name"),
                format!("Duplicate value: {:?}", c.name),
            ));
        } else if !c.name.is_empty() {
            names.insert(c.name.as_str());
        }
        if !restart_always {
            for (field, set) in [
                ("lifecycle", c.lifecycle.is_some()),
                ("livenessProbe", c.liveness_probe.is_some()),
                ("readinessProbe", c.readiness_probe.is_some()),
                ("startupProbe", c.startup_probe.is_some()),
            ] {
                if set {
                    errs.push(err(
                        format!("{path}.{field}"),
                        "Forbidden: may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
    errs
}

/// The container the webhook puts in the fake pod when the set has no containers (so that
/// `ValidatePodCreate` has one to validate).
pub fn fake_container() -> Container {
    Container {
        name: "test".to_owned(),
        image: Some("busybox".to_owned()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        termination_message_policy: Some("File".to_owned()),
        ..Container::default()
    }
}
