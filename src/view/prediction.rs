//! A plan API prediction as lines: which pods move, in order, how, and what blocks each; the
//! pods left out; the numbers; the planner's notes. Shared by the rollout view's next step and
//! the confirm dialog.

use ratatui::text::{Line, Span};

use super::header::role;
use crate::{
    app::{App, msg::Prediction},
    config::Role,
    kruise::plan::{Action, Direction, WorkloadKind},
};

pub fn lines(app: &App, p: &Prediction) -> Vec<Line<'static>> {
    let plan = &p.plan;
    let daemon = plan.kind == WorkloadKind::AdvancedDaemonSet;
    let unit = if daemon { "node(s)" } else { "pod(s)" };
    let mut out = Vec::new();
    let verb = match plan.direction {
        Direction::Forward => "update to",
        Direction::Rollback => "roll back to",
        Direction::Delete => "are deleted",
        Direction::None => "",
    };
    if plan.moves.is_empty() && p.change.starts_with("scale") {
        out.push(Line::styled(
            "No pod changes revision (what scaling adds or deletes is under Changes).",
            role(app, Role::Muted),
        ));
    } else if plan.moves.is_empty() {
        out.push(Line::styled("No pod moves.", role(app, Role::Muted)));
    } else {
        let to = plan
            .moves
            .first()
            .map(|m| crate::app::rows::short_hash(&m.to_revision).to_owned())
            .unwrap_or_default();
        let next = plan.next_step().count();
        out.push(Line::from(vec![
            Span::raw(format!("{} {unit} {verb} ", plan.moves.len())),
            Span::styled(to, role(app, Role::RevisionUpdate)),
            Span::raw(format!(", in this order ({next} in the next step):")),
        ]));
        let width = plan
            .moves
            .iter()
            .map(|m| m.name.chars().count())
            .max()
            .unwrap_or(3);
        for (i, m) in plan.moves.iter().enumerate() {
            let how = match m.action {
                Action::InPlace => "in-place",
                Action::Recreate => "recreate",
                Action::Delete => "delete",
            };
            let node = p
                .nodes
                .get(&m.name)
                .filter(|n| !n.is_empty())
                .map(|n| format!(" on {n}"))
                .unwrap_or_default();
            let when = match &m.blocked {
                None => Span::styled("moves next", role(app, Role::StatusOk)),
                Some(b) => Span::styled(format!("blocked: {b}"), role(app, Role::StatusWarn)),
            };
            out.push(Line::from(vec![
                Span::styled(format!("{:>3}  ", i + 1), role(app, Role::Muted)),
                Span::raw(format!("{:<width$}{node}  {how:<8}  ", m.name)),
                when,
            ]));
        }
    }
    let skipped = if daemon { "held back" } else { "left out" };
    for (pod, why) in &plan.skipped {
        out.push(Line::styled(
            format!("  {skipped}: {pod} ({why})"),
            role(app, Role::Muted),
        ));
    }
    let s = &plan.status;
    out.push(Line::styled(
        format!(
            "updated now {} · after the next step {} · at convergence {} (expected {})",
            s.updated_replicas,
            s.updated_after_next_step,
            s.updated_at_convergence,
            s.expected_updated_replicas
        ),
        role(app, Role::Muted),
    ));
    for note in &plan.notes {
        out.push(Line::styled(format!("• {note}"), role(app, Role::Muted)));
    }
    out
}
