//! Label selectors (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) and field selectors (`=`, `==`,
//! `!=` on dotted paths such as `metadata.name`, `spec.nodeName`, `involvedObject.uid`).

use serde_json::Value;

use super::status::ApiError;

#[derive(Debug, Clone, PartialEq)]
enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<LabelReq>);

/// Split on commas outside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

fn set_values(rest: &str, raw: &str) -> Result<Vec<String>, ApiError> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| ApiError::bad_request(format!("unable to parse requirement: {raw}")))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        for part in split_top(s) {
            if let Some(key) = part.strip_prefix('!') {
                reqs.push(LabelReq::NotExists(key.trim().to_string()));
            } else if let Some((k, v)) = part.split_once("!=") {
                reqs.push(LabelReq::NotEq(k.trim().into(), v.trim().into()));
            } else if let Some((k, v)) = part.split_once("==") {
                reqs.push(LabelReq::Eq(k.trim().into(), v.trim().into()));
            } else if let Some((k, v)) = part.split_once('=') {
                reqs.push(LabelReq::Eq(k.trim().into(), v.trim().into()));
            } else if let Some((k, rest)) = part.split_once(" notin ") {
                reqs.push(LabelReq::NotIn(k.trim().into(), set_values(rest, part)?));
            } else if let Some((k, rest)) = part.split_once(" in ") {
                reqs.push(LabelReq::In(k.trim().into(), set_values(rest, part)?));
            } else if part.contains(' ') || part.contains('(') {
                return Err(ApiError::bad_request(format!(
                    "unable to parse requirement: {part}"
                )));
            } else {
                reqs.push(LabelReq::Exists(part.to_string()));
            }
        }
        Ok(LabelSelector(reqs))
    }

    /// From a `metav1.LabelSelector` object (matchLabels + matchExpressions).
    pub fn from_object(sel: &Value) -> Self {
        let mut reqs = Vec::new();
        if let Some(m) = sel["matchLabels"].as_object() {
            for (k, v) in m {
                reqs.push(LabelReq::Eq(
                    k.clone(),
                    v.as_str().unwrap_or("").to_string(),
                ));
            }
        }
        for e in sel["matchExpressions"].as_array().into_iter().flatten() {
            let key = e["key"].as_str().unwrap_or("").to_string();
            let values: Vec<String> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            reqs.push(match e["operator"].as_str().unwrap_or("") {
                "In" => LabelReq::In(key, values),
                "NotIn" => LabelReq::NotIn(key, values),
                "DoesNotExist" => LabelReq::NotExists(key),
                _ => LabelReq::Exists(key),
            });
        }
        LabelSelector(reqs)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The selector as a string (`a=b,c in (d)`), as a Scale's `status.selector`.
    pub fn to_query(&self) -> String {
        self.0
            .iter()
            .map(|r| match r {
                LabelReq::Eq(k, v) => format!("{k}={v}"),
                LabelReq::NotEq(k, v) => format!("{k}!={v}"),
                LabelReq::In(k, vs) => format!("{k} in ({})", vs.join(",")),
                LabelReq::NotIn(k, vs) => format!("{k} notin ({})", vs.join(",")),
                LabelReq::Exists(k) => k.clone(),
                LabelReq::NotExists(k) => format!("!{k}"),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether an object (its `metadata.labels`) matches.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = &obj["metadata"]["labels"];
        self.0.iter().all(|r| {
            let get = |k: &str| labels.get(k).and_then(Value::as_str);
            match r {
                LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
                LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
                LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
                LabelReq::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
                LabelReq::Exists(k) => get(k).is_some(),
                LabelReq::NotExists(k) => get(k).is_none(),
            }
        })
    }
}

/// A parsed field selector.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(Vec<String>, bool, String)>);

impl FieldSelector {
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        for part in split_top(s) {
            let (k, eq, v) = if let Some((k, v)) = part.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            let path = k.trim().split('.').map(str::to_string).collect();
            reqs.push((path, eq, v.trim().to_string()));
        }
        Ok(FieldSelector(reqs))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `metadata.name=X` value, when the selector pins a name (an index lookup).
    pub fn pinned_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|(p, eq, _)| *eq && p.len() == 2 && p[0] == "metadata" && p[1] == "name")
            .map(|(_, _, v)| v.as_str())
    }

    /// Whether every path is under `metadata` (answerable from an object's head).
    pub fn metadata_only(&self) -> bool {
        self.0
            .iter()
            .all(|(p, _, _)| p.first().is_some_and(|s| s == "metadata"))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(path, eq, want)| {
            let mut cur = obj;
            for seg in path {
                cur = &cur[seg.as_str()];
            }
            let have = match cur {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (have == *want) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(labels: Value) -> Value {
        json!({"metadata": {"name": "p", "labels": labels}, "spec": {"nodeName": "n1"}})
    }

    #[test]
    fn label_operators() {
        let p = pod(json!({"app": "web", "tier": "fe"}));
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(&p);
        assert!(m("app=web"));
        assert!(m("app==web,tier"));
        assert!(!m("app!=web"));
        assert!(m("app in (web, db)"));
        assert!(!m("app notin (web)"));
        assert!(m("!missing"));
        assert!(!m("!app"));
        assert!(m("env notin (prod)"));
        assert!(!m("env in (prod)"));
        assert!(m(""));
        assert!(LabelSelector::parse("a b c").is_err());
    }

    #[test]
    fn field_selectors() {
        let p = pod(json!({}));
        let m = |s: &str| FieldSelector::parse(s).unwrap().matches(&p);
        assert!(m("metadata.name=p,spec.nodeName=n1"));
        assert!(!m("spec.nodeName!=n1"));
        assert!(m("status.phase!=Running"));
        assert!(FieldSelector::parse("bogus").is_err());
    }
}
