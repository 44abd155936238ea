//! One pod's or one workload's figures and how they read.

use crate::{
    api::{SlimPod, pod::SlimContainer},
    kruise::sidecarset::quantity::{milli_value, value},
};

/// CPU (millicores) and memory (bytes) used, with the requests and limits where set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    pub cpu: i64,
    pub memory: i64,
    pub bounds: Bounds,
}

/// Requests and limits: CPU in millicores, memory in bytes; None where not set (for a sum:
/// where no pod sets it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bounds {
    pub cpu_request: Option<i64>,
    pub cpu_limit: Option<i64>,
    pub memory_request: Option<i64>,
    pub memory_limit: Option<i64>,
}

fn add_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.saturating_add(y)),
        (x, y) => x.or(y),
    }
}

impl Bounds {
    /// Adds another's (a sum over containers or pods): set where either is.
    pub fn add(&mut self, b: &Bounds) {
        self.cpu_request = add_opt(self.cpu_request, b.cpu_request);
        self.cpu_limit = add_opt(self.cpu_limit, b.cpu_limit);
        self.memory_request = add_opt(self.memory_request, b.memory_request);
        self.memory_limit = add_opt(self.memory_limit, b.memory_limit);
    }
}

impl Figures {
    pub fn used(cpu: i64, memory: i64) -> Figures {
        Figures {
            cpu,
            memory,
            bounds: Bounds::default(),
        }
    }

    pub fn set_bounds(&mut self, bounds: Bounds) {
        self.bounds = bounds;
    }

    /// Adds another pod's figures (a workload's sum).
    pub fn add(&mut self, other: &Figures) {
        self.cpu = self.cpu.saturating_add(other.cpu);
        self.memory = self.memory.saturating_add(other.memory);
        self.bounds.add(&other.bounds);
    }

    /// The share of the CPU limit used (else of the request), in percent.
    pub fn cpu_percent(&self) -> Option<i64> {
        percent(self.cpu, self.bounds.cpu_limit.or(self.bounds.cpu_request))
    }

    /// The share of the memory limit used (else of the request), in percent.
    pub fn memory_percent(&self) -> Option<i64> {
        percent(
            self.memory,
            self.bounds.memory_limit.or(self.bounds.memory_request),
        )
    }
}

fn percent(used: i64, of: Option<i64>) -> Option<i64> {
    let of = of.filter(|&v| v > 0)?;
    Some((i128::from(used) * 100 / i128::from(of)) as i64)
}

/// A pod's requests and limits: the sum over its containers of those set (init containers are
/// left out, as `kubectl top` and k9s leave them).
pub fn requests_limits(pod: &SlimPod) -> Bounds {
    let mut b = Bounds::default();
    for c in pod.spec.containers.iter() {
        b.add(&container_bounds(c));
    }
    b
}

/// One container's requests and limits.
pub fn container_bounds(container: &SlimContainer) -> Bounds {
    let Some(r) = container.resources.as_deref() else {
        return Bounds::default();
    };
    let cpu = |q: &Option<crate::api::pod::Str>| q.as_deref().and_then(milli_value);
    let mem = |q: &Option<crate::api::pod::Str>| q.as_deref().and_then(value);
    Bounds {
        cpu_request: cpu(&r.requests.cpu),
        cpu_limit: cpu(&r.limits.cpu),
        memory_request: mem(&r.requests.memory),
        memory_limit: mem(&r.limits.memory),
    }
}

/// CPU as `kubectl top` prints it: millicores (`250m`).
pub fn format_cpu(millis: i64) -> String {
    format!("{millis}m")
}

/// Memory as `kubectl top` prints it, in whole MiB (`120Mi`), but in KiB under 1 MiB (`512Ki`)
/// and in GiB from 100 GiB (`120Gi`), truncated as kubectl truncates.
pub fn format_memory(bytes: i64) -> String {
    const KI: i64 = 1024;
    const MI: i64 = 1024 * KI;
    const GI: i64 = 1024 * MI;
    if bytes < MI {
        format!("{}Ki", bytes / KI)
    } else if bytes < 100 * GI {
        format!("{}Mi", bytes / MI)
    } else {
        format!("{}Gi", bytes / GI)
    }
}
