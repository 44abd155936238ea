//! `demo-server --churn <PER_SECOND>`: a steady stream of pod status changes, for measuring
//! what a watcher pays per change (issue 22's "200 pod changes a second").
//!
//! Each change is a status-only write of one pod: the `kruise-tui.io/heartbeat` condition's
//! `lastProbeTime` and a beat counter in its message. It goes through the store as a status
//! update does (a new resourceVersion, a MODIFIED event to every watcher); the spec, readiness
//! and restart counts stay as they were. The pods are taken round-robin in key order, so the
//! changes spread evenly over them; a 10 ms tick writes the share of the rate that is due.

use std::{
    ops::Bound,
    sync::Arc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::server::{Store, meta, resources::ResourceInfo};

/// The condition type the churn writes (no kubelet or controller owns it).
pub const HEARTBEAT_CONDITION: &str = "kruise-tui.io/heartbeat";

/// How often the churn wakes up.
const TICK: Duration = Duration::from_millis(10);

/// Which pods a churn touches and how fast.
#[derive(Debug, Clone)]
pub struct ChurnOptions {
    /// Pod status changes a second.
    pub per_second: u32,
    /// The pods of namespaces whose name starts with this (`""`: every pod).
    pub namespace_prefix: String,
}

/// Starts the churn on `store` until `shutdown` is cancelled.
pub fn spawn(store: Arc<Store>, opts: ChurnOptions, shutdown: CancellationToken) -> JoinHandle<()> {
    tokio::spawn(async move {
        let Some(pods) = store.registry().lookup("", "v1", "pods") else {
            return;
        };
        let mut churn = Churn {
            store,
            pods,
            prefix: opts.namespace_prefix,
            cursor: None,
            beat: 0,
        };
        let rate = f64::from(opts.per_second);
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last = Instant::now();
        let mut due = 0.0_f64;
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let now = Instant::now();
            // What fell due since the last tick; a stall is not made up for more than a second.
            due = (due + rate * now.duration_since(last).as_secs_f64()).min(rate.max(1.0));
            last = now;
            let n = due.floor() as usize;
            if n > 0 {
                due -= n as f64;
                churn.beat_next(n);
            }
        }
    })
}

struct Churn {
    store: Arc<Store>,
    pods: Arc<ResourceInfo>,
    prefix: String,
    /// The last pod touched, (namespace, name).
    cursor: Option<(String, String)>,
    beat: u64,
}

impl Churn {
    /// Changes the next `n` pods after the cursor (wrapping around once).
    fn beat_next(&mut self, n: usize) {
        let keys = self.next_keys(n);
        for (ns, name) in keys {
            self.beat += 1;
            self.beat_one(&ns, &name);
        }
    }

    fn next_keys(&mut self, n: usize) -> Vec<(String, String)> {
        let start = || (self.prefix.clone(), String::new());
        let mut out = self.store.pod_keys_after(
            &self.pods,
            &self.prefix,
            self.cursor
                .clone()
                .map_or(Bound::Included(start()), Bound::Excluded),
            n,
        );
        if out.len() < n && self.cursor.is_some() {
            // The end: on from the first pod again.
            let more = self.store.pod_keys_after(
                &self.pods,
                &self.prefix,
                Bound::Included(start()),
                n - out.len(),
            );
            out.extend(more);
        }
        self.cursor = out.last().cloned();
        out
    }

    /// One status-only change of `ns/name`: the heartbeat condition's probe time and beat.
    /// A pod that changed meanwhile (a conflict) or went away is skipped.
    fn beat_one(&self, ns: &str, name: &str) {
        let Ok(obj) = self.store.get(&self.pods, ns, name) else {
            return;
        };
        let mut pod = obj.value();
        pod["metadata"]["resourceVersion"] = json!(obj.rv.to_string());
        if !beat(&mut pod, self.beat, &meta::now()) {
            return;
        }
        if let Err(err) = self.store.replace(&self.pods, ns, name, pod) {
            tracing::debug!("churn: pod {ns}/{name} not changed: {}", err.message);
        }
    }
}

/// Sets the heartbeat condition of `pod` (status only); false when the pod has no status to
/// change (a pod being deleted is left alone).
pub fn beat(pod: &mut Value, beat: u64, now: &str) -> bool {
    if pod["metadata"]["deletionTimestamp"].is_string() {
        return false;
    }
    let Some(status) = pod.get_mut("status").and_then(Value::as_object_mut) else {
        return false;
    };
    let conditions = status
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(conditions) = conditions.as_array_mut() else {
        return false;
    };
    let heartbeat = json!({
        "type": HEARTBEAT_CONDITION,
        "status": "True",
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "reason": "Churn",
        "message": format!("beat {beat}"),
    });
    match conditions
        .iter_mut()
        .find(|c| c["type"].as_str() == Some(HEARTBEAT_CONDITION))
    {
        Some(c) => {
            c["lastProbeTime"] = json!(now);
            c["message"] = json!(format!("beat {beat}"));
        }
        None => conditions.push(heartbeat),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_beat_changes_only_the_heartbeat_condition() {
        let mut pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True", "lastProbeTime": null}
            ], "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0}]},
        });
        let before = pod.clone();
        assert!(beat(&mut pod, 1, "2026-01-01T00:00:00Z"));
        assert_eq!(pod["spec"], before["spec"]);
        assert_eq!(
            pod["status"]["containerStatuses"],
            before["status"]["containerStatuses"]
        );
        assert_eq!(
            pod["status"]["conditions"][0],
            before["status"]["conditions"][0]
        );
        assert_eq!(pod["status"]["conditions"][1]["type"], HEARTBEAT_CONDITION);
        let first = pod.clone();
        assert!(beat(&mut pod, 2, "2026-01-01T00:00:00Z"));
        assert_ne!(pod, first, "each beat is a change, even within one second");
        assert_eq!(
            pod["status"]["conditions"].as_array().map(Vec::len),
            Some(2)
        );
        let mut deleting = json!({"metadata": {"deletionTimestamp": "x"}, "status": {}});
        assert!(!beat(&mut deleting, 3, "t"));
    }
}
