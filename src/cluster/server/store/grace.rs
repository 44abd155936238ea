//! Graceful deletion of pods, as the real API server does it for a pod bound to a node: the
//! delete only sets `deletionTimestamp` (now + grace) and `deletionGracePeriodSeconds` (a watch
//! sees MODIFIED); the kubelet deletes it again with grace 0 when the grace period ends. A
//! second delete with a shorter grace brings the deadline forward.

use std::sync::Arc;

use serde_json::json;

use super::{Obj, Store};
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
        let old = Self::existing(&g, res, &nsk, name, precondition_uid, precondition_rv)?;
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
        // A pod's key is never the CRD key, so the registry rebuild in `commit` is a no-op here.
        Ok(self.commit(&mut g, res, nsk, name, Some(old), v))
    }
}
