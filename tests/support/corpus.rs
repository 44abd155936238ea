//! The apiserver corpus's answer normalization (tests/apiserver-corpus/README.md, "expect — what
//! is compared"): a recorded real kube-apiserver answer and ours are compared after the same
//! normalization, so only what a client can rely on is held equal.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::{Map, Value, json};

/// The placeholder values of one case run (`$NS` → `corpus-ab12cd34`), captured ones included.
#[derive(Debug, Default, Clone)]
pub struct Vars(pub BTreeMap<String, String>);

impl Vars {
    /// Names longest first, so `$NAME2` is replaced before `$NAME`.
    fn by_length(&self) -> Vec<(&String, &String)> {
        let mut v: Vec<_> = self.0.iter().collect();
        v.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        v
    }

    /// `$VAR` → its value, in a string.
    pub fn fill(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (k, v) in self.by_length() {
            out = out.replace(&format!("${k}"), v);
        }
        out
    }

    /// `$VAR` → its value in every string of `v`, keys included.
    pub fn fill_value(&self, v: &Value) -> Value {
        map_strings(v, &|s| self.fill(s))
    }

    /// Values → `$VAR` (the recorded side's placeholders), for the placeholders the README names:
    /// the namespace and names, and captured uids and generated names; longest value first.
    pub fn unfill(&self, s: &str) -> String {
        let mut pairs: Vec<(&String, &String)> = self
            .0
            .iter()
            .filter(|(k, v)| {
                !v.is_empty()
                    && (matches!(k.as_str(), "NS" | "NAME" | "NAME2" | "NAME3")
                        || k.starts_with("UID")
                        || k.starts_with("GEN"))
            })
            .collect();
        pairs.sort_by_key(|b| std::cmp::Reverse(b.1.len()));
        let mut out = s.to_string();
        for (k, v) in pairs {
            out = out.replace(v.as_str(), &format!("${k}"));
        }
        out
    }

    pub fn unfill_value(&self, v: &Value) -> Value {
        map_strings(v, &|s| self.unfill(s))
    }
}

/// Apply `f` to every string of `v`, object keys included.
pub fn map_strings(v: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(f(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| map_strings(x, f)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (f(k), map_strings(x, f)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

/// The value at a dotted path (`spec.containers.0.image`).
pub fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path.split('.') {
        cur = match cur {
            Value::Object(m) => m.get(seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn at_mut<'a>(v: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut cur = v;
    for seg in path.split('.') {
        cur = match cur {
            Value::Object(m) => m.get_mut(seg)?,
            Value::Array(a) => a.get_mut(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn remove_at(v: &mut Value, path: &str) {
    let (parent, last) = match path.rsplit_once('.') {
        Some((p, l)) => (at_mut(v, p), l),
        None => (Some(v), path),
    };
    match parent {
        Some(Value::Object(m)) => {
            m.remove(last);
        }
        Some(Value::Array(a)) => {
            if let Ok(i) = last.parse::<usize>()
                && i < a.len()
            {
                a.remove(i);
            }
        }
        _ => {}
    }
}

/// The message masks every Status message, watch ERROR message and warning gets.
pub struct Masks {
    rules: Vec<(Regex, String)>,
}

impl Masks {
    pub fn new(extra: &[(String, String)]) -> Masks {
        let base: &[(&str, &str)] = &[
            (
                r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
                "<ts>",
            ),
            (
                r#"resourceVersion((?:\\*)"):((?:\\*)")\d+((?:\\*)")"#,
                "resourceVersion${1}:${2}<rv>${3}",
            ),
            (
                r"ResourceVersion in the precondition \(\d+\)",
                "ResourceVersion in the precondition (<rv>)",
            ),
            (
                r"ResourceVersion in record \(\d+\)",
                "ResourceVersion in record (<rv>)",
            ),
            (r"kube-api-access-[a-z0-9]{5}", "kube-api-access-<rand>"),
            (
                r"too old resource version: \d+ \(\d+\)",
                "too old resource version: <rv> (<rv>)",
            ),
        ];
        let mut rules: Vec<(Regex, String)> = base
            .iter()
            .filter_map(|(p, r)| Regex::new(p).ok().map(|re| (re, (*r).to_string())))
            .collect();
        // The corpus's masks are Python's: `\1` is `${1}` here.
        let backref = Regex::new(r"\\(\d)").ok();
        for (p, r) in extra {
            if let Ok(re) = Regex::new(p) {
                let r = backref
                    .as_ref()
                    .map(|b| b.replace_all(r, "$${$1}").into_owned())
                    .unwrap_or_else(|| r.clone());
                rules.push((re, r));
            }
        }
        Masks { rules }
    }

    pub fn apply(&self, msg: &str) -> String {
        let mut out = msg.to_string();
        const DIFF: &str = "pod updates may not change fields other than";
        if let Some(i) = out.find(DIFF) {
            // The Go diff dump after the first line of that message.
            if let Some(nl) = out[i..].find('\n') {
                out.truncate(i + nl);
                out.push_str("\n<diff>");
            }
        }
        for (re, r) in &self.rules {
            out = re.replace_all(&out, r.as_str()).into_owned();
        }
        out
    }
}

/// A `kind: Status` body as the corpus compares it.
pub fn status(v: &Value, masks: &Masks) -> Value {
    let mut out = Map::new();
    for k in ["status", "reason", "code"] {
        if let Some(x) = v.get(k) {
            out.insert(k.into(), x.clone());
        }
    }
    if let Some(m) = v.get("message").and_then(Value::as_str) {
        out.insert("message".into(), json!(masks.apply(m)));
    }
    if let Some(d) = v.get("details").filter(|d| d.is_object()) {
        let mut details = Map::new();
        for k in ["kind", "name", "group"] {
            if let Some(s) = d.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()) {
                details.insert(k.into(), json!(s));
            }
        }
        if let Some(causes) = d.get("causes").and_then(Value::as_array) {
            let mut c: Vec<(String, String)> = causes
                .iter()
                .map(|c| {
                    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    (s("field"), s("reason"))
                })
                .collect();
            c.sort();
            details.insert(
                "causes".into(),
                Value::Array(
                    c.into_iter()
                        .map(|(f, r)| json!({"field": f, "reason": r}))
                        .collect(),
                ),
            );
        }
        out.insert("details".into(), Value::Object(details));
    }
    Value::Object(out)
}

/// How an object answer is normalized (the case's and the step's options).
#[derive(Default)]
pub struct ObjectRules<'a> {
    pub managed_fields: bool,
    pub keep_status: bool,
    pub mask: Vec<&'a str>,
    pub drop: Vec<&'a str>,
    pub select: Vec<&'a str>,
}

fn meta_placeholders(m: &mut Map<String, Value>, managed_fields: bool) {
    if m.contains_key("uid") {
        m.insert("uid".into(), json!("<uid>"));
    }
    if m.contains_key("resourceVersion") {
        m.insert("resourceVersion".into(), json!("<rv>"));
    }
    for k in ["creationTimestamp", "deletionTimestamp"] {
        if m.get(k).is_some_and(|v| !v.is_null()) {
            m.insert(k.into(), json!("<ts>"));
        }
    }
    m.remove("selfLink");
    if managed_fields {
        if let Some(Value::Array(entries)) = m.get_mut("managedFields") {
            for e in entries {
                if let Some(e) = e.as_object_mut() {
                    e.remove("time");
                }
            }
        }
    } else {
        m.remove("managedFields");
    }
    if let Some(Value::Object(a)) = m.get_mut("annotations") {
        a.retain(|k, _| !k.starts_with("kruise.io/sidecarset-hash"));
    }
    let generated = match (m.get("generateName"), m.get("name")) {
        (Some(Value::String(g)), Some(Value::String(n))) if !g.is_empty() && n.starts_with(g) => {
            Some(format!("{g}<generated>"))
        }
        _ => None,
    };
    if let Some(n) = generated {
        m.insert("name".into(), json!(n));
    }
}

/// An object answer (not a Status, list or Table), normalized.
pub fn object(v: &Value, rules: &ObjectRules) -> Value {
    let mut o = v.clone();
    if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        meta_placeholders(m, rules.managed_fields);
    }
    let kind = o
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let core = o.get("apiVersion").and_then(Value::as_str) == Some("v1");
    if core && kind == "Pod" {
        if !rules.keep_status
            && let Some(m) = o.as_object_mut()
        {
            m.remove("status");
        }
        let re = Regex::new(r"^kube-api-access-[a-z0-9]{5}$").ok();
        let fix = |v: &mut Value| {
            if let (Some(re), Some(n)) = (&re, v.get("name").and_then(Value::as_str))
                && re.is_match(n)
            {
                v["name"] = json!("kube-api-access-<rand>");
            }
        };
        // (`get_mut`, never `v[k]` on a `&mut Value`: that inserts a null.)
        if let Some(vols) = o.pointer_mut("/spec/volumes").and_then(Value::as_array_mut) {
            vols.iter_mut().for_each(fix);
        }
        for list in ["containers", "initContainers"] {
            let path = format!("/spec/{list}");
            if let Some(cs) = o.pointer_mut(&path).and_then(Value::as_array_mut) {
                for c in cs {
                    if let Some(ms) = c.get_mut("volumeMounts").and_then(Value::as_array_mut) {
                        ms.iter_mut().for_each(fix);
                    }
                }
            }
        }
    }
    if core
        && kind == "Service"
        && let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut)
    {
        if spec.contains_key("clusterIP") {
            spec.insert("clusterIP".into(), json!("<ip>"));
        }
        if let Some(Value::Array(ips)) = spec.get_mut("clusterIPs") {
            ips.iter_mut().for_each(|ip| *ip = json!("<ip>"));
        }
    }
    for p in &rules.mask {
        if let Some(x) = at_mut(&mut o, p) {
            *x = json!("<masked>");
        }
    }
    for p in &rules.drop {
        remove_at(&mut o, p);
    }
    if rules.select.is_empty() {
        return o;
    }
    let mut out = Map::new();
    for p in &rules.select {
        out.insert(
            (*p).to_string(),
            at(&o, p).cloned().unwrap_or_else(|| json!("<absent>")),
        );
    }
    Value::Object(out)
}

/// A list answer: kind, apiVersion, the sorted item names, whether it continues.
pub fn list(v: &Value) -> Value {
    let mut names: Vec<String> = v["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    let name = i["metadata"]["name"].as_str().unwrap_or("");
                    match i["metadata"]["namespace"]
                        .as_str()
                        .filter(|n| !n.is_empty())
                    {
                        Some(ns) => format!("{ns}/{name}"),
                        None => name.to_string(),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = json!({
        "kind": v["kind"],
        "apiVersion": v["apiVersion"],
        "names": names,
        "continue": v["metadata"]["continue"].as_str().is_some_and(|c| !c.is_empty()),
    });
    if let Some(r) = v["metadata"].get("remainingItemCount") {
        out["remainingItemCount"] = r.clone();
    }
    out
}

/// A Table answer: columns as `[name, type, format, priority]`, rows as cells (ages masked).
pub fn table(v: &Value) -> Value {
    let defs = v["columnDefinitions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let columns: Vec<Value> = defs
        .iter()
        .map(|c| json!([c["name"], c["type"], c["format"], c["priority"]]))
        .collect();
    let age: Vec<bool> = defs
        .iter()
        .map(|c| {
            c["name"]
                .as_str()
                .is_some_and(|n| n.eq_ignore_ascii_case("age"))
                || c["type"] == "date"
        })
        .collect();
    let rows: Vec<Value> = v["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    let cells = r["cells"].as_array().cloned().unwrap_or_default();
                    Value::Array(
                        cells
                            .into_iter()
                            .enumerate()
                            .map(|(i, c)| {
                                if age.get(i).copied().unwrap_or(false) {
                                    json!("<age>")
                                } else {
                                    c
                                }
                            })
                            .collect(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"kind": v["kind"], "apiVersion": v["apiVersion"], "columns": columns, "rows": rows})
}
