//! Orderings used to pick SidecarSet upgrade candidates: Kubernetes' ActivePods order, the
//! v1.8.4 priority sort and the scatter sort. Private to SidecarSet until the shared
//! `updatesort` module lands (the lead can de-duplicate then).

use std::{cmp::Ordering, collections::BTreeMap};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::kruise::selector;

use super::types::{UpdatePriorityStrategy, UpdateScatterTerm};

type Labels = BTreeMap<String, String>;

fn phase_ordinal(pod: &Pod) -> u8 {
    match pod.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Unknown") => 1,
        Some("Running") => 2,
        _ => 0,
    }
}

fn ready_condition(pod: &Pod) -> Option<Option<&Time>> {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
        .map(|c| c.last_transition_time.as_ref())
}

fn max_restarts(pod: &Pod) -> i32 {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
}

/// `afterOrZero`: a zero (unset) time sorts first, else the later time first.
fn after_or_zero(a: Option<&Time>, b: Option<&Time>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => y.0.cmp(&x.0),
    }
}

/// Kubernetes ActivePods order: unscheduled, Pending < Unknown < Running, not ready, ready
/// for less time, more restarts, newer creation first.
///
/// Port of k8s pkg/controller/controller_utils.go::ActivePods.Less (used by
/// sidecarcontrol.GetPodsSortFunc, v1.8.4).
pub fn active_pods_cmp(a: &Pod, b: &Pod) -> Ordering {
    let node = |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default()
    };
    let (na, nb) = (node(a), node(b));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return if na.is_empty() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let by_phase = phase_ordinal(a).cmp(&phase_ordinal(b));
    if by_phase != Ordering::Equal {
        return by_phase;
    }
    let (ra, rb) = (ready_condition(a), ready_condition(b));
    if ra.is_some() != rb.is_some() {
        return if ra.is_none() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    if let (Some(ta), Some(tb)) = (ra, rb) {
        let by_ready = after_or_zero(ta, tb);
        if ta != tb && by_ready != Ordering::Equal {
            return by_ready;
        }
    }
    let by_restarts = max_restarts(b).cmp(&max_restarts(a));
    if by_restarts != Ordering::Equal {
        return by_restarts;
    }
    after_or_zero(
        a.metadata.creation_timestamp.as_ref(),
        b.metadata.creation_timestamp.as_ref(),
    )
}

fn trailing_int(v: &str) -> i64 {
    let digits = v.len() - v.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    v[v.len() - digits..].parse().unwrap_or(0)
}

/// Priority key of a pod: `(weight sum, 0)` for weights; `(-level, suffix)` for order
/// terms (level -1 when no key is present). Larger goes first.
fn priority_key(strategy: &UpdatePriorityStrategy, labels: &Labels) -> (i64, i64) {
    if !strategy.weight_priority.is_empty() {
        let sum = strategy
            .weight_priority
            .iter()
            .filter(|t| selector::matches(&t.match_selector, labels).unwrap_or(false))
            .map(|t| i64::from(t.weight))
            .sum();
        return (sum, 0);
    }
    for (level, term) in strategy.order_priority.iter().enumerate() {
        if let Some(v) = labels.get(&term.ordered_key) {
            return (-(level as i64), trailing_int(v));
        }
    }
    (1, 0)
}

/// Stable priority sort; equal priority puts the larger pod index first (the v1.8.4
/// tie-break).
///
/// Port of pkg/util/updatesort/priority_sort.go::prioritySort.Sort (v1.8.4).
pub fn priority_sort(strategy: &UpdatePriorityStrategy, pods: &[Pod], indexes: &mut [usize]) {
    let empty = Labels::new();
    let key = |i: usize| priority_key(strategy, pods[i].metadata.labels.as_ref().unwrap_or(&empty));
    indexes.sort_by(|&a, &b| key(b).cmp(&key(a)).then(b.cmp(&a)));
}

struct Group {
    num: usize,
    matched: usize,
    unmatched: usize,
    unmatched_remainder: usize,
}

/// Port of pkg/util/updatesort/scatter_sort.go::newScatterGroup (v1.8.4).
fn new_group(matched: usize, unmatched: usize) -> Group {
    let num = matched.min(unmatched).max(1);
    Group {
        num,
        matched: (matched as f64 / num as f64).round() as usize,
        unmatched: (unmatched as f64 / num as f64).round() as usize,
        unmatched_remainder: 0,
    }
}

/// Port of pkg/util/updatesort/scatter_sort.go::calculateGroupByDensity (v1.8.4).
fn group_by_density(total_m: usize, total_u: usize, upd_m: usize, upd_u: usize) -> Group {
    let update = new_group(upd_m, upd_u);
    let mut total = new_group(total_m, total_u);
    if (total_u as f32) / (total_m as f32) >= (upd_u as f32) / (upd_m as f32) {
        return update;
    }
    total.num = (upd_m / total.matched.max(1)).min(upd_u / total.unmatched.max(1));
    total.unmatched_remainder = upd_u.saturating_sub(total.num * total.unmatched);
    total
}

fn term_matches(labels: Option<&Labels>, term: &UpdateScatterTerm) -> bool {
    labels.and_then(|l| l.get(&term.key)) == Some(&term.value)
}

/// Scatters candidates matching each term among the others. `labels[i]` is pod i's labels
/// (None for a slot without a pod).
///
/// Port of pkg/util/updatesort/scatter_sort.go::scatterSort.Sort (v1.8.4).
pub fn scatter_sort_labels(
    terms: &[UpdateScatterTerm],
    labels: &[Option<&Labels>],
    mut indexes: Vec<usize>,
) -> Vec<usize> {
    if terms.is_empty() || indexes.len() <= 1 {
        return indexes;
    }
    let used: Vec<UpdateScatterTerm> = if terms.len() == 1 {
        terms.to_vec()
    } else {
        let mut counted: Vec<(UpdateScatterTerm, usize)> = Vec::new();
        for term in terms {
            for &i in &indexes {
                if term_matches(labels.get(i).copied().flatten(), term) {
                    match counted.iter_mut().find(|(t, _)| t == term) {
                        Some((_, n)) => *n += 1,
                        None => counted.push((term.clone(), 1)),
                    }
                }
            }
        }
        counted.sort_by_key(|c| std::cmp::Reverse(c.1));
        counted.into_iter().map(|(t, _)| t).collect()
    };
    for term in &used {
        indexes = scatter_by_rule(term, labels, indexes);
    }
    indexes
}

/// [`scatter_sort_labels`] over pods.
pub fn scatter_sort(terms: &[UpdateScatterTerm], pods: &[Pod], indexes: Vec<usize>) -> Vec<usize> {
    let labels: Vec<Option<&Labels>> = pods
        .iter()
        .map(|p| p.metadata.labels.as_ref().or(Some(&EMPTY)))
        .collect();
    scatter_sort_labels(terms, &labels, indexes)
}

static EMPTY: Labels = Labels::new();

/// Port of pkg/util/updatesort/scatter_sort.go::scatterPodsByRule (v1.8.4).
fn scatter_by_rule(
    term: &UpdateScatterTerm,
    labels: &[Option<&Labels>],
    indexes: Vec<usize>,
) -> Vec<usize> {
    let (mut matched, mut unmatched): (Vec<usize>, Vec<usize>) = indexes
        .iter()
        .partition(|&&i| term_matches(labels.get(i).copied().flatten(), term));
    if matched.len() <= 1 || unmatched.len() <= 1 {
        return indexes;
    }
    let present = labels.iter().filter_map(|l| *l);
    let total_matched = present
        .clone()
        .filter(|l| term_matches(Some(l), term))
        .count();
    let total_unmatched = present.count() - total_matched;
    let last = matched.pop();
    let group = group_by_density(
        total_matched - 1,
        total_unmatched,
        matched.len(),
        unmatched.len(),
    );
    let mut out = Vec::with_capacity(indexes.len());
    let rem = group.unmatched_remainder.min(unmatched.len());
    out.extend(unmatched.drain(..rem));
    for _ in 0..group.num {
        let m = group.matched.min(matched.len());
        out.extend(matched.drain(..m));
        let u = group.unmatched.min(unmatched.len());
        out.extend(unmatched.drain(..u));
    }
    out.append(&mut matched);
    out.append(&mut unmatched);
    out.extend(last);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The scatter port is checked against the CloneSet scatter vectors too (same function).
    #[test]
    fn scatter_sort_matches_cloneset_vectors() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/conformance/cloneset-scatter.json"
        );
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut checked = 0;
        for case in doc["cases"].as_array().unwrap() {
            if case["op"] != "scatterSort" {
                continue;
            }
            let input = &case["input"];
            let terms: Vec<UpdateScatterTerm> =
                serde_json::from_value(input["scatterStrategy"].clone()).unwrap();
            let labels: Vec<Option<Labels>> =
                serde_json::from_value(input["podLabels"].clone()).unwrap();
            let refs: Vec<Option<&Labels>> = labels.iter().map(Option::as_ref).collect();
            let indexes: Vec<usize> = serde_json::from_value(input["indexes"].clone()).unwrap();
            let expected: Vec<usize> =
                serde_json::from_value(case["expected"]["indexes"].clone()).unwrap();
            assert_eq!(
                scatter_sort_labels(&terms, &refs, indexes),
                expected,
                "{}",
                case["source"]
            );
            checked += 1;
        }
        assert!(checked > 0);
    }

    #[test]
    fn trailing_digits() {
        assert_eq!(trailing_int("sts-10"), 10);
        assert_eq!(trailing_int("abc"), 0);
        assert_eq!(trailing_int("5"), 5);
    }

    proptest::proptest! {
        #[test]
        fn scatter_sort_permutes_its_input(
            values in proptest::collection::vec(0u8..3, 1..40),
            keep in proptest::collection::vec(proptest::bool::ANY, 40),
        ) {
            let labels: Vec<Labels> = values
                .iter()
                .map(|v| Labels::from([("zone".to_owned(), format!("z{v}"))]))
                .collect();
            let refs: Vec<Option<&Labels>> = labels.iter().map(Some).collect();
            let indexes: Vec<usize> = (0..labels.len()).filter(|&i| keep[i]).collect();
            let terms = [
                UpdateScatterTerm { key: "zone".to_owned(), value: "z0".to_owned() },
                UpdateScatterTerm { key: "zone".to_owned(), value: "z1".to_owned() },
            ];
            let mut out = scatter_sort_labels(&terms, &refs, indexes.clone());
            out.sort_unstable();
            proptest::prop_assert_eq!(out, indexes);
        }
    }
}
