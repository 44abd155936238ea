//! The `:journal` view: every mutation this tool sent (from the journal file), newest first;
//! `u` reverts the selected entry through the same prepare → confirm → perform path.

use super::{
    App, Effect, Level,
    filter::{Filterable, ListFilter},
    route::Fetch,
};
use crate::journal::Entry;

/// The journal view's state.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalView {
    /// Newest first.
    pub entries: Fetch<Vec<Entry>>,
    /// Lines of the file that did not parse.
    pub unreadable: usize,
    pub selected: usize,
    pub offset: usize,
    /// The `/` filter (by target, action, verb and result).
    pub filter: ListFilter<Vec<Entry>>,
}

impl JournalView {
    pub fn new() -> JournalView {
        JournalView {
            entries: Fetch::Loading,
            unreadable: 0,
            selected: 0,
            offset: 0,
            filter: ListFilter::default(),
        }
    }

    pub fn selected_entry(&self) -> Option<&Entry> {
        match &self.entries {
            Fetch::Loaded(e) => e.get(self.selected),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        match &self.entries {
            Fetch::Loaded(e) => e.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes a fresh read of the journal (oldest first), keeping the selection on the entry it
    /// was on when it is still there.
    pub fn loaded(&mut self, result: Result<(Vec<Entry>, usize), String>) {
        match result {
            Ok((mut entries, bad)) => {
                entries.reverse();
                self.unreadable = bad;
                self.show(entries);
            }
            Err(err) => self.entries = Fetch::Failed(err),
        }
    }

    /// Shows `entries` (newest first) as the filter keeps them, the cursor on its entry.
    fn show(&mut self, entries: Vec<Entry>) {
        let keep = self.selected_entry().map(|e| (e.time, e.target.clone()));
        let entries = self
            .filter
            .keep_rows(entries, |l, shown| l.retain(|e| shown(&search(e))));
        self.selected = keep
            .and_then(|(t, target)| {
                entries
                    .iter()
                    .position(|e| e.time == t && e.target == target)
            })
            .unwrap_or(0);
        self.entries = Fetch::Loaded(entries);
    }
}

/// What `/` matches a journal entry against: what its row shows.
fn search(e: &Entry) -> String {
    let result = match (e.result.ok, e.result.code) {
        (true, _) => "ok".to_owned(),
        (false, Some(code)) => format!("{code} {}", e.result.message),
        (false, None) => e.result.message.clone(),
    };
    format!(
        "{} {} {} {} {result}",
        e.context.as_deref().unwrap_or_default(),
        e.target.describe(),
        e.action.describe(),
        e.request.verb,
    )
}

impl Filterable for JournalView {
    fn filter_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.filter.text)
    }

    fn refilter(&mut self, page: usize) {
        if let Some(all) = self.filter.loaded() {
            self.show(all);
            let len = self.len();
            super::route::keep_in_window(self.selected, &mut self.offset, len, page);
        }
    }
}

impl Default for JournalView {
    fn default() -> Self {
        JournalView::new()
    }
}

/// `u` on a journal entry: prepare its inverse against the object as it is now.
pub fn revert(app: &mut App) -> Vec<Effect> {
    let Some(super::route::Route::Journal(view)) = app.stack.last() else {
        return Vec::new();
    };
    let Some(entry) = view.selected_entry().cloned() else {
        app.set_status(Level::Info, "no journal entry selected");
        return Vec::new();
    };
    if entry.context.is_some() && entry.context != app.context {
        app.set_status(
            Level::Error,
            format!(
                "this entry was sent on context {}; switch with :ctx {0} to revert it",
                entry.context.as_deref().unwrap_or("-")
            ),
        );
        return Vec::new();
    }
    let Some(inverse) = entry.inverse else {
        let why = if entry.result.ok {
            "this action has no revert"
        } else {
            "this request failed: it changed nothing, so there is nothing to revert"
        };
        app.set_status(Level::Info, why);
        return Vec::new();
    };
    app.prepare(entry.target, inverse)
}

/// How far before the selected journal entry the report starts (what led up to it).
pub const REPORT_LEAD_SECONDS: i64 = 600;
/// The report's window outside `:journal`: the last hour.
pub const REPORT_DEFAULT_SECONDS: i64 = 3600;

/// `R`: write the incident report — in `:journal`, from ten minutes before the selected entry
/// until now; elsewhere, of the last hour.
pub fn export(app: &mut App) -> Vec<Effect> {
    let from_entry = match app.stack.last() {
        Some(super::route::Route::Journal(view)) => view.selected_entry().map(|e| e.time),
        _ => None,
    };
    let lead = if from_entry.is_some() {
        REPORT_LEAD_SECONDS
    } else {
        REPORT_DEFAULT_SECONDS
    };
    let start = from_entry.unwrap_or(app.now);
    let since = jiff::Timestamp::from_second(start.as_second() - lead).unwrap_or(start);
    app.set_status(Level::Info, "writing the incident report…");
    vec![Effect::ExportReport {
        since,
        until: app.now,
    }]
}
