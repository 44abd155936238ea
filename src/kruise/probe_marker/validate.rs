//! PodProbeMarker admission (validating webhook); the apimachinery name validators it uses
//! live in the shared `kruise::validation`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Probe, TCPSocketAction};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::kruise::{admission::Verdict, features::FeatureGates, selector};

pub use crate::kruise::validation::{
    FieldError, dns1123_subdomain_errors, field_error, label_value_errors, port_name_errors,
    qualified_name_errors,
};

use super::{
    PROBE_FAILED, PROBE_SUCCEEDED,
    types::{PodContainerProbe, PodProbeMarker},
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
