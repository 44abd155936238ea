//! PUB create/update admission (`pkg/webhook/podunavailablebudget/validating`, v1.8.4) and the
//! loose selector overlap it uses (`pkg/util/selector.go`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use serde_json::Value;

use super::{
    PROTECT_OPERATIONS_ANNOTATION, PROTECT_TOTAL_REPLICAS_ANNOTATION, PodUnavailableBudget,
};
use crate::kruise::{
    FeatureGates, KruiseVersion,
    admission::Verdict,
    validation::{
        FieldError, field_error, int_or_percent_errors, label_selector_convertible,
        label_selector_errors,
    },
};

fn as_expressions(sel: &LabelSelector) -> BTreeMap<String, LabelSelectorRequirement> {
    let mut out: BTreeMap<String, LabelSelectorRequirement> = sel
        .match_expressions
        .iter()
        .flatten()
        .map(|e| (e.key.clone(), e.clone()))
        .collect();
    for (k, v) in sel.match_labels.iter().flatten() {
        out.insert(
            k.clone(),
            LabelSelectorRequirement {
                key: k.clone(),
                operator: "In".to_owned(),
                values: Some(vec![v.clone()]),
            },
        );
    }
    out
}

fn values(req: &LabelSelectorRequirement) -> &[String] {
    req.values.as_deref().unwrap_or_default()
}

/// Port of pkg/util/selector.go::isMatchExpOverlap (v1.8.4): whether requirement `a`, read from
/// `a`'s side, can be met together with `b` (not symmetric).
pub fn requirement_overlap(a: &LabelSelectorRequirement, b: &LabelSelectorRequirement) -> bool {
    let overlaps = |x: &[String], y: &[String]| y.iter().any(|v| x.contains(v));
    let contains_all = |x: &[String], y: &[String]| y.iter().all(|v| x.contains(v));
    match (a.operator.as_str(), b.operator.as_str()) {
        ("In", "Exists") => true,
        ("In", "In") => overlaps(values(b), values(a)),
        ("In", "NotIn") => !contains_all(values(b), values(a)),
        ("Exists", "Exists" | "In" | "NotIn") => true,
        ("NotIn", "Exists" | "DoesNotExist" | "NotIn") => true,
        ("NotIn", "In") => !contains_all(values(a), values(b)),
        ("DoesNotExist", "DoesNotExist" | "NotIn") => true,
        _ => false,
    }
}

/// Port of pkg/util/selector.go::IsSelectorLooseOverlap (v1.8.4): both selectors have the same
/// key set and every key's requirements intersect.
pub fn selector_loose_overlap(a: &LabelSelector, b: &LabelSelector) -> bool {
    let ea = as_expressions(a);
    let eb = as_expressions(b);
    ea.iter()
        .all(|(k, ra)| eb.get(k).is_some_and(|rb| requirement_overlap(ra, rb)))
        && eb
            .iter()
            .all(|(k, rb)| ea.get(k).is_some_and(|ra| requirement_overlap(rb, ra)))
}

/// `schema.ParseGroupVersion`: the group, or an error for more than one `/`.
fn parse_group(api_version: &str) -> Result<&str, String> {
    match api_version.matches('/').count() {
        0 => Ok(""),
        1 => Ok(api_version.split_once('/').map_or("", |(g, _)| g)),
        _ => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

/// The selector branch of validatePodUnavailableBudgetSpec: ValidateLabelSelector's errors, then
/// an empty selector, then LabelSelectorAsSelector's failure (its detail is empty upstream).
fn validate_selector(sel: &LabelSelector, errors: &mut Vec<FieldError>) {
    errors.extend(label_selector_errors(sel, "spec.selector"));
    if sel.match_labels.as_ref().map_or(0, BTreeMap::len)
        + sel.match_expressions.as_ref().map_or(0, Vec::len)
        == 0
    {
        errors.push(field_error(
            "spec.selector",
            "Invalid value: empty selector is not valid for PodUnavailableBudget.",
        ));
    }
    if !label_selector_convertible(sel) {
        errors.push(field_error("spec.selector", "Invalid value: \"\""));
    }
}

/// Port of pkg/webhook/podunavailablebudget/validating/pub_create_update_handler.go::
/// validatingPodUnavailableBudgetFn (v1.8.4).
///
/// `old` is the stored object on UPDATE. `others` may hold PUBs of any namespace: as upstream
/// lists the PUBs of `obj`'s namespace only, the others are filtered to that namespace here.
/// Returns upstream's field errors, one for one and in its order (empty = valid); the webhook
/// denies with all of them.
pub fn validate_pub(
    version: KruiseVersion,
    obj: &PodUnavailableBudget,
    old: Option<&PodUnavailableBudget>,
    others: &[PodUnavailableBudget],
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(ops) = obj.annotation(PROTECT_OPERATIONS_ANNOTATION) {
        for op in ops.split(',') {
            // v1.9.0 also accepts RESIZE
            let resize = version == KruiseVersion::V1_9 && op == "RESIZE";
            if !matches!(op, "UPDATE" | "DELETE" | "EVICT") && !resize {
                errors.push(field_error(
                    "metadata",
                    format!(
                        "Internal error: annotation[{PROTECT_OPERATIONS_ANNOTATION}] is invalid"
                    ),
                ));
            }
        }
    }
    if let Some(total) = obj.annotation(PROTECT_TOTAL_REPLICAS_ANNOTATION)
        && total.parse::<i32>().is_err()
    {
        errors.push(field_error(
            "metadata",
            format!("Internal error: annotation[{PROTECT_TOTAL_REPLICAS_ANNOTATION}] is invalid"),
        ));
    }
    let spec = &obj.spec;
    match (&spec.selector, &spec.target_ref) {
        (None, None) => errors.push(field_error(
            "spec.selector, targetRef",
            "Required value: no selector or targetRef defined in PodUnavailableBudget",
        )),
        (Some(_), Some(_)) => errors.push(field_error(
            "spec.selector, targetRef",
            "Required value: selector and targetRef are mutually exclusive",
        )),
        (None, Some(target)) => {
            if target.api_version.is_empty() || target.name.is_empty() || target.kind.is_empty() {
                errors.push(field_error(
                    "spec.TargetReference",
                    "Invalid value: empty TargetReference is not valid for PodUnavailableBudget.",
                ));
            }
            if let Err(e) = parse_group(&target.api_version) {
                errors.push(field_error(
                    "spec.TargetReference",
                    format!("Invalid value: {e}"),
                ));
            }
        }
        (Some(sel), None) => validate_selector(sel, &mut errors),
    }
    match (&spec.max_unavailable, &spec.min_available) {
        (None, None) => errors.push(field_error(
            "spec.maxUnavailable, minAvailable",
            "Required value: no maxUnavailable or minAvailable defined in PodUnavailableBudget",
        )),
        (Some(_), Some(_)) => errors.push(field_error(
            "spec.maxUnavailable, minAvailable",
            "Required value: maxUnavailable and minAvailable are mutually exclusive",
        )),
        (Some(v), None) => errors.extend(int_or_percent_errors(v, "spec.maxUnavailable")),
        (None, Some(v)) => errors.extend(int_or_percent_errors(v, "spec.minAvailable")),
    }
    if let Some(old) = old
        && (old.spec.selector != spec.selector || old.spec.target_ref != spec.target_ref)
    {
        errors.push(field_error(
            "spec.selector, targetRef",
            "Required value: selector and targetRef cannot be modified",
        ));
    }
    let namespace = obj.metadata.namespace.as_deref().unwrap_or_default();
    let same_namespace = |o: &&PodUnavailableBudget| {
        o.metadata.namespace.as_deref().unwrap_or_default() == namespace
    };
    for other in others
        .iter()
        .filter(same_namespace)
        .filter(|o| o.name() != obj.name())
    {
        match (
            &spec.target_ref,
            &other.spec.target_ref,
            &spec.selector,
            &other.spec.selector,
        ) {
            (Some(cur), Some(oth), _, _) => {
                let same_group =
                    parse_group(&cur.api_version).ok() == parse_group(&oth.api_version).ok();
                if same_group && cur.kind == oth.kind && cur.name == oth.name {
                    errors.push(field_error("spec.targetReference", format!("Invalid value: pub.spec.targetReference is in conflict with other PodUnavailableBudget {}", other.name())));
                    break;
                }
            }
            (_, _, Some(cur), Some(oth)) if selector_loose_overlap(cur, oth) => {
                errors.push(field_error("spec.selector", format!("Invalid value: pub.spec.selector is in conflict with other PodUnavailableBudget {}", other.name())));
                break;
            }
            _ => {}
        }
    }
    errors
}

/// Port of pkg/webhook/podunavailablebudget/validating/pub_create_update_handler.go::Handle
/// (v1.8.4): the validating admission hook for PUB CREATE/UPDATE, on raw objects.
///
/// Both PUB gates off, an undecodable object or any field error is a 400 whose message is the
/// error (field errors aggregated as `[e1, e2]` when there are several, as Go's aggregate prints).
pub fn admit_pub(
    version: KruiseVersion,
    gates: &FeatureGates,
    operation: &str,
    object: &Value,
    old_object: Option<&Value>,
    others: &[PodUnavailableBudget],
) -> Verdict {
    if !gates.enabled("PodUnavailableBudgetDeleteGate")
        && !gates.enabled("PodUnavailableBudgetUpdateGate")
    {
        return Verdict::deny(
            400,
            "feature PodUnavailableBudget is invalid, please open via feature-gate(PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate)",
        );
    }
    let decode = |v: &Value| serde_json::from_value::<PodUnavailableBudget>(v.clone());
    let obj = match decode(object) {
        Ok(obj) => obj,
        Err(e) => return Verdict::deny(400, e.to_string()),
    };
    let old = match (operation, old_object) {
        ("UPDATE", Some(old)) => match decode(old) {
            Ok(old) => Some(old),
            Err(e) => return Verdict::deny(400, e.to_string()),
        },
        _ => None,
    };
    let errors: Vec<String> = validate_pub(version, &obj, old.as_ref(), others)
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    match errors.len() {
        0 => Verdict::allow(),
        1 => Verdict::deny(400, errors.concat()),
        _ => Verdict::deny(400, format!("[{}]", errors.join(", "))),
    }
}
