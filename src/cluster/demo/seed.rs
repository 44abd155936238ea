//! Writes a scenario into any API server through kube-rs: create each object (filling in the
//! UIDs it refers to), then write its status through the status subresource, as the
//! controllers and the kubelet would have. Independent objects go in parallel, in waves that
//! respect the references.

use std::collections::{HashMap, HashSet};

use anyhow::{Context as _, Result};
use futures::{StreamExt as _, TryStreamExt as _};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api, Client,
    api::{DynamicObject, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use super::scenario::{SeedObject, SeedStatus, seeded_pod_status};
use crate::{cluster::server::Store, kube::errors::Plain as _};

/// Requests in flight while seeding.
const PARALLEL: usize = 32;

type ObjectKey = (String, Option<String>, String);

fn key(kind: &str, ns: Option<&str>, name: &str) -> ObjectKey {
    (kind.to_owned(), ns.map(str::to_owned), name.to_owned())
}

/// Creates `objects` in order (objects that already exist are kept as they are) and writes
/// their statuses, pod statuses as of `now` (the instant the scenario was computed for, so
/// workload counts and pod readiness agree). Returns how many objects were created.
pub async fn apply(client: &Client, objects: Vec<SeedObject>, now: Timestamp) -> Result<usize> {
    let present: HashSet<ObjectKey> = objects
        .iter()
        .map(|o| key(&o.resource.kind, o.namespace(), o.name()))
        .collect();
    let mut uids: HashMap<ObjectKey, String> = HashMap::new();
    let mut created = 0;
    let mut wave: Vec<SeedObject> = Vec::new();
    let mut wave_keys: HashSet<ObjectKey> = HashSet::new();
    for object in objects {
        let mut needs: Vec<ObjectKey> = object
            .uid_refs
            .iter()
            .map(|r| key(&r.kind, r.namespace.as_deref(), &r.name))
            .collect();
        if let Some(ns) = object.namespace() {
            needs.push(key("Namespace", None, ns));
        }
        let blocked = needs
            .iter()
            .any(|k| wave_keys.contains(k) && present.contains(k));
        if blocked {
            created += run_wave(client, std::mem::take(&mut wave), &mut uids, now).await?;
            wave_keys.clear();
        }
        wave_keys.insert(key(
            &object.resource.kind,
            object.namespace(),
            object.name(),
        ));
        wave.push(object);
    }
    created += run_wave(client, wave, &mut uids, now).await?;
    Ok(created)
}

async fn run_wave(
    client: &Client,
    wave: Vec<SeedObject>,
    uids: &mut HashMap<ObjectKey, String>,
    now: Timestamp,
) -> Result<usize> {
    let known = &*uids;
    let results: Vec<(ObjectKey, String, bool)> = futures::stream::iter(wave)
        .map(|object| async move { apply_one(client, object, known, now).await })
        .buffer_unordered(PARALLEL)
        .try_collect()
        .await?;
    let mut created = 0;
    for (k, uid, was_created) in results {
        created += usize::from(was_created);
        uids.insert(k, uid);
    }
    Ok(created)
}

/// Creates one object and writes its status; returns its key, UID and whether it was new.
async fn apply_one(
    client: &Client,
    mut seed: SeedObject,
    uids: &HashMap<ObjectKey, String>,
    now: Timestamp,
) -> Result<(ObjectKey, String, bool)> {
    let kind = seed.resource.kind.clone();
    let name = seed.name().to_owned();
    let ns = seed.namespace().map(str::to_owned);
    fill_refs(&mut seed, uids)?;
    let api: Api<DynamicObject> = match &ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &seed.resource),
        None => Api::all_with(client.clone(), &seed.resource),
    };
    let object: DynamicObject = serde_json::from_value(seed.object.clone())
        .with_context(|| format!("the seeded {kind} {name} is not an object"))?;
    let (stored, was_created) = match api.create(&PostParams::default(), &object).await {
        Ok(stored) => (stored, true),
        Err(kube::Error::Api(status)) if status.code == 409 => (
            api.get(&name)
                .await
                .plain()
                .with_context(|| format!("cannot read the existing {kind} {name}"))?,
            false,
        ),
        Err(err) => {
            return Err(err)
                .plain()
                .with_context(|| format!("cannot create {kind} {name}"));
        }
    };
    let uid = stored.metadata.uid.clone().unwrap_or_default();
    if was_created {
        let status = status_value(&seed, &serde_json::to_value(&stored)?, now)?;
        if let Some(status) = status {
            api.patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&json!({ "status": status })),
            )
            .await
            .plain()
            .with_context(|| format!("cannot write the status of {kind} {name}"))?;
        }
    }
    Ok((key(&kind, ns.as_deref(), &name), uid, was_created))
}

/// Puts the UIDs an object refers to in place.
fn fill_refs(seed: &mut SeedObject, uids: &HashMap<ObjectKey, String>) -> Result<()> {
    for r in &seed.uid_refs {
        let uid = uids
            .get(&key(&r.kind, r.namespace.as_deref(), &r.name))
            .with_context(|| {
                format!(
                    "{} {} refers to {} {} which was not created",
                    seed.resource.kind,
                    seed.name(),
                    r.kind,
                    r.name
                )
            })?;
        if let Some(slot) = seed.object.pointer_mut(&r.pointer) {
            *slot = json!(r.value(uid));
        }
    }
    Ok(())
}

/// The status to write for `seed` once stored as `stored` (a pod's depends on its UID).
fn status_value(seed: &SeedObject, stored: &Value, now: Timestamp) -> Result<Option<Value>> {
    Ok(match &seed.status {
        SeedStatus::None => None,
        SeedStatus::Fixed(status) => Some(status.clone()),
        SeedStatus::Pod(pod_seed) => {
            let pod: Pod = serde_json::from_value(stored.clone()).with_context(|| {
                format!("the stored pod {} does not read as a Pod", seed.name())
            })?;
            let status = seeded_pod_status(&pod, pod_seed, now);
            Some(serde_json::to_value(status)?)
        }
    })
}

/// Writes `objects` straight into the embedded server's store: no HTTP, no admission, no
/// schema validation (the scenario is validated through the API in the tests), so 10,000 pods
/// take seconds. Objects that already exist are kept. Returns how many were created.
pub fn apply_to_store(store: &Store, objects: Vec<SeedObject>, now: Timestamp) -> Result<usize> {
    let mut uids: HashMap<ObjectKey, String> = HashMap::new();
    let mut created = 0;
    for mut seed in objects {
        fill_refs(&mut seed, &uids)?;
        let kind = seed.resource.kind.clone();
        let name = seed.name().to_owned();
        let ns = seed.namespace().map(str::to_owned);
        let object_key = key(&kind, ns.as_deref(), &name);
        let stored = match store.create(seed.object.clone()) {
            Ok(stored) => stored,
            Err(err) if err.code == 409 => {
                let existing = store
                    .get_value(
                        &seed.resource.api_version,
                        &kind,
                        ns.as_deref().unwrap_or(""),
                        &name,
                    )
                    .with_context(|| format!("{kind} {name} exists but cannot be read"))?;
                if let Some(uid) = existing["metadata"]["uid"].as_str() {
                    uids.insert(object_key, uid.to_owned());
                }
                continue;
            }
            Err(err) => {
                return Err(anyhow::anyhow!(
                    "cannot create {kind} {name}: {}",
                    err.message
                ));
            }
        };
        created += 1;
        if let Some(uid) = stored["metadata"]["uid"].as_str() {
            uids.insert(object_key, uid.to_owned());
        }
        if let Some(status) = status_value(&seed, &stored, now)? {
            let mut with_status = stored;
            with_status["status"] = status;
            store.update(with_status).map_err(|err| {
                anyhow::anyhow!("cannot write the status of {kind} {name}: {}", err.message)
            })?;
        }
    }
    Ok(created)
}
