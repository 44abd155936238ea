//! The protobuf bodies kubectl sends to the auth endpoints (`auth can-i` → SelfSubjectAccessReview,
//! `auth can-i --list` → SelfSubjectRulesReview, `create token` → TokenRequest), read into the JSON
//! the handlers take. Field numbers are upstream's `generated.proto` of authorization/v1 and
//! authentication/v1. Only these three kinds: a general protobuf decoder for every built-in
//! kind is being built separately; when it lands these readers can go.

use serde_json::{Map, Value, json};

enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
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

/// (field number, value) pairs of one message; None if it is not well-formed.
fn fields(b: &[u8]) -> Option<Vec<(u64, Field<'_>)>> {
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < b.len() {
        let key = varint(b, &mut pos)?;
        let field = match key & 7 {
            0 => Field::Varint(varint(b, &mut pos)?),
            2 => {
                let len = usize::try_from(varint(b, &mut pos)?).ok()?;
                let bytes = b.get(pos..pos.checked_add(len)?)?;
                pos += len;
                Field::Bytes(bytes)
            }
            1 => {
                pos = pos.checked_add(8)?;
                continue;
            }
            5 => {
                pos = pos.checked_add(4)?;
                continue;
            }
            _ => return None,
        };
        out.push((key >> 3, field));
    }
    (pos == b.len()).then_some(out)
}

fn text(b: &[u8]) -> Value {
    Value::String(String::from_utf8_lossy(b).into_owned())
}

/// The message's string fields by number, as JSON keys.
fn strings(b: &[u8], names: &[(u64, &str)]) -> Option<Value> {
    let mut m = Map::new();
    for (n, f) in fields(b)? {
        if let (Some((_, key)), Field::Bytes(s)) = (names.iter().find(|(k, _)| *k == n), f) {
            m.insert((*key).to_owned(), text(s));
        }
    }
    Some(Value::Object(m))
}

fn access_review_spec(b: &[u8]) -> Option<Value> {
    let mut spec = Map::new();
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(s)) => {
                let attrs = strings(
                    s,
                    &[
                        (1, "namespace"),
                        (2, "verb"),
                        (3, "group"),
                        (4, "version"),
                        (5, "resource"),
                        (6, "subresource"),
                        (7, "name"),
                    ],
                )?;
                spec.insert("resourceAttributes".into(), attrs);
            }
            (2, Field::Bytes(s)) => {
                let attrs = strings(s, &[(1, "path"), (2, "verb")])?;
                spec.insert("nonResourceAttributes".into(), attrs);
            }
            _ => {}
        }
    }
    Some(Value::Object(spec))
}

fn token_request_spec(b: &[u8]) -> Option<Value> {
    let mut audiences = Vec::new();
    let mut spec = Map::new();
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(s)) => audiences.push(text(s)),
            (3, Field::Bytes(s)) => {
                let r = strings(
                    s,
                    &[(1, "kind"), (2, "apiVersion"), (3, "name"), (4, "uid")],
                )?;
                spec.insert("boundObjectRef".into(), r);
            }
            (4, Field::Varint(x)) => {
                spec.insert("expirationSeconds".into(), json!(x as i64));
            }
            _ => {}
        }
    }
    spec.insert("audiences".into(), Value::Array(audiences));
    Some(Value::Object(spec))
}

/// Decodes a `k8s\0`-enveloped body of one of the auth kinds into JSON; None for anything else.
pub fn decode(body: &[u8]) -> Option<Value> {
    let rest = body.strip_prefix(b"k8s\0")?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), None);
    for (n, f) in fields(rest)? {
        match (n, f) {
            (1, Field::Bytes(type_meta)) => {
                for (tn, tf) in fields(type_meta)? {
                    match (tn, tf) {
                        (1, Field::Bytes(s)) => api_version = String::from_utf8_lossy(s).into(),
                        (2, Field::Bytes(s)) => kind = String::from_utf8_lossy(s).into(),
                        _ => {}
                    }
                }
            }
            (2, Field::Bytes(s)) => raw = Some(s),
            _ => {}
        }
    }
    let mut spec = Value::Object(Map::new());
    for (n, f) in fields(raw.unwrap_or_default())? {
        if let (2, Field::Bytes(s)) = (n, f) {
            spec = match kind.as_str() {
                "SelfSubjectAccessReview" => access_review_spec(s)?,
                "SelfSubjectRulesReview" => strings(s, &[(1, "namespace")])?,
                "TokenRequest" => token_request_spec(s)?,
                _ => return None,
            };
        }
    }
    if !matches!(
        kind.as_str(),
        "SelfSubjectAccessReview" | "SelfSubjectRulesReview" | "TokenRequest" | "SelfSubjectReview"
    ) {
        return None;
    }
    Some(json!({"apiVersion": api_version, "kind": kind, "spec": spec}))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes `kubectl auth can-i list pods -n demo` sends (captured from kubectl v1.32).
    const CAN_I: &[u8] =
        b"k8s\x00\x0a\x32\x0a\x17authorization.k8s.io/v1\x12\x17SelfSubjectAccessReview\
\x12\x3a\x0a\x10\x0a\x00\x12\x00\x1a\x00\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00\
\x12\x1c\x0a\x1a\x0a\x04demo\x12\x04list\x1a\x00\x22\x00\x2a\x04pods\x32\x00\x3a\x00\
\x1a\x08\x08\x00\x12\x00\x1a\x00\x20\x00\x1a\x00\x22\x00";

    #[test]
    fn decodes_what_kubectl_auth_can_i_sends() {
        let v = decode(CAN_I).expect("decodes");
        assert_eq!(v["kind"], "SelfSubjectAccessReview");
        let attrs = &v["spec"]["resourceAttributes"];
        assert_eq!(attrs["namespace"], "demo");
        assert_eq!(attrs["verb"], "list");
        assert_eq!(attrs["resource"], "pods");
        assert_eq!(attrs["group"], "");
    }

    fn ld(field: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![(field << 3) | 2, payload.len() as u8];
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn decodes_a_token_request() {
        let spec = [ld(1, b"api"), vec![(4 << 3), 0x90, 0x1c]].concat();
        let obj = [ld(1, &ld(1, b"viewer")), ld(2, &spec)].concat();
        let tm = [ld(1, b"authentication.k8s.io/v1"), ld(2, b"TokenRequest")].concat();
        let mut body = b"k8s\0".to_vec();
        body.extend([ld(1, &tm), ld(2, &obj)].concat());
        let v = decode(&body).unwrap();
        assert_eq!(v["spec"]["audiences"], json!(["api"]));
        assert_eq!(v["spec"]["expirationSeconds"], 3600);
        assert!(decode(b"k8s\0\xff").is_none());
        assert!(decode(b"{}").is_none());
    }
}
