//! SidecarSet validation (validating webhook): spec rules (here and in `podspec`), conflicts
//! with other sets and immutable container settings (`conflict`).

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};

use crate::kruise::{KruiseVersion, features::FeatureGates, selector};

pub use crate::kruise::validation::{FieldError, is_dns1123_label};
use crate::kruise::validation::{
    field_error as err, int_or_percent_errors, label_selector_convertible, label_selector_errors,
    qualified_name_errors,
};

use super::{history::RevisionRef, matching::NamespaceLabels, resources};
use crate::api::common::{UpdatePriorityStrategy, UpdateScatterTerm};
use crate::api::sidecarset::{
    AFTER_APP_CONTAINER, BEFORE_APP_CONTAINER, ROLLING_UPDATE, SidecarSet,
};

mod conflict;
pub mod podspec;

pub use conflict::{validate_sidecar_conflict, validate_sidecar_container_conflict};

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
    /// The `SidecarSet_PatchPodMetadata_WhiteList` configuration: None when it does not exist,
    /// else the `allowedAnnotationKeyExprs` (Go regular expressions) of the rules whose
    /// selector matches this set.
    pub patch_whitelist: Option<&'a [String]>,
    /// This set's ControllerRevisions (for injectionStrategy.revision).
    pub revisions: &'a [RevisionRef],
}

/// Port of validateSidecarSetName (v1.8.4): `^[a-zA-Z0-9\-]+$`, at most 63 characters.
fn sidecar_set_name_errors(name: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        msgs.push("sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')".to_owned());
    }
    if name.len() > 63 {
        msgs.push("must be no more than 63 characters".to_owned());
    }
    msgs
}

/// Validates a SidecarSet on CREATE/UPDATE and returns upstream's field errors one for one, in
/// its order: metadata, spec, then (UPDATE) the container conflicts with the old object. Only
/// when all of those pass are the conflicts with the other SidecarSets checked.
///
/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::validateSidecarSet
/// (v1.8.4). The Kubernetes container and volume validation it runs on a fake pod is reduced to
/// the checks in [`podspec`].
pub fn validate_sidecar_set(set: &SidecarSet, ctx: &ValidationContext<'_>) -> Vec<FieldError> {
    let mut errs = podspec::validate_object_meta(&set.metadata, sidecar_set_name_errors);
    errs.extend(validate_sidecar_set_spec(set, ctx));
    if let Some(old) = ctx.old {
        errs.extend(validate_sidecar_container_conflict(
            &set.spec.containers,
            &old.spec.containers,
        ));
    }
    if !errs.is_empty() {
        return errs;
    }
    let empty = NamespaceLabels::new();
    validate_sidecar_conflict(set, ctx.others, ctx.namespaces.unwrap_or(&empty))
}

/// `validateSelector` (v1.8.4): ValidateLabelSelector, an empty selector, then a selector
/// LabelSelectorAsSelector refuses (reported one level deeper, at `<path>.selector`, as
/// upstream does).
fn validate_selector(sel: &LabelSelector, path: &str, errs: &mut Vec<FieldError>) {
    errs.extend(label_selector_errors(sel, path));
    if selector::is_empty(sel) {
        errs.push(err(
            path,
            "Invalid value: empty selector is not valid for sidecarset.",
        ));
    }
    if !label_selector_convertible(sel) {
        errs.push(err(format!("{path}.selector"), "Invalid value: \"\""));
    }
}

/// Port of sidecarset_create_update_handler.go::validateSidecarSetSpec (v1.8.4).
pub fn validate_sidecar_set_spec(set: &SidecarSet, ctx: &ValidationContext<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &set.spec;
    for c in &spec.init_containers {
        if c.container.restart_policy.as_deref() == Some("Always")
            && spec.update_strategy.type_ == ROLLING_UPDATE
        {
            errs.push(err(
                "spec.updateStrategy",
                "Required value: The initContainer in-place upgrade is not currently supported.",
            ));
        }
    }
    match &spec.selector {
        None => errs.push(err(
            "spec.selector",
            "Required value: no selector defined for SidecarSet",
        )),
        Some(sel) => validate_selector(sel, "spec.selector", &mut errs),
    }
    let has_ns = spec.namespace.as_deref().is_some_and(|n| !n.is_empty());
    match &spec.namespace_selector {
        Some(_) if has_ns && ctx.version == KruiseVersion::V1_8 => errs.push(err(
            "spec.namespace, namespaceSelector",
            "Required value: namespace and namespaceSelector are mutually exclusive",
        )),
        Some(sel) => validate_selector(sel, "spec.namespaceSelector", &mut errs),
        None => {}
    }
    validate_injection_strategy(set, ctx, &mut errs);
    validate_update_strategy(set, &mut errs);
    if spec.init_containers.is_empty() && spec.containers.is_empty() {
        errs.push(err(
            "spec",
            "Required value: no initContainer or container defined for SidecarSet",
        ));
    } else {
        validate_containers_for_sidecar_set(set, ctx.version, &mut errs);
    }
    validate_patch_metadata(set, ctx, &mut errs);
    errs
}

/// `validateSidecarSetInjectionStrategy` (v1.8.4). Upstream tests the pointers, so an empty
/// `revisionName` or `customVersion` counts as given; its errors sit at `revision` (no `spec.`
/// prefix).
fn validate_injection_strategy(
    set: &SidecarSet,
    ctx: &ValidationContext<'_>,
    errs: &mut Vec<FieldError>,
) {
    let Some(rev) = &set.spec.injection_strategy.revision else {
        return;
    };
    match (&rev.revision_name, &rev.custom_version) {
        (None, None) => errs.push(err(
            "revision",
            "Invalid value: revisionName and customVersion cannot be empty simultaneously",
        )),
        (Some(name), _) => {
            if !ctx.revisions.iter().any(|r| r.name == *name) {
                errs.push(err(
                    "revision",
                    format!("Invalid value: null: Cannot find specific ControllerRevision, err: controllerrevisions.apps \"{name}\" not found"),
                ));
            }
        }
        (None, Some(version)) => {
            if !ctx
                .revisions
                .iter()
                .any(|r| r.custom_version.as_deref() == Some(version.as_str()))
            {
                errs.push(err(
                    "revision",
                    "Invalid value: null: Cannot find specific ControllerRevision, err: <nil>",
                ));
            }
        }
    }
    if !matches!(rev.policy.as_str(), "" | "Always" | "Partial") {
        errs.push(err(
            "revision.policy",
            format!(
                "Invalid value: Invalid policy {}, supported: [Always, Partial]",
                rev.policy
            ),
        ));
    }
}

/// `validateSidecarSetUpdateStrategy` (v1.8.4): only a RollingUpdate strategy is checked.
fn validate_update_strategy(set: &SidecarSet, errs: &mut Vec<FieldError>) {
    let s = &set.spec.update_strategy;
    if s.type_ != ROLLING_UPDATE {
        return;
    }
    // intStrIsSet: a string partition always counts, an int one when it is not 0.
    let partition_set = match &s.partition {
        None | Some(IntOrString::Int(0)) => false,
        Some(_) => true,
    };
    if partition_set && s.selector.is_some() {
        errs.push(err(
            "updateStrategy",
            "Invalid value: Partition and Selector cannot be used together",
        ));
    }
    if let Some(sel) = &s.selector {
        validate_selector(sel, "spec.updateStrategy.selector", errs);
    }
    if let Some(p) = &s.partition {
        errs.extend(positive_int_or_percent_errors(
            p,
            "spec.updateStrategy.partition",
        ));
    }
    if let Some(m) = &s.max_unavailable {
        errs.extend(positive_int_or_percent_errors(
            m,
            "spec.updateStrategy.maxUnavailable",
        ));
    }
    if let Some(message) = s
        .priority_strategy
        .as_ref()
        .and_then(priority_strategy_error)
    {
        errs.push(err(
            "spec.updateStrategy.priorityStrategy",
            format!("Required value: {message}"),
        ));
    }
    if let Some(message) = scatter_strategy_error(&s.scatter_strategy) {
        errs.push(err(
            "spec.updateStrategy.scatterStrategy",
            format!("Required value: {message}"),
        ));
    }
}

/// apps `ValidatePositiveIntOrPercent` alone (no 100% cap): an int ≥ 0 or digits followed by `%`.
fn positive_int_or_percent_errors(v: &IntOrString, path: &str) -> Vec<FieldError> {
    int_or_percent_errors(v, path)
        .into_iter()
        .filter(|e| !e.message.ends_with("must not be greater than 100%"))
        .collect()
}

/// Port of apis/apps/pub/update_priority.go::FieldsValidation (v1.8.4): the first problem.
pub(crate) fn priority_strategy_error(p: &UpdatePriorityStrategy) -> Option<String> {
    if !p.weight_priority.is_empty() && !p.order_priority.is_empty() {
        return Some("only one of weightPriority and orderPriority can be used".to_owned());
    }
    for w in &p.weight_priority {
        if !(0..=100).contains(&w.weight) {
            return Some("weight must be valid number in the range 1-100".to_owned());
        }
        if selector::is_empty(&w.match_selector) {
            return Some("selector can not be empty".to_owned());
        }
        if !label_selector_convertible(&w.match_selector) {
            return Some("invalid selector".to_owned());
        }
    }
    if p.order_priority.iter().any(|o| o.ordered_key.is_empty()) {
        return Some("order key can not be empty".to_owned());
    }
    None
}

/// Port of apis/apps/v1alpha1/scatter_strategy.go::FieldsValidation (v1.8.4): the first
/// problem (an empty key, or a repeated key and value; an empty value is allowed).
pub(crate) fn scatter_strategy_error(terms: &[UpdateScatterTerm]) -> Option<String> {
    let mut seen = BTreeSet::new();
    for t in terms {
        if t.key.is_empty() {
            return Some("key should not be empty".to_owned());
        }
        if !seen.insert((&t.key, &t.value)) {
            return Some(format!("duplicated key={} value={}", t.key, t.value));
        }
    }
    None
}

/// `validateContainersForSidecarSet` (v1.8.4): the SidecarSet fields of each container (their
/// errors carry upstream's odd paths, `spec.container.<field>` and `spec[i].transferEnv`), then
/// the fake pod's volumes and containers.
///
/// v1.9.0 adds the `resourcesPolicy` rules, at upstream's path `spec[i].resourcesPolicy` (the
/// index into initContainers or containers).
fn validate_containers_for_sidecar_set(
    set: &SidecarSet,
    version: KruiseVersion,
    errs: &mut Vec<FieldError>,
) {
    let spec = &set.spec;
    if version == KruiseVersion::V1_9 {
        for (i, c) in spec.init_containers.iter().enumerate() {
            let path = format!("spec[{i}].resourcesPolicy");
            errs.extend(resources::init_container_policy_error(c, &path));
            errs.extend(resources::validate_resources_policy(c, &path));
        }
    }
    for (i, c) in spec.containers.iter().enumerate() {
        if !matches!(
            c.pod_inject_policy.as_str(),
            BEFORE_APP_CONTAINER | AFTER_APP_CONTAINER
        ) {
            errs.push(err(
                "spec.container.podInjectPolicy",
                format!(
                    "Invalid value: {:?}: unsupported pod inject policy",
                    c.pod_inject_policy
                ),
            ));
        }
        if !matches!(c.share_volume_policy.type_.as_str(), "enabled" | "disabled") {
            errs.push(err(
                "spec.container.shareVolumePolicy",
                "Invalid value: unsupported share volume policy",
            ));
        }
        for t in &c.transfer_env {
            if let Some(fs) = t
                .source_container_name_from
                .as_ref()
                .and_then(|f| f.field_ref.as_ref())
            {
                errs.extend(downward_api_errors(
                    fs,
                    &format!("spec[{i}].transferEnv.fieldRef"),
                ));
            }
        }
        if version == KruiseVersion::V1_9 {
            errs.extend(resources::validate_resources_policy(
                c,
                &format!("spec[{i}].resourcesPolicy"),
            ));
        }
    }
    let (volume_errs, volumes) = podspec::validate_volumes(&spec.volumes);
    errs.extend(volume_errs);
    let mut containers: Vec<_> = spec
        .containers
        .iter()
        .map(|c| c.container.clone())
        .collect();
    if containers.is_empty() {
        containers.push(podspec::fake_container());
    }
    let init: Vec<_> = spec
        .init_containers
        .iter()
        .map(|c| c.container.clone())
        .collect();
    errs.extend(podspec::validate_containers(&init, &containers, &volumes));
}

/// `validateObjectFieldSelector` of the SidecarSet webhook (v1.8.4), for the field paths a
/// transferEnv may read: `metadata.name` and subscripted labels and annotations.
fn downward_api_errors(
    fs: &k8s_openapi::api::core::v1::ObjectFieldSelector,
    path: &str,
) -> Vec<FieldError> {
    if fs.api_version.as_deref().unwrap_or_default().is_empty() {
        return vec![err(format!("{path}.apiVersion"), "Required value")];
    }
    if fs.field_path.is_empty() {
        return vec![err(format!("{path}.fieldPath"), "Required value")];
    }
    let (field, subscript) = match fs.field_path.split_once('[') {
        Some((f, rest)) => match rest.strip_suffix(']') {
            Some(sub) => (f, Some(sub.trim_matches('\''))),
            None => (fs.field_path.as_str(), None),
        },
        None => (fs.field_path.as_str(), None),
    };
    match (field, subscript) {
        ("metadata.annotations", Some(key)) => qualified_name_errors(&key.to_lowercase())
            .into_iter()
            .map(|m| err(path, format!("Invalid value: {key:?}: {m}")))
            .collect(),
        ("metadata.labels", Some(key)) => qualified_name_errors(key)
            .into_iter()
            .map(|m| err(path, format!("Invalid value: {key:?}: {m}")))
            .collect(),
        (other, Some(_)) => vec![err(
            path,
            format!("Invalid value: {other:?}: does not support subscript"),
        )],
        (
            "metadata.name"
            | "metadata.namespace"
            | "metadata.uid"
            | "metadata.labels"
            | "metadata.annotations",
            None,
        ) => Vec::new(),
        (other, None) => vec![err(
            format!("{path}.fieldPath"),
            format!("Unsupported value: {other:?}"),
        )],
    }
}

/// Port of pkg/control/sidecarcontrol/util.go::ValidateSidecarSetPatchMetadataWhitelist and the
/// patchPodMetadata checks of validateSidecarSetSpec (v1.8.4): the whitelist first, then per
/// patch no annotations (else the annotation keys), no patchPolicy, repeated keys.
fn validate_patch_metadata(
    set: &SidecarSet,
    ctx: &ValidationContext<'_>,
    errs: &mut Vec<FieldError>,
) {
    let patches = &set.spec.patch_pod_metadata;
    if let Err(message) = patch_metadata_whitelist(set, ctx) {
        errs.push(err(
            "spec.patchPodMetadata",
            format!("Required value: {message}"),
        ));
    }
    let mut keys = BTreeSet::new();
    for patch in patches {
        if patch.annotations.is_empty() {
            errs.push(err(
                "spec.patchPodMetadata",
                "Required value: no annotations defined for SidecarSet",
            ));
        } else {
            errs.extend(podspec::annotation_errors(
                Some(&patch.annotations),
                "patchPodMetadata.annotations",
            ));
        }
        if patch.patch_policy.is_empty() {
            errs.push(err(
                "spec.patchPodMetadata",
                "Required value: no patchPolicy defined for patchPodMetadata",
            ));
        }
        for k in patch.annotations.keys() {
            if !keys.insert(k.clone()) {
                errs.push(err(
                    "spec.patchPodMetadata",
                    format!("Required value: patch annotation[{k}] already exist"),
                ));
            }
        }
    }
}

/// Port of pkg/control/sidecarcontrol/util.go::ValidateSidecarSetPatchMetadataWhitelist
/// (v1.8.4). `ctx.patch_whitelist` holds the `allowedAnnotationKeyExprs` (Go regular
/// expressions, matched anywhere in the key) of the whitelist rules that select this set; None
/// means there is no whitelist. The defaults gate only excuses a missing or empty whitelist.
fn patch_metadata_whitelist(set: &SidecarSet, ctx: &ValidationContext<'_>) -> Result<(), String> {
    if set.spec.patch_pod_metadata.is_empty() {
        return Ok(());
    }
    let defaults_allowed = ctx
        .gates
        .enabled("SidecarSetPatchPodMetadataDefaultsAllowed");
    let Some(exprs) = ctx.patch_whitelist else {
        return if defaults_allowed {
            Ok(())
        } else {
            Err("SidecarSet patch metadata whitelist not found".to_owned())
        };
    };
    let regs = exprs
        .iter()
        .map(|e| regex::Regex::new(e).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if regs.is_empty() {
        return if defaults_allowed {
            Ok(())
        } else {
            Err("sidecarSet patch metadata annotation is not allowed".to_owned())
        };
    }
    for key in set
        .spec
        .patch_pod_metadata
        .iter()
        .flat_map(|p| p.annotations.keys())
    {
        if !regs.iter().any(|r| r.is_match(key)) {
            return Err(format!(
                "sidecarSet patch metadata annotation({key}) is not allowed"
            ));
        }
    }
    Ok(())
}
