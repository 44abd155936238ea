//! What every Kruise admission hook answers, shared by the webhook ports (deletion protection,
//! PodUnavailableBudget, ContainerRecreateRequest, PodProbeMarker, SidecarSet): the
//! allow/deny [`Verdict`] and the RFC 6902 [`json_patch`] a mutating hook returns. The embedded
//! API server calls the hooks through these.

use serde::{Deserialize, Serialize};

/// An admission answer: allowed (code 200) or denied with an HTTP code and upstream's message
/// (as `admission.Errored(code, err)` / `ValidationResponse(false, msg)` write them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// HTTP status code of the admission result (200 when allowed).
    pub code: u16,
    /// The error text of a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Verdict {
    /// An allowed answer.
    pub fn allow() -> Self {
        Self {
            allowed: true,
            code: 200,
            message: None,
        }
    }

    /// A denial with `code` and `message`.
    pub fn deny(code: u16, message: impl Into<String>) -> Self {
        Self {
            allowed: false,
            code,
            message: Some(message.into()),
        }
    }

    /// The denial text, empty when allowed.
    pub fn message_text(&self) -> &str {
        self.message.as_deref().unwrap_or_default()
    }
}

/// The RFC 6902 patch a mutating webhook answers with for `before` -> `after`.
pub fn json_patch<T: Serialize>(before: &T, after: &T) -> json_patch::Patch {
    let a = serde_json::to_value(before).unwrap_or_default();
    let b = serde_json::to_value(after).unwrap_or_default();
    json_patch::diff(&a, &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_serialize_like_admission_results() {
        assert_eq!(
            serde_json::to_value(Verdict::allow()).ok(),
            Some(serde_json::json!({"allowed": true, "code": 200}))
        );
        let deny = Verdict::deny(403, "no");
        assert_eq!(deny.message_text(), "no");
        assert_eq!(Verdict::allow().message_text(), "");
    }

    #[test]
    fn patch_turns_before_into_after() {
        let before = serde_json::json!({"a": 1, "b": [1]});
        let after = serde_json::json!({"a": 2, "b": [1, 2]});
        let patch = json_patch(&before, &after);
        let mut doc = before.clone();
        assert!(json_patch::patch(&mut doc, &patch).is_ok());
        assert_eq!(doc, after);
    }
}
