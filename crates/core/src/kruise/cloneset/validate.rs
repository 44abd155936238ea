//! The CloneSet validating webhook (`vcloneset.kb.io`, `pkg/webhook/cloneset/validating`,
//! v1alpha1) at v1.8.4 and v1.9.0: `validateCloneSet`, `validateCloneSetUpdate`, with upstream's
//! field paths and messages (`field.Error` as apimachinery prints it, aggregated as
//! `ToAggregate` does).
//!
//! What is checked: replicas, the selector (required, valid, not empty, matching the template
//! labels), restartPolicy / activeDeadlineSeconds of the template, `podsToDelete` (duplicates,
//! then each newly named pod: exists, not terminating, controlled by this CloneSet), the update
//! strategy (type, partition, priority/scatter, maxUnavailable/maxSurge: the parser and wording
//! differ per version, kruise-1.9.md §1.8), `progressDeadlineSeconds` (v1.9.0 only), and on
//! update the fields that may not change. Not ported: `ValidateObjectMeta(Update)` (the API
//! server checks names), the full pod template validation, and the InPlaceOnly "only images may
//! change" check of `ValidateCloneSetUpdate`.
//!
//! Objects are validated as upstream's mutating webhook leaves them: [`defaulted`] applies
//! `SetDefaultsCloneSet` first.

mod gofmt;
mod strategy;

use std::collections::BTreeSet;

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::util::intstr::IntOrString};

use crate::{
    api::CloneSet,
    kruise::{
        KruiseVersion,
        admission::Verdict,
        selector,
        validation::{FieldError, field_error, label_selector_errors},
    },
};

pub use strategy::{IntStrParse, parse_int_or_percent};

/// What the webhook needs to look up: a pod in the CloneSet's namespace by name.
pub type PodLookup<'a> = &'a dyn Fn(&str) -> Option<Pod>;

/// Port of `SetDefaultsCloneSet` for the fields validation reads: replicas 1, type ReCreate,
/// partition 0, maxUnavailable 20%, maxSurge 0, revisionHistoryLimit 10.
pub fn defaulted(cs: &CloneSet) -> CloneSet {
    let mut cs = cs.clone();
    let spec = &mut cs.spec;
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit.get_or_insert(10);
    let strategy = &mut spec.update_strategy;
    if strategy.type_.as_deref().is_none_or(str::is_empty) {
        strategy.type_ = Some("ReCreate".to_owned());
    }
    strategy.partition.get_or_insert(IntOrString::Int(0));
    strategy
        .max_unavailable
        .get_or_insert_with(|| IntOrString::String("20%".to_owned()));
    strategy.max_surge.get_or_insert(IntOrString::Int(0));
    cs
}

/// The request as the webhook decodes it.
pub struct Request<'a> {
    /// The new object, after defaulting.
    pub cs: &'a CloneSet,
    /// The stored object on UPDATE, after defaulting.
    pub old: Option<&'a CloneSet>,
    /// `spec.selector` is present in the request (the typed model cannot tell nil from `{}`).
    pub selector_set: bool,
    pub version: KruiseVersion,
    pub pods: PodLookup<'a>,
}

/// The webhook's answer: 422 with the aggregated field errors, or allowed.
pub fn admit(req: &Request<'_>) -> (Verdict, Vec<FieldError>) {
    let errs = match req.old {
        None => validate_cloneset(req),
        Some(old) => validate_update(req, old),
    };
    let verdict = aggregate(&errs).map_or_else(Verdict::allow, |m| Verdict::deny(422, m));
    (verdict, errs)
}

/// `field.ErrorList.ToAggregate().Error()`: one message as is, several (deduplicated) in
/// brackets, comma-separated.
pub fn aggregate(errs: &[FieldError]) -> Option<String> {
    let mut seen = BTreeSet::new();
    let msgs: Vec<String> = errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .filter(|m| seen.insert(m.clone()))
        .collect();
    match msgs.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(format!("[{}]", many.join(", "))),
    }
}

/// Port of `validateCloneSetUpdate`: the fields that may not change, then the whole object.
fn validate_update(req: &Request<'_>, old: &CloneSet) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (new, old_spec) = (&req.cs.spec, &old.spec);
    // Everything but replicas, template, scaleStrategy, updateStrategy, minReadySeconds,
    // lifecycle, revisionHistoryLimit, volumeClaimTemplates (and v1.9's progressDeadlineSeconds,
    // a field v1.8.4 does not know) must stay: of this model's fields, the selector.
    if new.selector != old_spec.selector {
        let message = match req.version {
            KruiseVersion::V1_8 => {
                "Forbidden: updates to cloneset spec for fields other than 'replicas', \
                 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', \
                 'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden"
            }
            KruiseVersion::V1_9 => {
                "Forbidden: updates to cloneset spec for fields other than 'replicas', \
                 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', \
                 'progressDeadlineSeconds', 'volumeClaimTemplates' and 'revisionHistoryLimit' \
                 are forbidden"
            }
        };
        errs.push(field_error("spec", message));
    }
    errs.extend(validate_cloneset(req));
    errs
}

/// Port of `validateCloneSet` / `validateCloneSetSpec` (minus the pod template validation).
fn validate_cloneset(req: &Request<'_>) -> Vec<FieldError> {
    let cs = req.cs;
    let spec = &cs.spec;
    let mut errs = Vec::new();
    let replicas = spec.replicas.unwrap_or(1);
    if replicas < 0 {
        errs.push(gofmt::negative("spec.replicas", i64::from(replicas)));
    }
    let sel = &spec.selector;
    if !req.selector_set {
        errs.push(field_error("spec.selector", "Required value"));
    } else {
        errs.extend(label_selector_errors(sel, "spec.selector"));
        if selector::is_empty(sel) {
            errs.push(field_error(
                "spec.selector",
                format!(
                    "Invalid value: {}: empty selector is invalid for cloneset",
                    gofmt::label_selector(sel)
                ),
            ));
        }
    }
    // LabelSelectorAsSelector: nil is "nothing" (not empty, matches no labels); `{}` is
    // "everything" (empty: no label check).
    let labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref());
    match selector::matches(sel, labels.unwrap_or(&Default::default())) {
        Err(_) => errs.push(field_error(
            "spec.selector",
            format!("Invalid value: {}", gofmt::label_selector(sel)),
        )),
        Ok(matched) => {
            let nothing = !req.selector_set;
            if nothing || (!selector::is_empty(sel) && !matched) {
                errs.push(field_error(
                    "spec.template.metadata.labels",
                    format!(
                        "Invalid value: {}: `selector` does not match template `labels`",
                        gofmt::string_map(labels)
                    ),
                ));
            }
        }
    }
    let pod_spec = spec.template.spec.as_ref();
    if let Some(policy) = pod_spec
        .and_then(|s| s.restart_policy.as_deref())
        .filter(|p| !p.is_empty() && *p != "Always")
    {
        errs.push(field_error(
            "spec.template.spec.restartPolicy",
            format!("Unsupported value: {policy:?}: supported values: \"Always\""),
        ));
    }
    if pod_spec.is_some_and(|s| s.active_deadline_seconds.is_some()) {
        errs.push(field_error(
            "spec.template.spec.activeDeadlineSeconds",
            "Forbidden: activeDeadlineSeconds in cloneset is not Supported",
        ));
    }
    errs.extend(strategy::validate_scale_strategy(cs, req.old, req.pods));
    errs.extend(strategy::validate_update_strategy(
        &spec.update_strategy,
        replicas,
        req.version,
    ));
    // v1.9.0 only: v1.8.4 has no such field (its CRD prunes it).
    if req.version == KruiseVersion::V1_9
        && let Some(pds) = spec.progress_deadline_seconds
    {
        let path = "spec.progressDeadlineSeconds";
        if pds < 0 {
            errs.push(gofmt::negative(path, i64::from(pds)));
        }
        if pds != i32::MAX && pds <= spec.min_ready_seconds.unwrap_or(0) {
            errs.push(field_error(
                path,
                format!("Invalid value: {pds}: must be greater than minReadySeconds"),
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests;
