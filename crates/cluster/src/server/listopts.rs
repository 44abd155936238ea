//! `ListOptions` as the real server reads them for list, watch and deletecollection: decoded
//! from the query (a bad label or field selector is a 400 with the parser's message), defaulted
//! and validated (`ValidateListOptions`: a 422 `ListOptions.meta.k8s.io "" is invalid`), then the
//! field selector's labels converted for the kind (a 400 naming the field it cannot select on).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::{
    http::Req,
    routes::Target,
    selector::{FieldSelector, LabelSelector},
    status::{ApiError, FieldError},
};

/// The options of one list, watch or deletecollection.
#[derive(Debug, Clone)]
pub struct ListOptions {
    pub label: LabelSelector,
    pub field: FieldSelector,
    /// `resourceVersion` (absent when empty).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (absent when empty).
    pub rv_match: Option<String>,
    pub send_initial_events: Option<bool>,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
}

pub const EXACT: &str = "Exact";
pub const NOT_OLDER_THAN: &str = "NotOlderThan";

/// A query flag as the parameter codec converts it to a bool: present and not `0`/`false`.
fn flag(v: &str) -> bool {
    !(v == "0" || v.eq_ignore_ascii_case("false"))
}

fn forbidden(detail: &str) -> FieldError {
    FieldError {
        field: "resourceVersionMatch".into(),
        reason: "FieldValueForbidden",
        detail: detail.to_string(),
        value: None,
    }
}

fn unsupported(field: &str, value: &str, allowed: &[&str]) -> FieldError {
    let list: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
    FieldError {
        field: field.to_string(),
        reason: "FieldValueNotSupported",
        detail: format!("supported values: {}", list.join(", ")),
        value: Some(serde_json::json!(value)),
    }
}

impl ListOptions {
    /// Read, default and validate the options of a list (`watch` false), a watch or a
    /// deletecollection of `t`'s resource, on a server with the `WatchList` gate on.
    pub fn from_request(req: &Req, t: &Target, watch: bool) -> Result<Self, ApiError> {
        Self::read(req, t, watch, true)
    }

    /// Read, default and validate the options of a watch of `t`'s resource; `watch_list`: the
    /// server's `WatchList` gate (off, `sendInitialEvents` is refused as 1.33 refuses it).
    pub fn from_watch_request(req: &Req, t: &Target, watch_list: bool) -> Result<Self, ApiError> {
        Self::read(req, t, true, watch_list)
    }

    fn read(req: &Req, t: &Target, watch: bool, watch_list: bool) -> Result<Self, ApiError> {
        let q = |k: &str| req.query.get(k).map(String::as_str);
        let non_empty = |k: &str| q(k).filter(|v| !v.is_empty()).map(str::to_string);
        let label = LabelSelector::parse(q("labelSelector").unwrap_or(""))?;
        let field = FieldSelector::parse(q("fieldSelector").unwrap_or(""))?;
        let opts = ListOptions {
            label,
            field,
            resource_version: non_empty("resourceVersion"),
            rv_match: non_empty("resourceVersionMatch"),
            send_initial_events: q("sendInitialEvents").map(flag),
            limit: q("limit")
                .and_then(|l| l.parse::<usize>().ok())
                .filter(|l| *l > 0),
            continue_token: non_empty("continue"),
        };
        let errs = if watch {
            opts.watch_errors(watch_list)
        } else {
            opts.list_errors()
        };
        if !errs.is_empty() {
            return Err(ApiError::invalid("ListOptions", "meta.k8s.io", "", &errs));
        }
        let mut opts = opts;
        opts.field = FieldSelector::for_resource(&t.res, q("fieldSelector").unwrap_or(""))?;
        if let Some(n) = &t.name {
            opts.field.and_name(n);
        }
        Ok(opts)
    }

    /// `ValidateListOptions` for a list.
    fn list_errors(&self) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(m) = &self.rv_match {
            if self.resource_version.is_none() {
                errs.push(forbidden(
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if self.continue_token.is_some() {
                errs.push(forbidden(
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if m != EXACT && m != NOT_OLDER_THAN {
                errs.push(unsupported(
                    "resourceVersionMatch",
                    m,
                    &[EXACT, NOT_OLDER_THAN, ""],
                ));
            }
            if m == EXACT && self.resource_version.as_deref() == Some("0") {
                errs.push(forbidden(
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if self.send_initial_events.is_some() {
            errs.push(FieldError {
                field: "sendInitialEvents".into(),
                reason: "FieldValueForbidden",
                detail: "sendInitialEvents is forbidden for list".into(),
                value: None,
            });
        }
        errs
    }

    /// `ValidateListOptions` for a watch (`watch_list`: the WatchList gate, on in v1.32 and
    /// from v1.34, off in v1.33).
    fn watch_errors(&self, watch_list: bool) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let m = self.rv_match.as_deref();
        if self.send_initial_events.is_some() {
            if m != Some(NOT_OLDER_THAN) {
                errs.push(forbidden(
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if !watch_list {
                errs.push(FieldError {
                    field: "sendInitialEvents".into(),
                    reason: "FieldValueForbidden",
                    detail: "sendInitialEvents is forbidden for watch unless the WatchList \
                             feature gate is enabled"
                        .into(),
                    value: None,
                });
            }
        }
        if let Some(m) = m {
            if self.send_initial_events.is_none() {
                errs.push(forbidden(
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if m != NOT_OLDER_THAN {
                errs.push(unsupported("resourceVersionMatch", m, &[NOT_OLDER_THAN]));
            }
            if self.continue_token.is_some() {
                errs.push(forbidden(
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        errs
    }
}

/// The server's `WatchList` feature gate (switchable while it serves), and how many watch-list
/// requests (`sendInitialEvents` given) it was sent and refused.
#[derive(Debug)]
pub struct WatchListGate {
    enabled: AtomicBool,
    asked: AtomicU64,
    refused: AtomicU64,
}

impl WatchListGate {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled: AtomicBool::new(enabled),
            asked: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub fn set(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    /// Watch-list requests received.
    pub fn asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
    }

    /// Watch-list requests refused because the gate is off.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Counts one watch request (`watch_list`: it had `sendInitialEvents`; `refused`: the gate
    /// refused it).
    pub fn count(&self, watch_list: bool, refused: bool) {
        if watch_list {
            self.asked.fetch_add(1, Ordering::Relaxed);
            if refused {
                self.refused.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// A resourceVersion as the storage layer parses it: anything but an unsigned number is a 500
/// (`resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`).
pub fn parse_rv(rv: &str) -> Result<u64, ApiError> {
    rv.parse::<u64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow => "value out of range",
            _ => "invalid syntax",
        };
        ApiError::new(
            500,
            "",
            format!(
                "resourceVersion: Invalid value: {rv:?}: strconv.ParseUint: parsing {rv:?}: {why}"
            ),
        )
    })
}

/// The watch cache's answer to a resourceVersion it has not reached (504 Timeout).
pub fn too_large_rv(wanted: u64, current: u64) -> ApiError {
    let mut e = ApiError::new(
        504,
        "Timeout",
        format!("Too large resource version: {wanted}, current: {current}"),
    );
    e.details = Some(Box::new(serde_json::json!({
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    })));
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_versions_parse_as_unsigned_numbers() {
        assert_eq!(parse_rv("42").unwrap(), 42);
        assert_eq!(
            parse_rv("abc").unwrap_err().message,
            "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
        );
        assert_eq!(parse_rv("-1").unwrap_err().code, 500);
    }
}
