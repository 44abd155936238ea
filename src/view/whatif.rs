//! The What-if view (`w`): the pending action simulated on a copy of the workload — its request,
//! the predicted steps in order (pods created, deleted, updated in place, recreated; counts once
//! each step has settled) and why it stops. The title says plainly that nothing was sent.

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use super::header::role;
use crate::{
    actions::whatif::{Counts, Simulation, Step, Stop},
    app::{App, route::Fetch, whatif::WhatIfView},
    config::{Action, Role},
};

pub fn render(app: &App, view: &WhatIfView, area: Rect, buf: &mut Buffer) {
    let title = format!(
        " What-if {} — simulation — nothing sent ",
        view.target.describe()
    );
    let block = super::rollout::block(app, title);
    let inner = block.inner(area);
    block.render(area, buf);
    let mut lines = vec![Line::from(vec![
        Span::styled("simulating ", role(app, Role::HeaderKey)),
        Span::styled(view.what.clone(), role(app, Role::HeaderValue)),
    ])];
    match &view.result {
        Fetch::Loading => lines.push(Line::styled(
            "Reading the workload, its pods, revisions and nodes, and simulating…",
            role(app, Role::Muted),
        )),
        Fetch::Failed(why) => lines.push(Line::styled(why.clone(), role(app, Role::StatusError))),
        Fetch::Loaded(sim) => lines.extend(simulation(app, sim)),
    }
    let back = app.keymap.hint(Action::Back);
    let tail = if view.resume.is_some() {
        format!("{back} back to the confirm dialog (nothing has been sent)")
    } else {
        format!("{back} back")
    };
    lines.push(Line::raw(""));
    lines.push(Line::styled(tail, role(app, Role::Muted)));
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((view.scroll.min(u16::MAX as usize) as u16, 0))
        .render(inner, buf);
}

fn counts(c: &Counts) -> String {
    format!(
        "updated {}/{}  ready {}/{}  pods {}",
        c.updated, c.desired, c.ready, c.desired, c.pods
    )
}

fn simulation(app: &App, sim: &Simulation) -> Vec<Line<'static>> {
    let key = |k: &str| Span::styled(k.to_owned(), role(app, Role::HeaderKey));
    let value = |v: String| Span::styled(v, role(app, Role::HeaderValue));
    let mut out = Vec::new();
    match &sim.request {
        Some(r) => out.push(Line::from(vec![
            key("request (not sent) "),
            value(format!("{} {}", r.verb, r.path)),
        ])),
        None => out.push(Line::from(vec![
            key("request "),
            value("none: the controllers as things stand".to_owned()),
        ])),
    }
    out.push(Line::from(vec![key("now "), value(counts(&sim.before))]));
    out.push(Line::raw(""));
    if sim.steps.is_empty() {
        out.push(Line::styled(
            "No pod would be created, deleted or updated.",
            role(app, Role::Muted),
        ));
    }
    for (i, step) in sim.steps.iter().enumerate() {
        out.push(Line::from(vec![
            Span::styled(format!("step {} ", i + 1), role(app, Role::TableHeader)),
            Span::styled(format!("t+{}s  ", step.at), role(app, Role::Muted)),
            value(counts(&step.after)),
        ]));
        out.extend(step_lines(app, step));
    }
    out.push(Line::raw(""));
    let style = match &sim.stop {
        Stop::Converged => Role::StatusOk,
        Stop::Partition { .. } | Stop::Paused => Role::StatusProgress,
        Stop::MaxUnavailable { .. } | Stop::Bounded { .. } => Role::StatusWarn,
        Stop::NeverReady { .. } | Stop::Unschedulable { .. } => Role::StatusError,
    };
    out.push(Line::from(vec![
        key("stops "),
        Span::styled(sim.stop.to_string(), role(app, style)),
    ]));
    out.push(Line::styled(
        format!(
            "{}s simulated with the embedded controllers and simulated nodes",
            sim.seconds
        ),
        role(app, Role::Muted),
    ));
    out
}

fn step_lines(app: &App, step: &Step) -> Vec<Line<'static>> {
    let groups = [
        ("updated in place", &step.in_place, Role::RevisionUpdate),
        ("recreated", &step.recreated, Role::RevisionUpdate),
        ("created", &step.created, Role::Text),
        ("deleted", &step.deleted, Role::StatusWarn),
    ];
    groups
        .into_iter()
        .filter(|(_, pods, _)| !pods.is_empty())
        .map(|(what, pods, r)| {
            Line::from(vec![
                Span::styled(format!("  {what:<17}"), role(app, Role::Muted)),
                Span::styled(pods.join(", "), role(app, r)),
            ])
        })
        .collect()
}
