//! The embedded Kruise controllers: reconcilers on kube-rs runtime, every decision made by the
//! sans-IO port in `kruise_core::kruise`.
//!
//! One [`cache::Cache`] (a watch and store per kind, shared) feeds every controller; each
//! controller maps changes to keys on its own work queue ([`runner`]), waits for its
//! [`expectations`], calls its pure reconcile and applies the writes conflict-safely
//! ([`write`]), recording upstream's events ([`recorder`]). [`run`] starts them all, after
//! winning the leader [`lease`]; [`detect`] finds a kruise-manager already running.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod batchrelease;
pub mod cache;
pub mod cloneset;
pub mod crr;
pub mod daemonset;
pub mod expectations;
pub mod failures;
pub mod node_probe;
pub mod owned;
pub mod podwrite;
pub mod probe_marker;
pub mod pub_budget;
pub mod recorder;
pub mod rollout;
pub mod runner;
pub mod served;
pub mod sidecarset;
pub mod statefulset;

use std::{collections::BTreeMap, sync::Arc};

use anyhow::Result;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::{Client, Resource};
use tokio_util::sync::CancellationToken;

pub use cache::{Cache, Versions};
use expectations::Expectations;
pub use recorder::Recorder;

// The plumbing the controllers share with every other online part (the leader Lease, finding a
// kruise-manager, conflict-safe writes), and the pure core every decision comes from.
pub use kruise_client::{detect, lease, write};
use kruise_core::{api, kruise};

use kruise_client::discovery::mapped_version;
use kruise_core::api::kinds::Kind;

use crate::kruise::{FeatureGates, KruiseVersion};

/// How the controllers run.
#[derive(Debug, Clone)]
pub struct Options {
    pub gates: FeatureGates,
    pub version: KruiseVersion,
    /// Who this instance is in the leader Lease (hostname/pid by default).
    pub identity: String,
    /// Run the Rollout and BatchRelease controllers where the Kruise Rollout CRDs are served
    /// (false: a kruise-rollout manager owns the Rollouts there).
    pub kruise_rollout: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            gates: FeatureGates::new(),
            version: KruiseVersion::V1_9,
            identity: lease::default_identity(),
            kruise_rollout: true,
        }
    }
}

/// What every controller shares.
pub struct Shared {
    pub client: Client,
    pub cache: Arc<Cache>,
    pub recorder: Recorder,
    pub gates: FeatureGates,
    pub version: KruiseVersion,
    pub versions: Versions,
}

/// The context of a controller that keeps expectations and records no events (upstream's
/// ContainerRecreateRequest, PodProbeMarker and NodePodProbe controllers only log).
pub struct Ctx {
    pub shared: Arc<Shared>,
    pub expectations: Expectations,
}

impl Ctx {
    pub fn new(shared: Arc<Shared>) -> Arc<Self> {
        Arc::new(Self {
            shared,
            expectations: Expectations::default(),
        })
    }
}

/// What the cache holds of an object, for expectations.
pub fn seen<K: Resource>(obj: Option<&K>) -> Option<expectations::Seen> {
    obj.map(|o| {
        let meta = o.meta();
        expectations::Seen {
            uid: meta.uid.clone().unwrap_or_default(),
            resource_version: meta.resource_version.clone().unwrap_or_default(),
            terminating: meta.deletion_timestamp.is_some(),
        }
    })
}

/// The key `namespace/name` (expectations, logs).
pub fn key(ns: &str, name: &str) -> String {
    format!("{ns}/{name}")
}

/// The [`key`] of `obj`.
pub fn key_of<K: Resource>(obj: &K) -> String {
    let meta = obj.meta();
    key(
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// A copy of `obj` with `finalizer` last in its finalizers (`present`) or gone from them.
pub fn with_finalizer<K: Resource + Clone>(obj: &K, finalizer: &str, present: bool) -> K {
    let mut next = obj.clone();
    let finalizers = next.meta_mut().finalizers.get_or_insert_with(Vec::new);
    finalizers.retain(|f| f != finalizer);
    if present {
        finalizers.push(finalizer.to_owned());
    }
    next
}

/// Whether `selector` is set, not empty, and takes `labels`: to the controllers' trigger
/// mappers a missing, empty or malformed selector selects nothing.
pub fn selects(selector: Option<&LabelSelector>, labels: &BTreeMap<String, String>) -> bool {
    selector.is_some_and(|s| {
        !kruise::selector::is_empty(s) && kruise::selector::matches(s, labels).unwrap_or(false)
    })
}

/// Randomness for new instance ids (the OS's generator).
pub fn rng() -> impl FnMut() -> u64 {
    || {
        let mut bytes = [0u8; 8];
        // A failing OS generator falls back to the clock's nanoseconds: ids only need to differ.
        if getrandom::fill(&mut bytes).is_err() {
            return u64::try_from(jiff::Timestamp::now().as_nanosecond()).unwrap_or(0);
        }
        u64::from_le_bytes(bytes)
    }
}

/// Which Kruise kinds the server serves, and at which version CloneSets are read (the one the
/// console reads: the version the CRD stores, else the newest served).
pub async fn discover_versions(client: &Client) -> Result<Versions> {
    let apis = kruise_client::discovery::discover_kruise(client)
        .await
        .map_err(|e| anyhow::anyhow!("cannot discover the Kruise APIs: {}", write::describe(&e)))?;
    let versions = Versions {
        served: apis
            .served
            .iter()
            .map(|s| s.kind.clone())
            .filter(|k| cache::KRUISE_KINDS.contains(&k.as_str()))
            .collect(),
        cloneset: kruise_client::discovery::preferred_cloneset_version(&apis)
            .filter(|ar| ar.version != "v1alpha1")
            .cloned(),
        daemonset: mapped_version(&apis, Kind::DaemonSet).cloned(),
        sidecarset: mapped_version(&apis, Kind::SidecarSet).cloned(),
        rollouts: rollout::served(client).await,
    };
    if versions.served.is_empty() {
        anyhow::bail!(
            "this cluster serves none of the Kruise APIs (apps.kruise.io, policy.kruise.io): \
             install the Kruise CRDs first"
        );
    }
    Ok(versions)
}

/// Runs every controller against `client` until `shutdown`: waits to lead, starts the cache,
/// reconciles. Returns an error if leadership is lost.
pub async fn run(client: Client, opts: Options, shutdown: CancellationToken) -> Result<()> {
    let versions = discover_versions(&client).await?;
    let leading = CancellationToken::new();
    let lease = lease::LeaderLease::new(client.clone(), &opts.identity, &opts.gates, opts.version);
    if !lease.acquire(&shutdown).await? {
        return Ok(());
    }
    let renew = tokio::spawn({
        let shutdown = shutdown.clone();
        let leading = leading.clone();
        async move { lease.hold(&shutdown, &leading).await }
    });
    let stop = CancellationToken::new();
    {
        let stop = stop.clone();
        let shutdown = shutdown.clone();
        let leading = leading.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = shutdown.cancelled() => {}
                () = leading.cancelled() => {}
            }
            stop.cancel();
        });
    }
    let cache = Cache::new();
    let shared = Arc::new(Shared {
        recorder: Recorder::start(client.clone(), stop.clone()),
        client: client.clone(),
        cache: cache.clone(),
        gates: opts.gates,
        version: opts.version,
        versions: versions.clone(),
    });
    let mut tasks = tokio::task::JoinSet::new();
    // Each controller registers its cache handlers when built, before the cache starts.
    let mut names = controller_names(&shared.gates);
    // Kruise Rollout's Rollout and BatchRelease controllers, only where its CRDs are served
    // (quietly skipped otherwise).
    if versions.rollouts && opts.kruise_rollout {
        names.push("rollout");
        names.push("batchrelease");
    }
    for name in names {
        let (shared, stop) = (shared.clone(), stop.clone());
        match name {
            "cloneset" => tasks.spawn(cloneset::controller(shared, stop)),
            "statefulset" => tasks.spawn(statefulset::controller(shared, stop)),
            "daemonset" => tasks.spawn(daemonset::controller(shared, stop)),
            "sidecarset" => tasks.spawn(sidecarset::controller(shared, stop)),
            "podunavailablebudget" => tasks.spawn(pub_budget::controller(shared, stop)),
            "containerrecreaterequest" => tasks.spawn(crr::controller(shared, stop)),
            "podprobemarker" => tasks.spawn(probe_marker::controller(shared, stop)),
            "nodepodprobe" => tasks.spawn(node_probe::controller(shared, stop)),
            "rollout" => tasks.spawn(rollout::controller(shared, stop)),
            "batchrelease" => tasks.spawn(batchrelease::controller(shared, stop)),
            _ => continue,
        };
    }
    cache.start(&client, &versions);
    stop.cancelled().await;
    tasks.shutdown().await;
    cache.stop().await;
    let lost = leading.is_cancelled() && !shutdown.is_cancelled();
    // On shutdown the renewal loop releases the lease before it returns.
    let _ = renew.await;
    if lost {
        anyhow::bail!("lost the controllers' leader lease; stopped reconciling");
    }
    Ok(())
}

/// The controllers that run with `gates`, by the name their log lines carry. Upstream adds
/// the last three only behind their gates (KruiseDaemon, PodProbeMarkerGate).
pub fn controller_names(gates: &FeatureGates) -> Vec<&'static str> {
    let mut names = vec![
        "cloneset",
        "statefulset",
        "daemonset",
        "sidecarset",
        "podunavailablebudget",
    ];
    let daemon = gates.enabled("KruiseDaemon");
    let probes = gates.enabled("PodProbeMarkerGate");
    if daemon {
        names.push("containerrecreaterequest");
    }
    if probes {
        names.push("podprobemarker");
    }
    if probes && daemon {
        names.push("nodepodprobe");
    }
    names
}

/// What `kruise-tui controllers` says before it starts: which controllers run, the feature
/// gates they decide with, and (from [`detect::webhook_notice`]) what no webhook enforces here.
///
/// `rollouts`: whether the Kruise Rollout CRDs are served (then the Rollout and BatchRelease
/// controllers run too).
pub fn banner(gates: &FeatureGates, rollouts: bool, webhooks: Vec<String>) -> Vec<String> {
    let values = gates
        .effective()
        .iter()
        .map(|(name, on)| format!("{name}={on}"))
        .collect::<Vec<_>>()
        .join(",");
    let mut names = controller_names(gates);
    if rollouts {
        names.extend(["rollout", "batchrelease"]);
    }
    let mut lines = vec![
        format!("controllers: running {}", names.join(", ")),
        format!("controllers: feature gates {values}"),
    ];
    lines.extend(webhooks);
    lines
}

/// Refuses (with how it was detected) when a kruise-manager appears to run in the cluster.
pub async fn refuse_if_kruise_manager(client: &Client) -> Result<()> {
    let signs = detect::kruise_manager_signs(client).await;
    if signs.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "a kruise-manager appears to be running in this cluster: {}. Two controllers would fight \
         over the same objects; use --force to run anyway",
        signs.join("; ")
    )
}

/// Refuses (with how it was detected) when a kruise-rollout manager appears to run in the
/// cluster: its Rollout and BatchRelease controllers would fight the embedded ones.
pub async fn refuse_if_kruise_rollout_manager(client: &Client) -> Result<()> {
    let signs = detect::kruise_rollout_signs(client).await;
    if signs.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "a kruise-rollout manager appears to be running in this cluster: {}. Two Rollout \
         controllers would fight over the same Rollouts and workloads; use --force to run anyway",
        signs.join("; ")
    )
}
