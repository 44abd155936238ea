//! Field sets as structured-merge-diff keeps them for `metadata.managedFields`: a tree of path
//! elements where a node may be a member itself (`"."` in FieldsV1) and have children. A path
//! element is kept in its FieldsV1 spelling: `f:name` (a field), `k:{"name":"c"}` (an item of a
//! list keyed by its key fields, sorted by name), `v:"x"` (an item of a set) or `i:0` (an index).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::kruise::sidecarset::gojson;

/// A field path element, in its FieldsV1 spelling.
pub type Pe = String;

/// `f:name`.
pub fn field(name: &str) -> Pe {
    format!("f:{name}")
}

/// `k:{...}` from the key fields (sorted by name, values in Go's JSON).
pub fn key(fields: &[(String, Value)]) -> Pe {
    let mut sorted: Vec<&(String, Value)> = fields.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::from("k:{");
    for (i, (name, v)) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        gojson::write_str(&mut out, name);
        out.push(':');
        out.push_str(&gojson::encode_any(v));
    }
    out.push('}');
    out
}

/// `v:<json>`.
pub fn value(v: &Value) -> Pe {
    format!("v:{}", gojson::encode_any(v))
}

/// A path element as apimachinery prints it in conflicts: `.name`, `[name="c"]`, `[="x"]`, `[0]`.
pub fn display(pe: &str) -> String {
    if let Some(name) = pe.strip_prefix("f:") {
        return format!(".{name}");
    }
    if let Some(json) = pe.strip_prefix("k:") {
        let fields: Vec<String> = match serde_json::from_str::<Map<String, Value>>(json) {
            Ok(m) => m.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            Err(_) => vec![json.to_string()],
        };
        return format!("[{}]", fields.join(","));
    }
    if let Some(json) = pe.strip_prefix("v:") {
        return format!("[={json}]");
    }
    if let Some(i) = pe.strip_prefix("i:") {
        return format!("[{i}]");
    }
    pe.to_string()
}

/// A path as apimachinery prints it (`.spec.replicas`).
pub fn display_path(path: &[Pe]) -> String {
    path.iter().map(|p| display(p)).collect()
}

/// A set of field paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<Pe>,
    children: BTreeMap<Pe, Set>,
}

impl Set {
    pub fn new() -> Set {
        Set::default()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    pub fn insert(&mut self, path: &[Pe]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    pub fn has(&self, path: &[Pe]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The paths under `pe`, without it.
    pub fn with_prefix(&self, pe: &str) -> Option<&Set> {
        self.children.get(pe).filter(|c| !c.is_empty())
    }

    pub fn member_elements(&self) -> impl Iterator<Item = &Pe> {
        self.members.iter()
    }

    pub fn child_elements(&self) -> impl Iterator<Item = (&Pe, &Set)> {
        self.children.iter()
    }

    pub fn add_member(&mut self, pe: Pe) {
        self.members.insert(pe);
    }

    pub fn set_child(&mut self, pe: Pe, child: Set) {
        if child.is_empty() {
            self.children.remove(&pe);
        } else {
            self.children.insert(pe, child);
        }
    }

    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(c),
                None => c.clone(),
            };
            out.set_child(pe.clone(), merged);
        }
        out
    }

    pub fn intersection(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            if let Some(o) = other.children.get(pe) {
                out.set_child(pe.clone(), c.intersection(o));
            }
        }
        out
    }

    /// Members of `self` not in `other`; a child set loses what the same child of `other` holds
    /// (a member of `other` does not remove the children of the same element).
    pub fn difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            let rest = match other.children.get(pe) {
                Some(o) => c.difference(o),
                None => c.clone(),
            };
            out.set_child(pe.clone(), rest);
        }
        out
    }

    /// Like [`Set::difference`], but a member of `other` removes the element's children too.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let rest = match other.children.get(pe) {
                Some(o) => c.recursive_difference(o),
                None => c.clone(),
            };
            out.set_child(pe.clone(), rest);
        }
        out
    }

    /// Every member path, in order.
    pub fn paths(&self) -> Vec<Vec<Pe>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<Pe>, out: &mut Vec<Vec<Pe>>) {
        let mut elements: BTreeSet<&Pe> = self.members.iter().collect();
        elements.extend(self.children.keys());
        for pe in elements {
            prefix.push(pe.clone());
            if self.members.contains(pe) {
                out.push(prefix.clone());
            }
            if let Some(c) = self.children.get(pe) {
                c.collect(prefix, out);
            }
            prefix.pop();
        }
    }

    /// The FieldsV1 form: `{"f:spec":{".":{},"f:replicas":{}}}`.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.fields_v1(false))
    }

    fn fields_v1(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        let mut elements: BTreeSet<&Pe> = self.members.iter().collect();
        elements.extend(
            self.children
                .iter()
                .filter(|(_, c)| !c.is_empty())
                .map(|(k, _)| k),
        );
        for pe in elements {
            let member = self.members.contains(pe);
            let body = match self.children.get(pe).filter(|c| !c.is_empty()) {
                Some(c) => c.fields_v1(member),
                None => Map::new(),
            };
            out.insert(pe.clone(), Value::Object(body));
        }
        out
    }

    /// Parses the FieldsV1 form; None when it is not one.
    pub fn from_fields_v1(v: &Value) -> Option<Set> {
        let m = v.as_object()?;
        let mut out = Set::new();
        for (k, child) in m {
            if k == "." {
                continue;
            }
            if !matches!(k.get(..2), Some("f:" | "k:" | "v:" | "i:")) {
                return None;
            }
            let cm = child.as_object()?;
            if cm.is_empty() {
                out.members.insert(k.clone());
                continue;
            }
            if cm.contains_key(".") {
                out.members.insert(k.clone());
            }
            let sub = Set::from_fields_v1(child)?;
            out.set_child(k.clone(), sub);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(parts: &[&str]) -> Vec<Pe> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn fields_v1_round_trip_with_self_markers() {
        let mut s = Set::new();
        s.insert(&p(&["f:spec"]));
        s.insert(&p(&["f:spec", "f:replicas"]));
        s.insert(&p(&[
            "f:spec",
            "f:template",
            "f:metadata",
            "f:labels",
            "f:app",
        ]));
        s.insert(&p(&["f:data", "f:a"]));
        let v = s.to_fields_v1();
        assert_eq!(
            v,
            json!({"f:data": {"f:a": {}}, "f:spec": {".": {}, "f:replicas": {},
                "f:template": {"f:metadata": {"f:labels": {"f:app": {}}}}}})
        );
        assert_eq!(Set::from_fields_v1(&v), Some(s));
        assert_eq!(Set::from_fields_v1(&json!({"x": {}})), None);
    }

    #[test]
    fn set_algebra_follows_structured_merge_diff() {
        let mut a = Set::new();
        a.insert(&p(&["f:a", "f:b"]));
        a.insert(&p(&["f:c"]));
        let mut parent = Set::new();
        parent.insert(&p(&["f:a"]));
        // A member does not remove the children of the same element, except recursively.
        assert_eq!(a.difference(&parent), a);
        let mut only_c = Set::new();
        only_c.insert(&p(&["f:c"]));
        assert_eq!(a.recursive_difference(&parent), only_c);
        assert!(a.has(&p(&["f:a", "f:b"])) && !a.has(&p(&["f:a"])));
        assert_eq!(a.intersection(&only_c), only_c);
        assert_eq!(a.union(&parent).paths().len(), 3);
    }

    #[test]
    fn element_spellings() {
        let k = key(&[
            ("protocol".into(), json!("TCP")),
            ("containerPort".into(), json!(80)),
        ]);
        assert_eq!(k, r#"k:{"containerPort":80,"protocol":"TCP"}"#);
        assert_eq!(display(&k), r#"[containerPort=80,protocol="TCP"]"#);
        assert_eq!(value(&json!("a<b")), r#"v:"a\u003cb""#);
        assert_eq!(
            display_path(&p(&["f:spec", "f:replicas"])),
            ".spec.replicas"
        );
    }
}
