//! PodProbeMarker admission (validating webhook); the apimachinery name validators it uses
//! live in the shared `kruise::validation`.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{HTTPGetAction, Probe, TCPSocketAction};
use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};

use crate::kruise::{
    KruiseVersion,
    admission::Verdict,
    features::FeatureGates,
    selector,
    validation::{label_selector_convertible, label_selector_errors},
};

pub use crate::kruise::validation::{
    FieldError, dns1123_subdomain_errors, field_error, label_value_errors, port_name_errors,
    qualified_name_errors,
};

use super::{
    PROBE_FAILED, PROBE_SUCCEEDED,
    types::{PodProbeMarker, ProbeMarkerPolicy},
};

fn push(errs: &mut Vec<FieldError>, field: impl Into<String>, message: impl Into<String>) {
    errs.push(field_error(field, message));
}

/// A port number 1-65535 or a valid port name.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::ValidatePortNumOrName (v1.8.4).
pub fn validate_port_num_or_name(port: &IntOrString, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match port {
        IntOrString::Int(n) if !(1..=65535).contains(n) => push(
            &mut errs,
            field,
            format!("Invalid value: {n}: must be between 1 and 65535, inclusive"),
        ),
        IntOrString::Int(_) => {}
        IntOrString::String(name) => {
            for m in port_name_errors(name) {
                push(&mut errs, field, format!("Invalid value: {name:?}: {m}"));
            }
        }
    }
    errs
}

/// The port must be valid and `host` must not be set.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::validateTCPSocketAction (v1.8.4).
pub fn validate_tcp_socket_action(tcp: &TCPSocketAction, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(host) = tcp.host.as_deref().filter(|h| !h.is_empty()) {
        push(
            &mut errs,
            format!("{field}.host"),
            format!("Invalid value: {host:?}: host field in probes is not allowed"),
        );
    }
    errs.extend(validate_port_num_or_name(
        &tcp.port,
        &format!("{field}.port"),
    ));
    errs
}

/// Exactly one handler: exec with a command, httpGet (v1.9.0; v1.8.4 rejects it) or tcpSocket.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::validateHandler.
pub fn validate_handler(version: KruiseVersion, probe: &Probe, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut handlers = 0;
    if let Some(exec) = &probe.exec {
        handlers += 1;
        if exec.command.as_ref().is_none_or(Vec::is_empty) {
            push(&mut errs, format!("{field}.exec.command"), "Required value");
        }
    }
    if let Some(http) = &probe.http_get {
        if handlers > 0 {
            push(
                &mut errs,
                format!("{field}.httpGet"),
                "Forbidden: may not specify more than 1 handler type",
            );
        } else {
            handlers += 1;
            match version {
                KruiseVersion::V1_8 => push(
                    &mut errs,
                    format!("{field}.probe"),
                    "Forbidden: current no support http probe",
                ),
                KruiseVersion::V1_9 => {
                    errs.extend(validate_http_get_action(http, &format!("{field}.httpGet")));
                }
            }
        }
    }
    if let Some(tcp) = &probe.tcp_socket {
        if handlers > 0 {
            push(
                &mut errs,
                format!("{field}.tcpSocket"),
                "Forbidden: may not specify more than 1 handler type",
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
        push(
            &mut errs,
            field,
            "Required value: must specify a handler type",
        );
    }
    errs
}

/// Go's `url.Parse` failing on a probe path: a control character, a malformed `%` escape, a
/// missing scheme before `:`, or a colon in the first segment of a relative path.
fn url_parse_error(path: &str) -> bool {
    if path.chars().any(|c| c.is_ascii_control()) {
        return true;
    }
    let bytes = path.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            return true;
        }
    }
    let before_query = path.split(['?', '#']).next().unwrap_or_default();
    match before_query.split_once(':') {
        Some(("", _)) => true,
        Some((scheme, _)) => {
            let valid_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
            !valid_scheme && !scheme.contains('/')
        }
        None => false,
    }
}

/// Path required and a valid URL path, no host, a valid port, scheme `HTTP` or `HTTPS`
/// (empty is rejected: there is no defaulting), valid header names.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::
/// validateHTTPGetAction (v1.9.0).
pub fn validate_http_get_action(http: &HTTPGetAction, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = http.path.as_deref().unwrap_or_default();
    if path.is_empty() {
        push(&mut errs, format!("{field}.path"), "Required value");
    }
    if let Some(host) = http.host.as_deref().filter(|h| !h.is_empty()) {
        push(
            &mut errs,
            format!("{field}.host"),
            format!("Invalid value: {host:?}: host field in probes is not allowed"),
        );
    }
    if url_parse_error(path) {
        push(
            &mut errs,
            format!("{field}.path"),
            format!("Invalid value: {path:?}: must be a valid URL path"),
        );
    }
    errs.extend(validate_port_num_or_name(
        &http.port,
        &format!("{field}.port"),
    ));
    let scheme = http.scheme.as_deref().unwrap_or_default();
    if scheme != "HTTP" && scheme != "HTTPS" {
        push(
            &mut errs,
            format!("{field}.scheme"),
            format!("Unsupported value: {scheme:?}: supported values: \"HTTP\", \"HTTPS\""),
        );
    }
    for h in http.http_headers.iter().flatten() {
        let valid = !h.name.is_empty()
            && h.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !valid {
            push(
                &mut errs,
                format!("{field}.httpHeaders"),
                format!(
                    "Invalid value: {:?}: a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
                    h.name
                ),
            );
        }
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

/// Port of probe_create_update_handler.go::validateProbe (v1.8.4), at upstream's path
/// `spec.probe` (no probe index). A missing probe is the zero ContainerProbeSpec upstream: no
/// handler.
fn validate_probe(version: KruiseVersion, probe: Option<&Probe>, errs: &mut Vec<FieldError>) {
    let path = "spec.probe";
    let Some(probe) = probe else {
        push(errs, path, "Required value: must specify a handler type");
        return;
    };
    errs.extend(validate_handler(version, probe, path));
    for (name, v) in [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ] {
        if let Some(v) = v.filter(|v| *v < 0) {
            push(
                errs,
                format!("{path}.{name}"),
                format!("Invalid value: {v}: must be greater than or equal to 0"),
            );
        }
    }
}

/// Port of probe_create_update_handler.go::validateProbeMarkerPolicy (v1.8.4): the state, then
/// labels or annotations present, then `ValidateObjectMeta` on them (labels, then annotations).
fn validate_policy(policy: &ProbeMarkerPolicy, errs: &mut Vec<FieldError>) {
    let path = "spec.markerPolicy";
    if policy.state != PROBE_SUCCEEDED && policy.state != PROBE_FAILED {
        push(
            errs,
            format!("{path}.state"),
            "Required value: marker policy state must be 'True' or 'False'",
        );
        return;
    }
    if policy.labels.is_empty() && policy.annotations.is_empty() {
        push(
            errs,
            path,
            "Required value: marker policy annotations or labels can't be both empty",
        );
        return;
    }
    for (k, v) in &policy.labels {
        for m in qualified_name_errors(k) {
            push(
                errs,
                format!("{path}.labels"),
                format!("Invalid value: {k:?}: {m}"),
            );
        }
        for m in label_value_errors(v) {
            push(
                errs,
                format!("{path}.labels"),
                format!("Invalid value: {v:?}: {m}"),
            );
        }
    }
    for k in policy.annotations.keys() {
        for m in qualified_name_errors(&k.to_lowercase()) {
            push(
                errs,
                format!("{path}.annotations"),
                format!("Invalid value: {k:?}: {m}"),
            );
        }
    }
}

/// Port of probe_create_update_handler.go::validateSelector (v1.8.4).
fn validate_selector(sel: &LabelSelector, errs: &mut Vec<FieldError>) {
    errs.extend(label_selector_errors(sel, "spec.selector"));
    if selector::is_empty(sel) {
        push(
            errs,
            "spec.selector",
            "Invalid value: empty selector is not valid for podProbeMarker.",
        );
    }
    if !label_selector_convertible(sel) {
        push(errs, "spec.selector.selector", "Invalid value: \"\"");
    }
}

/// Returns upstream's field errors one for one, in its order: the selector, then the probes
/// (validation stops at the first probe-level problem: a name with `#`, an empty name or
/// containerName, a reserved or repeated name, no condition type and no marker policy, a
/// repeated condition type or policy state), and on UPDATE the selector's immutability. The
/// paths are upstream's, which carry no probe index (`spec.probes`, `spec.probe.…`,
/// `spec.markerPolicy`, `spec` for the condition type, `selector` for immutability).
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::validatingPodProbeMarkerFn (v1.8.4).
pub fn validate_pod_probe_marker(
    version: KruiseVersion,
    obj: &PodProbeMarker,
    old: Option<&PodProbeMarker>,
) -> Vec<FieldError> {
    let mut errs = validate_spec(version, obj);
    if let Some(old) = old
        && old.spec.selector != obj.spec.selector
    {
        push(
            &mut errs,
            "selector",
            "Invalid value: selector must be immutable",
        );
    }
    errs
}

/// Port of probe_create_update_handler.go::validatePodProbeMarkerSpec (v1.8.4).
fn validate_spec(version: KruiseVersion, obj: &PodProbeMarker) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &obj.spec;
    match &spec.selector {
        None => push(
            &mut errs,
            "spec.selector",
            "Invalid value: null: empty Selector is not valid for PodProbeMarker.",
        ),
        Some(sel) => validate_selector(sel, &mut errs),
    }
    if spec.probes.is_empty() {
        push(
            &mut errs,
            "spec.probes",
            "Invalid value: null: empty probes is not valid for PodProbeMarker.",
        );
        return errs;
    }
    let mut names = BTreeSet::new();
    let mut conditions = BTreeSet::new();
    for p in &spec.probes {
        let invalid = |value: &str, message: String| {
            field_error(
                "spec.probes",
                format!("Invalid value: {value:?}: {message}"),
            )
        };
        let stop = if p.name.contains('#') {
            Some(invalid(
                &p.name,
                "probe name can't contains '#'.".to_owned(),
            ))
        } else if p.name.is_empty() {
            Some(invalid(
                &p.name,
                "probe name can't be empty in PodProbeMarker.".to_owned(),
            ))
        } else if p.container_name.is_empty() {
            Some(invalid(
                &p.container_name,
                "probe containerName can't be empty in PodProbeMarker.".to_owned(),
            ))
        } else if RESERVED.contains(&p.name.as_str()) {
            Some(invalid(&p.name, format!("probe name can't be {}", p.name)))
        } else if !names.insert(p.name.as_str()) {
            Some(invalid(
                &p.name,
                "probe name must be unique in PodProbeMarker.".to_owned(),
            ))
        } else {
            None
        };
        if let Some(e) = stop {
            errs.push(e);
            return errs;
        }
        validate_probe(version, p.probe.as_ref(), &mut errs);
        if p.pod_condition_type.is_empty() && p.marker_policy.is_empty() {
            push(
                &mut errs,
                "spec.probes",
                "Invalid value: podConditionType and markerPolicy cannot be empty at the same time",
            );
            return errs;
        }
        if !p.pod_condition_type.is_empty() {
            if !conditions.insert(p.pod_condition_type.as_str()) {
                errs.push(invalid(
                    &p.pod_condition_type,
                    format!(
                        "podConditionType {} must be unique in podProbeMarker",
                        p.pod_condition_type
                    ),
                ));
                return errs;
            }
            for m in qualified_name_errors(&p.pod_condition_type) {
                push(
                    &mut errs,
                    "spec",
                    format!("Invalid value: {:?}: {m}", p.pod_condition_type),
                );
            }
        }
        let mut states = BTreeSet::new();
        for policy in &p.marker_policy {
            if !states.insert(policy.state.as_str()) {
                push(
                    &mut errs,
                    "spec.markerPolicy",
                    format!(
                        "Invalid value: {:?}: marker policy state must be unique.",
                        policy.state
                    ),
                );
                return errs;
            }
            validate_policy(policy, &mut errs);
        }
    }
    errs
}

/// The webhook answer: 403 with a gate off (PodProbeMarkerGate checked first), 400 with Go's
/// aggregate of the field errors (one error alone, several as `[e1, e2]`), else allowed.
///
/// Port of pkg/webhook/podprobemarker/validating/probe_create_update_handler.go::Handle (v1.8.4).
pub fn admit(
    version: KruiseVersion,
    gates: &FeatureGates,
    obj: &PodProbeMarker,
    old: Option<&PodProbeMarker>,
) -> (Verdict, Vec<FieldError>) {
    for gate in ["PodProbeMarkerGate", "KruiseDaemon"] {
        if !gates.enabled(gate) {
            return (
                Verdict::deny(403, format!("feature-gate {gate} is not enabled")),
                Vec::new(),
            );
        }
    }
    let errs = validate_pod_probe_marker(version, obj, old);
    let joined: Vec<String> = errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    let verdict = match joined.as_slice() {
        [] => Verdict::allow(),
        [one] => Verdict::deny(400, one.clone()),
        _ => Verdict::deny(400, format!("[{}]", joined.join(", "))),
    };
    (verdict, errs)
}
