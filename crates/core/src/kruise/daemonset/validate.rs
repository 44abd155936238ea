//! The Advanced DaemonSet validating webhook (`vdaemonset.kb.io`), ported from
//! `pkg/webhook/daemonset/validating` at v1.8.4 and v1.9.0, with the defaults the mutating
//! webhook (`mdaemonset.kb.io`, `SetDefaultsDaemonSet` / `SetDefaultsDaemonSetV1beta1`) applies
//! before it, since a real API server calls the mutating hook first.
//!
//! What differs by [`KruiseVersion`]:
//!
//! * `rollingUpdate.partition`: v1.8.4 decodes it as an int32 (≥ 0); v1.9.0 as an int-or-string:
//!   an int ≥ 0, or a string matching `^[0-9]+%$` of at most 100%.
//! * v1.9.0 switches on the request's served version: v1beta1 requests accept the rolling update
//!   types `""`, `Standard` and `InPlaceIfPossible` only (`Surging` is unsupported, and its
//!   defaulter does not rewrite it), and their update allow-list names `scaleStrategy`. Another
//!   version is a 400. v1.8.4 reads every request as v1alpha1.
//! * W2, the read-write GCE persistent-disk check v1.8.4 ran on templates, is a no-op there: k8s
//!   1.30's `SkipReadOnlyValidationGCE` gate defaults to true. v1.9.0 dropped the call.
//!
//! Not ported: `ValidateObjectMeta` / `ValidateObjectMetaUpdate` (the API server checks names)
//! and the pod-template checks of `ValidatePodTemplateSpec`; the template rules the webhook adds
//! itself (restartPolicy, activeDeadlineSeconds) are ported.

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};
use serde_json::Value;

use crate::{
    api::{DaemonSet, daemonset::DaemonSetUpdateStrategy},
    kruise::{
        KruiseVersion,
        admission::Verdict,
        selector,
        validation::{FieldError, field_error, label_selector_convertible, label_selector_errors},
    },
};

/// The served version a request came in (`req.AdmissionRequest.Resource.Version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    V1alpha1,
    V1beta1,
}

impl Served {
    /// `v1alpha1` / `v1beta1`; None for any other version.
    pub fn parse(version: &str) -> Option<Self> {
        match version {
            "v1alpha1" => Some(Self::V1alpha1),
            "v1beta1" => Some(Self::V1beta1),
            _ => None,
        }
    }

    /// The Go package the types print as (`%#v`).
    fn package(self) -> &'static str {
        match self {
            Self::V1alpha1 => "v1alpha1",
            Self::V1beta1 => "v1beta1",
        }
    }
}

const PARTITION: &str = "spec.updateStrategy.rollingUpdate.rollingUpdate.partition";
const PERCENT_ERROR: &str = "a valid percent string must be a numeric string followed by an \
    ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/// The update allow-list message of the v1alpha1 handler (two spaces before 'updateStrategy' are
/// upstream's).
pub const FORBIDDEN_UPDATE_V1ALPHA1: &str = "updates to daemonset spec for fields other than \
    'BurstReplicas', 'template', 'lifecycle',  'updateStrategy', 'minReadySeconds', and \
    'revisionHistoryLimit' are forbidden";
/// The update allow-list message of v1.9.0's v1beta1 handler.
pub const FORBIDDEN_UPDATE_V1BETA1: &str = "updates to daemonset spec for fields other than \
    'BurstReplicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', \
    'minReadySeconds', and 'revisionHistoryLimit' are forbidden";

/// The mutating webhook's defaults: `SetDefaultsDaemonSet` (v1alpha1: the deprecated `Surging`
/// becomes `Standard` with maxSurge 1 / maxUnavailable 0 where unset) or
/// `SetDefaultsDaemonSetV1beta1` (no Surging rewrite): burstReplicas 250, type RollingUpdate,
/// rolling type Standard, maxUnavailable 1 / maxSurge 0 when both unset, revisionHistoryLimit 10.
pub fn set_defaults(ds: &mut DaemonSet, served: Served) {
    let spec = &mut ds.spec;
    spec.burst_replicas.get_or_insert(IntOrString::Int(250));
    let strategy = spec.update_strategy.get_or_insert_with(Default::default);
    if strategy.type_.as_deref().unwrap_or_default().is_empty() {
        strategy.type_ = Some("RollingUpdate".to_owned());
    }
    if strategy.type_.as_deref() == Some("RollingUpdate") {
        let r = strategy.rolling_update.get_or_insert_with(Default::default);
        let surging = r.rolling_update_type.as_deref() == Some("Surging");
        if surging && served == Served::V1alpha1 {
            r.max_surge.get_or_insert(IntOrString::Int(1));
            r.max_unavailable.get_or_insert(IntOrString::Int(0));
        }
        let unset = r
            .rolling_update_type
            .as_deref()
            .unwrap_or_default()
            .is_empty();
        if unset || (surging && served == Served::V1alpha1) {
            r.rolling_update_type = Some("Standard".to_owned());
        }
        if r.max_unavailable.is_none() && r.max_surge.is_none() {
            r.max_unavailable = Some(IntOrString::Int(1));
            r.max_surge = Some(IntOrString::Int(0));
        }
    }
    spec.revision_history_limit.get_or_insert(10);
}

fn invalid(field: &str, value: &str, detail: &str) -> FieldError {
    field_error(field, format!("Invalid value: {value}: {detail}"))
}

fn nonnegative(value: i64, field: &str) -> Vec<FieldError> {
    if value < 0 {
        vec![invalid(
            field,
            &value.to_string(),
            "must be greater than or equal to 0",
        )]
    } else {
        Vec::new()
    }
}

/// `validation.IsValidPercent`'s regex `^[0-9]+%$`; the number when it matches (Atoi saturates).
fn percent_value(s: &str) -> Option<u64> {
    let digits = s.strip_suffix('%')?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().unwrap_or(u64::MAX))
}

/// apps `ValidatePositiveIntOrPercent`.
fn positive_int_or_percent(v: &IntOrString, field: &str) -> Vec<FieldError> {
    match v {
        IntOrString::Int(n) => nonnegative(i64::from(*n), field),
        IntOrString::String(s) if percent_value(s).is_none() => {
            vec![invalid(
                field,
                &crate::kruise::intstr::go_struct(v),
                PERCENT_ERROR,
            )]
        }
        IntOrString::String(_) => Vec::new(),
    }
}

/// apps `IsNotMoreThan100Percent`.
fn not_more_than_100_percent(v: &IntOrString, field: &str) -> Vec<FieldError> {
    match v {
        IntOrString::String(s) if percent_value(s).is_some_and(|p| p > 100) => vec![invalid(
            field,
            &crate::kruise::intstr::go_struct(v),
            "must not be greater than 100%",
        )],
        _ => Vec::new(),
    }
}

/// The webhook's `getIntOrPercentValue`: a valid percent's number, else `IntValue()` (an int, or
/// a string's `Atoi`, 0 when it is not a number).
fn int_or_percent_value(v: &IntOrString) -> i64 {
    match v {
        IntOrString::Int(n) => i64::from(*n),
        IntOrString::String(s) => percent_value(s)
            .map(|p| i64::try_from(p).unwrap_or(i64::MAX))
            .or_else(|| s.parse().ok())
            .unwrap_or(0),
    }
}

/// Port of `validateRollingUpdateDaemonSet` / `validateRollingUpdateDaemonSetV1beta1`.
fn rolling_update_errors(
    r: &crate::api::daemonset::RollingUpdateDaemonSet,
    served: Served,
    version: KruiseVersion,
) -> Vec<FieldError> {
    const AT: &str = "spec.updateStrategy.rollingUpdate";
    let mut errs = Vec::new();
    fn nonzero(v: &Option<IntOrString>) -> Option<&IntOrString> {
        v.as_ref().filter(|v| int_or_percent_value(v) != 0)
    }
    let unavailable = nonzero(&r.max_unavailable);
    let surge = nonzero(&r.max_surge);
    for (v, name) in [(unavailable, "maxUnavailable"), (surge, "maxSurge")] {
        if let Some(v) = v {
            let field = format!("{AT}.{name}");
            errs.extend(positive_int_or_percent(v, &field));
            errs.extend(not_more_than_100_percent(v, &field));
        }
    }
    match (unavailable, surge) {
        (Some(_), Some(s)) => errs.push(invalid(
            &format!("{AT}.maxSurge"),
            &crate::kruise::intstr::go_struct(s),
            "may not be set when maxUnavailable is non-zero",
        )),
        (None, None) => errs.push(field_error(
            format!("{AT}.maxUnavailable"),
            "Required value: cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }
    let type_ = r.rolling_update_type.as_deref().unwrap_or_default();
    // v1.8.4 reads every request as v1alpha1 (`admit`).
    let surging_allowed = served == Served::V1alpha1;
    match type_ {
        "" | "Standard" => {}
        "InPlaceIfPossible" if surge.is_some() => errs.push(field_error(
            format!("{AT}.maxSurge"),
            "Required value: must be 0 for InPlaceIfPossible type",
        )),
        "InPlaceIfPossible" => {}
        "Surging" if surging_allowed => {
            if unavailable.is_some() {
                errs.push(field_error(
                    format!("{AT}.maxUnavailable"),
                    "Required value: must be 0 for Surging type",
                ));
            }
        }
        other => {
            let supported = if surging_allowed {
                r#""Standard", "Surging", "InPlaceIfPossible""#
            } else {
                r#""Standard", "InPlaceIfPossible""#
            };
            errs.push(field_error(
                format!("{AT}.rollingUpdate.type"),
                format!("Unsupported value: {other:?}: supported values: {supported}"),
            ));
        }
    }
    if let Some(p) = &r.partition {
        match (p, version) {
            (IntOrString::Int(n), KruiseVersion::V1_8) => {
                errs.extend(nonnegative(i64::from(*n), PARTITION));
            }
            // v1.8.4 cannot decode a string partition; `admit` answers that before validating.
            (IntOrString::String(_), KruiseVersion::V1_8) => {}
            (p, KruiseVersion::V1_9) => {
                errs.extend(positive_int_or_percent(p, PARTITION));
                errs.extend(not_more_than_100_percent(p, PARTITION));
            }
        }
    }
    errs
}

/// Go's `%#v` of the update strategy (a pointer inside prints as an address; elided here).
fn go_strategy(s: &DaemonSetUpdateStrategy, served: Served) -> String {
    let pkg = served.package();
    let rolling = if s.rolling_update.is_some() {
        format!("(*{pkg}.RollingUpdateDaemonSet)(0x…)")
    } else {
        format!("(*{pkg}.RollingUpdateDaemonSet)(nil)")
    };
    format!(
        "{pkg}.DaemonSetUpdateStrategy{{Type:{:?}, RollingUpdate:{rolling}}}",
        s.type_.as_deref().unwrap_or_default()
    )
}

/// Go's `%#v` of a `map[string]string`.
fn go_labels(labels: Option<&std::collections::BTreeMap<String, String>>) -> String {
    match labels {
        None => "map[string]string(nil)".to_owned(),
        Some(m) => {
            let body: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect();
            format!("map[string]string{{{}}}", body.join(", "))
        }
    }
}

fn go_selector(sel: &LabelSelector) -> String {
    let labels = go_labels(sel.match_labels.as_ref());
    let exprs = match &sel.match_expressions {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(e) if e.is_empty() => "[]v1.LabelSelectorRequirement{}".to_owned(),
        Some(_) => "[]v1.LabelSelectorRequirement{…}".to_owned(),
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{exprs}}}")
}

/// Port of `validateDaemonSetSpec` / `validateDaemonSetSpecV1beta1` on a defaulted set (see the
/// module notes for what is left out).
pub fn validate_spec(ds: &DaemonSet, served: Served, version: KruiseVersion) -> Vec<FieldError> {
    let spec = &ds.spec;
    let mut errs = label_selector_errors(&spec.selector, "spec.selector");
    let template_labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.as_ref());
    let empty = std::collections::BTreeMap::new();
    if label_selector_convertible(&spec.selector)
        && !selector::matches(&spec.selector, template_labels.unwrap_or(&empty)).unwrap_or(false)
    {
        errs.push(invalid(
            "spec.template.metadata.labels",
            &go_labels(template_labels),
            "`selector` does not match template `labels`",
        ));
    }
    if selector::is_empty(&spec.selector) {
        errs.push(invalid(
            "spec.selector",
            &go_selector(&spec.selector),
            "empty selector is invalid for daemonset",
        ));
    }
    let pod = spec.template.spec.as_ref();
    // ConvertPodTemplateSpec defaults the template first: an unset restartPolicy is Always.
    let restart = pod
        .and_then(|p| p.restart_policy.as_deref())
        .unwrap_or("Always");
    if restart != "Always" {
        errs.push(field_error(
            "spec.template.spec.restartPolicy",
            format!("Unsupported value: {restart:?}: supported values: \"Always\""),
        ));
    }
    if pod.is_some_and(|p| p.active_deadline_seconds.is_some()) {
        errs.push(field_error(
            "spec.template.spec.activeDeadlineSeconds",
            "Forbidden: activeDeadlineSeconds in DaemonSet is not Supported",
        ));
    }
    errs.extend(nonnegative(
        i64::from(spec.min_ready_seconds.unwrap_or(0)),
        "spec.minReadySeconds",
    ));
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    match strategy.type_.as_deref().unwrap_or_default() {
        "OnDelete" => {}
        "RollingUpdate" => match &strategy.rolling_update {
            None => errs.push(field_error(
                "spec.updateStrategy.rollingUpdate",
                "Required value",
            )),
            Some(r) => errs.extend(rolling_update_errors(r, served, version)),
        },
        _ => errs.push(field_error(
            "spec.updateStrategy",
            format!(
                "Unsupported value: {}: supported values: \"RollingUpdate\", \"OnDelete\"",
                go_strategy(&strategy, served)
            ),
        )),
    }
    if let Some(limit) = spec.revision_history_limit {
        errs.extend(nonnegative(i64::from(limit), "spec.revisionHistoryLimit"));
    }
    if spec
        .lifecycle
        .as_ref()
        .is_some_and(|l| l.in_place_update.is_some())
    {
        errs.push(field_error(
            "spec.lifecycle.inPlaceUpdate",
            "Forbidden: inPlaceUpdate hook has not supported yet",
        ));
    }
    errs
}

/// A selector as `apiequality.Semantic.DeepEqual` compares it: nil and empty maps/lists alike.
fn normalized(sel: &LabelSelector) -> LabelSelector {
    LabelSelector {
        match_labels: sel.match_labels.clone().filter(|m| !m.is_empty()),
        match_expressions: sel.match_expressions.clone().filter(|e| !e.is_empty()),
    }
}

/// Port of `validateDaemonSetUpdate` / `validateDaemonSetUpdateV1beta1`: outside the allow-list
/// only `spec.selector` remains, so a changed selector is refused; then the spec is validated.
pub fn validate_update(
    ds: &DaemonSet,
    old: &DaemonSet,
    served: Served,
    version: KruiseVersion,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if normalized(&ds.spec.selector) != normalized(&old.spec.selector) {
        let message = match (served, version) {
            (Served::V1beta1, KruiseVersion::V1_9) => FORBIDDEN_UPDATE_V1BETA1,
            _ => FORBIDDEN_UPDATE_V1ALPHA1,
        };
        errs.push(field_error("spec", format!("Forbidden: {message}")));
    }
    errs.extend(validate_spec(ds, served, version));
    errs
}

/// `ErrorList.ToAggregate().Error()`: one error alone, several as `[e1, e2]`, duplicates once.
pub fn aggregate(errs: &[FieldError]) -> String {
    let mut seen = Vec::new();
    for e in errs {
        let text = format!("{}: {}", e.field, e.message);
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    match seen.as_slice() {
        [one] => one.clone(),
        _ => format!("[{}]", seen.join(", ")),
    }
}

fn decode(v: &Value, served: Served) -> Result<DaemonSet, Verdict> {
    let mut ds: DaemonSet =
        serde_json::from_value(v.clone()).map_err(|e| Verdict::deny(400, e.to_string()))?;
    set_defaults(&mut ds, served);
    Ok(ds)
}

/// The handler (`DaemonSetCreateUpdateHandler.Handle`) on an admission request: `operation`
/// `CREATE`/`UPDATE` (others are allowed), the request's served `resource_version`, the object
/// and, on update, the old one, both as sent (the mutating defaults are applied here). A refused
/// create is a 500 and a refused update a 422, as upstream answers them.
pub fn admit(
    operation: &str,
    resource_version: &str,
    object: Option<&Value>,
    old_object: Option<&Value>,
    version: KruiseVersion,
) -> Verdict {
    let served = match (version, Served::parse(resource_version)) {
        (KruiseVersion::V1_8, _) => Served::V1alpha1,
        (KruiseVersion::V1_9, Some(s)) => s,
        (KruiseVersion::V1_9, None) => {
            return Verdict::deny(400, format!("unsupported version: {resource_version}"));
        }
    };
    let (Some(object), "CREATE" | "UPDATE") = (object, operation) else {
        return Verdict::allow();
    };
    if version == KruiseVersion::V1_8
        && object
            .pointer("/spec/updateStrategy/rollingUpdate/partition")
            .is_some_and(Value::is_string)
    {
        return Verdict::deny(
            400,
            "json: cannot unmarshal string into Go struct field RollingUpdateDaemonSet.spec.\
             updateStrategy.rollingUpdate.partition of type int32",
        );
    }
    let ds = match decode(object, served) {
        Ok(ds) => ds,
        Err(v) => return v,
    };
    let (errs, code) = match (operation, old_object) {
        ("UPDATE", Some(old)) => match decode(old, served) {
            Ok(old) => (validate_update(&ds, &old, served, version), 422),
            Err(v) => return v,
        },
        _ => (validate_spec(&ds, served, version), 500),
    };
    if errs.is_empty() {
        Verdict::allow()
    } else {
        Verdict::deny(code, aggregate(&errs))
    }
}
