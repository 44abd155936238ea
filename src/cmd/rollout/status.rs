//! `rollout status KIND/NAME [--watch] [--timeout D]`: the rollout's numbers, and with --watch
//! one line each time its progress changes until it completes (exit 0) or the timeout passes
//! (exit 1), as `kubectl rollout status` does. Unlike kubectl-kruise's status viewer, a percent
//! partition is resolved, the spec must have been observed, and "complete" needs the updated
//! pods ready, not just some pods.

use std::{fmt::Write as _, time::Duration};

use anyhow::{Result, bail};
use serde_json::Value;

use crate::{
    actions::Paths,
    cli::{KubeArgs, RolloutStatusArgs, args::WorkloadArg},
    cmd::{Session, workload_kind},
    kruise::{intstr::calculate_partition_replicas, plan::WorkloadKind},
    kube::workload,
};

/// A rollout's numbers, read from the workload as served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutStatus {
    pub kind: WorkloadKind,
    /// Pods wanted (`spec.replicas`; an Advanced DaemonSet: the nodes that should run it).
    pub desired: i32,
    /// Pods there are (`status.replicas`; ADS `currentNumberScheduled`).
    pub current: i32,
    pub updated: i32,
    /// Updated and ready (`None` where the kind does not report it: ADS).
    pub updated_ready: Option<i32>,
    pub ready: i32,
    pub available: i32,
    /// How many pods should be updated: desired minus what the partition holds back.
    pub expected: i32,
    /// The partition as written (`3`, `50%`), `None` when unset.
    pub partition: Option<String>,
    /// Pods the partition holds back.
    pub held: i32,
    pub paused: bool,
    pub current_revision: String,
    pub update_revision: String,
    /// Whether the controller has seen the current spec (`observedGeneration`).
    pub observed: bool,
}

fn int(object: &Value, pointer: &str) -> Option<i32> {
    object
        .pointer(pointer)
        .and_then(Value::as_i64)
        .and_then(|v| i32::try_from(v).ok())
}

fn text(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl RolloutStatus {
    /// Reads the workload (`kind` served at `version`, as JSON).
    pub fn read(kind: WorkloadKind, version: &str, object: &Value) -> RolloutStatus {
        let paths = Paths::of(kind.info(), version);
        let field = |pointer: Option<&str>| {
            pointer
                .and_then(|p| object.pointer(p))
                .filter(|v| !v.is_null())
        };
        let partition_value = field(paths.map(|p| p.partition));
        let partition = partition_value.map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let paused = field(paths.map(|p| p.paused))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let generation = object
            .pointer("/metadata/generation")
            .and_then(Value::as_i64);
        let observed_generation = object
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64);
        let observed = match (generation, observed_generation) {
            (_, None | Some(0)) => false,
            (Some(g), Some(o)) => o >= g,
            (None, Some(_)) => true,
        };
        let daemon = kind == WorkloadKind::AdvancedDaemonSet;
        let desired = if daemon {
            int(object, "/status/desiredNumberScheduled").unwrap_or(0)
        } else {
            int(object, "/spec/replicas").unwrap_or(1)
        };
        let held = {
            let parsed = partition_value.and_then(|v| serde_json::from_value(v.clone()).ok());
            // An Advanced DaemonSet's percent (Kruise v1.9.0) is floored over the desired nodes;
            // a CloneSet's rounds up over the replicas.
            match (&parsed, daemon) {
                (Some(p), true) => crate::kruise::daemonset::resolve_partition(
                    p,
                    desired,
                    crate::kruise::KruiseVersion::V1_9,
                ),
                _ => calculate_partition_replicas(parsed.as_ref(), Some(desired))
                    .map_err(|e| e.to_string()),
            }
            .unwrap_or(0)
            .clamp(0, desired.max(0))
        };
        let status = |key: &str| int(object, &format!("/status/{key}")).unwrap_or(0);
        let (current_revision, update_revision) = if daemon {
            // One hash: `daemonSetHash` at v1alpha1, `updateRevision` at v1beta1.
            let hash = paths
                .map(|p| text(object, p.update_revision))
                .unwrap_or_default();
            (hash.clone(), hash)
        } else {
            (
                text(object, "/status/currentRevision"),
                text(object, "/status/updateRevision"),
            )
        };
        RolloutStatus {
            kind,
            desired,
            current: status(if daemon {
                "currentNumberScheduled"
            } else {
                "replicas"
            }),
            updated: status(if daemon {
                "updatedNumberScheduled"
            } else {
                "updatedReplicas"
            }),
            updated_ready: (!daemon).then(|| status("updatedReadyReplicas")),
            ready: status(if daemon {
                "numberReady"
            } else {
                "readyReplicas"
            }),
            available: status(if daemon {
                "numberAvailable"
            } else {
                "availableReplicas"
            }),
            expected: (desired - held).max(0),
            partition,
            held,
            paused,
            current_revision,
            update_revision,
            observed,
        }
    }

    /// One line on where the rollout stands, and whether it is complete. `name` is how the
    /// workload is named (`cloneset.apps.kruise.io/web`).
    pub fn progress(&self, name: &str) -> (String, bool) {
        let paused = if self.paused { " (paused)" } else { "" };
        if !self.observed {
            return (
                format!("Waiting for {name} spec update to be observed..."),
                false,
            );
        }
        if self.updated < self.expected {
            let what = if self.held > 0 {
                "partitioned roll out".to_owned()
            } else {
                format!("{name} rollout")
            };
            return (
                format!(
                    "Waiting for {what} to finish: {} out of {} new pods have been updated{paused}...",
                    self.updated, self.expected
                ),
                false,
            );
        }
        if let Some(updated_ready) = self.updated_ready
            && updated_ready < self.expected
        {
            return (
                format!(
                    "Waiting for {name} rollout to finish: {updated_ready} of {} updated pods are ready{paused}...",
                    self.expected
                ),
                false,
            );
        }
        if self.current > self.desired {
            return (
                format!(
                    "Waiting for {name} rollout to finish: {} old pods are pending termination...",
                    self.current - self.desired
                ),
                false,
            );
        }
        if self.ready < self.desired || self.current < self.desired {
            return (
                format!(
                    "Waiting for {} pods to be ready...",
                    self.desired - self.ready.min(self.current)
                ),
                false,
            );
        }
        if self.held > 0 {
            return (
                format!(
                    "partitioned roll out complete: {} new pods have been updated ({} held back by partition {})",
                    self.updated,
                    self.held,
                    self.partition.as_deref().unwrap_or("0")
                ),
                true,
            );
        }
        (format!("{name} successfully rolled out"), true)
    }

    /// The numbers, a few lines.
    pub fn render(&self, name: &str, namespace: &str) -> String {
        let mut out = String::new();
        let unit = if self.kind == WorkloadKind::AdvancedDaemonSet {
            "nodes"
        } else {
            "pods"
        };
        let _ = writeln!(out, "{name} in {namespace}");
        let _ = writeln!(
            out,
            "  {unit:<10} {} desired  {} current  {} ready  {} available",
            self.desired, self.current, self.ready, self.available
        );
        let updated_ready = self
            .updated_ready
            .map(|r| format!("  ({r} ready)"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  updated    {} of {} expected{updated_ready}",
            self.updated, self.expected
        );
        let _ = writeln!(
            out,
            "  partition  {} ({} held on older revisions)  paused {}",
            self.partition.as_deref().unwrap_or("unset"),
            self.held,
            if self.paused { "yes" } else { "no" }
        );
        let revision = |r: &str| {
            if r.is_empty() {
                "-".to_owned()
            } else {
                r.to_owned()
            }
        };
        if self.current_revision == self.update_revision {
            let _ = writeln!(out, "  revision   {}", revision(&self.update_revision));
        } else {
            let _ = writeln!(
                out,
                "  revision   current {}  update {}",
                revision(&self.current_revision),
                revision(&self.update_revision)
            );
        }
        out
    }
}

pub(super) async fn run(kube: &KubeArgs, args: RolloutStatusArgs) -> Result<()> {
    let session = Session::open(kube).await?;
    let kind = workload_kind(&args.target);
    let WorkloadArg { name, .. } = &args.target;
    let shown = args.target.resource_name();
    let client = session.client();
    let resource = workload::resource_for(client, kind).await?;
    let object = workload::get(client, &resource, &session.namespace, name, kind.display()).await?;
    let status = RolloutStatus::read(kind, &resource.version, &object);
    print!("{}", status.render(&shown, &session.namespace));
    // A Kruise Rollout that releases the workload decides its partition: point at it.
    let rollouts = crate::kube::guard::rollouts(client, &session.namespace).await;
    let target = session.target(&args.target);
    if let Some(rollout) = crate::actions::guard::controlling_rollout(&target, &rollouts) {
        println!("{}", super::kruise_status::released_by(rollout));
    }
    let (mut line, done) = status.progress(&shown);
    println!("{line}");
    if done || !(args.watch || args.timeout.is_some()) {
        return Ok(());
    }
    let limit = args.timeout.filter(|t| !t.is_zero());
    let updates = workload::watch(client, &resource, &session.namespace, name);
    let follow = super::follow(updates, &shown, |object| {
        let (now, complete) =
            RolloutStatus::read(kind, &resource.version, &object).progress(&shown);
        if now != line {
            println!("{now}");
            line = now;
        }
        std::future::ready(Ok(complete))
    });
    match limit {
        None => follow.await,
        Some(limit) => match tokio::time::timeout(limit, follow).await {
            Ok(result) => result,
            Err(_) => bail!(
                "timed out after {} waiting for {shown} to roll out",
                shown_duration(limit)
            ),
        },
    }
}

fn shown_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match (secs / 3600, secs % 3600 / 60, secs % 60) {
        (0, 0, 0) => format!("{}ms", d.as_millis()),
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, m, s) => format!("{h}h{m}m{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NAME: &str = "cloneset.apps.kruise.io/web";

    fn cloneset(partition: Value, status: Value) -> Value {
        json!({
            "metadata": {"name": "web", "generation": 3},
            "spec": {"replicas": 6, "updateStrategy": {"partition": partition, "paused": false}},
            "status": status,
        })
    }

    #[test]
    fn a_percent_partition_is_resolved_and_complete_needs_the_updated_pods_ready() {
        let mid = cloneset(
            json!("50%"),
            json!({"observedGeneration": 3, "replicas": 6, "readyReplicas": 5,
                   "availableReplicas": 5, "updatedReplicas": 3, "updatedReadyReplicas": 2,
                   "currentRevision": "web-a", "updateRevision": "web-b"}),
        );
        let s = RolloutStatus::read(WorkloadKind::CloneSet, "v1alpha1", &mid);
        assert_eq!((s.expected, s.held), (3, 3));
        assert_eq!(
            s.progress(NAME),
            (
                format!("Waiting for {NAME} rollout to finish: 2 of 3 updated pods are ready..."),
                false
            )
        );
        let text = s.render(NAME, "demo");
        assert!(
            text.contains("updated    3 of 3 expected  (2 ready)"),
            "{text}"
        );
        assert!(
            text.contains("partition  50% (3 held on older revisions)  paused no"),
            "{text}"
        );
        assert!(
            text.contains("revision   current web-a  update web-b"),
            "{text}"
        );

        let done = cloneset(
            json!("50%"),
            json!({"observedGeneration": 3, "replicas": 6, "readyReplicas": 6,
                   "availableReplicas": 6, "updatedReplicas": 3, "updatedReadyReplicas": 3,
                   "currentRevision": "web-a", "updateRevision": "web-b"}),
        );
        let s = RolloutStatus::read(WorkloadKind::CloneSet, "v1alpha1", &done);
        assert_eq!(
            s.progress(NAME),
            (
                "partitioned roll out complete: 3 new pods have been updated (3 held back by partition 50%)".to_owned(),
                true
            )
        );
    }

    #[test]
    fn unobserved_specs_missing_updates_and_crashing_pods_are_not_complete() {
        let stale = cloneset(
            json!(0),
            json!({"observedGeneration": 2, "replicas": 6, "readyReplicas": 6,
                   "updatedReplicas": 6, "updatedReadyReplicas": 6}),
        );
        let s = RolloutStatus::read(WorkloadKind::CloneSet, "v1alpha1", &stale);
        assert_eq!(
            s.progress(NAME).0,
            format!("Waiting for {NAME} spec update to be observed...")
        );
        let moving = cloneset(
            json!(2),
            json!({"observedGeneration": 3, "replicas": 6, "readyReplicas": 6,
                   "updatedReplicas": 1, "updatedReadyReplicas": 1}),
        );
        let s = RolloutStatus::read(WorkloadKind::CloneSet, "v1alpha1", &moving);
        assert_eq!(
            s.progress(NAME).0,
            "Waiting for partitioned roll out to finish: 1 out of 4 new pods have been updated..."
        );
        let crashing = cloneset(
            json!(0),
            json!({"observedGeneration": 3, "replicas": 6, "readyReplicas": 4,
                   "updatedReplicas": 6, "updatedReadyReplicas": 6}),
        );
        let s = RolloutStatus::read(WorkloadKind::CloneSet, "v1alpha1", &crashing);
        assert_eq!(
            s.progress(NAME),
            ("Waiting for 2 pods to be ready...".to_owned(), false)
        );
        let all = cloneset(
            Value::Null,
            json!({"observedGeneration": 3, "replicas": 6, "readyReplicas": 6,
                   "availableReplicas": 6, "updatedReplicas": 6, "updatedReadyReplicas": 6,
                   "currentRevision": "web-b", "updateRevision": "web-b"}),
        );
        let s = RolloutStatus::read(WorkloadKind::CloneSet, "v1alpha1", &all);
        assert_eq!(
            s.progress(NAME),
            (format!("{NAME} successfully rolled out"), true)
        );
        assert!(s.render(NAME, "demo").contains("revision   web-b\n"));
    }

    #[test]
    fn advanced_statefulsets_and_daemonsets_read_their_own_fields() {
        let asts = json!({
            "metadata": {"generation": 1},
            "spec": {"replicas": 3, "updateStrategy": {"rollingUpdate": {"partition": 1, "paused": true}}},
            "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3,
                       "updatedReplicas": 1, "updatedReadyReplicas": 1,
                       "currentRevision": "db-a", "updateRevision": "db-b"},
        });
        let s = RolloutStatus::read(WorkloadKind::AdvancedStatefulSet, "v1beta1", &asts);
        assert_eq!((s.expected, s.held, s.paused), (2, 1, true));
        assert_eq!(
            s.progress("statefulset.apps.kruise.io/db").0,
            "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated (paused)..."
        );
        let ads = json!({
            "metadata": {"generation": 2},
            "spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}},
            "status": {"observedGeneration": 2, "desiredNumberScheduled": 3,
                       "currentNumberScheduled": 3, "numberReady": 3, "numberAvailable": 3,
                       "updatedNumberScheduled": 3, "daemonSetHash": "5f7d"},
        });
        let s = RolloutStatus::read(WorkloadKind::AdvancedDaemonSet, "v1alpha1", &ads);
        assert_eq!((s.desired, s.updated_ready), (3, None));
        assert!(s.progress("daemonset.apps.kruise.io/agent").1);
        assert!(
            s.render("daemonset.apps.kruise.io/agent", "demo")
                .contains("  nodes      3 desired")
        );
        // A percent (v1.9.0) holds back its floor of the desired nodes: 67% of 3 is 2, and 34%
        // of 3 is 1 where a CloneSet's 34% of 3 rounds up to 2.
        let mut pct = ads.clone();
        pct["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!("67%");
        let s = RolloutStatus::read(WorkloadKind::AdvancedDaemonSet, "v1alpha1", &pct);
        assert_eq!((s.held, s.expected), (2, 1));
        pct["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!("34%");
        let s = RolloutStatus::read(WorkloadKind::AdvancedDaemonSet, "v1alpha1", &pct);
        assert_eq!((s.held, s.expected), (1, 2));
    }

    #[test]
    fn durations_read_as_typed() {
        assert_eq!(shown_duration(Duration::from_secs(30)), "30s");
        assert_eq!(shown_duration(Duration::from_secs(120)), "2m");
        assert_eq!(shown_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(shown_duration(Duration::from_millis(500)), "500ms");
    }
}
