//! Label selectors, parsed by the same lexer and recursive-descent parser as apimachinery's
//! `labels.Parse` (`selector/parse.rs`: a bad selector fails with the real server's message),
//! and field selectors (`selector/field.rs`).

mod field;
mod parse;

use serde_json::Value;

pub use field::FieldSelector;

use super::status::ApiError;

#[derive(Debug, Clone, PartialEq)]
enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
    Gt(String, i64),
    Lt(String, i64),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<LabelReq>);

impl LabelSelector {
    /// Parse a selector string as `labels.Parse` does; a bad one is a 400 with its message.
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        parse::parse(s)
            .map(LabelSelector)
            .map_err(ApiError::bad_request)
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
                LabelReq::Gt(k, n) => format!("{k}>{n}"),
                LabelReq::Lt(k, n) => format!("{k}<{n}"),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether an object (its `metadata.labels`) matches.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = &obj["metadata"]["labels"];
        self.0.iter().all(|r| {
            let get = |k: &str| labels.get(k).and_then(Value::as_str);
            let int = |k: &str| get(k).and_then(|v| v.parse::<i64>().ok());
            match r {
                LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
                LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
                LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
                LabelReq::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
                LabelReq::Exists(k) => get(k).is_some(),
                LabelReq::NotExists(k) => get(k).is_none(),
                LabelReq::Gt(k, n) => int(k).is_some_and(|x| x > *n),
                LabelReq::Lt(k, n) => int(k).is_some_and(|x| x < *n),
            }
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

    fn err(s: &str) -> String {
        LabelSelector::parse(s).unwrap_err().message
    }

    #[test]
    fn label_operators() {
        let p = pod(json!({"app": "web", "tier": "fe", "n": "5"}));
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
        assert!(m("tier in (fe),app!=db"));
        assert!(m("n>3,n<6"));
        assert!(!m("n>5"));
        assert!(m(""));
        assert!(!m("in in (in),app"));
    }

    #[test]
    fn parse_errors_say_what_apimachinery_says() {
        assert_eq!(
            err("grp in (a"),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            err("grp=not valid!"),
            "found 'valid', expected: ',' or 'end of string'"
        );
        assert_eq!(
            err("a b c"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(err("a,"), "found '', expected: identifier after ','");
        assert_eq!(err("a=b=c"), "found '=', expected: ',' or 'end of string'");
        assert_eq!(
            err("x>a"),
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert!(err("a=b c!").starts_with("found 'c'"));
        assert!(err("-a").starts_with(
            "unable to parse requirement: : Invalid value: \"-a\": name part must consist of"
        ));
        assert!(err("a=-b").starts_with(
            "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be"
        ));
    }
}
