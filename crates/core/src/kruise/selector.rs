//! Label selector matching (`metav1.LabelSelectorAsSelector` semantics).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

/// Why a selector could not be converted (upstream returns an error and matches nothing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("{0:?} is not a valid label selector operator")]
    BadOperator(String),
    #[error("operator {0} needs values")]
    MissingValues(String),
    #[error("operator {0} takes no values")]
    UnexpectedValues(String),
}

/// What a selector reads labels from: a `BTreeMap` (k8s-openapi's objects) or a pod's
/// compact [`StrMap`](crate::api::pod::StrMap).
pub trait Labels {
    fn label(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl Labels for crate::api::pod::StrMap {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key)
    }
}

/// Whether `labels` match `selector`. An empty selector matches everything (as
/// `LabelSelectorAsSelector` does); a malformed one is an error.
pub fn matches(
    selector: &LabelSelector,
    labels: &(impl Labels + ?Sized),
) -> Result<bool, SelectorError> {
    if let Some(required) = &selector.match_labels {
        for (key, value) in required {
            if labels.label(key) != Some(value.as_str()) {
                // Still validate the expressions so a malformed selector is always reported.
                validate(selector)?;
                return Ok(false);
            }
        }
    }
    for req in selector.match_expressions.iter().flatten() {
        if !requirement_matches(req, labels)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether the selector selects nothing and everything alike (no labels, no expressions).
pub fn is_empty(selector: &LabelSelector) -> bool {
    selector
        .match_labels
        .as_ref()
        .is_none_or(BTreeMap::is_empty)
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(Vec::is_empty)
}

fn validate(selector: &LabelSelector) -> Result<(), SelectorError> {
    for req in selector.match_expressions.iter().flatten() {
        requirement_matches(req, &BTreeMap::<String, String>::new())?;
    }
    Ok(())
}

fn requirement_matches(
    req: &LabelSelectorRequirement,
    labels: &(impl Labels + ?Sized),
) -> Result<bool, SelectorError> {
    let values = req.values.as_deref().unwrap_or_default();
    let value = labels.label(&req.key);
    match req.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => {
            Err(SelectorError::MissingValues(req.operator.clone()))
        }
        "In" => Ok(value.is_some_and(|v| values.iter().any(|x| x == v))),
        "NotIn" => Ok(value.is_none_or(|v| !values.iter().any(|x| x == v))),
        "Exists" | "DoesNotExist" if !values.is_empty() => {
            Err(SelectorError::UnexpectedValues(req.operator.clone()))
        }
        "Exists" => Ok(value.is_some()),
        "DoesNotExist" => Ok(value.is_none()),
        other => Err(SelectorError::BadOperator(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn req(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.to_owned(),
            operator: op.to_owned(),
            values: Some(values.iter().map(|v| (*v).to_owned()).collect()),
        }
    }

    #[test]
    fn match_labels_and_expressions() {
        let sel = LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            match_expressions: Some(vec![
                req("tier", "In", &["a", "b"]),
                req("x", "DoesNotExist", &[]),
            ]),
        };
        assert_eq!(
            matches(&sel, &labels(&[("app", "web"), ("tier", "a")])),
            Ok(true)
        );
        assert_eq!(
            matches(&sel, &labels(&[("app", "web"), ("tier", "c")])),
            Ok(false)
        );
        assert_eq!(
            matches(&sel, &labels(&[("app", "web"), ("tier", "a"), ("x", "1")])),
            Ok(false)
        );
        assert_eq!(
            matches(&sel, &labels(&[("app", "db"), ("tier", "a")])),
            Ok(false)
        );
        assert_eq!(matches(&LabelSelector::default(), &labels(&[])), Ok(true));
        let bad = LabelSelector {
            match_expressions: Some(vec![req("a", "Near", &[])]),
            ..Default::default()
        };
        assert!(matches(&bad, &labels(&[])).is_err());
        let bad = LabelSelector {
            match_expressions: Some(vec![req("a", "In", &[])]),
            ..Default::default()
        };
        assert!(matches(&bad, &labels(&[])).is_err());
    }
}
