//! `scatterStrategy` ordering (`pkg/util/updatesort/scatter_sort.go`).

use std::collections::HashMap;

use super::{Labels, ScatterTerm};

fn matches(labels: Option<&Labels>, term: &ScatterTerm) -> bool {
    labels
        .and_then(|l| l.get(&term.key))
        .is_some_and(|v| *v == term.value)
}

/// Port of scatter_sort.go::Sort (v1.8.4).
pub fn scatter_sort(
    strategy: &[ScatterTerm],
    pods: &[Option<&Labels>],
    indexes: &[usize],
) -> Vec<usize> {
    if strategy.is_empty() || indexes.len() <= 1 {
        return indexes.to_vec();
    }
    let mut out = indexes.to_vec();
    for term in scatter_terms(strategy, pods, indexes) {
        out = scatter_by_rule(&term, pods, &out);
    }
    out
}

/// Port of scatter_sort.go::getScatterTerms (v1.8.4): one term as is; otherwise the terms matched
/// by at least one candidate, most matched first (spec order on ties).
pub fn scatter_terms(
    strategy: &[ScatterTerm],
    pods: &[Option<&Labels>],
    indexes: &[usize],
) -> Vec<ScatterTerm> {
    if strategy.len() == 1 {
        return strategy.to_vec();
    }
    let mut terms: Vec<ScatterTerm> = Vec::new();
    let mut counts: HashMap<ScatterTerm, usize> = HashMap::new();
    for term in strategy {
        for &i in indexes {
            if matches(pods.get(i).copied().flatten(), term) {
                let count = counts.entry(term.clone()).or_insert(0);
                if *count == 0 {
                    terms.push(term.clone());
                }
                *count += 1;
            }
        }
    }
    terms.sort_by_key(|t| std::cmp::Reverse(counts.get(t).copied().unwrap_or(0)));
    terms
}

#[derive(Debug, Clone, Copy, Default)]
struct Group {
    num: usize,
    matched_size: usize,
    unmatched_size: usize,
    unmatched_remainder: usize,
}

fn round_div(a: usize, b: usize) -> usize {
    if b == 0 {
        return 0;
    }
    (a as f64 / b as f64).round() as usize
}

fn new_group(matched: usize, unmatched: usize) -> Group {
    let num = matched.min(unmatched);
    Group {
        num,
        matched_size: round_div(matched, num),
        unmatched_size: round_div(unmatched, num),
        unmatched_remainder: 0,
    }
}

/// Port of scatter_sort.go::calculateGroupByDensity (v1.8.4); densities compared as float32.
fn group_by_density(
    total_matched: usize,
    total_unmatched: usize,
    update_matched: usize,
    update_unmatched: usize,
) -> Group {
    let total = new_group(total_matched, total_unmatched);
    let update = new_group(update_matched, update_unmatched);
    let total_density = total_unmatched as f32 / total_matched as f32;
    let update_density = update_unmatched as f32 / update_matched as f32;
    if total_density >= update_density {
        return update;
    }
    let mut group = Group {
        matched_size: total.matched_size,
        unmatched_size: total.unmatched_size,
        ..Group::default()
    };
    let by_matched = update_matched.checked_div(group.matched_size).unwrap_or(0);
    let by_unmatched = update_unmatched
        .checked_div(group.unmatched_size)
        .unwrap_or(0);
    group.num = by_matched.min(by_unmatched);
    group.unmatched_remainder = update_unmatched.saturating_sub(group.num * group.unmatched_size);
    group
}

fn migrate(src: &mut Vec<usize>, dst: &mut Vec<usize>, size: usize) {
    let take = size.min(src.len());
    dst.extend(src.drain(..take));
}

/// Port of scatter_sort.go::scatterPodsByRule (v1.8.4).
pub fn scatter_by_rule(
    term: &ScatterTerm,
    pods: &[Option<&Labels>],
    indexes: &[usize],
) -> Vec<usize> {
    let (mut matched, mut unmatched): (Vec<usize>, Vec<usize>) = indexes
        .iter()
        .partition(|&&i| matches(pods.get(i).copied().flatten(), term));
    if matched.len() <= 1 || unmatched.len() <= 1 {
        return indexes.to_vec();
    }
    let mut total_matched = 0usize;
    let mut total_unmatched = 0usize;
    for labels in pods.iter().flatten() {
        if matches(Some(labels), term) {
            total_matched += 1;
        } else {
            total_unmatched += 1;
        }
    }
    let last_matched = matched.pop();
    total_matched = total_matched.saturating_sub(1);

    let group = group_by_density(
        total_matched,
        total_unmatched,
        matched.len(),
        unmatched.len(),
    );
    let mut out = Vec::with_capacity(indexes.len());
    if group.unmatched_remainder > 0 {
        migrate(&mut unmatched, &mut out, group.unmatched_remainder);
    }
    for _ in 0..group.num {
        migrate(&mut matched, &mut out, group.matched_size);
        migrate(&mut unmatched, &mut out, group.unmatched_size);
    }
    out.append(&mut matched);
    out.append(&mut unmatched);
    out.extend(last_matched);
    out
}
