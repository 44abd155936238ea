//! Which cached rows a list shows: its scope (kind, owner) and its `/` filter, applied to the
//! sorted row caches. Runs on store changes and filter edits, never per frame.

use std::sync::Arc;

use super::{
    route::{ListView, Scope, keep_in_window},
    rows::{PodRow, WorkloadRow},
};

/// Whether a row's filter key matches the filter text: every whitespace-separated word of the
/// filter must occur (case-insensitive).
pub fn matches(search: &str, filter_lower: &str) -> bool {
    filter_lower.split_whitespace().all(|w| search.contains(w))
}

/// Recomputes `list.visible`, then puts the selection back on the same object (or clamps it).
pub fn refresh(list: &mut ListView, workloads: &[WorkloadRow], pods: &[Arc<PodRow>], page: usize) {
    let filter = list.filter.to_lowercase();
    let visible: Vec<u32> = match &list.scope {
        Scope::Workloads | Scope::WorkloadKind(_) => {
            let kind = match &list.scope {
                Scope::WorkloadKind(k) => Some(*k),
                _ => None,
            };
            indices(workloads, |r| {
                kind.is_none_or(|k| r.kind == k) && matches(&r.search, &filter)
            })
        }
        Scope::Pods => indices(pods, |r| matches(&r.search, &filter)),
        Scope::PodsOf(owner) => {
            indices(pods, |r| r.belongs_to(owner) && matches(&r.search, &filter))
        }
    };
    list.visible = visible;
    let is_pods = list.scope.is_pods();
    if let Some(key) = &list.selected_key {
        let found = list.visible.iter().position(|&i| {
            let i = i as usize;
            if is_pods {
                pods.get(i).is_some_and(|r| r.has_key(key))
            } else {
                workloads.get(i).is_some_and(|r| r.has_key(key))
            }
        });
        if let Some(pos) = found {
            list.selected = pos;
        }
    }
    list.selected = list.selected.min(list.visible.len().saturating_sub(1));
    remember_selection(list, workloads, pods);
    keep_in_window(list.selected, &mut list.offset, list.visible.len(), page);
}

/// Re-reads the selection's identity after the cursor moved.
pub fn remember_selection(list: &mut ListView, workloads: &[WorkloadRow], pods: &[Arc<PodRow>]) {
    let i = list.visible.get(list.selected).map(|&i| i as usize);
    list.selected_key = match (list.scope.is_pods(), i) {
        (true, Some(i)) => pods.get(i).map(|p| p.key()),
        (false, Some(i)) => workloads.get(i).map(WorkloadRow::key),
        _ => None,
    };
}

fn indices<T>(rows: &[T], keep: impl Fn(&T) -> bool) -> Vec<u32> {
    rows.iter()
        .enumerate()
        .filter(|(_, r)| keep(r))
        .map(|(i, _)| i as u32)
        .collect()
}
