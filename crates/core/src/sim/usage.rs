//! What the simulated containers use, pure: a CPU and memory figure per running container, as a
//! metrics-server would report it from the kubelet's scrapes.
//!
//! - Scrapes happen every [`RESOLUTION_SECS`] (metrics-server's default `--metric-resolution`);
//!   every figure belongs to the last scrape at or before `now` ([`scrape`]), so figures change
//!   once per resolution and two reads within one give the same answer.
//! - Only containers running at the scrape, and started at least [`FRESH_SECS`] before it (the
//!   youngest a metrics-server reports), have a figure; a pod that is not `Running` or has no
//!   such container has none, as metrics-server leaves it out.
//! - A figure is deterministic from the pod's UID, the container's name and the scrape time,
//!   and drifts slowly: a per-container level plus noise interpolated over
//!   [`DRIFT_WINDOWS`] scrapes.
//! - Against the container's resources: memory never above its limit (the kernel would kill
//!   it); CPU never above its limit (the CFS quota throttles it). A pod annotated
//!   [`HOT_ANNOTATION`]`: hot` sits near its CPU limit (90–98 %) and high on memory, so the
//!   demo has something burning.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};

use super::ids::{fnv1a, mix};
use crate::kruise::sidecarset::quantity::nanos;

/// Seconds between two scrapes (metrics-server's default `--metric-resolution=15s`).
pub const RESOLUTION_SECS: i64 = 15;
/// A container younger than this at the scrape has no figure yet (metrics-server's
/// `freshContainerMinMetricsResolution`).
pub const FRESH_SECS: i64 = 10;
/// Over how many scrapes the noise drifts from one level to the next.
pub const DRIFT_WINDOWS: i64 = 8;
/// The pod annotation that makes its containers hot (value `hot`).
pub const HOT_ANNOTATION: &str = "sim.kruise-tui.io/usage";

/// Memory is counted in whole pages.
const PAGE: u64 = 4096;
const MI: u64 = 1024 * 1024;
const MILLI: u64 = 1_000_000;

/// One container's (or a node's) usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// CPU in nanocores (10⁻⁹ of a core).
    pub cpu_nanos: u64,
    /// Working-set memory in bytes.
    pub memory_bytes: u64,
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage {
            cpu_nanos: self.cpu_nanos.saturating_add(o.cpu_nanos),
            memory_bytes: self.memory_bytes.saturating_add(o.memory_bytes),
        }
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), |a, b| a + b)
    }
}

/// A scrape: when it ran (whole seconds) and the window its CPU rate covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scrape {
    pub at: Timestamp,
    pub window: SignedDuration,
}

/// The last scrape at or before `now`. The window is the resolution plus a few milliseconds
/// of scrape latency, as a real one measures it.
pub fn scrape(now: Timestamp) -> Scrape {
    let secs = now.as_second().div_euclid(RESOLUTION_SECS) * RESOLUTION_SECS;
    let at = Timestamp::from_second(secs).unwrap_or(now);
    let jitter = (mix(fnv1a(0xcbf2_9ce4_8422_2325, &secs.to_le_bytes())) % 60) as i64;
    Scrape {
        at,
        window: SignedDuration::from_millis(RESOLUTION_SECS * 1000 + jitter),
    }
}

/// A container's resources, in nanocores and bytes (None: not set).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Resources {
    cpu_request: Option<u64>,
    cpu_limit: Option<u64>,
    memory_request: Option<u64>,
    memory_limit: Option<u64>,
}

fn resources(c: &Container) -> Resources {
    let get = |which: Option<&std::collections::BTreeMap<String, _>>, key: &str, cpu: bool| {
        let q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity = which?.get(key)?;
        let n = nanos(&q.0)?;
        let v = if cpu { n } else { n / 1_000_000_000 };
        u64::try_from(v).ok().filter(|v| *v > 0)
    };
    let r = c.resources.as_ref();
    let req = r.and_then(|r| r.requests.as_ref());
    let lim = r.and_then(|r| r.limits.as_ref());
    Resources {
        cpu_request: get(req, "cpu", true),
        cpu_limit: get(lim, "cpu", true),
        memory_request: get(req, "memory", false),
        memory_limit: get(lim, "memory", false),
    }
}

/// A number in [0, 1) from the parts.
fn unit(parts: &[&[u8]]) -> f64 {
    let mut h = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        h = fnv1a(h, p);
        h = fnv1a(h, b"\0");
    }
    (mix(h) >> 11) as f64 / (1u64 << 53) as f64
}

/// The slowly drifting noise in [0, 1) of `key` at scrape number `w`.
fn drift(key: &[u8], w: i64) -> f64 {
    let k = w.div_euclid(DRIFT_WINDOWS);
    let frac = w.rem_euclid(DRIFT_WINDOWS) as f64 / DRIFT_WINDOWS as f64;
    let a = unit(&[key, b"drift", &k.to_le_bytes()]);
    let b = unit(&[key, b"drift", &(k + 1).to_le_bytes()]);
    a + (b - a) * frac
}

fn scaled(v: u64, f: f64) -> u64 {
    (v as f64 * f) as u64
}

/// The figure of a container with these resources; `key` identifies it, `w` is the scrape.
fn figure(key: &[u8], w: i64, r: Resources, hot: bool) -> Usage {
    let level = unit(&[key, b"level"]);
    let n = drift(key, w);
    let cpu = match (hot, r.cpu_request, r.cpu_limit) {
        (true, _, Some(limit)) => scaled(limit, 0.90 + 0.08 * n),
        (true, request, None) => scaled(request.unwrap_or(0).max(100 * MILLI), 1.5 + 0.5 * n),
        (false, Some(request), _) => scaled(request, (0.15 + 0.5 * level) * (0.8 + 0.4 * n)),
        (false, None, Some(limit)) => scaled(limit, (0.05 + 0.2 * level) * (0.8 + 0.4 * n)),
        (false, None, None) => scaled((1 + (24.0 * level) as u64) * MILLI, 0.6 + 0.8 * n),
    };
    let cpu = r.cpu_limit.map_or(cpu, |l| cpu.min(l)).max(1000);
    let memory = match (hot, r.memory_request, r.memory_limit) {
        (true, _, Some(limit)) => scaled(limit, 0.80 + 0.12 * n),
        (false, _, Some(limit)) => scaled(limit, (0.35 + 0.4 * level) * (0.95 + 0.1 * n)),
        (_, Some(request), None) => scaled(request, (0.6 + 0.5 * level) * (0.95 + 0.1 * n)),
        (_, None, None) => scaled(8 * MI + scaled(56 * MI, level), 0.95 + 0.1 * n),
    };
    let memory = r.memory_limit.map_or(memory, |l| memory.min(l));
    Usage {
        cpu_nanos: cpu,
        memory_bytes: (memory / PAGE * PAGE).max(PAGE),
    }
}

/// Whether a container is running at `at` and old enough to have a figure.
fn reportable(status: &ContainerStatus, at: Timestamp) -> bool {
    let Some(started) = status
        .state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.as_ref())
    else {
        return false;
    };
    started.0.as_second() + FRESH_SECS <= at.as_second()
}

/// The figures of a pod's containers at scrape `s`, in spec order: only the running containers
/// old enough to have one; empty when the pod is not `Running` (no figure at all).
pub fn pod_usage(pod: &Pod, s: &Scrape) -> Vec<(String, Usage)> {
    let Some(status) = &pod.status else {
        return Vec::new();
    };
    if status.phase.as_deref() != Some("Running") {
        return Vec::new();
    }
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let hot = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(HOT_ANNOTATION))
        .is_some_and(|v| v == "hot");
    let statuses = status.container_statuses.as_deref().unwrap_or_default();
    let w = s.at.as_second().div_euclid(RESOLUTION_SECS);
    let Some(spec) = &pod.spec else {
        return Vec::new();
    };
    spec.containers
        .iter()
        .filter(|c| {
            statuses
                .iter()
                .any(|st| st.name == c.name && reportable(st, s.at))
        })
        .map(|c| {
            let key = format!("{uid}\0{}", c.name);
            (c.name.clone(), figure(key.as_bytes(), w, resources(c), hot))
        })
        .collect()
}

/// What a node's system (kubelet, runtime, OS) uses beside its pods at scrape `s`.
pub fn node_overhead(node: &str, s: &Scrape) -> Usage {
    let key = node.as_bytes();
    let w = s.at.as_second().div_euclid(RESOLUTION_SECS);
    let level = unit(&[key, b"node"]);
    let n = drift(key, w);
    Usage {
        cpu_nanos: scaled(120 * MILLI, 1.0 + 0.6 * n),
        memory_bytes: (700 * MI + scaled(300 * MI, level) + scaled(40 * MI, n)) / PAGE * PAGE,
    }
}

#[cfg(test)]
mod tests;
