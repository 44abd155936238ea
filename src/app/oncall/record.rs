//! The triage record: on each tick, the problems that appeared or cleared since the last one
//! become `Effect::RecordTriage` (the executor appends them to `triage.jsonl`), so
//! `kruise-tui report` can say what was broken during an incident. Nothing is recorded until
//! the kinds triage reads have loaded (a loading console has no problems yet, and they did not
//! clear), and a context or namespace switch starts over.

use std::collections::BTreeMap;

use crate::{
    app::{App, Effect},
    journal::triage_log::{Change, TriageNote},
};

/// Problems last recorded: (problem, subject) → (namespace, why).
pub type Recorded = BTreeMap<(String, String), (Option<String>, String)>;

/// What appeared or cleared since the last call, as one effect (None: nothing changed).
pub fn changes(app: &mut App) -> Option<Effect> {
    if !app.triage_loaded() {
        return None;
    }
    let now: Recorded = app
        .oncall
        .triage
        .iter()
        .map(|p| {
            let namespace = p.object.as_ref().and_then(|o| o.namespace.clone());
            (
                (p.kind.label().to_owned(), p.subject.clone()),
                (namespace, p.why.clone()),
            )
        })
        .collect();
    let before = app.oncall.recorded.replace(now.clone()).unwrap_or_default();
    let note = |change,
                (problem, subject): &(String, String),
                (ns, why): &(Option<String>, String)| TriageNote {
        time: app.now,
        context: app.context.clone(),
        cluster: app.cluster_url.clone(),
        namespace: ns.clone(),
        change,
        problem: problem.clone(),
        subject: subject.clone(),
        why: match change {
            Change::Appeared => why.clone(),
            Change::Cleared => String::new(),
        },
    };
    let mut notes: Vec<TriageNote> = before
        .iter()
        .filter(|(k, _)| !now.contains_key(*k))
        .map(|(k, v)| note(Change::Cleared, k, v))
        .collect();
    notes.extend(
        now.iter()
            .filter(|(k, _)| !before.contains_key(*k))
            .map(|(k, why)| note(Change::Appeared, k, why)),
    );
    (!notes.is_empty()).then_some(Effect::RecordTriage(notes))
}
