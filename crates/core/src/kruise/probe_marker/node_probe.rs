//! NodePodProbe spec maintenance: merging a marker's probes for a pod, removing a deleted
//! marker's probes, pruning pods that are gone, and resolving named TCP ports.

use k8s_openapi::api::core::v1::{Pod, Probe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::types::{ContainerProbe, NodePodProbeSpec, PodProbe, PodProbeMarker};
use crate::kruise::KruiseVersion;

/// Port of pkg/controller/podprobemarker/pod_probe_marker_controller.go::
/// convertTcpSocketProbeCheckPort and convertHttpGetProbeCheckPort (v1.8.4), with util.ExtractPort:
/// an int port is kept as is; a named one is looked up in the pod's (regular) container of that
/// name, and when no port has that name a string holding a number is taken as the number; the
/// result must be 1-65535. The errors are upstream's.
pub fn convert_tcp_socket_port(
    port: &IntOrString,
    container_name: &str,
    pod: &Pod,
) -> Result<i32, String> {
    let name = match port {
        IntOrString::Int(n) => return Ok(*n),
        IntOrString::String(name) => name,
    };
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
    let container = pod
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .find(|c| c.name == container_name)
        .ok_or_else(|| {
            format!(
                "Failed to get container by name: {container_name} in pod: {namespace}/{pod_name}"
            )
        })?;
    let by_name = container
        .ports
        .iter()
        .flatten()
        .find(|p| p.name.as_deref() == Some(name.as_str()))
        .map(|p| p.container_port);
    by_name
        .or_else(|| name.parse::<i32>().ok())
        .filter(|p| (1..65536).contains(p))
        .ok_or_else(|| {
            format!(
                "Failed to extract port for container: {container_name} in pod: {namespace}/{pod_name}"
            )
        })
}

fn is_active_initialized(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref());
    let initialized = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Initialized" && c.status == "True")
        });
    pod.metadata.deletion_timestamp.is_none()
        && phase != Some("Succeeded")
        && phase != Some("Failed")
        && initialized
}

/// Adds (or replaces in place) the marker's probes, named `<ppm>#<probe>`, under the pod's
/// entry (matched by name, namespace and UID; an entry without an IP gets the pod's). Pods
/// without a node, not Initialized or inactive are ignored, and so is a probe whose named port
/// cannot be resolved. Returns whether the spec changed (the `Result` is kept for callers; it is
/// always Ok).
///
/// Port of pkg/controller/podprobemarker/pod_probe_marker_controller.go::updateNodePodProbes (v1.8.4).
pub fn merge_node_pod_probe(
    spec: &mut NodePodProbeSpec,
    ppm: &PodProbeMarker,
    pod: &Pod,
) -> Result<bool, String> {
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default();
    if node.is_empty() || !is_active_initialized(pod) {
        return Ok(false);
    }
    let before = spec.clone();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let ip = pod
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .unwrap_or_default();
    let idx = match spec
        .pod_probes
        .iter()
        .position(|p| p.name == name && p.namespace == namespace && p.uid == uid)
    {
        Some(i) => {
            if spec.pod_probes[i].ip.is_empty() {
                spec.pod_probes[i].ip = ip;
            }
            i
        }
        None => {
            spec.pod_probes.push(PodProbe {
                name,
                namespace,
                uid,
                ip,
                probes: Vec::new(),
            });
            spec.pod_probes.len() - 1
        }
    };
    let ppm_name = ppm.metadata.name.clone().unwrap_or_default();
    for p in &ppm.spec.probes {
        let mut probe: Option<Probe> = p.probe.clone();
        // A port that cannot be resolved skips this probe only (upstream logs and continues).
        if let Some(tcp) = probe.as_mut().and_then(|pr| pr.tcp_socket.as_mut()) {
            match convert_tcp_socket_port(&tcp.port, &p.container_name, pod) {
                Ok(port) => tcp.port = IntOrString::Int(port),
                Err(_) => continue,
            }
        }
        if let Some(http) = probe.as_mut().and_then(|pr| pr.http_get.as_mut()) {
            match convert_tcp_socket_port(&http.port, &p.container_name, pod) {
                Ok(port) => http.port = IntOrString::Int(port),
                Err(_) => continue,
            }
        }
        let entry = ContainerProbe {
            name: format!("{ppm_name}#{}", p.name),
            container_name: p.container_name.clone(),
            probe,
        };
        let probes = &mut spec.pod_probes[idx].probes;
        match probes.iter_mut().find(|c| c.name == entry.name) {
            Some(slot) => *slot = entry,
            None => probes.push(entry),
        }
    }
    Ok(*spec != before)
}

/// Removes every probe whose name contains `<ppm>#` (a substring test, as upstream) and drops
/// pod entries left without probes. Returns whether the spec changed.
///
/// v1.9.0 (#2162) leaves the entries of pods in other namespaces than the marker's untouched
/// and keeps each rebuilt entry's `IP`; v1.8.4 filtered every entry and rebuilt it without its
/// IP, which broke the TCP probes of the remaining markers.
///
/// Port of pkg/controller/podprobemarker/pod_probe_marker_controller.go::removePodProbeFromNodePodProbe.
pub fn remove_pod_probe(
    version: KruiseVersion,
    spec: &mut NodePodProbeSpec,
    ppm_namespace: &str,
    ppm_name: &str,
) -> bool {
    let before = spec.clone();
    let needle = format!("{ppm_name}#");
    spec.pod_probes.retain_mut(|p| {
        if version == KruiseVersion::V1_9 && p.namespace != ppm_namespace {
            return true;
        }
        if version == KruiseVersion::V1_8 {
            p.ip.clear();
        }
        p.probes.retain(|c| !c.name.contains(&needle));
        !p.probes.is_empty()
    });
    *spec != before
}

/// A pod as NodePodProbe pruning sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodPresence {
    pub name: String,
    pub namespace: String,
    pub uid: String,
    /// Not finished and not being deleted.
    pub active: bool,
}

/// Drops entries whose pod is missing, inactive, or has another UID. Returns whether the
/// spec changed.
///
/// Port of pkg/controller/nodepodprobe/node_pod_probe_controller.go::syncPodFromNodePodProbe (v1.8.4).
pub fn sync_pod_from_node_pod_probe(spec: &mut NodePodProbeSpec, pods: &[PodPresence]) -> bool {
    let before = spec.pod_probes.len();
    spec.pod_probes.retain(|entry| {
        pods.iter().any(|p| {
            p.name == entry.name && p.namespace == entry.namespace && p.uid == entry.uid && p.active
        })
    });
    spec.pod_probes.len() != before
}
