//! The `:pps` view: PersistentPodStates with their target workload, the topology keys they keep,
//! pods kept and pods now elsewhere; and one in detail (Enter) with a row per pod: the node and
//! topology kept, the node it runs on now and that node's labels, and whether it runs there.

use std::collections::BTreeMap;

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Layout, Rect},
    style::Style,
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use super::{
    age,
    header::role,
    seedlist::{detail_block, detail_object, list_table},
    widgets::table::{self, Cell, Column, TableSpec},
};
use crate::{
    api::PersistentPodState,
    app::{
        App,
        persistentpodstates::{PersistentPodStatesView, PodRow},
        route::Fetch,
    },
    config::Role,
    kruise::persistent_pod_state::{Placement, topology_keys},
};

pub fn render(app: &App, view: &PersistentPodStatesView, area: Rect, buf: &mut Buffer) {
    if view.detail.is_some() {
        return detail(app, view, area, buf);
    }
    let states = view.states();
    let columns = vec![
        Column::new("NAMESPACE", Constraint::Length(12), 3),
        Column::new("NAME", Constraint::Fill(1), 0),
        Column::new("TARGET", Constraint::Length(24), 0),
        Column::new("REQUIRED", Constraint::Length(16), 1),
        Column::new("PREFERRED", Constraint::Length(22), 2),
        Column::new("KEPT", Constraint::Length(4), 0),
        Column::new("MOVED", Constraint::Length(5), 0),
        Column::new("AGE", Constraint::Length(5), 1),
    ];
    let spec = list_table(
        app,
        view,
        ("PersistentPodStates", "No PersistentPodState here"),
        "enter: pods kept and where they run",
        columns,
    );
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(s) = states.get(i) else {
            return Vec::new();
        };
        let rows = view.rows(s);
        let kept = rows.iter().filter(|r| r.kept.is_some()).count();
        let moved = rows
            .iter()
            .filter(|r| matches!(r.placement, Placement::Moved(_)))
            .count();
        vec![
            Cell::from(s.metadata.namespace.clone().unwrap_or_default()),
            Cell::from(s.metadata.name.clone().unwrap_or_default()),
            Cell::from(target(s)),
            Cell::from(required(s)),
            Cell::from(preferred(s)),
            Cell::from(kept.to_string()),
            if moved > 0 {
                Cell::from(Span::styled(moved.to_string(), role(app, Role::StatusWarn)))
            } else {
                Cell::from("0")
            },
            Cell::from(age(
                app.now,
                s.metadata.creation_timestamp.as_ref().map(|t| t.0),
            )),
        ]
    });
}

fn target(s: &PersistentPodState) -> String {
    let t = &s.spec.target_ref;
    format!("{}/{}", t.kind, t.name)
}

/// A label key as the tables show it: `topology.kubernetes.io/zone` → `zone`.
fn short(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

fn required(s: &PersistentPodState) -> String {
    match &s.spec.required_persistent_topology {
        Some(t) if !t.node_topology_keys.is_empty() => t
            .node_topology_keys
            .iter()
            .map(|k| short(k))
            .collect::<Vec<_>>()
            .join(","),
        _ => "-".to_owned(),
    }
}

fn preferred(s: &PersistentPodState) -> String {
    if s.spec.preferred_persistent_topology.is_empty() {
        return "-".to_owned();
    }
    s.spec
        .preferred_persistent_topology
        .iter()
        .map(|p| {
            let keys: Vec<&str> = p
                .preference
                .node_topology_keys
                .iter()
                .map(|k| short(k))
                .collect();
            format!("{}:{}", p.weight, keys.join(","))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn field<'a>(app: &App, name: &str, value: impl Into<Span<'a>>) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!(" {name:<14}"), role(app, Role::Muted)),
        value.into(),
    ])
}

fn detail(app: &App, view: &PersistentPodStatesView, area: Rect, buf: &mut Buffer) {
    let (ns, name) = view.detail.clone().unwrap_or_default();
    let block = detail_block(app, format!("PersistentPodState {ns}/{name}"));
    let state = match detail_object(app, &view.listing, view.current(), "PersistentPodState") {
        Ok((_, s)) => s,
        Err(line) => return Paragraph::new(line).block(block).render(area, buf),
    };
    let head = head_lines(app, view, state);
    let [top, bottom] = Layout::vertical([
        Constraint::Length(head.len() as u16 + 2),
        Constraint::Fill(1),
    ])
    .areas(area);
    Paragraph::new(head)
        .wrap(Wrap { trim: false })
        .block(block)
        .render(top, buf);
    pods_table(app, view, state, bottom, buf);
}

fn head_lines<'a>(
    app: &App,
    view: &PersistentPodStatesView,
    s: &'a PersistentPodState,
) -> Vec<Line<'a>> {
    let keys: Vec<String> = topology_keys(&s.spec).into_iter().collect();
    let mut lines = vec![
        field(app, "Target", {
            let t = &s.spec.target_ref;
            format!("{} {} ({})", t.kind, t.name, t.api_version)
        }),
        field(app, "Required", {
            match &s.spec.required_persistent_topology {
                Some(t) if !t.node_topology_keys.is_empty() => t.node_topology_keys.join(", "),
                _ => "-".to_owned(),
            }
        }),
        field(app, "Preferred", {
            let p: Vec<String> = s
                .spec
                .preferred_persistent_topology
                .iter()
                .map(|p| {
                    format!(
                        "{} (weight {})",
                        p.preference.node_topology_keys.join(", "),
                        p.weight
                    )
                })
                .collect();
            if p.is_empty() {
                "-".to_owned()
            } else {
                p.join("; ")
            }
        }),
        field(
            app,
            "Retention",
            s.spec
                .persistent_pod_state_retention_policy
                .clone()
                .unwrap_or_else(|| "WhenScaled".to_owned()),
        ),
    ];
    if !s.spec.persistent_pod_annotations.is_empty() {
        let a: Vec<&str> = s
            .spec
            .persistent_pod_annotations
            .iter()
            .map(|a| a.key.as_str())
            .collect();
        lines.push(field(app, "Annotations", a.join(", ")));
    }
    if keys.is_empty() {
        lines.push(field(app, "Keys", "none: only node names are compared"));
    }
    if let Fetch::Loaded(l) = &view.listing
        && let Err(e) = &l.nodes
    {
        lines.push(Line::styled(
            format!(" node labels unavailable ({e}): only node names compared"),
            role(app, Role::StatusWarn),
        ));
    }
    lines
}

/// The kept keys' values on a node; the hostname is left out (the node column shows it).
fn labels_of(labels: &BTreeMap<String, String>, keys: &[String]) -> String {
    let v: Vec<String> = keys
        .iter()
        .filter(|k| *k != HOSTNAME)
        .filter_map(|k| Some(format!("{}={}", short(k), labels.get(k)?)))
        .collect();
    if v.is_empty() {
        "-".to_owned()
    } else {
        v.join(",")
    }
}

const HOSTNAME: &str = "kubernetes.io/hostname";

fn pods_table(
    app: &App,
    view: &PersistentPodStatesView,
    s: &PersistentPodState,
    area: Rect,
    buf: &mut Buffer,
) {
    let keys: Vec<String> = topology_keys(&s.spec).into_iter().collect();
    let rows: Vec<PodRow> = view.rows(s);
    let height = area.height.saturating_sub(3).max(1) as usize;
    let spec = TableSpec {
        title: Line::from(format!(" Pods [{}] ", rows.len())),
        title_right: Line::from(" enter: pod "),
        columns: vec![
            Column::new("POD", Constraint::Length(12), 0),
            Column::new("KEPT NODE", Constraint::Length(14), 0),
            Column::new("KEPT TOPOLOGY", Constraint::Fill(1), 1),
            Column::new("NOW ON", Constraint::Length(14), 0),
            Column::new("NOW TOPOLOGY", Constraint::Fill(1), 2),
            Column::new("STATE", Constraint::Length(9), 0),
            Column::new("WHY", Constraint::Fill(2), 3),
        ],
        len: rows.len(),
        selected: view.kind.row,
        offset: view.kind.row.saturating_sub(height.saturating_sub(1)),
        empty: vec![Line::from(
            "No pod kept yet: upstream records a pod once it is Ready on a node",
        )],
    };
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(r) = rows.get(i) else {
            return Vec::new();
        };
        let kept_node = r
            .kept
            .and_then(|k| k.node_name.clone())
            .unwrap_or_else(|| "-".to_owned());
        let kept_topology = r.kept.map_or_else(
            || "-".to_owned(),
            |k| labels_of(&k.node_topology_labels, &keys),
        );
        let now_on = match r.pod {
            None => "-".to_owned(),
            Some(p) if p.node.is_empty() => "(unscheduled)".to_owned(),
            Some(p) => p.node.clone(),
        };
        let now_topology = r
            .node_labels
            .map_or_else(|| "-".to_owned(), |l| labels_of(l, &keys));
        let (style, why) = placement_style(app, r);
        vec![
            Cell::from(r.name.clone()),
            Cell::from(kept_node),
            Cell::from(kept_topology),
            Cell::from(now_on),
            Cell::from(now_topology),
            Cell::from(Span::styled(r.placement.word(), style)),
            Cell::from(why),
        ]
    });
}

/// `topology.kubernetes.io/zone: a → b` as `zone: a → b`.
fn short_keys(text: &str) -> String {
    text.replace("topology.kubernetes.io/", "")
        .replace("kubernetes.io/", "")
}

fn placement_style(app: &App, r: &PodRow) -> (Style, String) {
    let ready = r.pod.is_some_and(|p| p.ready);
    match &r.placement {
        Placement::SameNode => (role(app, Role::StatusOk), "same node".to_owned()),
        Placement::SameTopology(missed) if missed.is_empty() => (
            role(app, Role::StatusOk),
            "other node, same topology".to_owned(),
        ),
        Placement::SameTopology(missed) => (
            role(app, Role::StatusOk),
            format!("preferred missed: {}", short_keys(&missed.join("; "))),
        ),
        Placement::Moved(d) => (
            role(app, Role::StatusWarn),
            format!(
                "{}{}",
                short_keys(&d.join("; ")),
                if ready { "" } else { " (not Ready)" }
            ),
        ),
        Placement::Pending => (role(app, Role::StatusProgress), "not scheduled".to_owned()),
        Placement::Gone => (
            role(app, Role::StatusWarn),
            "state kept for a pod that does not exist".to_owned(),
        ),
        Placement::NotKept => (
            role(app, Role::Muted),
            if ready {
                "Ready: recorded on the next reconcile".to_owned()
            } else {
                "recorded once Ready".to_owned()
            },
        ),
        Placement::Unknown => (
            role(app, Role::Muted),
            "other node; its labels unreadable".to_owned(),
        ),
    }
}
