//! SidecarSet conflicts: with the other sets that can select the same pods (names, volumes,
//! annotation patches), and on UPDATE with the old object's containers.

use std::collections::BTreeMap;

use super::FieldError;
use crate::{
    api::sidecarset::{PATCH_OVERWRITE, PATCH_RETAIN, SidecarContainer, SidecarSet},
    kruise::{
        sidecarset::matching::{
            NamespaceLabels, is_namespace_overlapping, is_selector_overlapping,
        },
        validation::field_error as err,
    },
};

/// On UPDATE, every container must already exist in the old object and keep its upgradeType
/// (an old container with no upgradeType set may take any).
///
/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::validateSidecarContainerConflict (v1.8.4).
pub fn validate_sidecar_container_conflict(
    new: &[SidecarContainer],
    old: &[SidecarContainer],
) -> Vec<FieldError> {
    // Later old entries of one name win, as in upstream's map.
    let old_types: BTreeMap<&str, &str> = old
        .iter()
        .map(|o| (o.name(), o.upgrade_strategy.upgrade_type.as_str()))
        .collect();
    let mut errs = Vec::new();
    for c in new {
        match old_types.get(c.name()) {
            None => errs.push(err(
                "spec.containers.name",
                format!(
                    "Invalid value: {:?}: container {} is not found",
                    c.name(),
                    c.name()
                ),
            )),
            Some(old_type)
                if !old_type.is_empty() && *old_type != c.upgrade_strategy.upgrade_type =>
            {
                errs.push(err(
                    "spec.containers.upgradeStrategy.upgradeType",
                    format!(
                        "Invalid value: {:?}: container {} upgradeType is immutable",
                        c.name(),
                        c.name()
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    errs
}

/// Conflicts with the other sets whose namespace scope and selector overlap this one's: init
/// container names against their init containers, container names against their containers,
/// volumes of one name that differ, and annotation patches where either side overwrites.
///
/// Port of pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go::validateSidecarConflict (v1.8.4).
pub fn validate_sidecar_conflict(
    set: &SidecarSet,
    others: &[SidecarSet],
    namespaces: &NamespaceLabels,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut init_containers: BTreeMap<&str, &str> = BTreeMap::new();
    let mut containers: BTreeMap<&str, &str> = BTreeMap::new();
    let mut volumes = BTreeMap::new();
    let mut annotations: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for other in others.iter().filter(|o| o.name() != set.name()) {
        let overlap = is_namespace_overlapping(set, other, namespaces)
            && match (&set.spec.selector, &other.spec.selector) {
                (Some(a), Some(b)) => is_selector_overlapping(a, b),
                // A nil selector has no labels or expressions: it overlaps everything.
                (a, b) => is_selector_overlapping(
                    &a.clone().unwrap_or_default(),
                    &b.clone().unwrap_or_default(),
                ),
            };
        if !overlap {
            continue;
        }
        for c in &other.spec.init_containers {
            init_containers.insert(c.name(), other.name());
        }
        for c in &other.spec.containers {
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
    for (theirs, ours) in [
        (&init_containers, &set.spec.init_containers),
        (&containers, &set.spec.containers),
    ] {
        for c in ours {
            if let Some(other) = theirs.get(c.name()) {
                errs.push(err(
                    "spec.containers",
                    format!(
                        "Invalid value: {:?}: container {} already exist in {other}",
                        c.name(),
                        c.name()
                    ),
                ));
            }
        }
    }
    for v in &set.spec.volumes {
        // The first volume of that name in the other set is the one compared.
        if let Some((_, other)) = volumes.get(v.name.as_str()) {
            let theirs = others
                .iter()
                .find(|o| o.name() == *other)
                .and_then(|o| o.spec.volumes.iter().find(|x| x.name == v.name));
            if theirs != Some(v) {
                errs.push(err(
                    "spec.volumes",
                    format!(
                        "Invalid value: {:?}: volume {} is in conflict with sidecarset {other}",
                        v.name, v.name
                    ),
                ));
            }
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
                    format!("Invalid value: {k:?}: annotation {k} is in conflict with sidecarset {other}"),
                ));
            }
        }
    }
    errs
}
