//! PodProbeMarker admission (validating webhook) and the apimachinery name validators it
//! uses.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Probe, TCPSocketAction};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::kruise::{crr::Verdict, features::FeatureGates, selector};

use super::{
    PROBE_FAILED, PROBE_SUCCEEDED,
    types::{PodContainerProbe, PodProbeMarker},
};

/// One field error: path and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

fn push(errs: &mut Vec<FieldError>, field: impl Into<String>, message: impl Into<String>) {
    errs.push(FieldError {
        field: field.into(),
        message: message.into(),
    });
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`.
fn qualified_name_part_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_alnum(b[0])
        && is_alnum(b[b.len() - 1])
        && b.iter()
            .all(|&c| is_alnum(c) || c == b'-' || c == b'_' || c == b'.')
}

/// apimachinery `IsDNS1123Subdomain` (one message on failure).
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_owned());
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b.iter()
                .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    };
    if !s.split('.').all(label_ok) {
        errs.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character".to_owned());
    }
    errs
}

/// apimachinery `IsQualifiedName`: `[prefix/]name`.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.'"
                    .to_owned(),
            );
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_owned());
    }
    if !qualified_name_part_ok(name) {
        errs.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character".to_owned());
    }
    errs
}

/// apimachinery `IsValidLabelValue`.
pub fn label_value_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !v.is_empty() && !qualified_name_part_ok(v) {
        errs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'".to_owned());
    }
    errs
}

/// apimachinery `IsValidPortName`.
pub fn port_name_errors(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push("must be no more than 15 characters".to_owned());
    }
    if port.is_empty()
        || !port
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned(),
        );
    }
    if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_owned());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_owned());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_owned());
    }
    errs
}

/// A port number 1-65535 or a valid port name.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::ValidatePortNumOrName (v1.8.4).
pub fn validate_port_num_or_name(port: &IntOrString, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match port {
        IntOrString::Int(n) if !(1..=65535).contains(n) => {
            push(&mut errs, field, "must be between 1 and 65535, inclusive")
        }
        IntOrString::Int(_) => {}
        IntOrString::String(name) => {
            for m in port_name_errors(name) {
                push(&mut errs, field, m);
            }
        }
    }
    errs
}

/// The port must be valid and `host` must not be set.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::validateTCPSocketAction (v1.8.4).
pub fn validate_tcp_socket_action(tcp: &TCPSocketAction, field: &str) -> Vec<FieldError> {
    let mut errs = validate_port_num_or_name(&tcp.port, &format!("{field}.port"));
    if tcp.host.as_deref().is_some_and(|h| !h.is_empty()) {
        push(
            &mut errs,
            format!("{field}.host"),
            "host field in probes is not allowed",
        );
    }
    errs
}

/// Exactly one handler: exec with a command, or tcpSocket; httpGet is not supported.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::validateHandler (v1.8.4).
pub fn validate_handler(probe: &Probe, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut handlers = 0;
    if let Some(exec) = &probe.exec {
        handlers += 1;
        if exec.command.as_ref().is_none_or(Vec::is_empty) {
            push(&mut errs, format!("{field}.exec.command"), "Required value");
        }
    }
    if probe.http_get.is_some() {
        if handlers > 0 {
            push(
                &mut errs,
                format!("{field}.httpGet"),
                "may not specify more than 1 handler type",
            );
        } else {
            handlers += 1;
            push(
                &mut errs,
                format!("{field}.probe"),
                "current no support http probe",
            );
        }
    }
    if let Some(tcp) = &probe.tcp_socket {
        if handlers > 0 {
            push(
                &mut errs,
                format!("{field}.tcpSocket"),
                "may not specify more than 1 handler type",
            );
        } else {
            handlers += 1;
            errs.extend(validate_tcp_socket_action(
                tcp,
                &format!("{field}.tcpSocket"),
            ));
        }
    }
    if handlers == 0 {
        push(&mut errs, field, "must specify a handler type");
    }
    errs
}

/// Pod condition types a probe may not be named after.
const RESERVED: &[&str] = &[
    "PodScheduled",
    "Initialized",
    "Ready",
    "ContainersReady",
    "KruisePodReady",
    "InPlaceUpdateReady",
];

/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::validateProbe (v1.8.4).
fn validate_probe(p: &PodContainerProbe, field: &str, errs: &mut Vec<FieldError>) {
    let Some(probe) = &p.probe else {
        push(errs, format!("{field}.probe"), "probe is required");
        return;
    };
    errs.extend(validate_handler(probe, &format!("{field}.probe")));
    for (name, v) in [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ] {
        if v.is_some_and(|v| v < 0) {
            push(
                errs,
                format!("{field}.probe.{name}"),
                "must be greater than or equal to 0",
            );
        }
    }
}

/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::validateProbeMarkerPolicy (v1.8.4).
fn validate_policies(p: &PodContainerProbe, field: &str, errs: &mut Vec<FieldError>) {
    let mut states = BTreeSet::new();
    for policy in &p.marker_policy {
        let path = format!("{field}.markerPolicy");
        if !states.insert(policy.state.as_str()) {
            push(
                errs,
                format!("{path}.state"),
                "marker policy state must be unique",
            );
        }
        if policy.state != PROBE_SUCCEEDED && policy.state != PROBE_FAILED {
            push(
                errs,
                format!("{path}.state"),
                "marker policy state must be 'True' or 'False'",
            );
        }
        if policy.labels.is_empty() && policy.annotations.is_empty() {
            push(
                errs,
                &path,
                "marker policy labels and annotations cannot be empty at the same time",
            );
        }
        for (k, v) in &policy.labels {
            for m in qualified_name_errors(k)
                .into_iter()
                .chain(label_value_errors(v))
            {
                push(errs, format!("{path}.labels"), m);
            }
        }
        for k in policy.annotations.keys() {
            for m in qualified_name_errors(&k.to_lowercase()) {
                push(errs, format!("{path}.annotations"), m);
            }
        }
    }
}

/// Spec rules (and, on UPDATE, selector immutability).
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::validatingPodProbeMarkerFn (v1.8.4).
pub fn validate_pod_probe_marker(
    obj: &PodProbeMarker,
    old: Option<&PodProbeMarker>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj.spec;
    match &spec.selector {
        None => push(&mut errs, "spec.selector", "selector is required"),
        Some(sel) if selector::is_empty(sel) => push(
            &mut errs,
            "spec.selector",
            "empty selector is not valid for PodProbeMarker",
        ),
        Some(sel) => {
            if let Err(e) = selector::matches(sel, &BTreeMap::new()) {
                push(&mut errs, "spec.selector", e.to_string());
            }
        }
    }
    if spec.probes.is_empty() {
        push(&mut errs, "spec.probes", "probes is required");
    }
    let mut names = BTreeSet::new();
    let mut conditions = BTreeSet::new();
    for (i, p) in spec.probes.iter().enumerate() {
        let field = format!("spec.probes[{i}]");
        if p.name.is_empty() || p.name.contains('#') {
            push(
                &mut errs,
                format!("{field}.name"),
                "probe name can't be empty or contain '#'",
            );
        } else if !names.insert(p.name.as_str()) {
            push(
                &mut errs,
                format!("{field}.name"),
                "probe name must be unique",
            );
        } else if RESERVED.contains(&p.name.as_str()) {
            push(
                &mut errs,
                format!("{field}.name"),
                format!("probe name can't be {}", p.name),
            );
        }
        if p.container_name.is_empty() {
            push(
                &mut errs,
                format!("{field}.containerName"),
                "probe containerName is required",
            );
        }
        validate_probe(p, &field, &mut errs);
        validate_policies(p, &field, &mut errs);
        if p.pod_condition_type.is_empty() && p.marker_policy.is_empty() {
            push(
                &mut errs,
                format!("{field}.podConditionType"),
                "podConditionType and markerPolicy cannot be empty at the same time",
            );
        }
        if !p.pod_condition_type.is_empty() {
            if !conditions.insert(p.pod_condition_type.as_str()) {
                push(
                    &mut errs,
                    format!("{field}.podConditionType"),
                    "podConditionType must be unique",
                );
            }
            for m in qualified_name_errors(&p.pod_condition_type) {
                push(&mut errs, format!("{field}.podConditionType"), m);
            }
        }
    }
    if let Some(old) = old
        && old.spec.selector != obj.spec.selector
    {
        push(&mut errs, "spec.selector", "selector is immutable");
    }
    errs
}

/// The webhook answer: 403 with a gate off, 422 with the aggregated field errors, else allowed.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::Handle (v1.8.4).
pub fn admit(
    gates: &FeatureGates,
    obj: &PodProbeMarker,
    old: Option<&PodProbeMarker>,
) -> (Verdict, Vec<FieldError>) {
    if !gates.enabled("PodProbeMarkerGate") || !gates.enabled("KruiseDaemon") {
        return (
            Verdict::deny(403, "feature-gate PodProbeMarkerGate is not enabled"),
            Vec::new(),
        );
    }
    let errs = validate_pod_probe_marker(obj, old);
    if errs.is_empty() {
        return (Verdict::allow(), errs);
    }
    let message = errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect::<Vec<_>>()
        .join(", ");
    (Verdict::deny(422, format!("[{message}]")), errs)
}
