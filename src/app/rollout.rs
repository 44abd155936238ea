//! The rollout view (Enter on a workload): its state, the summary read from the workload in the
//! store, the batch plan, and when to refresh the next-step plan and the events.
//!
//! Everything here is rebuilt on store changes, never per frame. The next-step plan and the
//! events come from effects: asked for on entering, then again after the workload or its pods
//! change (at most one request in flight, at most one a second — a busy rollout does not turn
//! into a request per watch event, and nothing is asked while nothing changes).

pub mod progress;
pub mod summary;

use std::{collections::BTreeSet, sync::Arc};

use jiff::Timestamp;

pub use summary::Summary;

use super::{
    Effect,
    msg::{ObjectEvent, ObjectRef, Prediction},
    route::{Fetch, Owner},
    rows::PodRow,
};
use crate::config::{Batch, RolloutConfig};

/// Seconds between two next-step plans of one view.
const PLAN_EVERY: i64 = 1;
/// Seconds between two event fetches of one view.
const EVENTS_EVERY: i64 = 2;

/// When to ask the kube layer again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Refresh {
    /// Something changed since the last answer was asked for.
    pub stale: bool,
    pub in_flight: bool,
    pub last: Option<Timestamp>,
}

impl Refresh {
    fn due(&self, now: Timestamp, every: i64) -> bool {
        self.stale
            && !self.in_flight
            && self
                .last
                .is_none_or(|t| now.as_second() - t.as_second() >= every)
    }

    fn asked(&mut self, now: Timestamp) {
        self.stale = false;
        self.in_flight = true;
        self.last = Some(now);
    }
}

/// The rollout view's state.
#[derive(Debug, Clone)]
pub struct RolloutView {
    pub owner: Owner,
    /// None when the workload is not (or no longer) in the store.
    pub summary: Option<Summary>,
    /// The workload's pods (indices into the app's pod rows), in grid order.
    pub pods: Vec<u32>,
    /// The pod rows last seen, to tell a change of these pods from other pods' changes.
    seen: Vec<Arc<PodRow>>,
    /// The grid cursor and the pod it is on.
    pub selected: usize,
    pub selected_key: Option<String>,
    /// Pods marked with Space (names): scaling down deletes exactly these.
    pub marked: BTreeSet<String>,
    /// The next step as the plan API sees it, and the partition it was planned for.
    pub plan: Fetch<Prediction>,
    pub planned_for: Option<Option<String>>,
    pub plan_refresh: Refresh,
    pub events: Fetch<Vec<ObjectEvent>>,
    pub events_refresh: Refresh,
    /// The nodes' NodeImages, to mark pods whose next image is not on their node yet.
    pub node_images: super::images::NodeImageCache,
}

impl RolloutView {
    pub fn new(owner: Owner) -> RolloutView {
        RolloutView {
            owner,
            summary: None,
            pods: Vec::new(),
            seen: Vec::new(),
            selected: 0,
            selected_key: None,
            marked: BTreeSet::new(),
            plan: Fetch::Loading,
            planned_for: None,
            plan_refresh: Refresh {
                stale: true,
                ..Refresh::default()
            },
            events: Fetch::Loading,
            events_refresh: Refresh {
                stale: true,
                ..Refresh::default()
            },
            node_images: Default::default(),
        }
    }

    pub fn workload(&self) -> ObjectRef {
        ObjectRef {
            kind: self.owner.kind,
            namespace: Some(self.owner.namespace.clone()),
            name: self.owner.name.clone(),
        }
    }

    /// Re-reads the summary and the pods; a change marks the plan and events stale.
    pub fn refresh(&mut self, summary: Option<Summary>, rows: &[Arc<PodRow>]) {
        // Only the owner's namespace can hold its pods (rows are sorted by namespace).
        let range = super::podindex::namespace_range(rows, &self.owner.namespace);
        let start = range.start;
        let mut pods: Vec<u32> = rows[range]
            .iter()
            .enumerate()
            .filter(|(_, r)| r.belongs_to(&self.owner))
            .map(|(i, _)| (start + i) as u32)
            .collect();
        pods.sort_by(|&a, &b| natural(&rows[a as usize].name, &rows[b as usize].name));
        let seen: Vec<Arc<PodRow>> = pods
            .iter()
            .map(|&i| Arc::clone(&rows[i as usize]))
            .collect();
        let pods_changed = seen.len() != self.seen.len()
            || seen.iter().zip(&self.seen).any(|(a, b)| !Arc::ptr_eq(a, b));
        if pods_changed || summary != self.summary {
            self.plan_refresh.stale = true;
            self.events_refresh.stale = true;
        }
        // A pod that left is no longer marked.
        self.marked
            .retain(|name| seen.iter().any(|r| r.name == *name));
        self.summary = summary;
        self.pods = pods;
        self.seen = seen;
        if let Some(key) = &self.selected_key
            && let Some(pos) = self.seen.iter().position(|r| r.name == *key)
        {
            self.selected = pos;
        }
        self.selected = self.selected.min(self.pods.len().saturating_sub(1));
    }

    /// The pod rows in grid order.
    pub fn rows(&self) -> &[Arc<PodRow>] {
        &self.seen
    }

    /// The pod under the grid cursor.
    pub fn selected_pod(&self) -> Option<&Arc<PodRow>> {
        self.seen.get(self.selected)
    }

    /// Moves the grid cursor.
    pub fn move_cursor(&mut self, delta: isize) {
        if self.seen.is_empty() {
            return;
        }
        let last = self.seen.len() as isize - 1;
        self.selected = (self.selected as isize)
            .saturating_add(delta)
            .clamp(0, last) as usize;
        self.selected_key = self.seen.get(self.selected).map(|r| r.name.clone());
    }

    /// Marks or unmarks the pod under the cursor; returns its name.
    pub fn toggle_mark(&mut self) -> Option<(String, bool)> {
        let name = self.selected_pod()?.name.clone();
        let marked = if self.marked.remove(&name) {
            false
        } else {
            self.marked.insert(name.clone());
            true
        };
        Some((name, marked))
    }

    /// The effects this view is due for now (the plan, the events), marking them asked.
    pub fn due(&mut self, now: Timestamp, config: &RolloutConfig) -> Vec<Effect> {
        let mut effects = Vec::new();
        if self.plan_refresh.due(now, PLAN_EVERY) {
            self.plan_refresh.asked(now);
            let partition = self
                .summary
                .as_ref()
                .and_then(|s| s.next_step(config))
                .map(|s| s.partition.to_string());
            self.planned_for = Some(partition.clone());
            effects.push(Effect::PlanRollout {
                workload: self.workload(),
                partition,
            });
        }
        if self.events_refresh.due(now, EVENTS_EVERY) {
            self.events_refresh.asked(now);
            effects.push(Effect::FetchRolloutEvents {
                workload: self.workload(),
                pods: self.seen.iter().map(|r| r.name.clone()).collect(),
            });
        }
        effects
    }
}

/// Compares names with their trailing numbers as numbers (`db-2` before `db-10`).
pub fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |s: &str| {
        let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (head, tail) = s.split_at(s.len() - digits);
        (head.to_owned(), tail.parse::<u64>().ok())
    };
    let (ha, na) = split(a);
    let (hb, nb) = split(b);
    ha.cmp(&hb).then(na.cmp(&nb)).then(a.cmp(b))
}

/// Where a step of the batch plan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    /// Reached (the partition lets at least this many pods update).
    Done,
    /// The partition stands exactly here.
    Current,
    /// The one `]` goes to.
    Next,
    Later,
}

/// One step of the batch plan on this workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub batch: Batch,
    /// Pods updated once this step is reached.
    pub pods: i32,
    /// The partition that reaches it.
    pub partition: i32,
    pub state: StepState,
}

impl Summary {
    /// The batch plan on this workload's pods, each step marked against the partition.
    pub fn steps(&self, config: &RolloutConfig) -> Vec<Step> {
        let want = self.expected_updated;
        let steps = config.steps(self.replicas);
        let current = steps.iter().rposition(|(n, _)| *n == want);
        let next = steps.iter().position(|(n, _)| *n > want);
        steps
            .iter()
            .enumerate()
            .map(|(i, (n, b))| Step {
                batch: *b,
                pods: *n,
                partition: self.replicas - n,
                state: if Some(i) == current {
                    StepState::Current
                } else if Some(i) == next {
                    StepState::Next
                } else if *n <= want {
                    StepState::Done
                } else {
                    StepState::Later
                },
            })
            .collect()
    }

    /// The step `]` goes to.
    pub fn next_step(&self, config: &RolloutConfig) -> Option<Step> {
        self.steps(config)
            .into_iter()
            .find(|s| s.state == StepState::Next)
    }

    /// The partition `[` goes back to: the last step below where the partition stands (before
    /// the first step: every pod held back). None when nothing is meant to be updated.
    pub fn previous_partition(&self, config: &RolloutConfig) -> Option<(i32, Option<Batch>)> {
        if self.expected_updated <= 0 {
            return None;
        }
        let below = self
            .steps(config)
            .into_iter()
            .rev()
            .find(|s| s.pods < self.expected_updated);
        Some(match below {
            Some(s) => (s.partition, Some(s.batch)),
            None => (self.replicas, None),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(replicas: i32, partition: i32) -> Summary {
        Summary {
            replicas,
            partition: Some(partition.to_string()),
            partition_pods: partition,
            expected_updated: replicas - partition,
            ..Summary::default()
        }
    }

    #[test]
    fn the_batch_plan_is_marked_against_the_partition() {
        let cfg = RolloutConfig::default();
        // 10 pods at partition 6: 4 updated, between 25% (3) and 50% (5).
        let s = summary(10, 6);
        let states: Vec<(i32, StepState)> =
            s.steps(&cfg).iter().map(|s| (s.pods, s.state)).collect();
        assert_eq!(
            states,
            [
                (1, StepState::Done),
                (3, StepState::Done),
                (5, StepState::Next),
                (10, StepState::Later)
            ]
        );
        assert_eq!(s.next_step(&cfg).map(|s| s.partition), Some(5));
        assert_eq!(
            s.previous_partition(&cfg),
            Some((7, Some(Batch::Percent(25))))
        );
        // Exactly on a step: that step is current, `[` goes to the one before.
        let s = summary(10, 5);
        assert_eq!(s.steps(&cfg)[2].state, StepState::Current);
        assert_eq!(s.next_step(&cfg).map(|s| s.partition), Some(0));
        assert_eq!(s.previous_partition(&cfg).map(|p| p.0), Some(7));
        // At 100%: no next step; before the first: `[` holds every pod back.
        assert_eq!(summary(10, 0).next_step(&cfg), None);
        assert_eq!(summary(10, 9).previous_partition(&cfg), Some((10, None)));
        assert_eq!(summary(10, 10).previous_partition(&cfg), None);
    }

    #[test]
    fn names_sort_with_numbers_as_numbers() {
        let mut names = vec!["db-10", "db-2", "db-1", "web-a"];
        names.sort_by(|a, b| natural(a, b));
        assert_eq!(names, ["db-1", "db-2", "db-10", "web-a"]);
    }
}
