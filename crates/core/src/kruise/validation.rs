//! apimachinery-style field errors and name validators (`k8s.io/apimachinery/pkg/util/validation`)
//! shared by the webhook ports: qualified names, DNS-1123 labels and subdomains, label values and
//! port names, worded as upstream words them.

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};

/// One validation error (`field.Error`): path and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// A [`FieldError`] at `field`.
pub fn field_error(field: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.into(),
    }
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`.
fn qualified_name_part_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_alnum(b[0])
        && is_alnum(b[b.len() - 1])
        && b.iter()
            .all(|&c| is_alnum(c) || c == b'-' || c == b'_' || c == b'.')
}

/// apimachinery's `IsDNS1123Subdomain` failure, worded by its `RegexError` (example and regex).
pub const DNS1123_SUBDOMAIN_ERROR: &str = "a lowercase RFC 1123 subdomain must consist of lower \
    case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric \
    character (e.g. 'example.com', regex used for validation is \
    '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// apimachinery's `IsQualifiedName` name-part failure, as its `RegexError` words it.
pub const QUALIFIED_NAME_ERROR: &str = "name part must consist of alphanumeric characters, '-', \
    '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or \
    'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// apimachinery's `IsValidLabelValue` failure, as its `RegexError` words it.
pub const LABEL_VALUE_ERROR: &str = "a valid label must be an empty string or consist of \
    alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric \
    character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
    '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// apimachinery `IsDNS1123Subdomain` (one message on failure).
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_owned());
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    };
    if !s.split('.').all(label_ok) {
        errs.push(DNS1123_SUBDOMAIN_ERROR.to_owned());
    }
    errs
}

/// apimachinery `IsQualifiedName`: `[prefix/]name`.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.'"
                    .to_owned(),
            );
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_owned());
    }
    if !qualified_name_part_ok(name) {
        errs.push(QUALIFIED_NAME_ERROR.to_owned());
    }
    errs
}

/// apimachinery `IsValidLabelValue`.
pub fn label_value_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !v.is_empty() && !qualified_name_part_ok(v) {
        errs.push(LABEL_VALUE_ERROR.to_owned());
    }
    errs
}

/// apimachinery `IsValidPortName`.
pub fn port_name_errors(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push("must be no more than 15 characters".to_owned());
    }
    if port.is_empty()
        || !port
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned(),
        );
    }
    if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_owned());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_owned());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_owned());
    }
    errs
}

/// apimachinery `metav1validation.ValidateLabelSelector` (v0.30, label values validated): each
/// `matchLabels` key as a qualified name and value as a label value (at `<path>.matchLabels`;
/// Go walks the map in random order, here in key order), then every `matchExpressions[i]`:
/// operator and value count, key, each value.
pub fn label_selector_errors(sel: &LabelSelector, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let labels_path = format!("{path}.matchLabels");
    for (k, v) in sel.match_labels.iter().flatten() {
        for msg in qualified_name_errors(k) {
            errs.push(field_error(
                &labels_path,
                format!("Invalid value: {k:?}: {msg}"),
            ));
        }
        for msg in label_value_errors(v) {
            errs.push(field_error(
                &labels_path,
                format!("Invalid value: {v:?}: {msg}"),
            ));
        }
    }
    for (i, req) in sel.match_expressions.iter().flatten().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = req.values.as_deref().unwrap_or_default();
        match req.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => errs.push(field_error(
                format!("{at}.values"),
                "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(field_error(
                format!("{at}.values"),
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.push(field_error(
                format!("{at}.operator"),
                format!("Invalid value: {other:?}: not a valid selector operator"),
            )),
        }
        for msg in qualified_name_errors(&req.key) {
            errs.push(field_error(
                format!("{at}.key"),
                format!("Invalid value: {:?}: {msg}", req.key),
            ));
        }
        for (j, v) in values.iter().enumerate() {
            for msg in label_value_errors(v) {
                errs.push(field_error(
                    format!("{at}.values[{j}]"),
                    format!("Invalid value: {v:?}: {msg}"),
                ));
            }
        }
    }
    errs
}

/// Whether `metav1.LabelSelectorAsSelector` accepts the selector: it builds a requirement from
/// every label and expression, and each one checks exactly what [`label_selector_errors`]
/// checks.
pub fn label_selector_convertible(sel: &LabelSelector) -> bool {
    label_selector_errors(sel, "").is_empty()
}

/// apps `ValidatePositiveIntOrPercent` then `IsNotMoreThan100Percent` (k8s v1.30): an int must be
/// ≥ 0; a string must be digits followed by `%` and at most 100%.
pub fn int_or_percent_errors(v: &IntOrString, path: &str) -> Vec<FieldError> {
    match v {
        IntOrString::Int(n) if *n < 0 => vec![field_error(
            path,
            format!("Invalid value: {n}: must be greater than or equal to 0"),
        )],
        IntOrString::Int(_) => Vec::new(),
        IntOrString::String(s) => {
            let digits = s
                .strip_suffix('%')
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            match digits {
                None => vec![field_error(
                    path,
                    format!(
                        "Invalid value: {s:?}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
                    ),
                )],
                // An overflowing number is still "more than 100%" (Atoi saturates).
                Some(n) if n.parse::<u64>().map_or(true, |p| p > 100) => vec![field_error(
                    path,
                    format!("Invalid value: {s:?}: must not be greater than 100%"),
                )],
                Some(_) => Vec::new(),
            }
        }
    }
}

/// Whether a string is a DNS-1123 label.
pub fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(qualified_name_errors("example.com/ok-name").is_empty());
        assert_eq!(qualified_name_errors("a/b/c").len(), 1);
        assert!(!qualified_name_errors("/x").is_empty());
        assert!(dns1123_subdomain_errors("a.b-c").is_empty());
        assert_eq!(dns1123_subdomain_errors("A.b").len(), 1);
        assert!(is_dns1123_label("web-1"));
        assert!(!is_dns1123_label("-web"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(label_value_errors("").is_empty());
        assert_eq!(label_value_errors("-x").len(), 1);
    }

    #[test]
    fn port_names() {
        assert!(port_name_errors("http").is_empty());
        assert_eq!(
            port_name_errors("80"),
            vec!["must contain at least one letter (a-z)".to_owned()]
        );
        assert!(
            port_name_errors("a--b").contains(&"must not contain consecutive hyphens".to_owned())
        );
        assert!(!port_name_errors("this-name-is-too-long").is_empty());
    }
}
