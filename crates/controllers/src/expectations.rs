//! Expectations: what a controller wrote and must see in its cache before it decides again.
//!
//! Upstream's CloneSet and StatefulSet controllers skip a reconcile while their scale
//! expectations (pods created or deleted but not yet observed) or resourceVersion expectations
//! (pods updated but not yet observed at that version) are unsatisfied: acting on a cache that
//! does not show its own writes would create pods twice or spend a maxUnavailable budget twice.
//! Here an expectation is checked against the cache when asked (a watch event for the object
//! queues the owner again), and gives up after a timeout so a lost event cannot wedge a key.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

/// How long an expectation is waited for before the controller acts anyway (upstream: 5 min;
/// here the cache is a local watch, so a shorter wait is plenty).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// One thing the cache should show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// An object named so exists.
    Created { name: String },
    /// The object with this UID is gone or terminating.
    Deleted { name: String, uid: String },
    /// The object named so is at this resourceVersion or newer.
    Updated {
        name: String,
        resource_version: String,
    },
}

/// What the cache holds of an object, for [`Expectations::satisfied`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub uid: String,
    pub resource_version: String,
    pub terminating: bool,
}

#[derive(Debug, Default)]
struct Pending {
    items: Vec<Expect>,
    since: Option<Instant>,
}

/// Pending expectations, keyed by the owner (`namespace/name` of the workload).
#[derive(Debug, Default)]
pub struct Expectations {
    pending: Mutex<HashMap<String, Pending>>,
}

impl Expectations {
    /// Records that `owner` expects `items` to show up.
    pub fn expect(&self, owner: &str, items: impl IntoIterator<Item = Expect>) {
        let mut items = items.into_iter().peekable();
        if items.peek().is_none() {
            return;
        }
        if let Ok(mut pending) = self.pending.lock() {
            let entry = pending.entry(owner.to_owned()).or_default();
            entry.items.extend(items);
            entry.since.get_or_insert_with(Instant::now);
        }
    }

    /// Whether everything `owner` expects is in the cache (`lookup(name)` reads it), dropping what
    /// is. Past [`TIMEOUT`] the rest is dropped too, with a warning.
    pub fn satisfied(&self, owner: &str, lookup: impl Fn(&str) -> Option<Seen>) -> bool {
        let Ok(mut pending) = self.pending.lock() else {
            return true;
        };
        let Some(entry) = pending.get_mut(owner) else {
            return true;
        };
        entry.items.retain(|item| !observed(item, &lookup));
        if entry.items.is_empty() {
            pending.remove(owner);
            return true;
        }
        if entry.since.is_some_and(|s| s.elapsed() > TIMEOUT) {
            tracing::warn!(%owner, pending = ?entry.items, "controllers: expectations timed out; acting on the cache as it is");
            pending.remove(owner);
            return true;
        }
        false
    }

    /// Forgets `owner` (it was deleted).
    pub fn forget(&self, owner: &str) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(owner);
        }
    }
}

fn observed(item: &Expect, lookup: &impl Fn(&str) -> Option<Seen>) -> bool {
    match item {
        Expect::Created { name } => lookup(name).is_some(),
        Expect::Deleted { name, uid } => match lookup(name) {
            None => true,
            Some(seen) => seen.uid != *uid || seen.terminating,
        },
        Expect::Updated {
            name,
            resource_version,
        } => match lookup(name) {
            None => true,
            Some(seen) => at_least(&seen.resource_version, resource_version),
        },
    }
}

/// Whether resourceVersion `seen` is `wanted` or newer. Kubernetes resourceVersions are opaque,
/// but every server we talk to (etcd's revision, the embedded store's counter) issues increasing
/// integers; anything else only matches exactly.
fn at_least(seen: &str, wanted: &str) -> bool {
    match (seen.parse::<u64>(), wanted.parse::<u64>()) {
        (Ok(s), Ok(w)) => s >= w,
        _ => seen == wanted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(uid: &str, rv: &str, terminating: bool) -> Option<Seen> {
        Some(Seen {
            uid: uid.to_owned(),
            resource_version: rv.to_owned(),
            terminating,
        })
    }

    #[test]
    fn creates_deletes_and_updates_are_satisfied_by_what_the_cache_shows() {
        let e = Expectations::default();
        assert!(e.satisfied("ns/cs", |_| None), "nothing expected");
        e.expect(
            "ns/cs",
            [
                Expect::Created { name: "a".into() },
                Expect::Deleted {
                    name: "b".into(),
                    uid: "u-b".into(),
                },
                Expect::Updated {
                    name: "c".into(),
                    resource_version: "10".into(),
                },
            ],
        );
        // Nothing observed yet: b still there, c at an older version.
        let stale = |name: &str| match name {
            "b" => seen("u-b", "3", false),
            "c" => seen("u-c", "9", false),
            _ => None,
        };
        assert!(!e.satisfied("ns/cs", stale));
        // a created, b terminating, c at 11: all satisfied and forgotten.
        let fresh = |name: &str| match name {
            "a" => seen("u-a", "12", false),
            "b" => seen("u-b", "13", true),
            "c" => seen("u-c", "11", false),
            _ => None,
        };
        assert!(e.satisfied("ns/cs", fresh));
        assert!(e.satisfied("ns/cs", stale), "satisfied items are dropped");
    }

    #[test]
    fn a_recreated_object_of_the_same_name_satisfies_a_delete() {
        let e = Expectations::default();
        e.expect(
            "ns/sts",
            [Expect::Deleted {
                name: "db-0".into(),
                uid: "old".into(),
            }],
        );
        assert!(!e.satisfied("ns/sts", |_| seen("old", "1", false)));
        assert!(e.satisfied("ns/sts", |_| seen("new", "2", false)));
    }

    #[test]
    fn resource_versions_compare_as_numbers_when_they_are() {
        assert!(at_least("10", "9"));
        assert!(!at_least("9", "10"));
        assert!(at_least("abc", "abc"));
        assert!(!at_least("abd", "abc"));
    }
}
