//! Graceful deletion of pods, as the real API server does it for a pod bound to a node: the
//! delete only sets `deletionTimestamp` (now + grace) and `deletionGracePeriodSeconds` (a watch
//! sees MODIFIED); the kubelet deletes it again with grace 0 when the grace period ends. A
//! second delete with a shorter grace brings the deadline forward.

use std::sync::Arc;

use serde_json::json;

use super::{EventType, Obj, Store, StoreEvent};
use crate::cluster::server::{meta, resources::ResourceInfo, status::ApiError};

impl Store {
    /// Mark `name` as terminating with `grace` seconds (> 0). Returns the object as stored; an
    /// existing deadline is kept unless the new grace period is shorter.
    pub fn delete_gracefully(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        precondition_uid: Option<&str>,
        precondition_rv: Option<&str>,
        grace: i64,
    ) -> Result<Arc<Obj>, ApiError> {
        let nsk = Self::nskey(res, ns);
        let mut g = self.lock();
        let old = g
            .tables
            .get(&res.key)
            .and_then(|t| t.get(&(nsk.clone(), name.to_string())))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&res.plural, &res.group, name))?;
        if precondition_uid.is_some_and(|u| Some(u) != old.head["metadata"]["uid"].as_str()) {
            return Err(ApiError::conflict(&res.plural, &res.group, name));
        }
        if precondition_rv.is_some_and(|r| r != old.rv.to_string()) {
            return Err(ApiError::conflict(&res.plural, &res.group, name));
        }
        let now = jiff::Timestamp::now().as_second();
        let deadline = now.saturating_add(grace);
        let current = old.head["metadata"]["deletionTimestamp"]
            .as_str()
            .and_then(|s| s.parse::<jiff::Timestamp>().ok())
            .map(|t| t.as_second());
        if current.is_some_and(|c| c <= deadline) {
            return Ok(old);
        }
        let stamp = jiff::Timestamp::from_second(deadline)
            .map(|t| t.to_string())
            .unwrap_or_else(|_| meta::now());
        let mut v = old.value();
        if let Some(m) = meta::meta_mut(&mut v) {
            m.insert("deletionTimestamp".into(), json!(stamp));
            m.insert("deletionGracePeriodSeconds".into(), json!(grace));
        }
        g.rv += 1;
        let rv = g.rv;
        meta::set_path(&mut v, ".metadata.resourceVersion", json!(rv.to_string()));
        let obj = Obj::new(v, rv);
        g.tables
            .entry(res.key.clone())
            .or_default()
            .insert((nsk.clone(), name.to_string()), obj.clone());
        Self::index(
            &mut g,
            &res.key,
            &nsk,
            name,
            Some(&old.head),
            Some(&obj.head),
        );
        Self::publish(
            &mut g,
            StoreEvent {
                rv,
                etype: EventType::Modified,
                key: res.key.clone(),
                namespace: nsk,
                obj: obj.clone(),
                old: Some(old),
            },
        );
        Ok(obj)
    }
}
