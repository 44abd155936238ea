//! CRD `additionalPrinterColumns` JSONPath: kubectl's dialect (client-go's `util/jsonpath`, e.g.
//! `.metadata.labels.crr\.apps\.kruise\.io/node-name`, `.status.conditions[?(@.type=="Ready")]`)
//! translated to RFC 9535 and evaluated with jsonpath-rust; and the cell a real server puts in a
//! Table for the first result (apiextensions-apiserver's `tableconvertor`).

use jsonpath_rust::{parser::model::JpQuery, parser::parse_json_path, query::js_path_process};
use serde_json::{Value, json};

fn quote(name: &str) -> String {
    format!("['{}']", name.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The index of the `]` closing the `[` at `open`, skipping quoted strings and nested brackets.
fn closing(chars: &[char], open: usize) -> Option<usize> {
    let (mut depth, mut quote_char, mut i) = (0usize, None::<char>, open);
    while i < chars.len() {
        let c = chars[i];
        match quote_char {
            Some(_) if c == '\\' => i += 1,
            Some(q) if c == q => quote_char = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => quote_char = Some(c),
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// Translate a kubectl JSONPath (without the surrounding `{}`) to RFC 9535.
pub fn translate(path: &str) -> Result<String, String> {
    let path = path.trim();
    let path = path
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(path);
    let path = path.strip_prefix('$').unwrap_or(path);
    let chars: Vec<char> = path.chars().collect();
    let mut out = String::from("$");
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '[' => {
                let end = closing(&chars, i).ok_or_else(|| format!("unclosed [ in {path}"))?;
                out.extend(&chars[i..=end]);
                i = end + 1;
            }
            c => {
                if c == '.' {
                    i += 1;
                    if chars.get(i) == Some(&'.') {
                        out.push_str("..");
                        i += 1;
                    }
                }
                let mut name = String::new();
                while let Some(&c) = chars.get(i) {
                    match c {
                        '\\' => {
                            if let Some(&n) = chars.get(i + 1) {
                                name.push(n);
                            }
                            i += 2;
                        }
                        '.' | '[' => break,
                        c => {
                            name.push(c);
                            i += 1;
                        }
                    }
                }
                match name.as_str() {
                    "" => {}
                    "*" => out.push_str("[*]"),
                    n => out.push_str(&quote(n)),
                }
            }
        }
    }
    Ok(out)
}

/// Parse a kubectl JSONPath once, for evaluating it on many objects.
pub fn compile(path: &str) -> Result<JpQuery, String> {
    let rfc = translate(path)?;
    parse_json_path(&rfc).map_err(|e| format!("{path}: {e}"))
}

/// Every value the path selects (none when a key is missing or a filter meets a non-list).
pub fn eval<'a>(q: &JpQuery, v: &'a Value) -> Vec<&'a Value> {
    js_path_process(q, v)
        .map(|refs| refs.into_iter().map(|r| r.val()).collect())
        .unwrap_or_default()
}

/// Go's `fmt.Sprint` of a decoded JSON value (what client-go's jsonpath prints).
fn go_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_text).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let mut items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_text(v)))
                .collect();
            items.sort();
            format!("map[{}]", items.join(" "))
        }
        other => other.to_string(),
    }
}

/// The Table cell for a column of `type_` (`string`, `integer`, `number`, `boolean`, `date`):
/// the first result, or null where the real server leaves the cell empty (`<none>`).
pub fn cell(type_: &str, results: &[&Value], age: impl Fn(&str) -> Option<String>) -> Value {
    let Some(v) = results.first().copied() else {
        return Value::Null;
    };
    match (type_, v) {
        (_, Value::Null) => Value::Null,
        ("string", v) => json!(go_text(v)),
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => json!(i),
            None => n.as_f64().map(|f| json!(f as i64)).unwrap_or(Value::Null),
        },
        ("number", Value::Number(n)) => n.as_f64().map(|f| json!(f)).unwrap_or(Value::Null),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) => json!(age(s).unwrap_or_else(|| "<invalid>".into())),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_paths_translate() {
        assert_eq!(
            translate(".spec.replicas").unwrap(),
            "$['spec']['replicas']"
        );
        assert_eq!(
            translate(r".metadata.labels.crr\.apps\.kruise\.io/node-name").unwrap(),
            "$['metadata']['labels']['crr.apps.kruise.io/node-name']"
        );
        assert_eq!(
            translate(r#".spec.scheduleStrategy.type[?(@ == "Adaptive")]"#).unwrap(),
            r#"$['spec']['scheduleStrategy']['type'][?(@ == "Adaptive")]"#
        );
        assert_eq!(
            translate(".spec.containers[*].name").unwrap(),
            "$['spec']['containers'][*]['name']"
        );
        assert_eq!(translate("{..name}").unwrap(), "$..['name']");
        assert!(translate(".a[0").is_err());
    }

    fn run(path: &str, v: &Value) -> Vec<Value> {
        let q = compile(path).unwrap();
        eval(&q, v).into_iter().cloned().collect()
    }

    #[test]
    fn evaluation_and_cells_match_the_real_table_convertor() {
        let v = json!({
            "metadata": {"labels": {"crr.apps.kruise.io/node-name": "node-1"}},
            "spec": {"scheduleStrategy": {"type": "Adaptive"}, "containers": [{"name": "a"}, {"name": "b"}], "replicas": 3},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}
        });
        let node = run(r".metadata.labels.crr\.apps\.kruise\.io/node-name", &v);
        assert_eq!(node, vec![json!("node-1")]);
        let ready = run(r#".status.conditions[?(@.type=="Ready")].status"#, &v);
        assert_eq!(ready, vec![json!("True")]);
        assert_eq!(run(".spec.containers[*].name", &v).len(), 2);
        // A filter on a string selects nothing: the real server's Adaptive column is empty.
        let adaptive = run(r#".spec.scheduleStrategy.type[?(@ == "Adaptive")]"#, &v);
        let refs: Vec<&Value> = adaptive.iter().collect();
        assert_eq!(cell("boolean", &refs, |_| None), Value::Null);
        // First result only; typed as the column says.
        let names = run(".spec.containers[*].name", &v);
        let refs: Vec<&Value> = names.iter().collect();
        assert_eq!(cell("string", &refs, |_| None), json!("a"));
        let three = json!(3);
        assert_eq!(cell("string", &[&three], |_| None), json!("3"));
        assert_eq!(cell("integer", &[&json!(2.7)], |_| None), json!(2));
        assert_eq!(cell("boolean", &[&json!("true")], |_| None), Value::Null);
        assert_eq!(
            cell("date", &[&json!("bogus")], |_| None),
            json!("<invalid>")
        );
        assert_eq!(
            cell("string", &[&json!({"b": 1, "a": [1, 2]})], |_| None),
            json!("map[a:[1 2] b:1]")
        );
    }
}
