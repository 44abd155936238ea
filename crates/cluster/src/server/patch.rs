//! PATCH: JSON patch, JSON merge patch, strategic merge patch (built-in kinds only) and
//! server-side apply, answered as the real server answers them ([`verb`]). The patch algorithms
//! are in [`json`] and [`strategic`]; apply and the managedFields of every patch are
//! [`super::managed`]'s.

pub mod json;
pub mod strategic;
pub mod verb;

use serde_json::Value;

pub use json::{json_patch, merge_patch};
pub use strategic::strategic_merge;

use super::status::ApiError;

/// The patch media types the server knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    Json,
    Merge,
    Strategic,
    Apply,
}

pub const JSON_PATCH: &str = "application/json-patch+json";
pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const STRATEGIC_PATCH: &str = "application/strategic-merge-patch+json";
pub const APPLY_PATCH: &str = "application/apply-patch+yaml";

impl PatchKind {
    pub fn from_content_type(ct: &str) -> Option<PatchKind> {
        match ct.split(';').next().unwrap_or("").trim() {
            JSON_PATCH => Some(PatchKind::Json),
            MERGE_PATCH => Some(PatchKind::Merge),
            STRATEGIC_PATCH => Some(PatchKind::Strategic),
            APPLY_PATCH => Some(PatchKind::Apply),
            _ => None,
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            PatchKind::Json => JSON_PATCH,
            PatchKind::Merge => MERGE_PATCH,
            PatchKind::Strategic => STRATEGIC_PATCH,
            PatchKind::Apply => APPLY_PATCH,
        }
    }
}

/// Parse a request body as JSON, or as YAML (apply patches and kubectl's YAML bodies).
pub fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    match serde_json::from_slice(body) {
        Ok(v) => Ok(v),
        Err(je) => {
            let text = std::str::from_utf8(body).map_err(|_| {
                ApiError::bad_request(format!("the request body is not valid JSON: {je}"))
            })?;
            serde_saphyr::from_str::<Value>(text).map_err(|e| {
                ApiError::bad_request(format!("the request body is neither JSON nor YAML: {e}"))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_bodies() {
        let v = parse_body(b"a: 1\nb: [x]\n").unwrap();
        assert_eq!(v, json!({"a": 1, "b": ["x"]}));
    }

    #[test]
    fn content_types() {
        assert_eq!(
            PatchKind::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchKind::Merge)
        );
        assert_eq!(
            PatchKind::from_content_type("application/apply-patch+json"),
            None
        );
        assert_eq!(PatchKind::Apply.media_type(), APPLY_PATCH);
    }
}
