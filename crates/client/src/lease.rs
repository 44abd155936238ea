//! Leader election through a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does:
//! one holder at a time, renewed every few seconds, taken over only once it has expired. Two
//! `kruise-tui controllers` against one cluster never reconcile at the same time.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
};
use kube::{Api, Client, api::PostParams};
use tokio_util::sync::CancellationToken;

use crate::write;

/// Where the lease lives (every cluster has kube-system).
pub const NAMESPACE: &str = "kube-system";
/// The lease's name.
pub const NAME: &str = "kruise-tui-controllers";
/// How long a lease holds without renewal.
pub const DURATION: Duration = Duration::from_secs(15);
/// How often the holder renews (and a waiting candidate retries).
pub const RETRY: Duration = Duration::from_secs(2);

/// `hostname_pid`, like client-go's default identity plus the pid.
pub fn default_identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "kruise-tui".to_owned());
    format!("{host}_{}", std::process::id())
}

/// The holder of a lease renewed (or acquired) within its duration as of `now`, if any.
pub fn fresh_holder(lease: &Lease, now: Timestamp) -> Option<String> {
    let spec = lease.spec.as_ref()?;
    let holder = spec.holder_identity.clone().filter(|h| !h.is_empty())?;
    let renewed = spec.renew_time.as_ref().or(spec.acquire_time.as_ref())?.0;
    let secs = i64::from(spec.lease_duration_seconds.unwrap_or(15));
    (renewed + jiff::SignedDuration::from_secs(secs) > now).then_some(holder)
}

/// The holder of a fresh lease when it is not `identity`.
pub fn held_by_other(lease: &Lease, identity: &str, now: Timestamp) -> Option<String> {
    fresh_holder(lease, now).filter(|h| h != identity)
}

/// Annotation on the lease naming the feature gates the leader runs with, so the console and the
/// subcommands predict with the gates the controllers decide with.
pub const GATES_ANNOTATION: &str = "kruise-tui.io/feature-gates";
/// Annotation on the lease naming the Kruise release whose rules the leader follows (`v1.9`).
pub const VERSION_ANNOTATION: &str = "kruise-tui.io/kruise-version";

pub struct LeaderLease {
    api: Api<Lease>,
    identity: String,
    gates: String,
    version: &'static str,
}

impl LeaderLease {
    pub fn new(
        client: Client,
        identity: &str,
        gates: &kruise_core::kruise::FeatureGates,
        version: kruise_core::kruise::KruiseVersion,
    ) -> Self {
        Self {
            api: Api::namespaced(client, NAMESPACE),
            identity: identity.to_owned(),
            gates: gates.to_spec(),
            version: version.name(),
        }
    }

    fn annotate(&self, meta: &mut ObjectMeta) {
        let annotations = meta.annotations.get_or_insert_with(Default::default);
        annotations.insert(GATES_ANNOTATION.to_owned(), self.gates.clone());
        annotations.insert(VERSION_ANNOTATION.to_owned(), self.version.to_owned());
    }

    fn spec(&self, previous: Option<&LeaseSpec>, now: Timestamp) -> LeaseSpec {
        let taking_over = previous
            .and_then(|p| p.holder_identity.as_deref())
            .is_none_or(|h| h != self.identity);
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: i32::try_from(DURATION.as_secs()).ok(),
            acquire_time: if taking_over {
                Some(MicroTime(now))
            } else {
                previous.and_then(|p| p.acquire_time.clone())
            },
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(
                previous.and_then(|p| p.lease_transitions).unwrap_or(0) + i32::from(taking_over),
            ),
            ..LeaseSpec::default()
        }
    }

    /// One attempt to take or renew the lease. Ok(true): we hold it now.
    pub async fn try_acquire(&self) -> Result<bool, kube::Error> {
        let now = Timestamp::now();
        match self.api.get_opt(NAME).await? {
            None => {
                let mut lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(NAME.to_owned()),
                        namespace: Some(NAMESPACE.to_owned()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(self.spec(None, now)),
                };
                self.annotate(&mut lease.metadata);
                match self.api.create(&PostParams::default(), &lease).await {
                    Ok(_) => Ok(true),
                    Err(err) if write::code(&err) == Some(409) => Ok(false),
                    Err(err) => Err(err),
                }
            }
            Some(lease) => {
                if let Some(holder) = held_by_other(&lease, &self.identity, now) {
                    tracing::debug!(%holder, "controllers: lease held by another instance");
                    return Ok(false);
                }
                let mut updated = lease.clone();
                updated.spec = Some(self.spec(lease.spec.as_ref(), now));
                self.annotate(&mut updated.metadata);
                match self
                    .api
                    .replace(NAME, &PostParams::default(), &updated)
                    .await
                {
                    Ok(_) => Ok(true),
                    Err(err) if write::code(&err) == Some(409) => Ok(false),
                    Err(err) => Err(err),
                }
            }
        }
    }

    /// Waits until we hold the lease (true) or `shutdown` (false).
    pub async fn acquire(&self, shutdown: &CancellationToken) -> anyhow::Result<bool> {
        let mut told = false;
        loop {
            match self.try_acquire().await {
                Ok(true) => return Ok(true),
                Ok(false) => {
                    if !told {
                        eprintln!(
                            "controllers: another instance holds the Lease {NAMESPACE}/{NAME}; waiting to take over"
                        );
                        told = true;
                    }
                }
                Err(err) => tracing::warn!(
                    "controllers: cannot read the Lease {NAMESPACE}/{NAME}: {}",
                    write::describe(&err)
                ),
            }
            tokio::select! {
                () = shutdown.cancelled() => return Ok(false),
                () = tokio::time::sleep(RETRY) => {}
            }
        }
    }

    /// Renews the lease until `shutdown`; cancels `leading` if it is lost (not renewed for
    /// longer than its duration). Releases it on shutdown.
    pub async fn hold(&self, shutdown: &CancellationToken, leading: &CancellationToken) {
        let mut last_ok = std::time::Instant::now();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(RETRY) => {}
            }
            match self.try_acquire().await {
                Ok(true) => last_ok = std::time::Instant::now(),
                Ok(false) => {
                    tracing::warn!("controllers: the lease was taken by another instance");
                    leading.cancel();
                    return;
                }
                Err(err) => {
                    tracing::warn!(
                        "controllers: cannot renew the lease: {}",
                        write::describe(&err)
                    );
                    if last_ok.elapsed() > DURATION {
                        leading.cancel();
                        return;
                    }
                }
            }
        }
        self.release().await;
    }

    /// Gives the lease up (so another instance can take over at once).
    async fn release(&self) {
        if let Ok(Some(mut lease)) = self.api.get_opt(NAME).await
            && lease
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.as_deref())
                == Some(self.identity.as_str())
        {
            if let Some(spec) = lease.spec.as_mut() {
                spec.holder_identity = None;
                spec.renew_time = None;
            }
            let _ = self.api.replace(NAME, &PostParams::default(), &lease).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(holder: &str, renewed: i64) -> Lease {
        Lease {
            metadata: ObjectMeta::default(),
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.to_owned()),
                lease_duration_seconds: Some(15),
                renew_time: Timestamp::from_second(renewed).ok().map(MicroTime),
                ..LeaseSpec::default()
            }),
        }
    }

    #[test]
    fn a_fresh_lease_of_another_holder_is_held_an_expired_one_is_not() {
        let now = Timestamp::from_second(1_000).unwrap_or(Timestamp::UNIX_EPOCH);
        assert_eq!(
            held_by_other(&lease("a", 990), "b", now),
            Some("a".to_owned())
        );
        assert_eq!(held_by_other(&lease("a", 980), "b", now), None);
        assert_eq!(held_by_other(&lease("b", 999), "b", now), None, "our own");
        assert_eq!(held_by_other(&lease("", 999), "b", now), None, "released");
    }
}
