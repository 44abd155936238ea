//! Paged lists at one resourceVersion: every page of a list shows the objects as they were when
//! its first page was served, as a real API server answers a `continue` token (etcd reads at the
//! first page's revision). The state at that version is rebuilt from the event window: an
//! object changed since holds the `old` of its first later event (none if that event added it).
//!
//! Without this a delete between two pages was lost for good: the deleted object came in an
//! earlier page, the list ended at a later version, and a watch from there never replays the
//! delete (the stale-row bug of issue 11, item 8).

use std::{collections::HashMap, sync::Arc};

use super::{EventType, ListResult, Obj, Store};
use crate::server::{resources::ResourceInfo, status::ApiError};

/// What a real server says when a continue token's version left its history (410 Expired).
pub const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a \
    consistent list result. You can start a new list without the continue parameter.";

impl Store {
    /// The next page of a list served at resourceVersion `at`, after (namespace, name) `after`.
    /// 410 Expired when the event window no longer reaches back to `at`.
    pub fn list_at(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        filter: &dyn Fn(&Obj) -> bool,
        limit: Option<usize>,
        after: (String, String),
        at: u64,
    ) -> Result<ListResult, ApiError> {
        let g = self.lock();
        if at < g.compacted || at > g.rv {
            return Err(ApiError::gone(CONTINUE_EXPIRED));
        }
        let ns_key = ns.filter(|_| res.namespaced).map(str::to_string);
        // The state at `at` of every object of this resource changed after it.
        let mut then: HashMap<(String, String), Option<Arc<Obj>>> = HashMap::new();
        // The window is in resourceVersion order: skip what came before `at` at once.
        let later = g.window.partition_point(|e| e.rv <= at);
        for ev in g.window.range(later..).filter(|e| e.key == res.key) {
            let name = ev.obj.head["metadata"]["name"].as_str().unwrap_or("");
            let key = (ev.namespace.clone(), name.to_string());
            then.entry(key).or_insert_with(|| match ev.etype {
                EventType::Added => None,
                EventType::Modified | EventType::Deleted => ev.old.clone(),
            });
        }
        let current = g.tables.get(&res.key);
        let mut keys: Vec<&(String, String)> = current
            .into_iter()
            .flat_map(|t| {
                t.range((
                    std::ops::Bound::Excluded(after.clone()),
                    std::ops::Bound::Unbounded,
                ))
            })
            .map(|(k, _)| k)
            .chain(then.keys().filter(|k| **k > after))
            .filter(|(ons, _)| ns_key.as_ref().is_none_or(|n| n == ons))
            .collect();
        keys.sort();
        keys.dedup();
        let mut items = Vec::new();
        let mut continue_after = None;
        let mut remaining = 0;
        let state_of = |key: &(String, String)| match then.get(key) {
            Some(state) => state.clone(),
            None => current.and_then(|t| t.get(key)).cloned(),
        };
        for (i, key) in keys.iter().enumerate() {
            let Some(obj) = state_of(key).filter(|o| filter(o)) else {
                continue;
            };
            if limit.is_some_and(|l| items.len() >= l) {
                continue_after = items.last().map(|_: &Arc<Obj>| ());
                remaining = keys[i..].iter().filter(|k| state_of(k).is_some()).count();
                break;
            }
            items.push(obj);
        }
        let continue_after = continue_after.and_then(|()| {
            let last = items.last()?;
            let name = last.head["metadata"]["name"].as_str().unwrap_or("");
            let ns = last.head["metadata"]["namespace"].as_str().unwrap_or("");
            Some((Self::nskey(res, ns), name.to_string()))
        });
        Ok(ListResult {
            items,
            rv: at,
            continue_after,
            remaining,
        })
    }
}
