//! A pod change computed by a pure function (labels, annotations, conditions), written
//! conflict-safely: metadata through the pod, conditions through `pods/status` (a status write
//! does not carry metadata on a real API server), each with the resourceVersion it was computed
//! from; on a conflict the pod is read again and the function applied to it again
//! (upstream's RetryOnConflict).

use k8s_openapi::api::core::v1::Pod;
use kube::{Api, api::PostParams};

use super::write;

/// How often a change is re-applied to a freshly read pod after a conflict.
const CONFLICT_RETRIES: usize = 3;

/// Applies `apply` to `pod` and writes what changed. Returns the pod's resourceVersion after the
/// last write (`None`: nothing to write).
pub async fn update_pod(
    api: &Api<Pod>,
    pod: &Pod,
    apply: &(dyn Fn(&mut Pod) -> bool + Send + Sync),
) -> Result<Option<String>, kube::Error> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let mut current = pod.clone();
    let mut tries = 0;
    loop {
        match update_once(api, &name, &current, apply).await {
            Err(err) if write::code(&err) == Some(409) && tries < CONFLICT_RETRIES => {
                tries += 1;
                current = api.get(&name).await?;
            }
            other => return other,
        }
    }
}

async fn update_once(
    api: &Api<Pod>,
    name: &str,
    current: &Pod,
    apply: &(dyn Fn(&mut Pod) -> bool + Send + Sync),
) -> Result<Option<String>, kube::Error> {
    let mut desired = current.clone();
    if !apply(&mut desired) {
        return Ok(None);
    }
    let mut base = current.clone();
    let params = PostParams::default();
    if desired.metadata.labels != base.metadata.labels
        || desired.metadata.annotations != base.metadata.annotations
    {
        let mut next = base.clone();
        next.metadata.labels = desired.metadata.labels.clone();
        next.metadata.annotations = desired.metadata.annotations.clone();
        base = api.replace(name, &params, &next).await?;
    }
    let conditions = |p: &Pod| p.status.as_ref().and_then(|s| s.conditions.clone());
    if conditions(&desired) != conditions(&base) {
        let mut next = base.clone();
        next.status.get_or_insert_with(Default::default).conditions = conditions(&desired);
        base = api.replace_status(name, &params, &next).await?;
    }
    Ok(base.metadata.resource_version)
}
