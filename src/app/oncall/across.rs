//! Triage across kubeconfig contexts (`:triage all`, `kruise-tui triage --all-contexts`): what
//! each context's triage came to, and one worst-first list of them all. The kube layer fills
//! it (`crate::kube::triage_all` loads each context headless with the console's own watches and
//! triage); this is the data and its order.

use jiff::Timestamp;

use super::{
    OncallView, Screen, nth, problem_route,
    triage::{Problem, worst_first},
};
use crate::app::{App, Effect, Kind, Level, route::Route};

/// What one context's triage came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Its problems, worst first (empty: healthy).
    Problems(Vec<Problem>),
    /// It could not be read: the connection, the server, or the timeout.
    Unreachable(String),
    /// Its user may not list pods (403): what the server said.
    Forbidden(String),
}

/// One context's triage.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextTriage {
    pub context: String,
    pub verdict: Verdict,
}

/// One row of the merged list.
#[derive(Debug, Clone, PartialEq)]
pub struct AcrossRow {
    pub context: String,
    pub what: What,
}

/// A problem of one context, or a context that could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum What {
    Problem(Box<Problem>),
    Unreachable(String),
    Forbidden(String),
}

impl AcrossRow {
    /// The PROBLEM cell: the problem's label, `unreachable` or `forbidden`.
    pub fn label(&self) -> &str {
        match &self.what {
            What::Problem(p) => p.kind.label(),
            What::Unreachable(_) => "unreachable",
            What::Forbidden(_) => "forbidden",
        }
    }

    /// The OBJECT cell (`-` for a context that could not be read).
    pub fn subject(&self) -> &str {
        match &self.what {
            What::Problem(p) => &p.subject,
            _ => "-",
        }
    }

    /// The WHY cell.
    pub fn why(&self) -> &str {
        match &self.what {
            What::Problem(p) => &p.why,
            What::Unreachable(why) | What::Forbidden(why) => why,
        }
    }
}

impl super::Search for AcrossRow {
    fn search(&self) -> String {
        format!(
            "{} {} {} {}",
            self.context,
            self.label(),
            self.subject(),
            self.why()
        )
    }
}

/// Every context's rows in one list: contexts that could not be read first (nothing in them
/// can be seen), then every problem worst first across contexts (triage's own order; ties by
/// context name).
pub fn merged(results: &[ContextTriage]) -> Vec<AcrossRow> {
    let mut rows: Vec<AcrossRow> = Vec::new();
    for r in results {
        let what = match &r.verdict {
            Verdict::Unreachable(why) => What::Unreachable(why.clone()),
            Verdict::Forbidden(why) => What::Forbidden(why.clone()),
            Verdict::Problems(_) => continue,
        };
        rows.push(AcrossRow {
            context: r.context.clone(),
            what,
        });
    }
    let mut problems: Vec<(&str, &Problem)> = results
        .iter()
        .flat_map(|r| match &r.verdict {
            Verdict::Problems(ps) => ps.iter().map(|p| (r.context.as_str(), p)).collect(),
            _ => Vec::new(),
        })
        .collect();
    problems.sort_by(|(ca, a), (cb, b)| worst_first(a, b).then_with(|| ca.cmp(cb)));
    rows.extend(problems.into_iter().map(|(context, p)| AcrossRow {
        context: context.to_owned(),
        what: What::Problem(Box::new(p.clone())),
    }));
    rows
}

/// `:triage all`: the contexts asked, and their rows once every one has answered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Across {
    pub contexts: Vec<String>,
    /// None while the contexts are being read.
    pub rows: Option<Vec<AcrossRow>>,
    /// When the answers came.
    pub at: Option<Timestamp>,
}

/// `:triage all`: asks every context of the kubeconfig (the current one when the kubeconfig
/// names none) and shows the screen, "reading" until they answer.
pub fn open(app: &mut App) -> Vec<Effect> {
    let contexts = if app.contexts.is_empty() {
        app.context.iter().cloned().collect()
    } else {
        app.contexts.clone()
    };
    if contexts.is_empty() {
        app.set_status(Level::Error, "the kubeconfig names no context".to_owned());
        return Vec::new();
    }
    app.oncall.across = Some(Across {
        contexts: contexts.clone(),
        rows: None,
        at: None,
    });
    let on_top = matches!(app.top(), Route::Oncall(v) if v.screen == Screen::TriageAll);
    if !on_top {
        app.stack
            .push(Route::Oncall(OncallView::new(Screen::TriageAll)));
    }
    vec![Effect::TriageAcross { contexts }]
}

/// Every context answered.
pub fn answered(app: &mut App, results: &[ContextTriage]) {
    if let Some(across) = app.oncall.across.as_mut() {
        across.rows = Some(merged(results));
        across.at = Some(app.now);
    }
    app.clamp_oncall();
}

/// The row under the cursor of `view`, when it is a problem: its context and the problem.
pub fn selected_problem(app: &App, view: &OncallView) -> Option<(String, Problem)> {
    let rows = app.oncall.across.as_ref()?.rows.as_deref()?;
    match nth(rows, &view.filter, view.selected) {
        Some(AcrossRow {
            context,
            what: What::Problem(p),
        }) => Some((context.clone(), (**p).clone())),
        _ => None,
    }
}

/// Enter on a `:triage all` row: a problem of this context opens as in `:triage`; one of
/// another context switches the console there and opens it once that context has loaded; a
/// context that could not be read says why.
pub fn open_row(app: &mut App) -> Vec<Effect> {
    let Some(Route::Oncall(view)) = app.stack.last() else {
        return Vec::new();
    };
    let row = app
        .oncall
        .across
        .as_ref()
        .and_then(|a| a.rows.as_deref())
        .and_then(|rows| nth(rows, &view.filter, view.selected))
        .cloned();
    let Some(row) = row else {
        return Vec::new();
    };
    let problem = match row.what {
        What::Problem(p) => *p,
        What::Unreachable(why) | What::Forbidden(why) => {
            let text = format!("context {}: {why}", row.context);
            app.set_status(Level::Error, text);
            return Vec::new();
        }
    };
    if app.context.as_deref() == Some(row.context.as_str()) {
        match problem_route(app, &problem) {
            Ok(route) => app.stack.push(route),
            Err(status) => app.set_status(Level::Info, status),
        }
        return Vec::new();
    }
    // A console showing one namespace follows the problem to its namespace.
    let namespace = match (&app.namespace, &problem.object) {
        (Some(_), Some(object)) => object.namespace.clone().or(app.namespace.clone()),
        _ => app.namespace.clone(),
    };
    app.set_status(
        Level::Info,
        format!(
            "switching to context {} for {}…",
            row.context, problem.subject
        ),
    );
    app.oncall.pending = Some(problem);
    crate::app::command::switch(app, Some(row.context), namespace)
}

/// The kinds a problem's view reads: once they have loaded after a switch, it opens.
const OPENS_AFTER: [Kind; 5] = [
    Kind::Pod,
    Kind::CloneSet,
    Kind::StatefulSet,
    Kind::DaemonSet,
    Kind::PodUnavailableBudget,
];

/// Opens the problem Enter chose in another context, once that context has loaded.
pub fn open_pending(app: &mut App) {
    if app.oncall.pending.is_none() || !OPENS_AFTER.iter().all(|k| app.ready.contains(k)) {
        return;
    }
    let Some(problem) = app.oncall.pending.take() else {
        return;
    };
    match problem_route(app, &problem) {
        Ok(route) => app.stack.push(route),
        Err(status) => app.set_status(Level::Info, status),
    }
    app.mark_dirty();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::oncall::triage::ProblemKind;

    fn problem(kind: ProblemKind, subject: &str, weight: usize) -> Problem {
        Problem {
            kind,
            object: None,
            owner: None,
            subject: subject.to_owned(),
            why: String::new(),
            remedy: String::new(),
            weight,
            reported: false,
        }
    }

    #[test]
    fn merged_lists_unreadable_contexts_first_then_problems_worst_first_across_contexts() {
        let results = vec![
            ContextTriage {
                context: "a".into(),
                verdict: Verdict::Problems(vec![
                    problem(ProblemKind::CrashLoop, "CloneSet x/web", 1),
                    problem(ProblemKind::DeleteDenied, "Namespace x", 1),
                ]),
            },
            ContextTriage {
                context: "b".into(),
                verdict: Verdict::Problems(vec![problem(
                    ProblemKind::StuckRollout,
                    "CloneSet y/checkout",
                    2,
                )]),
            },
            ContextTriage {
                context: "dead".into(),
                verdict: Verdict::Unreachable("connection refused".into()),
            },
            ContextTriage {
                context: "c".into(),
                verdict: Verdict::Problems(vec![problem(
                    ProblemKind::CrashLoop,
                    "CloneSet x/web",
                    1,
                )]),
            },
        ];
        let rows: Vec<String> = merged(&results)
            .iter()
            .map(|r| format!("{} {} {} {}", r.context, r.label(), r.subject(), r.why()))
            .collect();
        assert_eq!(
            rows,
            [
                "dead unreachable - connection refused",
                "b stuck rollout CloneSet y/checkout ",
                "a crash loop CloneSet x/web ",
                "c crash loop CloneSet x/web ",
                "a delete denied Namespace x ",
            ]
        );
    }
}
