//! SidecarSet validation (validating webhook): spec rules, conflicts with other sets and
//! immutable container settings.

use std::collections::{BTreeMap, BTreeSet};

use crate::kruise::{KruiseVersion, features::FeatureGates, selector};

use crate::kruise::validation::field_error as err;
pub use crate::kruise::validation::{FieldError, is_dns1123_label};

use super::{
    history::RevisionRef,
    matching::{NamespaceLabels, is_namespace_overlapping, is_selector_overlapping},
    types::{
        AFTER_APP_CONTAINER, BEFORE_APP_CONTAINER, COLD_UPGRADE, HOT_UPGRADE, NOT_UPDATE,
        PATCH_MERGE_JSON, PATCH_OVERWRITE, PATCH_RETAIN, ROLLING_UPDATE, SidecarContainer,
        SidecarSet,
    },
};

/// What validation needs to know about the cluster and the request.
#[derive(Debug, Clone, Default)]
pub struct ValidationContext<'a> {
    pub gates: FeatureGates,
    pub version: KruiseVersion,
    /// The object before an UPDATE.
    pub old: Option<&'a SidecarSet>,
    /// Every other SidecarSet.
    pub others: &'a [SidecarSet],
    pub namespaces: Option<&'a NamespaceLabels>,
    /// Whether the `SidecarSet_PatchPodMetadata_WhiteList` configuration exists, and its
    /// allowed key patterns (plain prefixes/exact keys; a trailing `*` or `.*` is a prefix).
    pub patch_whitelist: Option<&'a [String]>,
    /// This set's ControllerRevisions (for injectionStrategy.revision).
    pub revisions: &'a [RevisionRef],
}

/// Validates a SidecarSet on CREATE/UPDATE: spec rules, conflicts, immutable containers.
///
/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::validateSidecarSetSpec
/// and validateSidecarSet (v1.8.4).
pub fn validate_sidecar_set(set: &SidecarSet, ctx: &ValidationContext<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = set.name();
    if name.is_empty()
        || name.len() > 63
        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        errs.push(err("metadata.name", format!("invalid name {name:?}")));
    }
    let spec = &set.spec;
    match &spec.selector {
        None => errs.push(err("spec.selector", "no selector defined for SidecarSet")),
        Some(sel) if selector::is_empty(sel) => {
            errs.push(err(
                "spec.selector",
                "empty selector is not valid for sidecarset.",
            ));
        }
        Some(sel) => {
            if let Err(e) = selector::matches(sel, &BTreeMap::new()) {
                errs.push(err("spec.selector", e.to_string()));
            }
        }
    }
    let has_ns = spec.namespace.as_deref().is_some_and(|n| !n.is_empty());
    if ctx.version == KruiseVersion::V1_8 && has_ns && spec.namespace_selector.is_some() {
        errs.push(err(
            "spec.namespace",
            "namespace and namespaceSelector are mutually exclusive",
        ));
    }
    if let Some(sel) = &spec.namespace_selector {
        if selector::is_empty(sel) {
            errs.push(err(
                "spec.namespaceSelector",
                "empty namespaceSelector is not valid for sidecarset.",
            ));
        } else if let Err(e) = selector::matches(sel, &BTreeMap::new()) {
            errs.push(err("spec.namespaceSelector", e.to_string()));
        }
    }
    validate_update_strategy(set, &mut errs);
    if spec.containers.is_empty() && spec.init_containers.is_empty() {
        errs.push(err(
            "spec.containers",
            "no container defined for SidecarSet",
        ));
    }
    for (i, c) in spec.init_containers.iter().enumerate() {
        validate_container(c, &format!("spec.initContainers[{i}]"), &mut errs);
        if c.container.restart_policy.as_deref() == Some("Always")
            && spec.update_strategy.type_ != NOT_UPDATE
        {
            errs.push(err(
                format!("spec.initContainers[{i}].restartPolicy"),
                "The initContainer in-place upgrade is not currently supported.",
            ));
        }
    }
    for (i, c) in spec.containers.iter().enumerate() {
        validate_container(c, &format!("spec.containers[{i}]"), &mut errs);
    }
    validate_patch_metadata(set, ctx, &mut errs);
    if let Some(rev) = &spec.injection_strategy.revision {
        let rn = rev.revision_name.as_deref().unwrap_or_default();
        let cv = rev.custom_version.as_deref().unwrap_or_default();
        if rn.is_empty() && cv.is_empty() {
            errs.push(err(
                "spec.injectionStrategy.revision",
                "revisionName and customVersion cannot be empty simultaneously",
            ));
        } else if !rn.is_empty() && !ctx.revisions.iter().any(|r| r.name == rn) {
            errs.push(err(
                "spec.injectionStrategy.revision.revisionName",
                format!("Cannot find specific ControllerRevision {rn}"),
            ));
        } else if rn.is_empty()
            && !ctx
                .revisions
                .iter()
                .any(|r| r.custom_version.as_deref() == Some(cv))
        {
            errs.push(err(
                "spec.injectionStrategy.revision.customVersion",
                format!("Cannot find specific ControllerRevision with customVersion {cv}"),
            ));
        }
        if !matches!(rev.policy.as_str(), "" | "Always" | "Partial") {
            errs.push(err(
                "spec.injectionStrategy.revision.policy",
                format!("Invalid policy {}", rev.policy),
            ));
        }
    }
    if let Some(old) = ctx.old {
        errs.extend(validate_sidecar_container_conflict(
            &set.spec.containers,
            &old.spec.containers,
        ));
    }
    let empty = NamespaceLabels::new();
    errs.extend(validate_sidecar_conflict(
        set,
        ctx.others,
        ctx.namespaces.unwrap_or(&empty),
    ));
    errs
}

/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::validateSidecarSetSpec, updateStrategy part (v1.8.4).
fn validate_update_strategy(set: &SidecarSet, errs: &mut Vec<FieldError>) {
    let s = &set.spec.update_strategy;
    if !matches!(s.type_.as_str(), "" | ROLLING_UPDATE | NOT_UPDATE) {
        errs.push(err(
            "spec.updateStrategy.type",
            format!("unsupported type {}", s.type_),
        ));
    }
    let partition_set = match &s.partition {
        None => false,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(0)) => false,
        Some(_) => true,
    };
    if s.type_ != NOT_UPDATE && s.selector.is_some() && partition_set {
        errs.push(err(
            "spec.updateStrategy",
            "Partition and Selector cannot be used together",
        ));
    }
    if let Some(sel) = &s.selector
        && let Err(e) = selector::matches(sel, &BTreeMap::new())
    {
        errs.push(err("spec.updateStrategy.selector", e.to_string()));
    }
    let mut seen = BTreeSet::new();
    for (i, term) in s.scatter_strategy.iter().enumerate() {
        if term.key.is_empty() || term.value.is_empty() {
            errs.push(err(
                format!("spec.updateStrategy.scatterStrategy[{i}]"),
                "key and value can not be empty",
            ));
        } else if !seen.insert((&term.key, &term.value)) {
            errs.push(err(
                format!("spec.updateStrategy.scatterStrategy[{i}]"),
                format!("duplicated term {}={}", term.key, term.value),
            ));
        }
    }
    if let Some(p) = &s.priority_strategy {
        if !p.weight_priority.is_empty() && !p.order_priority.is_empty() {
            errs.push(err(
                "spec.updateStrategy.priorityStrategy",
                "only one of weightPriority and orderPriority can be used",
            ));
        }
        for (i, w) in p.weight_priority.iter().enumerate() {
            if !(0..=100).contains(&w.weight) {
                errs.push(err(
                    format!("spec.updateStrategy.priorityStrategy.weightPriority[{i}].weight"),
                    "weight must be 0 <= w <= 100",
                ));
            }
            if selector::is_empty(&w.match_selector) {
                errs.push(err(
                    format!(
                        "spec.updateStrategy.priorityStrategy.weightPriority[{i}].matchSelector"
                    ),
                    "selector can not be empty",
                ));
            }
        }
        for (i, o) in p.order_priority.iter().enumerate() {
            if o.ordered_key.is_empty() {
                errs.push(err(
                    format!("spec.updateStrategy.priorityStrategy.orderPriority[{i}].orderedKey"),
                    "key can not be empty",
                ));
            }
        }
    }
}

/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::validateContainersForSidecarSet (v1.8.4).
fn validate_container(c: &SidecarContainer, path: &str, errs: &mut Vec<FieldError>) {
    if !matches!(
        c.pod_inject_policy.as_str(),
        BEFORE_APP_CONTAINER | AFTER_APP_CONTAINER
    ) {
        errs.push(err(
            format!("{path}.podInjectPolicy"),
            "unsupported pod inject policy",
        ));
    }
    if !matches!(c.share_volume_policy.type_.as_str(), "enabled" | "disabled") {
        errs.push(err(
            format!("{path}.shareVolumePolicy"),
            "unsupported share volume policy",
        ));
    }
    if !matches!(
        c.upgrade_strategy.upgrade_type.as_str(),
        "" | COLD_UPGRADE | HOT_UPGRADE
    ) {
        errs.push(err(
            format!("{path}.upgradeStrategy.upgradeType"),
            "unsupported upgrade type",
        ));
    }
    for (i, t) in c.transfer_env.iter().enumerate() {
        let has_name = !t.source_container_name.is_empty();
        if has_name == t.source_container_name_from.is_some() {
            errs.push(err(
                format!("{path}.transferEnv[{i}]"),
                "exactly one of sourceContainerName and sourceContainerNameFrom must be set",
            ));
        }
        if t.env_name.is_empty() == t.env_names.is_empty() {
            errs.push(err(
                format!("{path}.transferEnv[{i}]"),
                "exactly one of envName and envNames must be set",
            ));
        }
    }
    let k = &c.container;
    if !is_dns1123_label(&k.name) {
        errs.push(err(
            format!("{path}.name"),
            format!("invalid container name {:?}", k.name),
        ));
    }
    if k.image.as_deref().is_none_or(|i| i.trim().is_empty()) {
        errs.push(err(format!("{path}.image"), "Required value"));
    }
    if !matches!(
        k.image_pull_policy.as_deref(),
        Some("Always" | "Never" | "IfNotPresent")
    ) {
        errs.push(err(
            format!("{path}.imagePullPolicy"),
            "supported values: \"Always\", \"IfNotPresent\", \"Never\"",
        ));
    }
    if !matches!(
        k.termination_message_policy.as_deref(),
        Some("File" | "FallbackToLogsOnError")
    ) {
        errs.push(err(
            format!("{path}.terminationMessagePolicy"),
            "supported values: \"File\", \"FallbackToLogsOnError\"",
        ));
    }
}

/// Port of pkg/control/sidecarcontrol/util.go::ValidateSidecarSetPatchMetadataWhitelist and the
/// patchPodMetadata checks of validateSidecarSetSpec (v1.8.4).
fn validate_patch_metadata(
    set: &SidecarSet,
    ctx: &ValidationContext<'_>,
    errs: &mut Vec<FieldError>,
) {
    let mut keys = BTreeSet::new();
    for (i, patch) in set.spec.patch_pod_metadata.iter().enumerate() {
        let path = format!("spec.patchPodMetadata[{i}]");
        if patch.annotations.is_empty() {
            errs.push(err(&path, "no annotations defined for SidecarSet"));
        }
        if !matches!(
            patch.patch_policy.as_str(),
            "" | PATCH_RETAIN | PATCH_OVERWRITE | PATCH_MERGE_JSON
        ) {
            errs.push(err(
                &path,
                format!("unsupported patchPolicy {}", patch.patch_policy),
            ));
        }
        for (k, v) in &patch.annotations {
            if !keys.insert(k.clone()) {
                errs.push(err(&path, format!("patch annotation[{k}] already exist")));
            }
            if patch.patch_policy == PATCH_MERGE_JSON
                && serde_json::from_str::<serde_json::Value>(v).is_err()
            {
                errs.push(err(&path, format!("annotation[{k}] is not a valid json")));
            }
        }
    }
    if set.spec.patch_pod_metadata.is_empty()
        || ctx
            .gates
            .enabled("SidecarSetPatchPodMetadataDefaultsAllowed")
    {
        return;
    }
    let Some(allowed) = ctx.patch_whitelist else {
        errs.push(err(
            "spec.patchPodMetadata",
            "SidecarSet patch metadata whitelist not found",
        ));
        return;
    };
    for k in keys {
        let ok = allowed.iter().any(|expr| {
            let prefix = expr.trim_end_matches(".*").trim_end_matches('*');
            if prefix.len() != expr.len() {
                k.starts_with(prefix)
            } else {
                k == *expr
            }
        });
        if !ok {
            errs.push(err(
                "spec.patchPodMetadata",
                format!("annotation {k} is not allowed"),
            ));
        }
    }
}

/// On UPDATE, every container must already exist in the old object and keep its upgradeType.
///
/// Port of pkg/webhook/sidecarset/validating/sidecarset_hotupgrade.go::validateSidecarContainerConflict (v1.8.4).
pub fn validate_sidecar_container_conflict(
    new: &[SidecarContainer],
    old: &[SidecarContainer],
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for c in new {
        match old.iter().find(|o| o.name() == c.name()) {
            None => errs.push(err(
                "spec.containers",
                format!("container {} is not found", c.name()),
            )),
            Some(o) if o.upgrade_strategy.upgrade_type != c.upgrade_strategy.upgrade_type => {
                errs.push(err(
                    "spec.containers",
                    format!("container {} upgradeType is immutable", c.name()),
                ));
            }
            Some(_) => {}
        }
    }
    errs
}

/// Conflicts with other sets that can select the same pods: container names, differing
/// volumes under one name, and Overwrite annotation patches.
///
/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::validateSidecarConflict (v1.8.4).
pub fn validate_sidecar_conflict(
    set: &SidecarSet,
    others: &[SidecarSet],
    namespaces: &NamespaceLabels,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut containers: BTreeMap<&str, &str> = BTreeMap::new();
    let mut volumes = BTreeMap::new();
    let mut annotations: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for other in others.iter().filter(|o| o.name() != set.name()) {
        let overlap = is_namespace_overlapping(set, other, namespaces)
            && match (&set.spec.selector, &other.spec.selector) {
                (Some(a), Some(b)) => is_selector_overlapping(a, b),
                _ => false,
            };
        if !overlap {
            continue;
        }
        for c in other
            .spec
            .init_containers
            .iter()
            .chain(&other.spec.containers)
        {
            containers.insert(c.name(), other.name());
        }
        for v in &other.spec.volumes {
            volumes.insert(v.name.as_str(), (v, other.name()));
        }
        for p in other
            .spec
            .patch_pod_metadata
            .iter()
            .filter(|p| p.patch_policy != PATCH_RETAIN)
        {
            for k in p.annotations.keys() {
                annotations.insert(k, (other.name(), p.patch_policy.as_str()));
            }
        }
    }
    for c in set.spec.init_containers.iter().chain(&set.spec.containers) {
        if let Some(other) = containers.get(c.name()) {
            errs.push(err(
                "spec.containers.name",
                format!("container {} already exist in {other}", c.name()),
            ));
        }
    }
    for v in &set.spec.volumes {
        if let Some((theirs, other)) = volumes.get(v.name.as_str())
            && *theirs != v
        {
            errs.push(err(
                "spec.volumes",
                format!("volume {} is in conflict with sidecarset {other}", v.name),
            ));
        }
    }
    for p in set
        .spec
        .patch_pod_metadata
        .iter()
        .filter(|p| p.patch_policy != PATCH_RETAIN)
    {
        for k in p.annotations.keys() {
            if let Some((other, policy)) = annotations.get(k.as_str())
                && (p.patch_policy == PATCH_OVERWRITE || *policy == PATCH_OVERWRITE)
            {
                errs.push(err(
                    "spec.patchPodMetadata",
                    format!("annotation {k} is in conflict with sidecarset {other}"),
                ));
            }
        }
    }
    errs
}
