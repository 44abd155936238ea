//! Pod writes shared by the workload controllers (CloneSet, Advanced StatefulSet, Advanced
//! DaemonSet): an update of a pod's status and/or the pod itself, re-applied to the freshly read
//! pod on a conflict (upstream's RetryOnConflict), and a UID-guarded delete; each returns what
//! the controller then expects to see in its cache.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use super::{expectations::Expect, write};
use crate::kruise::cloneset::reconcile::pods;

/// How often a pod write is re-applied to a freshly read pod after a conflict.
const CONFLICT_RETRIES: usize = 3;

/// Writes `desired` (computed from `base`); on a conflict re-reads the pod and re-applies the
/// same change to it (upstream's RetryOnConflict), a bounded number of times. `rv` overrides
/// the first attempt's resourceVersion (the one a status write just returned). Also says
/// whether the write went to a re-read pod (then `base` was stale).
pub async fn with_rebase<F, Fut>(
    api: &Api<Pod>,
    base: Option<&Pod>,
    desired: &Pod,
    rv: Option<String>,
    write_fn: F,
) -> Result<(write::Written, bool), kube::Error>
where
    F: Fn(Api<Pod>, Pod) -> Fut,
    Fut: std::future::Future<Output = Result<write::Written, kube::Error>>,
{
    let mut attempt = desired.clone();
    if let Some(rv) = rv {
        attempt.metadata.resource_version = Some(rv);
    }
    let mut tries = 0;
    loop {
        match write_fn(api.clone(), attempt.clone()).await {
            Err(err) if write::code(&err) == Some(409) && tries < CONFLICT_RETRIES => {
                tries += 1;
                let Some(base) = base else { return Err(err) };
                let name = desired.metadata.name.as_deref().unwrap_or_default();
                let fresh = api.get(name).await?;
                attempt = pods::rebase(base, desired, &fresh);
            }
            other => return other.map(|written| (written, tries > 0)),
        }
    }
}

/// Writes a pod's new status (conditions) and then the pod itself (labels, annotations,
/// finalizers, images), each computed from `base`; returns the expectation of the last write.
pub async fn update(
    api: &Api<Pod>,
    name: &str,
    base: Option<&Pod>,
    status: Option<&Pod>,
    pod: Option<&Pod>,
) -> Result<Vec<Expect>, kube::Error> {
    let mut rv = None;
    // The resourceVersion the pod write may take from the status write: only when the status
    // went onto `base` itself. After a re-read, `base` is stale, and `pod` (computed from it)
    // sent at the fresh resourceVersion would undo what changed since (a real server refuses
    // that: a bound pod's nodeName may not go); sent at its own, it conflicts and is re-applied
    // to the fresh pod like the status was.
    let mut pod_rv = None;
    if let Some(status) = status {
        let (written, rebased) = with_rebase(api, base, status, None, |api, p| async move {
            write::replace_status(&api, &p).await
        })
        .await?;
        pod_rv = (!rebased).then(|| written.resource_version.clone());
        rv = Some(written.resource_version);
    }
    if let Some(pod) = pod {
        let (written, _) = with_rebase(api, base, pod, pod_rv, |api, p| async move {
            write::replace(&api, &p).await
        })
        .await?;
        rv = Some(written.resource_version);
    }
    Ok(rv
        .map(|resource_version| Expect::Updated {
            name: name.to_owned(),
            resource_version,
        })
        .into_iter()
        .collect())
}

/// Deletes pod `name` if it still has `uid`.
pub async fn delete(api: &Api<Pod>, name: &str, uid: &str) -> Result<Vec<Expect>, kube::Error> {
    write::delete(api, name, uid).await.map(|()| {
        vec![Expect::Deleted {
            name: name.to_owned(),
            uid: uid.to_owned(),
        }]
    })
}
