//! `priorityStrategy` ordering (`pkg/util/updatesort/priority_sort.go`).

use std::cmp::Ordering;

use super::{Labels, PriorityStrategy};
use crate::kruise::{KruiseVersion, selector};

/// A pod's priority: higher weight first, or lower order level then higher trailing number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Priority {
    Weight(i64),
    Order { level: i64, order: i64 },
    None,
}

fn priority_of(strategy: &PriorityStrategy, labels: &Labels) -> Priority {
    if !strategy.weight_priority.is_empty() {
        let weight = strategy
            .weight_priority
            .iter()
            // A malformed selector is skipped, as upstream `continue`s on the conversion error.
            .filter(|t| selector::matches(&t.match_selector, labels).unwrap_or(false))
            .map(|t| i64::from(t.weight))
            .sum();
        Priority::Weight(weight)
    } else if !strategy.order_priority.is_empty() {
        let (level, order) = order_priority(strategy, labels);
        Priority::Order { level, order }
    } else {
        Priority::None
    }
}

/// Port of priority_sort.go::getPodOrderPriority (v1.8.4): the index of the first term whose key
/// the pod has, and the trailing number of that value; `(-1, 0)` when it has none.
fn order_priority(strategy: &PriorityStrategy, labels: &Labels) -> (i64, i64) {
    for (i, term) in strategy.order_priority.iter().enumerate() {
        if let Some(value) = labels.get(&term.ordered_key) {
            return (
                i64::try_from(i).unwrap_or(i64::MAX),
                int_from_string_suffix(value),
            );
        }
    }
    (-1, 0)
}

/// Port of priority_sort.go::getIntFromStringSuffix (v1.8.4).
pub fn int_from_string_suffix(v: &str) -> i64 {
    let digits = v.len() - v.bytes().rev().take_while(u8::is_ascii_digit).count();
    v[digits..].parse().unwrap_or(0)
}

/// How `i` compares to `j` by priority alone: Less means "i updates first".
fn cmp_priority(a: Priority, b: Priority) -> Ordering {
    match (a, b) {
        (Priority::Weight(wa), Priority::Weight(wb)) => wb.cmp(&wa),
        (
            Priority::Order {
                level: la,
                order: oa,
            },
            Priority::Order {
                level: lb,
                order: ob,
            },
        ) => la.cmp(&lb).then(ob.cmp(&oa)),
        _ => Ordering::Equal,
    }
}

/// Port of priority_sort.go::compare (v1.8.4): whether pod I goes before pod J, `tie` when equal.
pub fn priority_compare(
    strategy: &PriorityStrategy,
    labels_i: &Labels,
    labels_j: &Labels,
    tie: bool,
) -> bool {
    match cmp_priority(
        priority_of(strategy, labels_i),
        priority_of(strategy, labels_j),
    ) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => tie,
    }
}

/// Port of priority_sort.go::prioritySort.Sort. v1.8.4 breaks ties by putting the larger pod index
/// first; v1.9 / HEAD keep the incoming order (commit 8e300c52f).
pub fn priority_sort(
    strategy: &PriorityStrategy,
    pods: &[Option<&Labels>],
    indexes: &mut [usize],
    version: KruiseVersion,
) {
    if strategy.weight_priority.is_empty() && strategy.order_priority.is_empty() {
        return;
    }
    let empty = Labels::new();
    let mut keyed: Vec<(Priority, usize)> = indexes
        .iter()
        .map(|&i| {
            let labels = pods.get(i).copied().flatten().unwrap_or(&empty);
            (priority_of(strategy, labels), i)
        })
        .collect();
    match version {
        KruiseVersion::V1_8 => {
            keyed.sort_by(|(pa, ia), (pb, ib)| cmp_priority(*pa, *pb).then(ib.cmp(ia)));
        }
        KruiseVersion::V1_9 => keyed.sort_by(|(pa, _), (pb, _)| cmp_priority(*pa, *pb)),
    }
    for (slot, (_, i)) in indexes.iter_mut().zip(keyed) {
        *slot = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_numbers() {
        assert_eq!(int_from_string_suffix("sts-10"), 10);
        assert_eq!(int_from_string_suffix("abc"), 0);
        assert_eq!(int_from_string_suffix("42"), 42);
        assert_eq!(int_from_string_suffix(""), 0);
    }

    #[test]
    fn order_priority_prefers_first_key_and_larger_suffix() {
        let strategy = PriorityStrategy {
            order_priority: vec![super::super::OrderTerm {
                ordered_key: "k".into(),
            }],
            ..Default::default()
        };
        let label = |v: &str| Labels::from([("k".to_owned(), v.to_owned())]);
        let (a5, a10, none) = (label("a-5"), label("a-10"), Labels::new());
        let pods = vec![Some(&a5), Some(&a10), Some(&none)];
        let mut idx = vec![0, 1, 2];
        priority_sort(&strategy, &pods, &mut idx, KruiseVersion::V1_8);
        // A pod without the key has level -1 and goes first (upstream gotcha).
        assert_eq!(idx, vec![2, 1, 0]);
    }
}
