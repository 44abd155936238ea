//! Reading a create or update body into the target's kind, as the real server's decoders do.
//!
//! A built-in kind is decoded by its registered type: a body without `apiVersion` or `kind`
//! takes the endpoint's, and a body of another kind is refused as an unknown conversion. A custom
//! resource is decoded as unstructured JSON, which must say what it is: no `kind` is a 400
//! (`Object 'Kind' is missing in '…'`), an `apiVersion` other than the endpoint's a 400, a `kind`
//! other than the resource's a 422. This is where a client that forgets its type meta fails
//! on a real cluster, so the embedded one fails it the same way.

use serde_json::{Value, json};

use super::{
    http::Req,
    protobuf,
    resources::ResourceInfo,
    status::{ApiError, FieldError},
    write::protobuf_error,
};

/// What a write through this endpoint must be: the kind, its apiVersion, and whether it is a
/// custom resource (decoded unstructured) or a built-in type.
struct Expected<'a> {
    kind: &'a str,
    api_version: String,
    custom: bool,
}

fn expected<'a>(res: &'a ResourceInfo, sub: Option<&str>) -> Expected<'a> {
    if sub == Some("scale") {
        return Expected {
            kind: "Scale",
            api_version: "autoscaling/v1".into(),
            custom: false,
        };
    }
    Expected {
        kind: &res.kind,
        api_version: res.api_version(),
        custom: res.crd,
    }
}

/// apimachinery's `summarizeData(body, 30)`: a JSON object's first 30 bytes, any other body's
/// in hex.
fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    let cut = &body[..body.len().min(MAX)];
    let more = if body.len() > MAX { " ..." } else { "" };
    match body.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(cut)),
        Some(_) => {
            let hex: String = cut.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// Go's `encoding/json` wording for the errors a client most often makes.
fn go_json_error(e: &serde_json::Error, body: &[u8]) -> String {
    if e.classify() == serde_json::error::Category::Eof {
        return "unexpected end of JSON input".into();
    }
    let line_start: usize = body
        .split(|b| *b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    let at = line_start + e.column().saturating_sub(1);
    match body.get(at) {
        Some(c) => format!(
            "invalid character '{}' looking for beginning of value",
            *c as char
        ),
        None => "unexpected end of JSON input".into(),
    }
}

fn unrecognized(kind: &str, why: &str, body: &[u8]) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {why} ({})",
        summarize(body)
    ))
}

/// The body of a POST or PUT to `res` (or its `sub`resource), decoded and checked for its type
/// meta; a built-in kind's missing `apiVersion`/`kind` are filled in. The warnings are the
/// real server's for what it decoded (they accompany an error too).
pub fn typed_body(req: &Req, res: &ResourceInfo, sub: Option<&str>) -> Result<Value, ApiError> {
    let want = expected(res, sub);
    let ct = req.header(http::header::CONTENT_TYPE);
    let body: &[u8] = &req.body;
    let (mut obj, json_text) = if ct.starts_with("application/vnd.kubernetes.protobuf") {
        let v = protobuf::decode(body).map_err(protobuf_error)?;
        let text = serde_json::to_string(&v).unwrap_or_default();
        (v, text)
    } else if ct.contains("yaml") {
        let text = std::str::from_utf8(body)
            .map_err(|_| ApiError::bad_request("the YAML body is not UTF-8"))?;
        let v: Value = serde_saphyr::from_str(text).map_err(|e| {
            ApiError::bad_request(format!("error converting YAML to JSON: yaml: {e}"))
        })?;
        let text = serde_json::to_string(&v).unwrap_or_default();
        (v, text)
    } else {
        let v: Value = serde_json::from_slice(body).map_err(|e| {
            let why = format!(
                "couldn't get version/kind; json parse error: {}",
                go_json_error(&e, body)
            );
            unrecognized(want.kind, &why, body)
        })?;
        (v, String::from_utf8_lossy(body).into_owned())
    };
    let Some(map) = obj.as_object_mut() else {
        let why = "couldn't get version/kind; json parse error: json: cannot unmarshal non-object \
                   into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }";
        return Err(unrecognized(want.kind, why, body));
    };
    let kind = map
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let api_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if want.custom {
        if kind.is_empty() {
            let why = format!("Object 'Kind' is missing in '{json_text}'");
            return Err(unrecognized(want.kind, &why, body));
        }
        if api_version != want.api_version {
            // The data's version has no schema here, so every field but the type and object
            // meta is unknown to the decoder (warned of before the version is refused).
            let warnings = if api_version.is_empty() || req.q("fieldValidation") == Some("Ignore") {
                Vec::new()
            } else {
                map.keys()
                    .filter(|k| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
                    .map(|k| format!("unknown field \"{k}\""))
                    .collect()
            };
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                want.api_version
            ))
            .with_warnings(warnings));
        }
        if kind != want.kind {
            let name = map
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(ApiError::invalid(
                &kind,
                &res.group,
                name,
                &[FieldError::invalid(
                    "kind",
                    &json!(kind),
                    format!("must be {}", want.kind),
                )],
            ));
        }
        return Ok(obj);
    }
    if !kind.is_empty() && kind != want.kind {
        let version = api_version
            .rsplit_once('/')
            .map(|(_, v)| v)
            .unwrap_or(api_version.as_str());
        let version = if version.is_empty() {
            want.api_version.rsplit('/').next().unwrap_or("")
        } else {
            version
        };
        // The internal package upstream converts into: `core` for the legacy group, else the
        // group's first label (apps, batch, policy, ...).
        let (group, _) = want
            .api_version
            .rsplit_once('/')
            .unwrap_or(("", &want.api_version));
        let internal = if group.is_empty() {
            "core"
        } else {
            group.split('.').next().unwrap_or(group)
        };
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {want_kind}: converting ({version}.{kind}) to ({internal}.{want_kind}): unknown conversion",
            want_kind = want.kind
        )));
    }
    map.insert("apiVersion".into(), json!(want.api_version));
    map.insert("kind".into(), json!(want.kind));
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_are_apimachinerys() {
        assert_eq!(summarize(b""), "<empty>");
        assert_eq!(summarize(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(
            summarize(b"{\"apiVersion\":\"apps.kruise.io/v1alpha1\"}"),
            "{\"apiVersion\":\"apps.kruise.io/ ..."
        );
        assert_eq!(summarize(b"[1]"), "5b315d");
    }

    #[test]
    fn go_wording_for_a_cut_body() {
        let body = b"{\"apiVersion\": \"v1\", \"kind\": ";
        let e = serde_json::from_slice::<Value>(body).expect_err("an error");
        assert_eq!(go_json_error(&e, body), "unexpected end of JSON input");
        let body = b"{x}";
        let e = serde_json::from_slice::<Value>(body).expect_err("an error");
        assert!(go_json_error(&e, body).starts_with("invalid character 'x'"));
    }
}
