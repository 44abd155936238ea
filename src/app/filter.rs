//! Which cached rows a list shows: its scope (kind, owner) and its `/` filter, applied to the
//! sorted row caches. Runs on store changes and filter edits, never per frame.

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
pub fn refresh(list: &mut ListView, workloads: &[WorkloadRow], pods: &[PodRow], page: usize) {
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
    let key_of = |i: u32| -> Option<String> {
        if list.scope.is_pods() {
            pods.get(i as usize).map(PodRow::key)
        } else {
            workloads.get(i as usize).map(WorkloadRow::key)
        }
    };
    if let Some(key) = list.selected_key.clone() {
        if let Some(pos) = list
            .visible
            .iter()
            .position(|&i| key_of(i).as_deref() == Some(key.as_str()))
        {
            list.selected = pos;
        }
    }
    list.selected = list.selected.min(list.visible.len().saturating_sub(1));
    list.selected_key = list.visible.get(list.selected).and_then(|&i| key_of(i));
    keep_in_window(list.selected, &mut list.offset, list.visible.len(), page);
}

/// Re-reads the selection's identity after the cursor moved.
pub fn remember_selection(list: &mut ListView, workloads: &[WorkloadRow], pods: &[PodRow]) {
    let i = list.visible.get(list.selected).map(|&i| i as usize);
    list.selected_key = match (list.scope.is_pods(), i) {
        (true, Some(i)) => pods.get(i).map(PodRow::key),
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
