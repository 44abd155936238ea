//! The update priority among waiting pods (`unorderedUpdate.priorityStrategy`).
//!
//! Private copy of `pkg/util/updatesort/priority_sort.go` for the Advanced StatefulSet; the
//! CloneSet port owns the shared one (`kruise::updatesort`), the lead can de-duplicate.

use std::{cmp::Ordering, collections::BTreeMap};

use super::{AstsPod, PriorityStrategy};
use crate::kruise::{KruiseVersion, selector};

/// Port of pkg/util/updatesort/priority_sort.go::getPodWeightPriority (v1.8.4).
fn weight(strategy: &PriorityStrategy, labels: &BTreeMap<String, String>) -> i64 {
    strategy
        .weight_priority
        .iter()
        .filter(|term| selector::matches(&term.match_selector, labels).unwrap_or(false))
        .map(|term| i64::from(term.weight))
        .sum()
}

/// Port of pkg/util/updatesort/priority_sort.go::getIntFromStringSuffix (v1.8.4).
fn int_suffix(v: &str) -> i64 {
    let digits = v.len() - v.bytes().rev().take_while(u8::is_ascii_digit).count();
    v[digits..].parse().unwrap_or(0)
}

/// Port of pkg/util/updatesort/priority_sort.go::getPodOrderPriority (v1.8.4).
fn order(strategy: &PriorityStrategy, labels: &BTreeMap<String, String>) -> (i64, i64) {
    for (i, term) in strategy.order_priority.iter().enumerate() {
        if let Some(value) = labels.get(&term.ordered_key) {
            return (i64::try_from(i).unwrap_or(i64::MAX), int_suffix(value));
        }
    }
    (-1, 0)
}

/// Port of pkg/util/updatesort/priority_sort.go::compare (v1.8.4): `Less` means "update first".
fn compare(
    strategy: &PriorityStrategy,
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
) -> Ordering {
    if !strategy.weight_priority.is_empty() {
        return weight(strategy, b).cmp(&weight(strategy, a));
    }
    if !strategy.order_priority.is_empty() {
        let (la, oa) = order(strategy, a);
        let (lb, ob) = order(strategy, b);
        return la.cmp(&lb).then(ob.cmp(&oa));
    }
    Ordering::Equal
}

/// Port of pkg/util/updatesort/priority_sort.go::Sort (v1.8.4).
///
/// Sorts slot indexes by priority. On a tie v1.8.4 puts the larger slot index first; v1.9 keeps
/// the incoming order (a stable sort).
pub(crate) fn sort_by_priority(
    strategy: &PriorityStrategy,
    slots: &[Option<AstsPod>],
    indexes: &mut [usize],
    version: KruiseVersion,
) {
    if strategy.weight_priority.is_empty() && strategy.order_priority.is_empty() {
        return;
    }
    let empty = BTreeMap::new();
    let labels = |i: usize| {
        slots
            .get(i)
            .and_then(Option::as_ref)
            .map_or(&empty, |p| &p.labels)
    };
    indexes.sort_by(|&i, &j| {
        let ord = compare(strategy, labels(i), labels(j));
        match (ord, version) {
            (Ordering::Equal, KruiseVersion::V1_8) => j.cmp(&i),
            _ => ord,
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kruise::statefulset::OrderTerm;

    #[test]
    fn suffix_digits() {
        assert_eq!(int_suffix("sts-10"), 10);
        assert_eq!(int_suffix("abc"), 0);
        assert_eq!(int_suffix(""), 0);
    }

    #[test]
    fn order_priority_prefers_first_key_and_larger_suffix() {
        let strategy = PriorityStrategy {
            order_priority: vec![OrderTerm {
                ordered_key: "k".into(),
            }],
            ..Default::default()
        };
        let pod = |v: Option<&str>| {
            Some(AstsPod {
                labels: v
                    .map(|v| [("k".to_owned(), v.to_owned())].into())
                    .unwrap_or_default(),
                ..Default::default()
            })
        };
        let slots = vec![pod(Some("a-5")), pod(Some("a-10")), pod(None)];
        let mut idx = vec![0, 1, 2];
        sort_by_priority(&strategy, &slots, &mut idx, KruiseVersion::V1_8);
        // A pod without the key has level -1 and goes first (upstream gotcha).
        assert_eq!(idx, vec![2, 1, 0]);
    }
}
