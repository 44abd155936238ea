//! Go's rendering of the bad values in `field.Invalid` errors (`%v` of simple types, `%q` of
//! strings, `%#v` of the rest, pointers dereferenced) and Go's strconv error texts.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};

use crate::kruise::validation::{FieldError, field_error};

/// `apivalidation.ValidateNonnegativeField`.
pub fn negative(path: &str, value: i64) -> FieldError {
    field_error(
        path,
        format!("Invalid value: {value}: must be greater than or equal to 0"),
    )
}

/// Go's `%q` (for the plain ASCII strings Kubernetes fields hold, Rust's `{:?}` agrees).
pub fn quote(s: &str) -> String {
    format!("{s:?}")
}

/// `%#v` of a `[]string`.
pub fn string_slice(v: Option<&[String]>) -> String {
    match v {
        None => "[]string(nil)".to_owned(),
        Some(items) => format!(
            "[]string{{{}}}",
            items
                .iter()
                .map(|s| quote(s))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `%#v` of a `map[string]string` (fmt prints map keys sorted).
pub fn string_map(m: Option<&BTreeMap<String, String>>) -> String {
    match m {
        None => "map[string]string(nil)".to_owned(),
        Some(m) => format!(
            "map[string]string{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}:{}", quote(k), quote(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `%#v` of a `metav1.LabelSelector` value (its `String()` has a pointer receiver, so a
/// dereferenced selector prints as a Go struct literal).
pub fn label_selector(sel: &LabelSelector) -> String {
    let expressions = match &sel.match_expressions {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(reqs) => format!(
            "[]v1.LabelSelectorRequirement{{{}}}",
            reqs.iter()
                .map(|r| format!(
                    "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                    quote(&r.key),
                    quote(&r.operator),
                    string_slice(r.values.as_deref())
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}",
        string_map(sel.match_labels.as_ref())
    )
}

/// `%#v` of an `intstr.IntOrString` value (`String()` has a pointer receiver too); nil is
/// `null`.
pub fn int_or_string(v: Option<&IntOrString>) -> String {
    match v {
        None => "null".to_owned(),
        Some(IntOrString::Int(i)) => {
            format!("intstr.IntOrString{{Type:0, IntVal:{i}, StrVal:\"\"}}")
        }
        Some(IntOrString::String(s)) => {
            format!(
                "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
                quote(s)
            )
        }
    }
}

/// `IntOrString.String()`: the number or the string.
pub fn int_or_string_text(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// `strconv.Atoi` (64-bit `int`), with Go's error text.
pub fn atoi(s: &str) -> Result<i64, String> {
    s.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!("strconv.Atoi: parsing {}: {why}", quote(s))
    })
}

/// `strconv.ParseFloat(s, 64)`, with Go's error text (an overflow is a range error; Go also
/// reads hex floats and underscores, which Kubernetes values do not use).
pub fn parse_float(s: &str) -> Result<f64, String> {
    let err = |why: &str| format!("strconv.ParseFloat: parsing {}: {why}", quote(s));
    let v: f64 = s.parse().map_err(|_| err("invalid syntax"))?;
    let spelled_inf = s
        .trim_start_matches(['+', '-'])
        .to_ascii_lowercase()
        .starts_with("inf");
    if v.is_infinite() && !spelled_inf {
        return Err(err("value out of range"));
    }
    Ok(v)
}
