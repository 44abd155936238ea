//! The `:distributor` view: ResourceDistributions with the resource they copy, their targets,
//! desired/succeeded/failed and age; and one in detail (Enter): the namespaces its targets match
//! here, per namespace whether the copy exists and is in sync, and the failures its status
//! reports.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use super::{
    age,
    header::role,
    seedlist::{detail_block, detail_object, list_table},
    widgets::table::{self, Cell, Column},
};
use crate::{
    api::ResourceDistribution,
    app::{
        App,
        distributions::{DistributionsView, Listing, copied, namespace_rows},
    },
    config::Role,
    kruise::distribution::{CopyState, hash_resource},
};

pub fn render(app: &App, view: &DistributionsView, area: Rect, buf: &mut Buffer) {
    if view.detail.is_some() {
        return detail(app, view, area, buf);
    }
    let items = view.distributions();
    let columns = vec![
        Column::new("NAME", Constraint::Fill(1), 0),
        Column::new("RESOURCE", Constraint::Length(28), 0),
        Column::new("TARGETS", Constraint::Fill(3), 1),
        Column::new("DESIRED", Constraint::Length(7), 0),
        Column::new("SUCCEEDED", Constraint::Length(9), 0),
        Column::new("FAILED", Constraint::Length(6), 0),
        Column::new("AGE", Constraint::Length(5), 2),
    ];
    let spec = list_table(
        app,
        view,
        (
            "ResourceDistributions",
            "No ResourceDistribution in this cluster",
        ),
        "cluster-scoped · enter: namespaces",
        columns,
    );
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(d) = items.get(i) else {
            return Vec::new();
        };
        let s = d.status.as_ref();
        let failed = s.map_or(0, |s| s.failed);
        vec![
            Cell::from(d.metadata.name.clone().unwrap_or_default()),
            Cell::from(resource(d)),
            Cell::from(targets(d)),
            Cell::from(s.map_or(0, |s| s.desired).to_string()),
            Cell::from(s.map_or(0, |s| s.succeeded).to_string()),
            if failed > 0 {
                Cell::from(Span::styled(
                    failed.to_string(),
                    role(app, Role::StatusError),
                ))
            } else {
                Cell::from(failed.to_string())
            },
            Cell::from(age(
                app.now,
                d.metadata.creation_timestamp.as_ref().map(|t| t.0),
            )),
        ]
    });
}

fn resource(d: &ResourceDistribution) -> String {
    let (kind, name) = copied(d);
    if kind.is_empty() && name.is_empty() {
        "-".to_owned()
    } else {
        format!("{kind}/{name}")
    }
}

fn names(list: &Option<crate::api::resourcedistribution::NamespaceList>) -> Vec<&str> {
    list.iter()
        .flat_map(|l| l.list.iter().map(|n| n.name.as_str()))
        .collect()
}

fn selector_text(d: &ResourceDistribution) -> Option<String> {
    let sel = d.spec.targets.namespace_label_selector.as_ref()?;
    if crate::kruise::selector::is_empty(sel) {
        return None;
    }
    let mut parts: Vec<String> = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in sel.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default().join(",");
        parts.push(format!("{} {} ({values})", e.key, e.operator));
    }
    Some(parts.join(","))
}

/// `all`, the namespaces listed, the label selector, and the exclusions, in one cell.
fn targets(d: &ResourceDistribution) -> String {
    let t = &d.spec.targets;
    let mut parts = Vec::new();
    if t.all_namespaces {
        parts.push("all".to_owned());
    } else {
        let included = names(&t.included_namespaces);
        if !included.is_empty() {
            parts.push(included.join(","));
        }
        if let Some(sel) = selector_text(d) {
            parts.push(format!("labels {sel}"));
        }
    }
    let excluded = names(&t.excluded_namespaces);
    if !excluded.is_empty() {
        parts.push(format!("except {}", excluded.join(",")));
    }
    if parts.is_empty() {
        "none".to_owned()
    } else {
        parts.join(" · ")
    }
}

fn field<'a>(app: &App, name: &str, value: impl Into<Span<'a>>) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!(" {name:<14}"), role(app, Role::Muted)),
        value.into(),
    ])
}

fn detail(app: &App, view: &DistributionsView, area: Rect, buf: &mut Buffer) {
    let name = view.detail.clone().unwrap_or_default();
    let block = detail_block(app, format!("ResourceDistribution {name}"));
    let lines = match detail_object(app, &view.listing, view.current(), "ResourceDistribution") {
        Ok((l, d)) => detail_lines(app, l, d),
        Err(line) => vec![line],
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block)
        .render(area, buf);
}

fn detail_lines<'a>(app: &App, l: &Listing, d: &ResourceDistribution) -> Vec<Line<'a>> {
    let t = &d.spec.targets;
    let status = d.status.as_ref();
    let api_version = d.spec.resource["apiVersion"].as_str().unwrap_or("-");
    let mut lines = vec![
        field(
            app,
            "Resource",
            format!(
                "{} ({api_version}); hash {}",
                resource(d),
                &hash_resource(&d.spec.resource)[..12]
            ),
        ),
        field(
            app,
            "Targets",
            if t.all_namespaces {
                "all namespaces".to_owned()
            } else {
                let included = names(&t.included_namespaces);
                if included.is_empty() {
                    "-".to_owned()
                } else {
                    included.join(", ")
                }
            },
        ),
    ];
    if let Some(sel) = selector_text(d) {
        let ignored = if t.all_namespaces {
            " (ignored: all namespaces)"
        } else {
            ""
        };
        lines.push(field(app, "Selector", format!("{sel}{ignored}")));
    }
    let excluded = names(&t.excluded_namespaces);
    if !excluded.is_empty() {
        lines.push(field(app, "Excluded", excluded.join(", ")));
    }
    let generation = d.metadata.generation.unwrap_or(0);
    let observed = status.and_then(|s| s.observed_generation).unwrap_or(0);
    lines.push(field(
        app,
        "Status",
        format!(
            "{} desired, {} succeeded, {} failed{}",
            status.map_or(0, |s| s.desired),
            status.map_or(0, |s| s.succeeded),
            status.map_or(0, |s| s.failed),
            if status.is_some() && observed < generation {
                format!(" (generation {generation} not yet observed)")
            } else {
                String::new()
            }
        ),
    ));
    lines.push(Line::from(""));
    match namespace_rows(d, l) {
        Err(e) => lines.push(Line::styled(format!(" {e}"), role(app, Role::StatusError))),
        Ok(rows) => {
            let matched = rows.iter().filter(|r| r.matched).count();
            lines.push(Line::styled(
                format!(" Target namespaces here ({matched})"),
                role(app, Role::Title),
            ));
            if rows.is_empty() {
                lines.push(Line::styled("   none", role(app, Role::Muted)));
            } else {
                lines.push(Line::styled(
                    format!("   {:<20} {:<13} {:<8} NOTE", "NAMESPACE", "COPY", "HASH"),
                    role(app, Role::Muted),
                ));
            }
            for r in rows {
                let (style, note) = match &r.check.state {
                    CopyState::InSync => (Role::StatusOk, String::new()),
                    CopyState::OutOfSync(f) => {
                        (Role::StatusWarn, format!("differs in {}", f.join(", ")))
                    }
                    CopyState::Missing => (Role::StatusWarn, "not copied yet".to_owned()),
                    CopyState::Conflict(owner) if owner.is_empty() => (
                        Role::StatusError,
                        "an object of that name not made by this distribution".to_owned(),
                    ),
                    CopyState::Conflict(owner) => {
                        (Role::StatusError, format!("that name belongs to {owner}"))
                    }
                    CopyState::NoNamespace => (
                        Role::StatusError,
                        "namespace missing or terminating".to_owned(),
                    ),
                };
                let note = if r.matched {
                    note
                } else {
                    "no longer targeted: upstream deletes this copy".to_owned()
                };
                let hash = match r.check.hash_current {
                    Some(true) => "current",
                    Some(false) => "stale",
                    None => "-",
                };
                lines.push(Line::from(vec![
                    Span::raw(format!("   {:<20} ", r.namespace)),
                    Span::styled(format!("{:<13}", r.check.state.word()), role(app, style)),
                    Span::raw(format!(" {hash:<8} {note}")),
                ]));
            }
        }
    }
    for e in &l.copy_errors {
        lines.push(Line::styled(
            format!(" cannot read the copies: {e}"),
            role(app, Role::StatusError),
        ));
    }
    let failures: Vec<_> = status
        .iter()
        .flat_map(|s| s.conditions.iter())
        .filter(|c| c.status == "True")
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::styled(
        format!(" Failures reported ({})", failures.len()),
        role(app, Role::Title),
    ));
    if failures.is_empty() {
        lines.push(Line::styled("   none", role(app, Role::Muted)));
    }
    for c in failures {
        lines.push(Line::from(vec![
            Span::styled(format!("   {:<22}", c.type_), role(app, Role::StatusError)),
            Span::raw(format!(
                "{}: {}",
                c.failed_namespace.join(", "),
                c.reason.as_deref().unwrap_or("-")
            )),
        ]));
    }
    lines
}
