//! The Rollout validating webhook (`vrollout.kb.io`,
//! `pkg/webhook/rollout/validating/rollout_create_update_handler.go`) for v1beta1 Rollouts on
//! CREATE and UPDATE (never `rollouts/status`, so approve and jump are never refused).
//!
//! Messages follow apimachinery's `field.Error` (`<path>: Invalid value: <value>: <detail>`,
//! `<path>: Forbidden: <detail>`); a value Go prints with `%#v` (a step list, a struct) is
//! printed as JSON here.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::rollout::{CanaryStep, Rollout, TrafficRoutingRef, phase};
use crate::kruise::rollout::scale;

/// `PartitionReplicasLimitWithTraffic` (`--partition-percent-limit`, default 50).
pub const PARTITION_PERCENT_LIMIT: i32 = 50;

/// The kinds `util.IsSupportedWorkload` accepts (group, kind).
const SUPPORTED: [(&str, &str); 6] = [
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "ReplicaSet"),
    ("apps.kruise.io", "CloneSet"),
    ("apps.kruise.io", "StatefulSet"),
    ("apps.kruise.io", "DaemonSet"),
];

/// `blueGreenSupportWorkloadGVKs`.
const BLUE_GREEN: [(&str, &str); 2] = [("apps", "Deployment"), ("apps.kruise.io", "CloneSet")];

fn invalid(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {value}: {detail}")
}

fn forbidden(path: &str, detail: &str) -> String {
    format!("{path}: Forbidden: {detail}")
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The validation style (`GetContextFromv1beta1Rollout`): `Partition` when real partition,
/// else the rolling style; `""` without a strategy.
fn style(rollout: &Rollout) -> &'static str {
    let s = &rollout.spec.strategy;
    if s.canary.is_none() && s.blue_green.is_none() {
        ""
    } else if rollout.is_real_partition() {
        "Partition"
    } else {
        rollout.rolling_style()
    }
}

fn is_percent(v: Option<&IntOrString>) -> bool {
    !matches!(v, Some(IntOrString::Int(_)))
}

/// `validateRolloutSpecCanarySteps` (the first error only, as upstream returns).
pub fn validate_steps(style: &str, steps: &[CanaryStep], path: &str) -> Vec<String> {
    if steps.is_empty() {
        return vec![invalid(
            path,
            "null",
            "The number of Canary.Steps cannot be empty",
        )];
    }
    for (i, s) in steps.iter().enumerate() {
        let Some(replicas) = s.replicas.as_ref() else {
            return vec![invalid(
                &format!("{path}[{i}].steps"),
                &json(&steps),
                "replicas cannot be empty",
            )];
        };
        let scaled = scale(replicas, 100);
        let bad = match scaled {
            Err(_) => true,
            Ok(v) => v <= 0 || (v > 100 && matches!(replicas, IntOrString::String(_))),
        };
        if bad {
            return vec![invalid(
                &format!("{path}[{i}].Replicas"),
                &crate::kruise::intstr::go_struct(replicas),
                r#"replicas must be positive number, or a percentage with "0%" < canaryReplicas <= "100%""#,
            )];
        }
        if s.traffic.is_none() && s.matches.is_empty() {
            continue;
        }
        if style == "Partition"
            && is_percent(Some(replicas))
            && scaled.unwrap_or(0) > PARTITION_PERCENT_LIMIT
        {
            return vec![invalid(
                &format!("{path}[{i}].steps"),
                &json(&steps),
                "For partition style rollout: step[x].replicas must not greater than partition-percent-limit if traffic specified",
            )];
        }
        let Some(traffic) = s.traffic.as_ref() else {
            continue;
        };
        let weight = scale(&IntOrString::String(traffic.clone()), 100);
        let (ok, detail) = if style == "BlueGreen" {
            (
                weight.as_ref().is_ok_and(|w| (0..=100).contains(w)),
                r#"traffic must be percentage with "0%" <= traffic <= "100%" in blueGreen strategy"#,
            )
        } else {
            (
                weight.as_ref().is_ok_and(|w| (1..=100).contains(w)),
                r#"traffic must be percentage with "0%" < traffic <= "100%" in canary strategy"#,
            )
        };
        if !ok {
            return vec![invalid(
                &format!("{path}[{i}].steps"),
                &json(&steps),
                detail,
            )];
        }
    }
    for pair in steps.windows(2) {
        let (prev, curr) = (pair[0].replicas.as_ref(), pair[1].replicas.as_ref());
        if is_percent(prev) != is_percent(curr) {
            continue;
        }
        let p = prev.and_then(|v| scale(v, 100).ok()).unwrap_or(0);
        let c = curr.and_then(|v| scale(v, 100).ok()).unwrap_or(0);
        if c < p {
            return vec![invalid(
                &format!("{path}.CanaryReplicas"),
                &json(&steps),
                "Steps.CanaryReplicas must be a non decreasing sequence",
            )];
        }
    }
    Vec::new()
}

/// `validateRolloutSpecCanaryTraffic`.
fn validate_traffic(t: &TrafficRoutingRef, path: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if t.grace_period_seconds.unwrap_or(3) < 0 {
        errs.push(invalid(
            &format!("{path}.GracePeriodSeconds"),
            &format!("{:?}", t.service),
            "TrafficRouting.GracePeriodSeconds cannot be negative",
        ));
    }
    if t.service.is_empty() {
        errs.push(invalid(
            &format!("{path}.Service"),
            "\"\"",
            "TrafficRouting.Service cannot be empty",
        ));
    }
    if t.gateway.is_none() && t.ingress.is_none() && t.custom_network_refs.is_empty() {
        errs.push(invalid(
            &format!("{path}.TrafficRoutings"),
            "null",
            "TrafficRoutings are not set",
        ));
    }
    if let Some(ing) = &t.ingress
        && ing.name.is_empty()
    {
        errs.push(invalid(
            &format!("{path}.Ingress"),
            &json(ing),
            "TrafficRouting.Ingress.Ingress cannot be empty",
        ));
    }
    if let Some(gw) = &t.gateway
        && gw.http_route_name.as_deref().unwrap_or_default().is_empty()
    {
        errs.push(invalid(
            &format!("{path}.Gateway"),
            &json(gw),
            "TrafficRouting.Gateway must set the name of HTTPRoute or HTTPsRoute",
        ));
    }
    errs
}

/// `validateRolloutSpec`: the workload kind and the strategy.
pub fn validate_spec(rollout: &Rollout) -> Vec<String> {
    let style = style(rollout);
    let r = &rollout.spec.workload_ref;
    let key = (r.group(), r.kind.as_str());
    let mut errs = Vec::new();
    if !SUPPORTED.contains(&key) {
        errs.push(invalid(
            "Spec.ObjectRef.WorkloadRef",
            &json(r),
            "WorkloadRef kind is not supported",
        ));
    } else if style == "BlueGreen" && !BLUE_GREEN.contains(&key) {
        errs.push(invalid(
            "Spec.ObjectRef.WorkloadRef",
            &json(r),
            "WorkloadRef kind is not supported for bluegreen style",
        ));
    }
    let s = &rollout.spec.strategy;
    match (&s.canary, &s.blue_green) {
        (None, None) => errs.push(invalid(
            "Spec.Strategy",
            "null",
            "Canary and BlueGreen cannot both be empty",
        )),
        (Some(_), Some(_)) => errs.push(invalid(
            "Spec.Strategy",
            "null",
            "Canary and BlueGreen cannot both be set",
        )),
        (Some(c), None) => {
            errs.extend(validate_steps(
                style,
                &c.steps,
                "Spec.Strategy.Canary.Steps",
            ));
            if c.traffic_routings.len() > 1 {
                errs.push(invalid(
                    "Spec.Strategy.Canary",
                    &json(&c.traffic_routings),
                    "Rollout currently only support single TrafficRouting.",
                ));
            }
            for t in &c.traffic_routings {
                errs.extend(validate_traffic(t, "Spec.Strategy.Canary.TrafficRouting"));
            }
        }
        (None, Some(bg)) => {
            // Blue-green is recognised, not driven: its steps follow the same rules.
            let steps: Vec<CanaryStep> = bg
                .get("steps")
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or_default();
            errs.extend(validate_steps(
                style,
                &steps,
                "Spec.Strategy.BlueGreen.Steps",
            ));
        }
    }
    errs
}

/// `validateRolloutConflict`: no other Rollout in the namespace may name the same workload
/// (the whole `workloadRef`, version included; disabled ones count).
pub fn validate_conflict<'a>(
    rollout: &Rollout,
    others: impl IntoIterator<Item = &'a Rollout>,
) -> Vec<String> {
    let name = rollout.metadata.name.clone().unwrap_or_default();
    let ns = rollout.metadata.namespace.clone().unwrap_or_default();
    for other in others {
        let other_name = other.metadata.name.clone().unwrap_or_default();
        if other_name == name || other.spec.workload_ref != rollout.spec.workload_ref {
            continue;
        }
        return vec![invalid(
            "Conflict Checker",
            &format!("{name:?}"),
            &format!(
                "This rollout conflict with Rollout({ns}/{other_name}), one workload only have less than one Rollout"
            ),
        )];
    }
    Vec::new()
}

/// The traffic routings of a strategy (`GetTrafficRouting`), as JSON for comparison.
fn traffic_of(rollout: &Rollout) -> serde_json::Value {
    let s = &rollout.spec.strategy;
    if let Some(c) = &s.canary {
        return serde_json::to_value(&c.traffic_routings).unwrap_or_default();
    }
    s.blue_green
        .as_ref()
        .and_then(|b| b.get("trafficRoutings").cloned())
        .unwrap_or(serde_json::Value::Array(Vec::new()))
}

fn steps_len(rollout: &Rollout) -> usize {
    let s = &rollout.spec.strategy;
    match (&s.canary, &s.blue_green) {
        (Some(c), _) => c.steps.len(),
        (None, Some(b)) => b
            .get("steps")
            .and_then(|v| v.as_array())
            .map_or(0, Vec::len),
        _ => 0,
    }
}

/// `validateRolloutUpdate`'s immutability: while the **live** Rollout is Progressing or
/// Terminating, the workloadRef, the traffic routings, the rolling style and the number of
/// steps cannot change.
pub fn validate_update(old: &Rollout, new: &Rollout, live_phase: &str) -> Vec<String> {
    if live_phase != phase::PROGRESSING && live_phase != phase::TERMINATING {
        return Vec::new();
    }
    if old.spec.workload_ref != new.spec.workload_ref {
        return vec![forbidden(
            "Spec.ObjectRef",
            "Rollout 'ObjectRef' field is immutable",
        )];
    }
    if traffic_of(old) != traffic_of(new) {
        return vec![forbidden(
            "Spec.Strategy.Canary|BlueGreen.TrafficRoutings",
            "Rollout 'Strategy.Canary|BlueGreen.TrafficRoutings' field is immutable",
        )];
    }
    if old.rolling_style() != new.rolling_style() {
        return vec![forbidden(
            "Spec.Strategy.Canary|BlueGreen",
            "Rollout style and enableExtraWorkloadForCanary are immutable",
        )];
    }
    if steps_len(old) != steps_len(new) {
        return vec![forbidden(
            "Spec.Strategy.Canary|BlueGreen",
            "Amount of Rollout steps are immutable",
        )];
    }
    Vec::new()
}

/// `field.ErrorList.ToAggregate().Error()`: one error as is, several as `[a, b]`.
pub fn aggregate(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// The webhook's decision on a v1beta1 Rollout: CREATE (`old` None) or UPDATE; `live` is the
/// stored Rollout (its phase decides immutability), `others` the Rollouts of the namespace.
/// `Err(message)` is a 422 refusal.
pub fn admit<'a>(
    new: &Rollout,
    old: Option<&Rollout>,
    live: Option<&Rollout>,
    others: impl IntoIterator<Item = &'a Rollout>,
) -> Result<(), String> {
    let mut errs = validate_spec(new);
    errs.extend(validate_conflict(new, others));
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    if let Some(old) = old {
        let live_phase = live.map_or("", Rollout::phase);
        let errs = validate_update(old, new, live_phase);
        if !errs.is_empty() {
            return Err(aggregate(&errs));
        }
    }
    Ok(())
}
