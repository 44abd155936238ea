//! Advanced StatefulSet status counts (`computeReplicaStatus` and `completeRollingUpdate`).

use super::{AstsPod, UpdateStrategyType};

/// The replica counters of `status`, plus the current revision after completion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AstsStatusCounts {
    /// Created pods (phase set).
    pub replicas: i32,
    /// Running and Ready.
    pub ready_replicas: i32,
    /// Running, Ready for minReadySeconds, lifecycle `""`/Normal.
    pub available_replicas: i32,
    /// Created, not terminating, exactly on the current revision.
    pub current_replicas: i32,
    /// Created, not terminating, exactly on the update revision.
    pub updated_replicas: i32,
    /// Ready pods on the update revision.
    pub updated_ready_replicas: i32,
    /// Available pods on the update revision.
    pub updated_available_replicas: i32,
    /// `status.currentRevision` after the pass (the update revision once the rollout completed).
    pub current_revision: String,
}

/// Port of pkg/controller/statefulset/stateful_set_control.go::computeReplicaStatus and
/// stateful_set_utils.go::completeRollingUpdate (v1.8.4).
///
/// `pods` are the slot pods plus the condemned ones. Revisions compare exactly (no short-hash
/// tolerance). Unlike CloneSet, completion needs every replica ready.
pub fn compute_status(
    pods: &[AstsPod],
    min_ready_seconds: i32,
    strategy: UpdateStrategyType,
    current_revision: &str,
    update_revision: &str,
) -> AstsStatusCounts {
    let mut s = AstsStatusCounts {
        current_revision: current_revision.to_owned(),
        ..Default::default()
    };
    for pod in pods {
        let created = !pod.phase.is_empty();
        let on_update = pod.revision == update_revision;
        if created {
            s.replicas += 1;
        }
        if pod.phase == "Running" && pod.ready {
            s.ready_replicas += 1;
            let available = pod.is_running_and_available(min_ready_seconds);
            if on_update {
                s.updated_ready_replicas += 1;
                if available {
                    s.updated_available_replicas += 1;
                }
            }
            if available {
                s.available_replicas += 1;
            }
        }
        if created && !pod.terminating {
            if pod.revision == current_revision {
                s.current_replicas += 1;
            }
            if on_update {
                s.updated_replicas += 1;
            }
        }
    }
    if strategy == UpdateStrategyType::RollingUpdate
        && s.updated_replicas == s.replicas
        && s.ready_replicas == s.replicas
    {
        s.current_replicas = s.updated_replicas;
        s.current_revision = update_revision.to_owned();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(rev: &str, ready: bool) -> AstsPod {
        AstsPod {
            revision: rev.into(),
            phase: "Running".into(),
            ready,
            ..Default::default()
        }
    }

    #[test]
    fn completes_only_when_all_updated_and_ready() {
        let s = compute_status(
            &[pod("b", true), pod("b", false)],
            0,
            UpdateStrategyType::RollingUpdate,
            "a",
            "b",
        );
        assert_eq!(
            (s.replicas, s.ready_replicas, s.updated_replicas),
            (2, 1, 2)
        );
        assert_eq!(s.current_revision, "a");
        let s = compute_status(
            &[pod("b", true), pod("b", true)],
            0,
            UpdateStrategyType::RollingUpdate,
            "a",
            "b",
        );
        assert_eq!((s.current_revision.as_str(), s.current_replicas), ("b", 2));
        let s = compute_status(
            &[pod("a", true), pod("b", true)],
            0,
            UpdateStrategyType::OnDelete,
            "a",
            "b",
        );
        assert_eq!(
            (
                s.current_replicas,
                s.updated_replicas,
                s.updated_available_replicas
            ),
            (1, 1, 1)
        );
    }
}
