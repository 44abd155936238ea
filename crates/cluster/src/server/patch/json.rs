//! JSON patch (RFC 6902) and JSON merge patch (RFC 7386) as the real server applies them: the
//! body is first decoded like Go's `encoding/json` would (its wording for malformed JSON and for a
//! body of the wrong shape, a 400 `error decoding patch: ...`), a JSON patch whose operations do
//! not apply is a 422 with no more detail, and a merge patch that is not an object is `Invalid
//! JSON Patch`.

use serde_json::Value;

use crate::server::status::ApiError;

/// Go's `quoteChar`: how the scanner shows the offending byte.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_string(),
        b'"' => "'\"'".to_string(),
        _ => {
            let s = format!("{:?}", char::from(c));
            let inner = &s[1..s.len() - 1];
            format!("'{}'", inner.replace("\\'", "'"))
        }
    }
}

const EOF: &str = "unexpected end of JSON input";

/// A check of JSON text with the messages of Go's scanner.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while self
            .b
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }

    fn next(&mut self) -> Result<u8, String> {
        let c = *self.b.get(self.i).ok_or(EOF)?;
        self.i += 1;
        Ok(c)
    }

    fn bad(c: u8, ctx: &str) -> String {
        format!("invalid character {} {ctx}", quote_char(c))
    }

    fn value(&mut self) -> Result<(), String> {
        self.ws();
        match self.next()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string(),
            b'-' => {
                let c = self.next()?;
                if !c.is_ascii_digit() {
                    return Err(Self::bad(c, "in numeric literal"));
                }
                self.number(c)
            }
            c @ b'0'..=b'9' => self.number(c),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            c => Err(Self::bad(c, "looking for beginning of value")),
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        for want in word.bytes().skip(1) {
            let c = self.next()?;
            if c != want {
                return Err(Self::bad(
                    c,
                    &format!("in literal {word} (expecting {})", quote_char(want)),
                ));
            }
        }
        Ok(())
    }

    fn digits(&mut self) {
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
    }

    fn number(&mut self, first: u8) -> Result<(), String> {
        if first != b'0' {
            self.digits();
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            let c = self.next()?;
            if !c.is_ascii_digit() {
                return Err(Self::bad(c, "after decimal point in numeric literal"));
            }
            self.digits();
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            let mut c = self.next()?;
            if matches!(c, b'+' | b'-') {
                c = self.next()?;
            }
            if !c.is_ascii_digit() {
                return Err(Self::bad(c, "in exponent of numeric literal"));
            }
            self.digits();
        }
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        loop {
            match self.next()? {
                b'"' => return Ok(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        for _ in 0..4 {
                            let h = self.next()?;
                            if !h.is_ascii_hexdigit() {
                                return Err(Self::bad(h, "in \\u hexadecimal character escape"));
                            }
                        }
                    }
                    c => return Err(Self::bad(c, "in string escape code")),
                },
                c if c < 0x20 => return Err(Self::bad(c, "in string literal")),
                _ => {}
            }
        }
    }

    fn object(&mut self) -> Result<(), String> {
        self.ws();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            match self.next()? {
                b'"' => self.string()?,
                c => return Err(Self::bad(c, "looking for beginning of object key string")),
            }
            self.ws();
            match self.next()? {
                b':' => {}
                c => return Err(Self::bad(c, "after object key")),
            }
            self.value()?;
            self.ws();
            match self.next()? {
                b',' => continue,
                b'}' => return Ok(()),
                c => return Err(Self::bad(c, "after object key:value pair")),
            }
        }
    }

    fn array(&mut self) -> Result<(), String> {
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.ws();
            match self.next()? {
                b',' => continue,
                b']' => return Ok(()),
                c => return Err(Self::bad(c, "after array element")),
            }
        }
    }
}

/// What Go's `encoding/json` says of text that is not JSON (None when it is).
pub fn syntax_error(data: &[u8]) -> Option<String> {
    let mut s = Scan { b: data, i: 0 };
    if let Err(e) = s.value() {
        return Some(e);
    }
    s.ws();
    s.b.get(s.i).map(|c| Scan::bad(*c, "after top-level value"))
}

/// The JSON type word Go's decoder uses for a value.
fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

/// Decodes a body as Go would into a value of `go_type` that takes `want` JSON values (null is
/// always accepted).
fn decode(body: &[u8], want: &str, go_type: &str) -> Result<Value, String> {
    if let Some(e) = syntax_error(body) {
        return Err(e);
    }
    let v: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let kind = go_kind(&v);
    if kind != want && kind != "null" {
        return Err(format!(
            "json: cannot unmarshal {kind} into Go value of type {go_type}"
        ));
    }
    Ok(v)
}

fn decoding(e: String) -> ApiError {
    ApiError::bad_request(format!("error decoding patch: {e}"))
}

/// The 422 the real server answers for a JSON patch that does not apply.
fn not_applicable() -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    )
}

/// Applies the JSON patch `body` to `doc`; returns the strict-decoding complaints about the
/// operations (unknown fields), which fieldValidation turns into warnings or an error. Ignore
/// skips the strict decoding, as upstream does.
pub fn json_patch(doc: &mut Value, body: &[u8], validation: &str) -> Result<Vec<String>, ApiError> {
    let mut strict = Vec::new();
    let ops: Value = if validation == "Ignore" {
        serde_json::from_slice(body).map_err(|_| {
            let kind = serde_json::from_slice::<Value>(body)
                .map(|v| go_kind(&v))
                .unwrap_or("object");
            ApiError::bad_request(format!(
                "json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch"
            ))
        })?
    } else {
        let v = decode(body, "array", "[]handlers.jsonPatchOp").map_err(decoding)?;
        for op in v.as_array().into_iter().flatten() {
            let Some(m) = op.as_object() else {
                if !op.is_null() {
                    return Err(decoding(format!(
                        "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                        go_kind(op)
                    )));
                }
                continue;
            };
            for (k, x) in m {
                match k.as_str() {
                    "op" | "path" | "from" if !x.is_string() && !x.is_null() => {
                        return Err(decoding(format!(
                            "json: cannot unmarshal {} into Go struct field jsonPatchOp.{k} of type string",
                            go_kind(x)
                        )));
                    }
                    "op" | "path" | "from" | "value" => {}
                    other => strict.push(format!("json patch unknown field {other:?}")),
                }
            }
        }
        v
    };
    if ops.is_null() {
        return Ok(strict);
    }
    let patch: json_patch::Patch = serde_json::from_value(ops).map_err(|_| not_applicable())?;
    json_patch::patch(doc, &patch).map_err(|_| not_applicable())?;
    Ok(strict)
}

/// Applies the JSON merge patch `body` to `doc`.
pub fn merge_patch(doc: &mut Value, body: &[u8], validation: &str) -> Result<(), ApiError> {
    let patch: Value = if validation == "Ignore" {
        serde_json::from_slice(body).map_err(|_| ApiError::bad_request("Invalid JSON Patch"))?
    } else {
        decode(body, "object", "map[string]interface {}").map_err(decoding)?
    };
    if patch.is_null() {
        return Err(ApiError::bad_request("Invalid JSON Patch"));
    }
    json_patch::merge(doc, &patch);
    Ok(())
}

/// Applies a JSON merge patch held as a value (no decoding).
pub fn merge_value(doc: &mut Value, patch: &Value) {
    json_patch::merge(doc, patch);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_syntax_errors() {
        assert_eq!(syntax_error(br#"{"metadata": "#).unwrap(), EOF);
        assert_eq!(syntax_error(b"").unwrap(), EOF);
        assert_eq!(
            syntax_error(b"{x}").unwrap(),
            "invalid character 'x' looking for beginning of object key string"
        );
        assert_eq!(
            syntax_error(br#"{"a" 1}"#).unwrap(),
            "invalid character '1' after object key"
        );
        assert_eq!(
            syntax_error(br#"{"a":1 "b"}"#).unwrap(),
            "invalid character '\"' after object key:value pair"
        );
        assert_eq!(
            syntax_error(b"[1 2]").unwrap(),
            "invalid character '2' after array element"
        );
        assert_eq!(
            syntax_error(b"tru!").unwrap(),
            "invalid character '!' in literal true (expecting 'e')"
        );
        assert_eq!(
            syntax_error(b"{} x").unwrap(),
            "invalid character 'x' after top-level value"
        );
        assert_eq!(
            syntax_error(b"\"a\nb\"").unwrap(),
            "invalid character '\\n' in string literal"
        );
        assert!(syntax_error(br#"{"a":[1,-2.5e3,"\u00e9",null,true]}"#).is_none());
    }

    #[test]
    fn json_patch_answers_like_upstream() {
        let mut doc = json!({"spec": {"replicas": 1}, "metadata": {"labels": {}}});
        let e = json_patch(&mut doc, br#"{"op":"add"}"#, "Warn").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"
            )
        );
        let e = json_patch(
            &mut doc,
            br#"[{"op":"test","path":"/spec/replicas","value":7}]"#,
            "Warn",
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
        assert!(e.details.is_none());
        let e = json_patch(
            &mut doc,
            br#"[{"op":"remove","path":"/metadata/labels/x"}]"#,
            "Warn",
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
        let strict = json_patch(
            &mut doc,
            br#"[{"op":"replace","path":"/spec/replicas","value":3,"extra":1}]"#,
            "Warn",
        )
        .unwrap();
        assert_eq!(strict, vec![r#"json patch unknown field "extra""#]);
        assert_eq!(doc["spec"]["replicas"], 3);
    }

    #[test]
    fn merge_patch_answers_like_upstream() {
        let mut doc = json!({"a": 1});
        let e = merge_patch(&mut doc, b"null", "Warn").unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (400, "Invalid JSON Patch"));
        let e = merge_patch(&mut doc, b"[1]", "Warn").unwrap_err();
        assert_eq!(
            e.message,
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        merge_patch(&mut doc, br#"{"a":null,"b":2}"#, "Warn").unwrap();
        assert_eq!(doc, json!({"b": 2}));
    }
}
