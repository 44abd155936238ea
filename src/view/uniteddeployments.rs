//! The `:ud` view: UnitedDeployments with their template kind, replicas, ready, updated and
//! subsets; and one in detail (Enter): its subsets with the replicas allotted to each, the
//! subset workload and its update status (Enter on a CloneSet or Advanced StatefulSet subset
//! opens its rollout view).

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Paragraph, Widget},
};

use super::{
    age,
    header::role,
    seedlist::{detail_block, detail_head, detail_object, list_table, table_offset},
    widgets::table::{self, Cell, Column, TableSpec},
    workloadspreads::{node_term, tolerations},
};
use crate::{
    api::UnitedDeployment,
    app::{
        App,
        uniteddeployments::{UnitedDeploymentsView, template_kind},
    },
    config::Role,
};

fn kind_name(ud: &UnitedDeployment) -> &'static str {
    template_kind(ud).map_or("-", |k| k.short())
}

pub fn render(app: &App, view: &UnitedDeploymentsView, area: Rect, buf: &mut Buffer) {
    if view.detail.is_some() {
        return detail(app, view, area, buf);
    }
    let uds = view.deployments();
    let columns = vec![
        Column::new("NAMESPACE", Constraint::Length(12), 2),
        Column::new("NAME", Constraint::Fill(1), 0),
        Column::new("TEMPLATE", Constraint::Length(11), 0),
        Column::new("DESIRED", Constraint::Length(7), 0),
        Column::new("CURRENT", Constraint::Length(7), 0),
        Column::new("READY", Constraint::Length(5), 0),
        Column::new("UPDATED", Constraint::Length(7), 0),
        Column::new("SUBSETS", Constraint::Length(24), 1),
        Column::new("AGE", Constraint::Length(5), 1),
    ];
    let spec = list_table(
        app,
        view,
        ("UnitedDeployments", "No UnitedDeployment here"),
        "enter: subset workloads",
        columns,
    );
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(ud) = uds.get(i) else {
            return Vec::new();
        };
        let status = ud.status.clone().unwrap_or_default();
        let subsets: Vec<&str> = ud
            .spec
            .topology
            .subsets
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        let ready = if status.ready_replicas < status.replicas {
            Span::styled(
                status.ready_replicas.to_string(),
                role(app, Role::StatusWarn),
            )
        } else {
            Span::raw(status.ready_replicas.to_string())
        };
        vec![
            Cell::from(ud.metadata.namespace.clone().unwrap_or_default()),
            Cell::from(ud.metadata.name.clone().unwrap_or_default()),
            Cell::from(kind_name(ud)),
            Cell::from(ud.spec.replicas.map_or("-".to_owned(), |r| r.to_string())),
            Cell::from(status.replicas.to_string()),
            Cell::from(ready),
            Cell::from(status.updated_replicas.to_string()),
            Cell::from(format!("{} ({})", subsets.len(), subsets.join(","))),
            Cell::from(age(
                app.now,
                ud.metadata.creation_timestamp.as_ref().map(|t| t.0),
            )),
        ]
    });
}

fn field<'a>(app: &App, name: &str, value: impl Into<Span<'a>>) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!(" {name:<16}"), role(app, Role::Muted)),
        value.into(),
    ])
}

fn short(revision: &str) -> &str {
    revision.rsplit('-').next().unwrap_or(revision)
}

fn header_lines<'a>(app: &App, ud: &UnitedDeployment) -> Vec<Line<'a>> {
    let status = ud.status.clone().unwrap_or_default();
    let updated_revision = status
        .update_status
        .as_ref()
        .map(|u| u.updated_revision.clone())
        .unwrap_or_default();
    let revision = if updated_revision.is_empty() || updated_revision == status.current_revision {
        format!("{} (all subsets on it)", short(&status.current_revision))
    } else {
        format!(
            "{} → {} (rolling out)",
            short(&status.current_revision),
            short(&updated_revision)
        )
    };
    let partitions = ud
        .spec
        .update_strategy
        .as_ref()
        .and_then(|u| u.manual_update.as_ref())
        .map(|m| {
            m.partitions
                .iter()
                .map(|(s, p)| format!("{s}={p}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|s| !s.is_empty());
    let mut lines = vec![
        field(
            app,
            "Template",
            format!(
                "{} · schedule {}",
                template_kind(ud).map_or("none", |k| k.info().kind),
                ud.spec
                    .topology
                    .schedule_strategy
                    .as_ref()
                    .and_then(|s| s.type_.clone())
                    .unwrap_or_else(|| "Fixed".to_owned())
            ),
        ),
        field(
            app,
            "Replicas",
            format!(
                "{} desired, {} current, {} ready, {} updated ({} updated and ready)",
                ud.spec.replicas.map_or("-".to_owned(), |r| r.to_string()),
                status.replicas,
                status.ready_replicas,
                status.updated_replicas,
                status.updated_ready_replicas
            ),
        ),
        field(app, "Revision", revision),
    ];
    if let Some(p) = partitions {
        lines.push(field(app, "Partitions", format!("{p} (manual)")));
    }
    if let Some(c) = status.conditions.last() {
        lines.push(field(
            app,
            "Condition",
            format!(
                "{}={} {}",
                c.type_,
                c.status,
                c.message.as_deref().unwrap_or_default()
            ),
        ));
    }
    lines
}

fn detail(app: &App, view: &UnitedDeploymentsView, area: Rect, buf: &mut Buffer) {
    let (ns, name) = view.detail.clone().unwrap_or_default();
    let block = detail_block(app, format!("UnitedDeployment {ns}/{name}"));
    let ud = match detail_object(app, &view.listing, view.current(), "UnitedDeployment") {
        Ok((_, ud)) => ud,
        Err(line) => return Paragraph::new(line).block(block).render(area, buf),
    };
    let rest = detail_head(header_lines(app, ud), block, area, buf);
    let subsets = view.subsets_of(ud);
    let offset = table_offset(view.selected, view.offset, rest);
    let spec = TableSpec {
        title: Line::from(format!(" Subsets [{}] ", subsets.len())),
        title_right: Line::from(" enter: the subset's rollout "),
        columns: vec![
            Column::new("SUBSET", Constraint::Length(10), 0),
            Column::new("ALLOTTED", Constraint::Length(8), 0),
            Column::new("WORKLOAD", Constraint::Length(26), 0),
            Column::new("CURRENT", Constraint::Length(7), 0),
            Column::new("READY", Constraint::Length(5), 0),
            Column::new("UPDATED", Constraint::Length(7), 0),
            Column::new("PARTITION", Constraint::Length(9), 0),
            Column::new("NODES", Constraint::Fill(1), 1),
        ],
        len: subsets.len(),
        selected: view.selected,
        offset,
        empty: vec![Line::styled(
            "No subset in the topology",
            role(app, Role::Muted),
        )],
    };
    table::render(spec, &app.theme, rest, buf, |i| {
        let Some(row) = subsets.get(i) else {
            return Vec::new();
        };
        let nodes = match row.spec {
            None => Span::styled("(not in the topology)", role(app, Role::StatusWarn)),
            Some(s) => {
                let mut text = s
                    .node_selector_term
                    .as_ref()
                    .map_or_else(|| "(any node)".to_owned(), node_term);
                if !s.tolerations.is_empty() {
                    text.push_str(&format!("; tolerates {}", tolerations(&s.tolerations)));
                }
                Span::raw(text)
            }
        };
        let allotted = Cell::from(row.allotted.map_or("-".to_owned(), |n| n.to_string()));
        let Some(w) = row.workload else {
            return vec![
                Cell::from(row.name.clone()),
                allotted,
                Cell::from(Span::styled("(not created yet)", role(app, Role::Muted))),
                Cell::from("-"),
                Cell::from("-"),
                Cell::from("-"),
                Cell::from("-"),
                Cell::from(nodes),
            ];
        };
        let warn = |n: i32, of: i32| {
            if n < of {
                Span::styled(n.to_string(), role(app, Role::StatusWarn))
            } else {
                Span::raw(n.to_string())
            }
        };
        vec![
            Cell::from(row.name.clone()),
            allotted,
            Cell::from(format!("{}/{}", w.kind.short(), w.name)),
            Cell::from(format!("{}/{}", w.replicas, w.desired)),
            Cell::from(warn(w.ready, w.replicas)),
            Cell::from(warn(w.updated, w.replicas)),
            Cell::from(w.partition.clone().unwrap_or_else(|| "-".to_owned())),
            Cell::from(nodes),
        ]
    });
}
