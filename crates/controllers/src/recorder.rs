//! Kubernetes Events, as upstream's controllers record them (client-go's EventRecorder): one
//! core/v1 Event per new (object, type, reason, message), and a repeat bumps its `count` and
//! `lastTimestamp` instead of writing another. Before that, client-go's correlator
//! ([`correlate`]) aggregates similar events and drops those beyond a per-object burst.
//! Recording never blocks a reconcile: events go through a channel to one writer task.

pub mod correlate;

use std::collections::HashMap;

use jiff::Timestamp;
use k8s_openapi::{
    api::core::v1::{Event, EventSource, ObjectReference},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use kube::{
    Api, Client, Resource, ResourceExt as _,
    api::{Patch, PatchParams, PostParams},
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use crate::kruise::events::{EventRecord, EventType};

struct Job {
    component: &'static str,
    object: ObjectReference,
    record: EventRecord,
}

/// Records events for the controllers (cheap to clone).
#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::UnboundedSender<Job>,
    component: &'static str,
}

impl Recorder {
    /// Starts the writer task; it stops with `shutdown`.
    pub fn start(client: Client, shutdown: CancellationToken) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(client, rx, shutdown));
        Self {
            tx,
            component: "kruise-manager",
        }
    }

    /// The same recorder, reporting as `component` (upstream: `cloneset-controller`, ...).
    pub fn for_component(&self, component: &'static str) -> Self {
        Self {
            tx: self.tx.clone(),
            component,
        }
    }

    /// Records `record` about `obj`.
    pub fn record<K: Resource<DynamicType = ()>>(&self, obj: &K, record: EventRecord) {
        let object = reference(obj);
        let _ = self.tx.send(Job {
            component: self.component,
            object,
            record,
        });
    }

    /// Records each of `records` about `obj`.
    pub fn record_all<K: Resource<DynamicType = ()>>(
        &self,
        obj: &K,
        records: impl IntoIterator<Item = EventRecord>,
    ) {
        for record in records {
            self.record(obj, record);
        }
    }
}

/// The ObjectReference an event points at.
pub fn reference<K: Resource<DynamicType = ()>>(obj: &K) -> ObjectReference {
    let meta = obj.meta();
    ObjectReference {
        api_version: Some(K::api_version(&()).into_owned()),
        kind: Some(K::kind(&()).into_owned()),
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        ..ObjectReference::default()
    }
}

type SeenKey = (String, EventType, String, String);

async fn write_loop(
    client: Client,
    mut rx: mpsc::UnboundedReceiver<Job>,
    shutdown: CancellationToken,
) {
    // (object uid, type, reason, message) -> (event namespace, event name, count)
    let mut seen: HashMap<SeenKey, (String, String, i32)> = HashMap::new();
    let mut correlator = correlate::Correlator::default();
    loop {
        let job = tokio::select! {
            () = shutdown.cancelled() => break,
            job = rx.recv() => match job {
                Some(job) => job,
                None => break,
            },
        };
        if seen.len() > 4096 {
            seen.clear();
        }
        let mut job = job;
        let o = &job.object;
        let object = [&o.kind, &o.namespace, &o.name, &o.uid, &o.api_version]
            .map(|p| p.as_deref().unwrap_or_default())
            .join("\u{0}");
        let decision = correlator.decide(
            job.component,
            &object,
            job.record.type_.as_str(),
            &job.record.reason,
            &job.record.message,
            Timestamp::now(),
        );
        match decision {
            correlate::Decision::Skip => continue,
            correlate::Decision::Write {
                message,
                aggregated,
            } => {
                job.record.message = message;
                write_one(&client, &mut seen, job, aggregated).await;
            }
        }
    }
}

/// Writes one event: a new one, or a repeat (the same message, or an aggregated event of the
/// same reason) as a count bump.
async fn write_one(
    client: &Client,
    seen: &mut HashMap<SeenKey, (String, String, i32)>,
    job: Job,
    aggregated: bool,
) {
    let ns = job
        .object
        .namespace
        .clone()
        .unwrap_or_else(|| "default".to_owned());
    let api: Api<Event> = Api::namespaced(client.clone(), &ns);
    let now = Timestamp::now();
    let key = (
        job.object.uid.clone().unwrap_or_default(),
        job.record.type_,
        job.record.reason.clone(),
        // Aggregated events of one reason are one event (client-go keys them by the aggregate
        // key), its message the latest.
        if aggregated {
            correlate::combined("")
        } else {
            job.record.message.clone()
        },
    );
    if let Some((ev_ns, ev_name, count)) = seen.get(&key).cloned() {
        let patch = serde_json::json!({
            "count": count + 1,
            "lastTimestamp": Time(now),
            "message": job.record.message,
        });
        let api: Api<Event> = Api::namespaced(client.clone(), &ev_ns);
        if api
            .patch(&ev_name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .is_ok()
        {
            seen.insert(key, (ev_ns, ev_name, count + 1));
            return;
        }
    }
    let name = format!(
        "{}.{:x}",
        job.object.name.as_deref().unwrap_or("object"),
        now.as_nanosecond()
    );
    let event = Event {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(ns.clone()),
            ..ObjectMeta::default()
        },
        involved_object: job.object,
        reason: Some(job.record.reason),
        message: Some(job.record.message),
        type_: Some(job.record.type_.as_str().to_owned()),
        source: Some(EventSource {
            component: Some(job.component.to_owned()),
            host: None,
        }),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        count: Some(1),
        reporting_component: Some(job.component.to_owned()),
        reporting_instance: Some(job.component.to_owned()),
        ..Event::default()
    };
    match api.create(&PostParams::default(), &event).await {
        Ok(created) => {
            seen.insert(key, (ns, created.name_any(), 1));
        }
        Err(err) => tracing::debug!("controllers: cannot record an event: {err}"),
    }
}
