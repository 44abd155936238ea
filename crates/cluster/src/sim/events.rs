//! The Events the simulated kubelet and scheduler report, pure: which transitions between two
//! pod statuses deserve one (as kubectl describe would show them), and the Event objects.

use jiff::Timestamp;
use k8s_openapi::{
    api::core::v1::{ContainerStatus, Event, EventSource, ObjectReference, Pod, PodStatus},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};

use super::ids;

/// One event to report about a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodEvent {
    /// `Normal` or `Warning`.
    pub type_: &'static str,
    pub reason: &'static str,
    pub message: String,
    /// `kubelet` or `default-scheduler`.
    pub component: &'static str,
}

fn waiting_reason(c: &ContainerStatus) -> Option<&str> {
    c.state.as_ref()?.waiting.as_ref()?.reason.as_deref()
}

fn terminated(c: &ContainerStatus) -> bool {
    c.state.as_ref().is_some_and(|s| s.terminated.is_some())
}

/// The kubelet events for a status change of `pod` from `old` to `new`.
pub fn kubelet_events(pod: &Pod, old: &PodStatus, new: &PodStatus) -> Vec<PodEvent> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let before: &[ContainerStatus] = old.container_statuses.as_deref().unwrap_or_default();
    let mut events = Vec::new();
    for c in new.container_statuses.iter().flatten() {
        let prev = before.iter().find(|p| p.name == c.name);
        let event = |type_, reason, message: String| PodEvent {
            type_,
            reason,
            message,
            component: "kubelet",
        };
        if waiting_reason(c) == Some("CrashLoopBackOff")
            && prev.and_then(waiting_reason) != Some("CrashLoopBackOff")
        {
            events.push(event(
                "Warning",
                "BackOff",
                format!(
                    "Back-off restarting failed container {} in pod {name}",
                    c.name
                ),
            ));
        }
        if let Some(p) = prev.filter(|p| p.image != c.image && !p.image.is_empty()) {
            events.push(event(
                "Normal",
                "Killing",
                format!("Container {} definition changed, will be restarted", c.name),
            ));
            events.push(event(
                "Normal",
                "Pulled",
                format!(
                    "Container image \"{}\" already present on machine (was \"{}\")",
                    c.image, p.image
                ),
            ));
        }
        if terminated(c)
            && prev.is_some_and(|p| !terminated(p))
            && pod.metadata.deletion_timestamp.is_some()
        {
            events.push(event(
                "Normal",
                "Killing",
                format!("Stopping container {}", c.name),
            ));
        }
    }
    events
}

/// The scheduler's event for a successful bind.
pub fn scheduled(pod: &Pod, node: &str) -> PodEvent {
    PodEvent {
        type_: "Normal",
        reason: "Scheduled",
        message: format!(
            "Successfully assigned {}/{} to {node}",
            pod.metadata.namespace.as_deref().unwrap_or("default"),
            pod.metadata.name.as_deref().unwrap_or_default()
        ),
        component: "default-scheduler",
    }
}

/// The scheduler's event for a pod no node fits.
pub fn failed_scheduling(message: &str) -> PodEvent {
    PodEvent {
        type_: "Warning",
        reason: "FailedScheduling",
        message: message.to_owned(),
        component: "default-scheduler",
    }
}

/// The core/v1 Event object for `event` about `pod`, at `now`.
pub fn event_object(pod: &Pod, event: &PodEvent, host: Option<&str>, now: Timestamp) -> Event {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let at = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    let suffix = &ids::digest_hex(&[&name, event.reason, &event.message, &now.to_string()])[..16];
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{name}.{suffix}")),
            namespace: pod.metadata.namespace.clone(),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            name: Some(name),
            namespace: pod.metadata.namespace.clone(),
            uid: pod.metadata.uid.clone(),
            resource_version: pod.metadata.resource_version.clone(),
            ..Default::default()
        },
        reason: Some(event.reason.to_owned()),
        message: Some(event.message.clone()),
        type_: Some(event.type_.to_owned()),
        count: Some(1),
        first_timestamp: Some(at.clone()),
        last_timestamp: Some(at),
        source: Some(EventSource {
            component: Some(event.component.to_owned()),
            host: host.map(str::to_owned),
        }),
        reporting_component: Some(event.component.to_owned()),
        reporting_instance: Some(host.unwrap_or(event.component).to_owned()),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kubelet::{PodAction, Timing, decide};
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    fn pod(image: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("p".into()),
                namespace: Some("ns".into()),
                uid: Some("u".into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: Some("n".into()),
                containers: vec![Container {
                    name: "c".into(),
                    image: Some(image.into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: None,
        }
    }

    /// Runs the kubelet from `from` to `until`, collecting the events of each write.
    fn run(p: &mut Pod, from: i64, until: i64) -> Vec<PodEvent> {
        let mut events = Vec::new();
        for s in from..=until {
            if let PodAction::WriteStatus(next) =
                decide(p, "10.0.0.1", t(s), &Timing::default()).action
            {
                events.extend(kubelet_events(
                    p,
                    &p.status.clone().unwrap_or_default(),
                    &next,
                ));
                p.status = Some(*next);
            }
        }
        events
    }

    #[test]
    fn a_crash_loop_reports_back_off_each_time_it_enters_it() {
        let mut p = pod("x/crash:1");
        let events = run(&mut p, 0, 60);
        let backoffs = events.iter().filter(|e| e.reason == "BackOff").count();
        assert!(backoffs >= 2, "{events:?}");
        assert!(events.iter().all(|e| e.type_ == "Warning"));
    }

    #[test]
    fn an_image_change_reports_the_restart_and_a_healthy_start_reports_nothing() {
        let mut p = pod("nginx:1");
        assert!(run(&mut p, 0, 5).is_empty());
        p.spec.as_mut().unwrap().containers[0].image = Some("nginx:2".into());
        let reasons: Vec<&str> = run(&mut p, 6, 8).iter().map(|e| e.reason).collect();
        assert_eq!(reasons, ["Killing", "Pulled"]);
    }

    #[test]
    fn events_are_core_v1_events_about_the_pod() {
        let p = pod("nginx");
        let e = event_object(&p, &scheduled(&p, "sim-node-1"), None, t(0));
        assert_eq!(e.involved_object.kind.as_deref(), Some("Pod"));
        assert_eq!(
            e.message.as_deref(),
            Some("Successfully assigned ns/p to sim-node-1")
        );
        assert_eq!(e.metadata.namespace.as_deref(), Some("ns"));
        assert!(e.metadata.name.unwrap().starts_with("p."));
    }
}
