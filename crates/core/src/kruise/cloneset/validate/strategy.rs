//! `validateScaleStrategy` and `validateUpdateStrategy` of the CloneSet webhook, and the two
//! int-or-percent parsers it used (v1.8.4: apimachinery's deprecated
//! `GetValueFromIntOrPercent`; v1.9.0: Kruise's `util.GetScaledValueFromIntOrPercent`).

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{PodLookup, gofmt};
use crate::{
    api::{CloneSet, cloneset::CloneSetUpdateStrategy},
    kruise::{
        KruiseVersion,
        sidecarset::validate::{priority_strategy_error, scatter_strategy_error},
        validation::{FieldError, field_error},
    },
};

/// Which int-or-percent parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntStrParse {
    /// Kruise `util.GetScaledValueFromIntOrPercent`: a string must end in `%`, the number is a
    /// float, the result rounds up or down.
    Kruise,
    /// apimachinery `intstr.GetValueFromIntOrPercent` (deprecated): every `%` is removed, the
    /// rest must be an integer, and any string is a percent (`"5"` is 5 %).
    Apimachinery,
}

/// The scaled value of `v` over `total`, or the parser's error text (Go's wording).
pub fn parse_int_or_percent(
    v: &IntOrString,
    total: i32,
    round_up: bool,
    parser: IntStrParse,
) -> Result<i64, String> {
    let s = match v {
        IntOrString::Int(i) => return Ok(i64::from(*i)),
        IntOrString::String(s) => s,
    };
    let percent = match parser {
        IntStrParse::Kruise => {
            let number = s
                .strip_suffix('%')
                .ok_or_else(|| "invalid type: string is not a percentage".to_owned())?;
            gofmt::parse_float(number)?
        }
        IntStrParse::Apimachinery => {
            let number = s.replace('%', "");
            let parsed = gofmt::atoi(&number).map_err(|e| {
                format!(
                    "invalid value for IntOrString: invalid value {}: {e}",
                    gofmt::quote(s)
                )
            })?;
            parsed as f64
        }
    };
    let raw = percent * f64::from(total) / 100.0;
    Ok(if round_up { raw.ceil() } else { raw.floor() } as i64)
}

/// The function name in the webhook's messages.
fn parser_name(version: KruiseVersion) -> &'static str {
    match version {
        KruiseVersion::V1_8 => "getValueFromIntOrPercent",
        KruiseVersion::V1_9 => "GetScaledValueFromIntOrPercent",
    }
}

fn invalid(path: &str, value: &str, detail: &str) -> FieldError {
    field_error(path, format!("Invalid value: {value}: {detail}"))
}

/// Port of `validateScaleStrategy`: duplicates in `podsToDelete` (then nothing else), and each
/// pod newly named (not in the old object's list, in name order) must exist, not be
/// terminating and be controlled by this CloneSet.
pub fn validate_scale_strategy(
    cs: &CloneSet,
    old: Option<&CloneSet>,
    pods: PodLookup<'_>,
) -> Vec<FieldError> {
    let path = "spec.scaleStrategy.podsToDelete";
    let names = cs
        .spec
        .scale_strategy
        .as_ref()
        .map(|s| s.pods_to_delete.as_slice())
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    let dups: Vec<&str> = names
        .iter()
        .filter(|n| !seen.insert(n.as_str()))
        .map(String::as_str)
        .collect();
    if !dups.is_empty() {
        let value = gofmt::string_slice(Some(names));
        return vec![invalid(
            path,
            &value,
            &format!("duplicated items [{}]", dups.join(" ")),
        )];
    }
    let before: BTreeSet<&str> = old
        .and_then(|o| o.spec.scale_strategy.as_ref())
        .map(|s| s.pods_to_delete.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let uid = cs.metadata.uid.as_deref().unwrap_or_default();
    let mut errs = Vec::new();
    for name in seen.into_iter().filter(|n| !before.contains(n)) {
        let problem = match pods(name) {
            None => Some(format!("find pod {name} failed: pods \"{name}\" not found")),
            Some(pod) if pod.metadata.deletion_timestamp.is_some() => {
                Some(format!("find pod {name} already terminating"))
            }
            Some(pod) => {
                let owner = pod
                    .metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .find(|o| o.controller == Some(true));
                owner
                    .is_none_or(|o| o.uid != uid)
                    .then(|| format!("find pod {name} owner is not this CloneSet"))
            }
        };
        if let Some(problem) = problem {
            errs.push(invalid(path, &gofmt::quote(name), &problem));
        }
    }
    errs
}

/// Port of `validateUpdateStrategy` (v1.8.4 and v1.9.0 differ only in the maxUnavailable /
/// maxSurge parser and the function name in the messages).
pub fn validate_update_strategy(
    strategy: &CloneSetUpdateStrategy,
    replicas: i32,
    version: KruiseVersion,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let type_ = strategy.type_.as_deref().unwrap_or_default();
    if !matches!(type_, "ReCreate" | "InPlaceIfPossible" | "InPlaceOnly") {
        errs.push(invalid(
            "spec.updateStrategy.type",
            &gofmt::quote(type_),
            "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'",
        ));
    }
    let name = parser_name(version);
    let partition_path = "spec.updateStrategy.partition";
    let partition = match &strategy.partition {
        // The defaults set it; a nil partition is Kruise's "nil value for IntOrString".
        None => Err("nil value for IntOrString".to_owned()),
        Some(p) => parse_int_or_percent(p, replicas, true, IntStrParse::Kruise),
    };
    let partition = partition.unwrap_or_else(|e| {
        let text = strategy
            .partition
            .as_ref()
            .map(gofmt::int_or_string_text)
            .unwrap_or_default();
        errs.push(invalid(
            partition_path,
            &gofmt::quote(&text),
            &format!("failed {name} for partition: {e}"),
        ));
        0
    });
    if partition < 0 {
        errs.push(gofmt::negative(partition_path, partition));
    }
    if let Some(e) = strategy
        .priority_strategy
        .as_ref()
        .and_then(priority_strategy_error)
    {
        errs.push(field_error(
            "spec.updateStrategy.priorityStrategy",
            format!("Required value: {e}"),
        ));
    }
    if let Some(e) = scatter_strategy_error(&strategy.scatter_strategy) {
        errs.push(field_error(
            "spec.updateStrategy.scatterStrategy",
            format!("Required value: {e}"),
        ));
    }
    let parser = match version {
        KruiseVersion::V1_8 => IntStrParse::Apimachinery,
        KruiseVersion::V1_9 => IntStrParse::Kruise,
    };
    let budget = |field: &str, v: Option<&IntOrString>, errs: &mut Vec<FieldError>| {
        let v = v?;
        Some(
            parse_int_or_percent(v, replicas, true, parser).unwrap_or_else(|e| {
                errs.push(invalid(
                    &format!("spec.updateStrategy.{field}"),
                    &gofmt::quote(&gofmt::int_or_string_text(v)),
                    &format!("failed {name} for {field}: {e}"),
                ));
                0
            }),
        )
    };
    let max_unavailable = budget(
        "maxUnavailable",
        strategy.max_unavailable.as_ref(),
        &mut errs,
    )
    .unwrap_or(0);
    let max_surge = budget("maxSurge", strategy.max_surge.as_ref(), &mut errs);
    if let (Some(surge), Some(v)) = (max_surge, strategy.max_surge.as_ref())
        && type_ == "InPlaceOnly"
        && surge > 0
    {
        errs.push(invalid(
            "spec.updateStrategy.maxSurge",
            &gofmt::quote(&gofmt::int_or_string_text(v)),
            "can not use maxSurge with strategy type InPlaceOnly",
        ));
    }
    if replicas > 0 && max_unavailable < 1 && max_surge.unwrap_or(0) < 1 {
        errs.push(invalid(
            "spec.updateStrategy.maxUnavailable",
            &gofmt::int_or_string(strategy.max_unavailable.as_ref()),
            "maxUnavailable and maxSurge should not both be less than 1",
        ));
    }
    errs
}
