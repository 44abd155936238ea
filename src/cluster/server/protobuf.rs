//! A small Kubernetes protobuf reader for the bodies kubectl's typed generators send
//! (`kubectl create namespace|configmap|secret`, eviction from `kubectl drain`): the `k8s\0`
//! envelope (runtime.Unknown) and the few kinds those commands write, turned into JSON.

use serde_json::{Map, Value, json};

use super::tls::base64;

enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Other,
}

fn varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        out |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(out);
        }
    }
    None
}

/// Split a message into (field number, value) pairs.
fn fields(b: &[u8]) -> Option<Vec<(u64, Wire<'_>)>> {
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < b.len() {
        let key = varint(b, &mut pos)?;
        let (field, wt) = (key >> 3, key & 7);
        let v = match wt {
            0 => Wire::Varint(varint(b, &mut pos)?),
            1 => {
                pos += 8;
                Wire::Other
            }
            2 => {
                let len = usize::try_from(varint(b, &mut pos)?).ok()?;
                let s = b.get(pos..pos.checked_add(len)?)?;
                pos += len;
                Wire::Bytes(s)
            }
            5 => {
                pos += 4;
                Wire::Other
            }
            _ => return None,
        };
        out.push((field, v));
    }
    (pos == b.len()).then_some(out)
}

fn text(b: &[u8]) -> Value {
    Value::String(String::from_utf8_lossy(b).into_owned())
}

/// A map<string, string|bytes> entry list.
fn map_entry(b: &[u8], bytes_values: bool) -> Option<(String, Value)> {
    let (mut k, mut v) = (String::new(), json!(""));
    for (f, w) in fields(b)? {
        match (f, w) {
            (1, Wire::Bytes(s)) => k = String::from_utf8_lossy(s).into_owned(),
            (2, Wire::Bytes(s)) => {
                v = if bytes_values {
                    json!(base64(s))
                } else {
                    text(s)
                }
            }
            _ => {}
        }
    }
    Some((k, v))
}

fn insert_map(m: &mut Map<String, Value>, key: &str, entry: Option<(String, Value)>) {
    if let Some((k, v)) = entry {
        let slot = m.entry(key.to_string()).or_insert_with(|| json!({}));
        if let Some(o) = slot.as_object_mut() {
            o.insert(k, v);
        }
    }
}

fn push(m: &mut Map<String, Value>, key: &str, v: Value) {
    let slot = m.entry(key.to_string()).or_insert_with(|| json!([]));
    if let Some(a) = slot.as_array_mut() {
        a.push(v);
    }
}

fn object_meta(b: &[u8]) -> Option<Value> {
    let mut m = Map::new();
    for (f, w) in fields(b)? {
        match (f, w) {
            (1, Wire::Bytes(s)) => {
                m.insert("name".into(), text(s));
            }
            (2, Wire::Bytes(s)) => {
                m.insert("generateName".into(), text(s));
            }
            (3, Wire::Bytes(s)) => {
                m.insert("namespace".into(), text(s));
            }
            (6, Wire::Bytes(s)) => {
                m.insert("resourceVersion".into(), text(s));
            }
            (11, Wire::Bytes(s)) => insert_map(&mut m, "labels", map_entry(s, false)),
            (12, Wire::Bytes(s)) => insert_map(&mut m, "annotations", map_entry(s, false)),
            (14, Wire::Bytes(s)) => push(&mut m, "finalizers", text(s)),
            _ => {}
        }
    }
    Some(Value::Object(m))
}

fn kind_body(kind: &str, b: &[u8]) -> Option<Value> {
    let mut m = Map::new();
    for (f, w) in fields(b)? {
        let Wire::Bytes(s) = w else {
            if let (Wire::Varint(x), "ConfigMap", 4) | (Wire::Varint(x), "Secret", 5) = (w, kind, f)
            {
                m.insert("immutable".into(), json!(x != 0));
            }
            continue;
        };
        match (kind, f) {
            (_, 1) => {
                m.insert("metadata".into(), object_meta(s)?);
            }
            ("Namespace", 2) => {
                let mut spec = Map::new();
                for (sf, sw) in fields(s)? {
                    if let (1, Wire::Bytes(x)) = (sf, sw) {
                        push(&mut spec, "finalizers", text(x));
                    }
                }
                m.insert("spec".into(), Value::Object(spec));
            }
            ("ConfigMap", 2) => insert_map(&mut m, "data", map_entry(s, false)),
            ("ConfigMap", 3) => insert_map(&mut m, "binaryData", map_entry(s, true)),
            ("Secret", 2) => insert_map(&mut m, "data", map_entry(s, true)),
            ("Secret", 3) => {
                m.insert("type".into(), text(s));
            }
            ("Secret", 4) => insert_map(&mut m, "stringData", map_entry(s, false)),
            ("Eviction", 2) => {}
            _ => {}
        }
    }
    Some(Value::Object(m))
}

/// Decode a protobuf request body into JSON, for the kinds kubectl's generators send.
/// Returns None for anything else (answered 415).
pub fn decode(body: &[u8]) -> Option<Value> {
    let rest = body.strip_prefix(b"k8s\0")?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), None);
    for (f, w) in fields(rest)? {
        match (f, w) {
            (1, Wire::Bytes(tm)) => {
                for (tf, tw) in fields(tm)? {
                    match (tf, tw) {
                        (1, Wire::Bytes(s)) => {
                            api_version = String::from_utf8_lossy(s).into_owned()
                        }
                        (2, Wire::Bytes(s)) => kind = String::from_utf8_lossy(s).into_owned(),
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(s)) => raw = Some(s),
            _ => {}
        }
    }
    if !matches!(
        kind.as_str(),
        "Namespace" | "ConfigMap" | "Secret" | "Eviction"
    ) {
        return None;
    }
    let mut v = kind_body(&kind, raw?)?;
    if let Some(m) = v.as_object_mut() {
        m.insert("apiVersion".into(), json!(api_version));
        m.insert("kind".into(), json!(kind));
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(field: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![(field << 3) | 2, payload.len() as u8];
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn decodes_a_configmap_like_kubectl_sends() {
        let entry = [ld(1, b"a"), ld(2, b"b")].concat();
        let meta = [
            ld(1, b"cm"),
            ld(11, &[ld(1, b"app"), ld(2, b"web")].concat()),
        ]
        .concat();
        let obj = [ld(1, &meta), ld(2, &entry)].concat();
        let type_meta = [ld(1, b"v1"), ld(2, b"ConfigMap")].concat();
        let mut body = b"k8s\0".to_vec();
        body.extend([ld(1, &type_meta), ld(2, &obj)].concat());
        let v = decode(&body).unwrap();
        assert_eq!(
            v,
            json!({"metadata": {"name": "cm", "labels": {"app": "web"}}, "data": {"a": "b"}, "apiVersion": "v1", "kind": "ConfigMap"})
        );
        assert!(decode(b"k8s\0\xff").is_none());
        assert!(decode(b"{}").is_none());
    }
}
