//! The pure half of [`super`]: a PodMetricsList page's JSON → compact figures.

use kruise_core::{
    api::pod::{CpuMemory, Str, intern::fresh},
    kruise::sidecarset::quantity::{milli_value, value},
};
use serde::Deserialize;

/// One pod's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodUsage {
    pub namespace: Str,
    pub name: Str,
    pub containers: Box<[ContainerUsage]>,
}

impl PodUsage {
    /// CPU of all containers, in millicores.
    pub fn cpu_millis(&self) -> i64 {
        self.containers.iter().map(|c| c.cpu_millis).sum()
    }

    /// Memory of all containers, in bytes.
    pub fn memory_bytes(&self) -> i64 {
        self.containers.iter().map(|c| c.memory_bytes).sum()
    }
}

/// One container's figures: CPU in millicores (rounded up, as `kubectl top` shows them) and the
/// memory working set in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerUsage {
    pub name: Str,
    pub cpu_millis: i64,
    pub memory_bytes: i64,
}

/// One page of a PodMetricsList.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    pub pods: Vec<PodUsage>,
    pub window_seconds: Option<f64>,
    pub continue_token: Option<String>,
}

#[derive(Deserialize)]
struct RawList {
    #[serde(default)]
    metadata: Option<RawListMeta>,
    #[serde(default)]
    items: Option<Vec<RawPod>>,
}

#[derive(Deserialize)]
struct RawListMeta {
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
}

#[derive(Deserialize)]
struct RawPod {
    #[serde(default)]
    metadata: Option<RawMeta>,
    #[serde(default)]
    window: Option<String>,
    #[serde(default)]
    containers: Option<Vec<RawContainer>>,
}

#[derive(Deserialize)]
struct RawMeta {
    #[serde(default, deserialize_with = "fresh")]
    name: Str,
    #[serde(default)]
    namespace: Str,
}

#[derive(Deserialize)]
struct RawContainer {
    #[serde(default)]
    name: Str,
    #[serde(default)]
    usage: Option<CpuMemory>,
}

/// Parses one page of a PodMetricsList. A quantity that does not parse counts as 0 (a pod's
/// other figures still show); an item without a name is skipped.
pub fn parse_page(json: &str) -> Result<Page, serde_json::Error> {
    let raw: RawList = serde_json::from_str(json)?;
    let mut window: Option<f64> = None;
    let pods = raw
        .items
        .unwrap_or_default()
        .into_iter()
        .filter_map(|item| {
            if let Some(w) = item.window.as_deref().and_then(go_duration_seconds) {
                window = Some(window.map_or(w, |v| v.max(w)));
            }
            let meta = item.metadata?;
            if meta.name.is_empty() {
                return None;
            }
            let containers = item
                .containers
                .unwrap_or_default()
                .into_iter()
                .map(|c| {
                    let usage = c.usage.unwrap_or_default();
                    ContainerUsage {
                        name: c.name,
                        cpu_millis: usage.cpu.as_deref().and_then(milli_value).unwrap_or(0),
                        memory_bytes: usage.memory.as_deref().and_then(value).unwrap_or(0),
                    }
                })
                .collect();
            Some(PodUsage {
                namespace: meta.namespace,
                name: meta.name,
                containers,
            })
        })
        .collect();
    Ok(Page {
        pods,
        window_seconds: window,
        continue_token: raw.metadata.and_then(|m| m.continue_token),
    })
}

/// A Go `time.Duration` string (`"15s"`, `"20.004s"`, `"1m0s"`, `"500ms"`) in seconds; None
/// when it does not parse.
pub fn go_duration_seconds(s: &str) -> Option<f64> {
    let mut rest = s.trim();
    if rest == "0" {
        return Some(0.0);
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let number: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" | "μs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    Some(total)
}

#[cfg(test)]
mod tests;
