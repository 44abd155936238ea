//! Kubernetes `Status` errors: the reason/code pairs kubectl and kube-rs recognise, and their JSON.

use serde_json::{Value, json};

/// An API error answered as a `Status` object.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// Boxed, as `warnings`: an error travels in every `Result` of the server.
    pub details: Option<Box<Value>>,
    /// `Warning` headers the answer carries (a real server warns of unknown fields even when it
    /// then refuses the body). Boxed: an error travels in every `Result` of the server.
    pub warnings: Option<Box<Vec<String>>>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.reason, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// `resource` or `resource.group`, as the real server names a kind in its messages.
pub fn qualified(plural: &str, group: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

fn details(name: &str, group: &str, kind: &str) -> Value {
    json!({"name": name, "group": group, "kind": kind})
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            warnings: None,
        }
    }

    /// The same error, answered with these `Warning` headers too.
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        if !warnings.is_empty() {
            self.warnings
                .get_or_insert_with(Default::default)
                .extend(warnings);
        }
        self
    }

    /// The `Warning` headers to answer with.
    pub fn warnings(&self) -> &[String] {
        self.warnings
            .as_deref()
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    pub fn not_found(plural: &str, group: &str, name: &str) -> Self {
        ApiError {
            details: Some(Box::new(details(name, group, plural))),
            ..Self::new(
                404,
                "NotFound",
                format!("{} \"{name}\" not found", qualified(plural, group)),
            )
        }
    }

    pub fn already_exists(plural: &str, group: &str, name: &str) -> Self {
        ApiError {
            details: Some(Box::new(details(name, group, plural))),
            ..Self::new(
                409,
                "AlreadyExists",
                format!("{} \"{name}\" already exists", qualified(plural, group)),
            )
        }
    }

    pub fn conflict(plural: &str, group: &str, name: &str) -> Self {
        ApiError {
            details: Some(Box::new(details(name, group, plural))),
            ..Self::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
                     please apply your changes to the latest version and try again",
                    qualified(plural, group)
                ),
            )
        }
    }

    /// 409 Conflict for a stated cause, e.g. a delete precondition that does not hold:
    /// `Operation cannot be fulfilled on {resource}.{group} "{name}": {cause}`. `details_kind` is
    /// what the real server puts in `details.kind` (the kind or the resource).
    pub fn conflict_because(
        resource: &str,
        group: &str,
        details_kind: &str,
        name: &str,
        cause: &str,
    ) -> Self {
        ApiError {
            details: Some(Box::new(details(name, group, details_kind))),
            ..Self::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": {cause}",
                    qualified(resource, group)
                ),
            )
        }
    }

    /// 422 Invalid with field causes, e.g. `("spec.replicas", "Invalid value: ...")`.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: &[FieldError]) -> Self {
        let qkind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let list: Vec<String> = causes.iter().map(FieldError::to_string).collect();
        let joined = if list.len() == 1 {
            list[0].clone()
        } else {
            format!("[{}]", list.join(", "))
        };
        let causes_json: Vec<Value> = causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.detail_message(), "field": c.field}))
            .collect();
        ApiError {
            details: Some(Box::new(
                json!({"name": name, "group": group, "kind": kind, "causes": causes_json}),
            )),
            ..Self::new(
                422,
                "Invalid",
                format!("{qkind} \"{name}\" is invalid: {joined}"),
            )
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 415 for a body in a media type the endpoint does not take, listing the ones it does.
    pub fn unsupported_media_type(accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// The `Status` object for this error.
    pub fn to_status(&self) -> Value {
        let mut v = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        // An error the real server has no reason for (StatusReasonUnknown) omits the field.
        if self.reason.is_empty()
            && let Some(m) = v.as_object_mut()
        {
            m.remove("reason");
        }
        if let (Some(d), Some(map)) = (&self.details, v.as_object_mut()) {
            map.insert("details".into(), (**d).clone());
        }
        v
    }
}

/// One field-level validation error, worded like apimachinery's `field.Error`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub field: String,
    pub reason: &'static str,
    pub detail: String,
    pub value: Option<Value>,
}

impl FieldError {
    pub fn required(field: &str) -> Self {
        FieldError {
            field: field.to_string(),
            reason: "FieldValueRequired",
            detail: String::new(),
            value: None,
        }
    }

    pub fn invalid(field: &str, value: &Value, detail: impl Into<String>) -> Self {
        FieldError {
            field: field.to_string(),
            reason: "FieldValueInvalid",
            detail: detail.into(),
            value: Some(value.clone()),
        }
    }

    pub fn unsupported(field: &str, value: &Value, allowed: &[Value]) -> Self {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        FieldError {
            field: field.to_string(),
            reason: "FieldValueNotSupported",
            detail: format!("supported values: {}", list.join(", ")),
            value: Some(value.clone()),
        }
    }

    fn type_word(&self) -> &'static str {
        match self.reason {
            "FieldValueRequired" => "Required value",
            "FieldValueNotSupported" => "Unsupported value",
            "FieldValueForbidden" => "Forbidden",
            "FieldValueTooLong" => "Too long",
            "FieldValueDuplicate" => "Duplicate value",
            _ => "Invalid value",
        }
    }

    fn detail_message(&self) -> String {
        let mut s = self.type_word().to_string();
        if let Some(v) = &self.value {
            s.push_str(": ");
            s.push_str(&v.to_string());
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.detail_message())
    }
}
