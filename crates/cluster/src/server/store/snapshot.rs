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
        let in_ns = |k: &(String, String)| ns_key.as_ref().is_none_or(|n| *n == k.0);
        // The state at `at` of every object of this resource changed after it.
        let mut then: HashMap<(String, String), Option<Arc<Obj>>> = HashMap::new();
        // The window is in resourceVersion order: skip what came before `at` at once.
        let later = g.window.partition_point(|e| e.rv <= at);
        for ev in g.window.range(later..).filter(|e| e.key == res.key) {
            let name = ev.obj.head["metadata"]["name"].as_str().unwrap_or("");
            let key = (ev.namespace.clone(), name.to_string());
            if key <= after || !in_ns(&key) {
                continue;
            }
            then.entry(key).or_insert_with(|| match ev.etype {
                EventType::Added => None,
                EventType::Modified | EventType::Deleted => ev.old.clone(),
            });
        }
        // The changed keys in order, merged with the current table's range after `after`: a
        // page costs its own length (and the count of what is left), not a sort of the rest.
        let mut changed: Vec<&(String, String)> = then.keys().collect();
        changed.sort_unstable();
        let current = g.tables.get(&res.key);
        // One namespace's keys sort together: start at the later of `after` and its first key.
        let start = match &ns_key {
            Some(n) if after < (n.clone(), String::new()) => {
                std::ops::Bound::Included((n.clone(), String::new()))
            }
            _ => std::ops::Bound::Excluded(after.clone()),
        };
        let mut range = current
            .map(|t| t.range((start, std::ops::Bound::Unbounded)))
            .into_iter()
            .flatten()
            .take_while(|(k, _)| in_ns(k))
            .peekable();
        let mut changed_iter = changed.iter().copied().peekable();
        let mut items: Vec<Arc<Obj>> = Vec::new();
        let mut last: Option<(String, String)> = None;
        let mut full = false;
        loop {
            // The next key in order, from the table or the changed ones (or both).
            let from_table = match (range.peek(), changed_iter.peek()) {
                (None, None) => break,
                (Some((k, _)), Some(c)) => *k < *c,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            let (key, state) = if from_table {
                let Some((k, o)) = range.next() else { break };
                (k, Some(o.clone()))
            } else {
                let Some(c) = changed_iter.next() else { break };
                // A changed key still in the table: its state at `at` replaces the table's.
                if range.peek().is_some_and(|(k, _)| *k == c) {
                    range.next();
                }
                (c, then.get(c).cloned().flatten())
            };
            let Some(obj) = state.filter(|o| filter(o)) else {
                continue;
            };
            if limit.is_some_and(|l| items.len() >= l) {
                full = true;
                break;
            }
            last = Some(key.clone());
            items.push(obj);
        }
        let continue_after = if full { last } else { None };
        // What etcd counts after this page: the objects (matching or not) that existed at `at`
        // after the last one returned — the table now, corrected by what changed since.
        let remaining = match &continue_after {
            None => 0,
            Some(l) => {
                let now = current.map_or(0, |t| {
                    t.range((
                        std::ops::Bound::Excluded(l.clone()),
                        std::ops::Bound::Unbounded,
                    ))
                    .take_while(|(k, _)| in_ns(k))
                    .count()
                });
                let (mut gone, mut back) = (0usize, 0usize);
                for (k, state) in &then {
                    if k <= l {
                        continue;
                    }
                    let exists_now = current.is_some_and(|t| t.contains_key(k));
                    match (exists_now, state.is_some()) {
                        (true, false) => gone += 1,
                        (false, true) => back += 1,
                        _ => {}
                    }
                }
                (now + back).saturating_sub(gone)
            }
        };
        Ok(ListResult {
            items,
            rv: at,
            continue_after,
            remaining,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{kruise::KruiseVersion, server::store::Propagation};

    fn cm(ns: &str, name: &str, v: u32) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": ns}, "data": {"v": v.to_string()}})
    }

    fn names(items: &[Arc<Obj>]) -> Vec<String> {
        items
            .iter()
            .map(|o| {
                let m = &o.head["metadata"];
                format!(
                    "{}/{}",
                    m["namespace"].as_str().unwrap_or(""),
                    m["name"].as_str().unwrap_or("")
                )
            })
            .collect()
    }

    /// Pages of a list at a version, with objects added, changed and deleted between pages, read
    /// back whole: the pages together are the list as it was at that version, and each page's
    /// remaining count is what that list holds after the page.
    #[test]
    fn pages_at_a_version_are_the_list_as_it_was() {
        let store = Store::new(KruiseVersion::default()).unwrap();
        let res = store.registry().by_kind("v1", "ConfigMap").unwrap();
        for ns in ["a", "b", "c"] {
            store
                .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
                .unwrap();
            for i in (0..30).step_by(2) {
                store.create(cm(ns, &format!("cm-{i:02}"), 0)).unwrap();
            }
        }
        let at = store.current_rv();
        let everyone = |_: &Obj| true;
        let expected = |ns: Option<&str>| -> Vec<String> {
            ["a", "b", "c"]
                .iter()
                .filter(|n| ns.is_none_or(|x| x == **n))
                .flat_map(|n| (0..30).step_by(2).map(move |i| format!("{n}/cm-{i:02}")))
                .collect()
        };
        // Changes after `at`: new objects between and after the old ones, deletes, updates.
        for ns in ["a", "b", "c"] {
            for i in (1..30).step_by(4) {
                store.create(cm(ns, &format!("cm-{i:02}"), 1)).unwrap();
            }
            store.create(cm(ns, "zz", 1)).unwrap();
            for i in [0, 8, 28] {
                store
                    .delete(
                        &res,
                        ns,
                        &format!("cm-{i:02}"),
                        None,
                        None,
                        Propagation::Background,
                    )
                    .unwrap();
            }
            store.update(cm(ns, "cm-10", 2)).unwrap();
        }
        for (ns, limit) in [(None, 7), (Some("b"), 4), (None, 1), (Some("c"), 100)] {
            let want = expected(ns);
            let mut got = Vec::new();
            let mut after = (String::new(), String::new());
            loop {
                let page = store
                    .list_at(&res, ns, &everyone, Some(limit), after.clone(), at)
                    .unwrap();
                assert!(page.items.len() <= limit);
                got.extend(names(&page.items));
                assert_eq!(page.rv, at);
                let Some(next) = page.continue_after else {
                    assert_eq!(page.remaining, 0);
                    break;
                };
                assert_eq!(page.remaining, want.len() - got.len(), "after {next:?}");
                after = next;
            }
            assert_eq!(got, want, "ns {ns:?} limit {limit}");
            // Every object as it was: the updated one still holds its old data.
            let page = store
                .list_at(
                    &res,
                    ns,
                    &everyone,
                    None,
                    (String::new(), String::new()),
                    at,
                )
                .unwrap();
            let data = |o: &Arc<Obj>| {
                serde_json::from_slice::<Value>(&o.json).unwrap()["data"]["v"].clone()
            };
            assert!(page.items.iter().all(|o| data(o) == json!("0")));
        }
        // A filter skips what it does not match, without ending the page early.
        let odd_ns = |o: &Obj| o.head["metadata"]["namespace"] != json!("b");
        let page = store
            .list_at(
                &res,
                None,
                &odd_ns,
                Some(20),
                (String::new(), String::new()),
                at,
            )
            .unwrap();
        assert_eq!(
            names(&page.items),
            expected(Some("a"))
                .into_iter()
                .chain(expected(Some("c")).into_iter().take(5))
                .collect::<Vec<_>>()
        );
    }
}
