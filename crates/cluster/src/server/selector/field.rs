//! Field selectors: parsed as apimachinery's `fields.ParseSelector` (terms split on unescaped
//! commas, `!=` / `==` / `=`, `\,` `\=` `\\` escapes), then each field label checked and
//! converted by the kind's field label conversion (what the real server can select on; anything
//! else is a 400 with that kind's message).

use serde_json::Value;

use crate::server::{resources::ResourceInfo, status::ApiError};

#[derive(Debug, Clone, PartialEq)]
struct Term {
    /// The (converted) field label, e.g. `spec.nodeName`.
    label: String,
    eq: bool,
    value: String,
}

/// A parsed field selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<Term>);

fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let (mut start, mut in_slash) = (0, false);
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            out.push(&s[start..i]);
            start = i + 1;
        }
    }
    out.push(&s[start..]);
    out
}

/// The first operator in the term (`!=` before `==` before `=` at each position).
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, eq) in [("!=", false), ("==", true), ("=", true)] {
            if let Some(v) = rest.strip_prefix(op) {
                return Some((&term[..i], eq, v));
            }
        }
    }
    None
}

fn unescape(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ));
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune as its number here.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    u32::from(c)
                ));
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

const NOT_SUPPORTED: &str = "field label not supported: ";

/// The kind's field label conversion: the label it stores under, or the real server's refusal.
fn convert_label(res: &ResourceInfo, label: &str) -> Result<String, String> {
    let only = |allowed: &[&str]| {
        if allowed.contains(&label) {
            Ok(label.to_string())
        } else {
            Err(format!("{NOT_SUPPORTED}{label}"))
        }
    };
    if res.crd {
        // A custom resource selects on its name, and its namespace when it has one.
        return match label {
            "metadata.name" => Ok(label.to_string()),
            "metadata.namespace" if res.namespaced => Ok(label.to_string()),
            _ => Err(format!("{NOT_SUPPORTED}{label}")),
        };
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Pod") => match label {
            // For old v1 clients.
            "spec.host" => Ok("spec.nodeName".to_string()),
            _ => only(&[
                "metadata.name",
                "metadata.namespace",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.podIPs",
                "status.nominatedNodeName",
            ]),
        },
        ("", "Node") => only(&["metadata.name", "spec.unschedulable"]),
        ("", "Namespace") => only(&["metadata.name", "status.phase"]),
        ("", "Secret") => only(&["metadata.name", "metadata.namespace", "type"]),
        ("", "ReplicationController") => {
            only(&["metadata.name", "metadata.namespace", "status.replicas"])
        }
        ("", "Event") => only(&[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
            "metadata.namespace",
            "metadata.name",
        ]),
        // events.k8s.io Events are stored as core Events (see convert.rs).
        ("events.k8s.io", "Event") => match label {
            "reason" | "type" | "metadata.namespace" | "metadata.name" => Ok(label.to_string()),
            "reportingController" => Ok("reportingComponent".to_string()),
            _ => match label.strip_prefix("regarding.") {
                Some(
                    f @ ("kind" | "namespace" | "name" | "uid" | "apiVersion" | "resourceVersion"
                    | "fieldPath"),
                ) => Ok(format!("involvedObject.{f}")),
                _ => Err(format!("{NOT_SUPPORTED}{label}")),
            },
        },
        ("batch", "Job") => only(&["metadata.name", "metadata.namespace", "status.successful"]),
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            only(&["metadata.name", "spec.signerName"])
        }
        // runtime.DefaultMetaV1FieldSelectorConversion.
        _ => match label {
            "metadata.name" | "metadata.namespace" => Ok(label.to_string()),
            _ => Err(format!(
                "{label:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )),
        },
    }
}

/// A selectable field's value, as the kind's field set has it (booleans print as `true`/`false`,
/// `source` is the event source's component).
fn field_value(obj: &Value, label: &str) -> String {
    let at = |path: &str| {
        let mut cur = obj;
        for seg in path.split('.') {
            cur = &cur[seg];
        }
        cur
    };
    match label {
        "spec.hostNetwork" | "spec.unschedulable" => {
            at(label).as_bool().unwrap_or(false).to_string()
        }
        "source" => at("source.component").as_str().unwrap_or("").to_string(),
        "status.podIPs" => at("status.podIPs.0.ip").as_str().unwrap_or("").to_string(),
        _ => match at(label) {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        },
    }
}

impl FieldSelector {
    /// Parse a selector string (syntax only; see [`FieldSelector::for_resource`]).
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        let mut parts = split_terms(s);
        parts.sort_unstable();
        let mut terms = Vec::new();
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let (label, eq, value) = split_term(part).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ))
            })?;
            terms.push(Term {
                label: label.to_string(),
                eq,
                value: unescape(value).map_err(ApiError::bad_request)?,
            });
        }
        Ok(FieldSelector(terms))
    }

    /// Parse a selector given for `res` and convert its labels as the kind does (a 400 for a
    /// field the kind cannot select on).
    pub fn for_resource(res: &ResourceInfo, s: &str) -> Result<Self, ApiError> {
        let mut fs = Self::parse(s)?;
        for t in &mut fs.0 {
            t.label = convert_label(res, &t.label).map_err(ApiError::bad_request)?;
        }
        Ok(fs)
    }

    /// Also require `metadata.name` to be `name` (a watch or list of one named object).
    pub fn and_name(&mut self, name: &str) {
        self.0.push(Term {
            label: "metadata.name".into(),
            eq: true,
            value: name.to_string(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `metadata.name=X` value, when the selector pins a name (an index lookup).
    pub fn pinned_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|t| t.eq && t.label == "metadata.name")
            .map(|t| t.value.as_str())
    }

    /// Whether every field is under `metadata` (answerable from an object's head).
    pub fn metadata_only(&self) -> bool {
        self.0.iter().all(|t| t.label.starts_with("metadata."))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0
            .iter()
            .all(|t| (field_value(obj, &t.label) == t.value) == t.eq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(group: &str, plural: &str) -> ResourceInfo {
        crate::server::builtin::builtin_resources()
            .into_iter()
            .find(|r| r.group == group && r.plural == plural)
            .unwrap()
    }

    #[test]
    fn field_selectors() {
        let p = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"}});
        let m = |s: &str| FieldSelector::parse(s).unwrap().matches(&p);
        assert!(m("metadata.name=p,spec.nodeName=n1"));
        assert!(!m("spec.nodeName!=n1"));
        assert!(m("status.phase!=Running"));
        assert!(m("spec.hostNetwork=false"));
        assert!(m("metadata.name==p"));
        assert_eq!(
            FieldSelector::parse("bogus").unwrap_err().message,
            "invalid selector: 'bogus'; can't understand 'bogus'"
        );
        assert_eq!(
            FieldSelector::parse("a=b=c").unwrap_err().message,
            "invalid field selector: unescaped character in value: 61"
        );
        assert!(
            FieldSelector::parse(r"a=b\=c")
                .unwrap()
                .matches(&json!({"a": "b=c"}))
        );
    }

    #[test]
    fn each_kind_selects_on_its_own_fields() {
        let msg = |g: &str, p: &str, s: &str| {
            FieldSelector::for_resource(&res(g, p), s)
                .err()
                .map(|e| e.message)
        };
        assert_eq!(
            msg("", "configmaps", "data.a=1").as_deref(),
            Some(
                "\"data.a\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )
        );
        assert_eq!(
            msg("", "pods", "spec.containers=x").as_deref(),
            Some("field label not supported: spec.containers")
        );
        assert_eq!(msg("", "pods", "spec.host=n1,status.phase=Pending"), None);
        assert_eq!(msg("events.k8s.io", "events", "regarding.name=x"), None);
        let fs = FieldSelector::for_resource(&res("", "pods"), "spec.host=n1").unwrap();
        assert!(fs.matches(&json!({"spec": {"nodeName": "n1"}})));
    }
}
