//! `S`: a shell in a pod's container through `kubectl exec -it`, run by the runtime with the
//! console suspended. Here only which container and what to ask for (pure); the runtime builds
//! the command line (`kube::shell`) and owns the terminal.
//!
//! The container: the one chosen (pod detail, Log view), else the pod's
//! `kubectl.kubernetes.io/default-container`, else its first container, as kubectl picks. A
//! SidecarSet hot-upgrade sidecar runs as two twins (`NAME-1`, `NAME-2`) of which one works and
//! one idles on the empty image: naming either twin (or NAME) enters the working one, read from
//! `kruise.io/sidecarset-working-hotupgrade-container`, as `kubectl-kruise exec -S NAME` does.

use std::collections::BTreeMap;

use crate::{api::SlimPod, kruise::sidecarset::SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER};

/// kubectl's annotation naming the container its commands default to.
pub const DEFAULT_CONTAINER_ANNOTATION: &str = "kubectl.kubernetes.io/default-container";

/// What [`Effect::Shell`](super::Effect::Shell) asks the runtime to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRequest {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    /// The kubeconfig context the console is on (after `:ctx`, the new one).
    pub context: Option<String>,
    /// Why this container, when it is not the one named (hot upgrade's working twin).
    pub note: Option<String>,
}

/// How the shell went, reported by the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellOutcome {
    /// kubectl ran and exited with this code (None: killed by a signal).
    Exited {
        pod: String,
        container: String,
        code: Option<i32>,
        /// kubectl's own last error line, when it failed (not the shell's output).
        error: Option<String>,
    },
    /// It could not run (kubectl not on PATH, no terminal); the reason, whole.
    Failed(String),
}

/// The container a command defaults to: `kubectl.kubernetes.io/default-container` when it names
/// a container of the pod, else the first container.
pub fn default_container(pod: &SlimPod) -> Option<String> {
    let named = pod
        .metadata
        .annotations
        .get(DEFAULT_CONTAINER_ANNOTATION)
        .filter(|name| pod.spec.containers.iter().any(|c| c.name == *name));
    named
        .map(str::to_owned)
        .or_else(|| pod.spec.containers.first().map(|c| c.name.to_string()))
}

/// The hot-upgrade sidecars of the pod: sidecar name → its working twin.
pub fn working_twins(pod: &SlimPod) -> BTreeMap<String, String> {
    pod.metadata
        .annotations
        .get(SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER)
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

/// The container to enter for `chosen` (None: the default one), with a note when it is a
/// hot-upgrade sidecar's working twin rather than the container named.
pub fn shell_container(pod: &SlimPod, chosen: Option<&str>) -> Option<(String, Option<String>)> {
    let chosen = match chosen {
        Some(c) => c.to_owned(),
        None => default_container(pod)?,
    };
    let twins = working_twins(pod);
    let sidecar = twins.keys().find(|name| {
        chosen == **name || chosen == format!("{name}-1") || chosen == format!("{name}-2")
    });
    match sidecar.and_then(|name| Some((name, twins.get(name)?))) {
        Some((name, working)) => Some((
            working.clone(),
            Some(format!(
                "{working}: the working container of hot-upgrade sidecar {name}"
            )),
        )),
        None => Some((chosen, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(containers: &[&str], annotations: &[(&str, &str)]) -> SlimPod {
        let mut pod = SlimPod::default();
        pod.metadata.name = Some("web-0".into());
        pod.metadata.annotations = annotations.iter().copied().collect();
        pod.spec.containers = containers
            .iter()
            .map(|name| crate::api::pod::SlimContainer {
                name: (*name).into(),
                ..Default::default()
            })
            .collect();
        pod
    }

    #[test]
    fn the_default_is_kubectls_annotation_then_the_first_container() {
        assert_eq!(
            default_container(&pod(&["app", "log"], &[])).as_deref(),
            Some("app")
        );
        let annotated = pod(&["app", "log"], &[(DEFAULT_CONTAINER_ANNOTATION, "log")]);
        assert_eq!(default_container(&annotated).as_deref(), Some("log"));
        // An annotation naming no container of the pod is ignored, as kubectl warns and does.
        let wrong = pod(&["app", "log"], &[(DEFAULT_CONTAINER_ANNOTATION, "gone")]);
        assert_eq!(default_container(&wrong).as_deref(), Some("app"));
        assert_eq!(default_container(&pod(&[], &[])), None);
    }

    #[test]
    fn a_hot_upgrade_twin_enters_the_working_one() {
        let p = pod(
            &["mesh-1", "mesh-2", "app"],
            &[(
                SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER,
                r#"{"mesh":"mesh-2"}"#,
            )],
        );
        // The idle twin, the working twin and the sidecar's own name all lead to mesh-2.
        for chosen in ["mesh-1", "mesh-2", "mesh"] {
            let (c, note) = shell_container(&p, Some(chosen)).unwrap_or_default();
            assert_eq!(c, "mesh-2", "{chosen}");
            assert!(note.is_some_and(|n| n.contains("hot-upgrade sidecar mesh")));
        }
        // The default (first) container is the idle twin: the working one is entered.
        assert_eq!(
            shell_container(&p, None).map(|(c, _)| c).as_deref(),
            Some("mesh-2")
        );
        // Other containers are themselves.
        assert_eq!(
            shell_container(&p, Some("app")),
            Some(("app".to_owned(), None))
        );
        // A malformed annotation is no hot upgrade.
        let bad = pod(
            &["mesh-1", "mesh-2"],
            &[(SIDECARSET_WORKING_HOT_UPGRADE_CONTAINER, "{")],
        );
        assert_eq!(
            shell_container(&bad, Some("mesh-1")),
            Some(("mesh-1".to_owned(), None))
        );
    }
}
