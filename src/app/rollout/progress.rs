//! A CloneSet's status conditions as the console reads them (Kruise v1.9.0): the `Progressing`
//! condition with its deadline, and `FailedScale` / `FailedUpdate`, which v1.9.0 never removes
//! and never refreshes, so they are history (since when), not the current state.

use std::collections::HashMap;

use jiff::Timestamp;

use crate::{
    api::{CloneSet, cloneset::CloneSetCondition},
    app::{msg::Kind, stores::Stores},
    kruise::cloneset::progress::{self, reason},
};

/// The `Progressing` condition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progressing {
    /// `True` / `False`.
    pub status: String,
    pub reason: String,
    pub message: String,
    /// When it last changed status or reason: the deadline runs from here.
    pub last_update: Option<Timestamp>,
}

/// A failure condition: the first failure since the CloneSet began, as v1.9.0 keeps it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PastFailure {
    /// `FailedScale` / `FailedUpdate`.
    pub type_: String,
    pub message: String,
    pub since: Option<Timestamp>,
}

/// What the rollout view and triage read from a CloneSet's conditions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conditions {
    pub progressing: Option<Progressing>,
    /// `spec.progressDeadlineSeconds` when it sets a deadline (not unset, not MaxInt32).
    pub deadline_seconds: Option<i32>,
    pub failures: Vec<PastFailure>,
}

fn time(t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> Option<Timestamp> {
    t.map(|t| t.0)
}

fn text(v: Option<&String>) -> String {
    v.cloned().unwrap_or_default()
}

impl Conditions {
    /// Reads them from `cs`.
    pub fn of(cs: &CloneSet) -> Conditions {
        let conditions: &[CloneSetCondition] =
            cs.status.as_ref().map_or(&[], |s| s.conditions.as_slice());
        Conditions {
            progressing: conditions
                .iter()
                .find(|c| c.type_ == progress::PROGRESSING)
                .map(|c| Progressing {
                    status: c.status.clone(),
                    reason: text(c.reason.as_ref()),
                    message: text(c.message.as_ref()),
                    last_update: time(c.last_update_time.as_ref()),
                }),
            deadline_seconds: progress::has_progress_deadline(cs)
                .then_some(cs.spec.progress_deadline_seconds)
                .flatten(),
            failures: conditions
                .iter()
                .filter(|c| [progress::FAILED_SCALE, progress::FAILED_UPDATE].contains(&&*c.type_))
                .map(|c| PastFailure {
                    type_: c.type_.clone(),
                    message: text(c.message.as_ref()),
                    since: time(c.last_transition_time.as_ref()),
                })
                .collect(),
        }
    }

    /// Nothing to show.
    pub fn is_empty(&self) -> bool {
        self.progressing.is_none() && self.deadline_seconds.is_none() && self.failures.is_empty()
    }

    /// The controller says the rollout timed out (`Progressing=False/ProgressDeadlineExceeded`).
    pub fn exceeded(&self) -> bool {
        self.progressing
            .as_ref()
            .is_some_and(|p| p.status == "False" && p.reason == reason::DEADLINE_EXCEEDED)
    }

    /// Seconds left before the controller declares the rollout timed out, while it is
    /// progressing (`CloneSetUpdated`): `lastUpdateTime + progressDeadlineSeconds − now`
    /// (negative once past, until the controller looks again).
    pub fn deadline_left(&self, now: Timestamp) -> Option<i64> {
        let p = self.progressing.as_ref()?;
        if p.status != "True" || p.reason != reason::UPDATED {
            return None;
        }
        let since = p.last_update?;
        let pds = i64::from(self.deadline_seconds?);
        Some(since.as_second() + pds - now.as_second())
    }
}

/// The conditions of every CloneSet that has any, by workload key (`WorkloadRow::key`).
pub fn by_workload(stores: &Stores) -> HashMap<String, Conditions> {
    stores
        .clonesets
        .state()
        .iter()
        .filter_map(|cs| {
            let c = Conditions::of(cs);
            let key = format!(
                "{:?}/{}/{}",
                Kind::CloneSet,
                cs.metadata.namespace.as_deref().unwrap_or_default(),
                cs.metadata.name.as_deref().unwrap_or_default()
            );
            (!c.is_empty()).then_some((key, c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::cloneset::CloneSetStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    fn cs(pds: Option<i32>, conditions: Vec<CloneSetCondition>) -> CloneSet {
        let mut cs = CloneSet::default();
        cs.spec.progress_deadline_seconds = pds;
        cs.status = Some(CloneSetStatus {
            conditions,
            ..Default::default()
        });
        cs
    }

    fn cond(type_: &str, status: &str, why: &str, t: i64) -> CloneSetCondition {
        CloneSetCondition {
            type_: type_.into(),
            status: status.into(),
            reason: Some(why.into()).filter(|r: &String| !r.is_empty()),
            message: Some("m".into()),
            last_update_time: Some(Time(at(t))),
            last_transition_time: Some(Time(at(t))),
        }
    }

    #[test]
    fn deadline_left_runs_from_the_last_update_while_progressing() {
        let c = Conditions::of(&cs(
            Some(30),
            vec![cond("Progressing", "True", "CloneSetUpdated", 0)],
        ));
        assert_eq!(c.deadline_left(at(10)), Some(20));
        assert_eq!(c.deadline_left(at(40)), Some(-10));
        assert!(!c.exceeded());
        let available = Conditions::of(&cs(
            Some(30),
            vec![cond("Progressing", "True", "CloneSetAvailable", 0)],
        ));
        assert_eq!(available.deadline_left(at(10)), None);
        let no_deadline = Conditions::of(&cs(
            Some(i32::MAX),
            vec![cond("Progressing", "True", "CloneSetUpdated", 0)],
        ));
        assert_eq!(no_deadline.deadline_left(at(10)), None);
    }

    #[test]
    fn exceeded_and_failures_are_read() {
        let c = Conditions::of(&cs(
            Some(30),
            vec![
                cond("FailedUpdate", "True", "", 5),
                cond("Progressing", "False", "ProgressDeadlineExceeded", 40),
            ],
        ));
        assert!(c.exceeded());
        assert_eq!(c.failures.len(), 1);
        assert_eq!(c.failures[0].since, Some(at(5)));
        assert!(Conditions::of(&cs(None, Vec::new())).is_empty());
    }
}
