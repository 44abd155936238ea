//! One sorted queue of deadlines for all pods: the simulator sleeps until the earliest one
//! instead of running a task or a poll per pod. Each key has at most one deadline; scheduling it
//! again replaces the old one.

use std::{
    collections::{BTreeSet, HashMap},
    hash::Hash,
};

use jiff::Timestamp;

#[derive(Debug)]
pub struct Deadlines<K> {
    by_key: HashMap<K, Timestamp>,
    queue: BTreeSet<(Timestamp, K)>,
}

impl<K: Clone + Ord + Hash> Default for Deadlines<K> {
    fn default() -> Self {
        Self {
            by_key: HashMap::new(),
            queue: BTreeSet::new(),
        }
    }
}

impl<K: Clone + Ord + Hash> Deadlines<K> {
    /// Sets (or replaces) `key`'s deadline; `None` cancels it.
    pub fn set(&mut self, key: &K, at: Option<Timestamp>) {
        if let Some(old) = self.by_key.remove(key) {
            self.queue.remove(&(old, key.clone()));
        }
        if let Some(at) = at {
            self.by_key.insert(key.clone(), at);
            self.queue.insert((at, key.clone()));
        }
    }

    /// The earliest deadline.
    pub fn next(&self) -> Option<Timestamp> {
        self.queue.first().map(|(at, _)| *at)
    }

    /// Removes and returns every key whose deadline is at or before `now`, earliest first.
    pub fn pop_due(&mut self, now: Timestamp) -> Vec<K> {
        let mut due = Vec::new();
        while let Some((at, _)) = self.queue.first() {
            if *at > now {
                break;
            }
            if let Some((_, key)) = self.queue.pop_first() {
                self.by_key.remove(&key);
                due.push(key);
            }
        }
        due
    }

    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    #[test]
    fn pops_due_keys_in_order_and_replaces_on_reschedule() {
        let mut d = Deadlines::default();
        d.set(&"a", Some(t(30)));
        d.set(&"b", Some(t(10)));
        d.set(&"c", Some(t(20)));
        d.set(&"a", Some(t(5)));
        assert_eq!(d.len(), 3);
        assert_eq!(d.next(), Some(t(5)));
        assert_eq!(d.pop_due(t(15)), vec!["a", "b"]);
        assert_eq!(d.next(), Some(t(20)));
        d.set(&"c", None);
        assert!(d.is_empty());
        assert_eq!(d.pop_due(t(100)), Vec::<&str>::new());
    }

    #[test]
    fn many_keys_at_the_same_instant_all_pop() {
        let mut d = Deadlines::default();
        for i in 0..10_000 {
            d.set(&i, Some(t(7)));
        }
        assert_eq!(d.pop_due(t(6)).len(), 0);
        assert_eq!(d.pop_due(t(7)).len(), 10_000);
    }
}
