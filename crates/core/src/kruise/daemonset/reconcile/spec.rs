//! How the Advanced DaemonSet controller reads its set: the spec with upstream's defaults, the
//! template generation, burstReplicas and the lifecycle hooks.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::{
    api::DaemonSet,
    kruise::{
        cloneset::lifecycle::Lifecycle,
        daemonset::{DsRollingUpdate, DsSpec, DsUpdateStrategyType, RollingUpdateType},
        intstr,
    },
};

/// The annotation holding the deprecated template generation (nobody sets it on an Advanced
/// DaemonSet in v1.8.4, but pods matching it count as updated).
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";
/// The conversion maps v1beta1's `partitionedScaling` onto this annotation, which this port's
/// v1alpha1-shaped model keeps ([`partitioned_scaling`]).
pub use crate::api::keys::PROGRESSIVE_CREATE_POD;

/// `isDaemonSetCreationProgressively`: v1.8.4 reads the annotation; v1.9.0 reads v1beta1
/// `scaleStrategy.partitionedScaling`, which the conversion sets exactly when the annotation is
/// `"true"`, so both read the annotation of this model.
pub fn partitioned_scaling(ds: &DaemonSet) -> bool {
    ds.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROGRESSIVE_CREATE_POD))
        .is_some_and(|v| v == "true")
}

/// The set's spec as the ported algorithms read it, with upstream's defaults
/// (`SetDefaultsDaemonSet`): RollingUpdate, Standard; the deprecated Surging becomes Standard
/// with maxSurge 1 and maxUnavailable 0 when unset; both unset means maxUnavailable 1.
pub fn spec_of(ds: &DaemonSet) -> DsSpec {
    let strategy = ds.spec.update_strategy.clone().unwrap_or_default();
    let on_delete = strategy.type_.as_deref() == Some("OnDelete");
    let r = strategy.rolling_update.unwrap_or_default();
    let (mut max_unavailable, mut max_surge) = (r.max_unavailable, r.max_surge);
    let rolling_update_type = match r.rolling_update_type.as_deref() {
        Some("InPlaceIfPossible") => RollingUpdateType::InPlaceIfPossible,
        Some("Surging") => {
            max_surge.get_or_insert(IntOrString::Int(1));
            max_unavailable.get_or_insert(IntOrString::Int(0));
            RollingUpdateType::Standard
        }
        _ => RollingUpdateType::Standard,
    };
    if max_unavailable.is_none() && max_surge.is_none() {
        max_unavailable = Some(IntOrString::Int(1));
        max_surge = Some(IntOrString::Int(0));
    }
    DsSpec {
        update_strategy_type: if on_delete {
            DsUpdateStrategyType::OnDelete
        } else {
            DsUpdateStrategyType::RollingUpdate
        },
        rolling_update: Some(DsRollingUpdate {
            rolling_update_type,
            partition: r.partition.unwrap_or(IntOrString::Int(0)),
            selector: r.selector,
            max_unavailable,
            max_surge,
            paused: r.paused,
        }),
        min_ready_seconds: ds.spec.min_ready_seconds.unwrap_or(0),
        template_generation: template_generation(ds),
        burst_replicas: Some(burst_replicas(ds)),
        desired_number_scheduled: ds.status.as_ref().map_or(0, |s| s.desired_number_scheduled),
    }
}

/// `GetTemplateGeneration`.
pub fn template_generation(ds: &DaemonSet) -> Option<i64> {
    ds.metadata
        .annotations
        .as_ref()?
        .get(TEMPLATE_GENERATION_ANNOTATION)?
        .parse()
        .ok()
}

/// `getBurstReplicas`: `spec.burstReplicas` (default 250) against the desired node count.
pub fn burst_replicas(ds: &DaemonSet) -> i32 {
    let value = ds
        .spec
        .burst_replicas
        .clone()
        .unwrap_or(IntOrString::Int(250));
    let desired = ds.status.as_ref().map_or(0, |s| s.desired_number_scheduled);
    intstr::scaled_value_apimachinery(&value, desired, false).unwrap_or(250)
}

pub(super) fn lifecycle_of(ds: &DaemonSet) -> Option<Lifecycle> {
    let value = serde_json::to_value(ds.spec.lifecycle.as_ref()?).ok()?;
    serde_json::from_value(value).ok()
}
