//! Which cached rows a list shows: its scope (kind, owner) and its `/` filter, applied to the
//! sorted row caches. Runs on store changes and filter edits, never per frame.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

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
            // Only the owner's namespace can hold its pods (rows are sorted by namespace).
            let range = super::podindex::namespace_range(pods, &owner.namespace);
            let start = range.start;
            indices(&pods[range], |r| {
                r.belongs_to(owner) && matches(&r.search, &filter)
            })
            .into_iter()
            .map(|i| i + start as u32)
            .collect()
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
    // Until the user moves the cursor the selection is "the top row", not an object: rows
    // arriving while the first lists load must not drag it down.
    if list.selected_key.is_some() {
        remember_selection(list, workloads, pods);
    }
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

/// What `/` matches an object against in the seed kinds' lists: its `namespace/name`.
fn object_key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The `/` filter of a seed kind's list (`:bcj`, `:ws`, …): the text typed and the listing as
/// last loaded, of which the view shows the objects whose `namespace/name` matches. Only the
/// listed kind is filtered; what the detail reads beside it (pods, nodes) stays whole.
#[derive(Debug, Clone, PartialEq)]
pub struct ListFilter<L> {
    pub text: String,
    all: Option<L>,
}

impl<L> Default for ListFilter<L> {
    fn default() -> Self {
        ListFilter {
            text: String::new(),
            all: None,
        }
    }
}

impl<L: Clone> ListFilter<L> {
    /// Keeps `all` (as loaded) and returns what the list shows of it: `retain` is handed a
    /// predicate on the listed objects' metadata.
    pub fn keep(&mut self, all: L, retain: impl FnOnce(&mut L, &dyn Fn(&ObjectMeta) -> bool)) -> L {
        self.keep_rows(all, |l, shown| retain(l, &|m| shown(&object_key(m))))
    }

    /// Like [`ListFilter::keep`], for rows that are not objects: `retain` is handed a
    /// predicate on the text a row is searched by.
    pub fn keep_rows(&mut self, all: L, retain: impl FnOnce(&mut L, &dyn Fn(&str) -> bool)) -> L {
        let mut shown = all.clone();
        self.all = Some(all);
        if !self.text.is_empty() {
            let filter = self.text.to_lowercase();
            retain(&mut shown, &|text| matches(&text.to_lowercase(), &filter));
        }
        shown
    }

    /// The listing as last loaded, to filter again after an edit.
    pub fn loaded(&self) -> Option<L> {
        self.all.clone()
    }
}

/// A view whose list `/` filters (the seed kinds' views).
pub trait Filterable {
    /// The filter's text while the list is shown; `None` while an object is open in detail.
    fn filter_mut(&mut self) -> Option<&mut String>;
    /// Applies the filter again to the listing as last loaded, keeping the cursor on the
    /// same object where it is still shown.
    fn refilter(&mut self, page: usize);
}
