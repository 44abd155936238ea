//! The `:ws` view: WorkloadSpreads with their target workload, subsets and a per-subset summary
//! (current/max replicas); and one spread in detail (Enter): each subset's node terms,
//! tolerations, maxReplicas, current and missing replicas and pods being created or deleted,
//! then the pods per subset (Enter on one opens the pod).

use k8s_openapi::{
    api::core::v1::{NodeSelectorTerm, PreferredSchedulingTerm, Toleration},
    apimachinery::pkg::{apis::meta::v1::Time, util::intstr::IntOrString},
};
use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Paragraph, Widget},
};
use std::collections::BTreeMap;

use super::{
    age,
    header::role,
    seedlist::{detail_block, detail_head, detail_object, list_table, table_offset},
    widgets::table::{self, Cell, Column, TableSpec},
};
use crate::{
    api::{
        WorkloadSpread,
        workloadspread::{WorkloadSpreadSubset, WorkloadSpreadSubsetStatus},
    },
    app::{App, workloadspreads::WorkloadSpreadsView},
    config::Role,
};

pub fn render(app: &App, view: &WorkloadSpreadsView, area: Rect, buf: &mut Buffer) {
    if view.detail.is_some() {
        return detail(app, view, area, buf);
    }
    let spreads = view.spreads();
    let columns = vec![
        Column::new("NAMESPACE", Constraint::Length(12), 2),
        Column::new("NAME", Constraint::Length(20), 0),
        Column::new("TARGET", Constraint::Length(24), 1),
        Column::new("SUBSETS", Constraint::Length(7), 1),
        Column::new("REPLICAS PER SUBSET (CURRENT/MAX)", Constraint::Fill(1), 0),
        Column::new("AGE", Constraint::Length(5), 1),
    ];
    let spec = list_table(
        app,
        view,
        ("WorkloadSpreads", "No WorkloadSpread here"),
        "enter: subsets and their pods",
        columns,
    );
    table::render(spec, &app.theme, area, buf, |i| {
        let Some(s) = spreads.get(i) else {
            return Vec::new();
        };
        vec![
            Cell::from(s.metadata.namespace.clone().unwrap_or_default()),
            Cell::from(s.metadata.name.clone().unwrap_or_default()),
            Cell::from(target(s)),
            Cell::from(s.spec.subsets.len().to_string()),
            Cell::from(summary(s)),
            Cell::from(age(
                app.now,
                s.metadata.creation_timestamp.as_ref().map(|t| t.0),
            )),
        ]
    });
}

/// `CloneSet/web`, or `-` without a target.
pub fn target(s: &WorkloadSpread) -> String {
    s.spec
        .target_ref
        .as_ref()
        .map_or_else(|| "-".to_owned(), |t| format!("{}/{}", t.kind, t.name))
}

fn status_of<'a>(s: &'a WorkloadSpread, subset: &str) -> Option<&'a WorkloadSpreadSubsetStatus> {
    s.status
        .as_ref()?
        .subset_statuses
        .iter()
        .find(|st| st.name == subset)
}

/// `3`, `50%`, or `-` when unlimited.
pub fn max_replicas(v: Option<&IntOrString>) -> String {
    match v {
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "-".to_owned(),
    }
}

/// `zone-a 3/4 · zone-b 2/-`: each subset's current replicas over its maxReplicas.
pub fn summary(s: &WorkloadSpread) -> String {
    let parts: Vec<String> = s
        .spec
        .subsets
        .iter()
        .map(|sub| {
            let current = status_of(s, &sub.name).map_or(0, |st| st.replicas);
            format!(
                "{} {current}/{}",
                sub.name,
                max_replicas(sub.max_replicas.as_ref())
            )
        })
        .collect();
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join(" · ")
    }
}

/// `topology.kubernetes.io/zone In [zone-a], disk Exists`.
pub fn node_term(term: &NodeSelectorTerm) -> String {
    let requirement = |key: &str, op: &str, values: &[String]| {
        if values.is_empty() {
            format!("{key} {op}")
        } else {
            format!("{key} {op} [{}]", values.join(","))
        }
    };
    let exprs = term
        .match_expressions
        .iter()
        .flatten()
        .map(|r| requirement(&r.key, &r.operator, r.values.as_deref().unwrap_or_default()));
    let fields = term.match_fields.iter().flatten().map(|r| {
        requirement(
            &format!("field:{}", r.key),
            &r.operator,
            r.values.as_deref().unwrap_or_default(),
        )
    });
    let all: Vec<String> = exprs.chain(fields).collect();
    if all.is_empty() {
        "(any node)".to_owned()
    } else {
        all.join(", ")
    }
}

/// `weight 10: disk In [ssd]; …`.
pub fn preferred_terms(terms: &[PreferredSchedulingTerm]) -> String {
    terms
        .iter()
        .map(|t| format!("weight {}: {}", t.weight, node_term(&t.preference)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `dedicated=spot:NoSchedule, node.kubernetes.io/unreachable:NoExecute (300s)`.
pub fn tolerations(list: &[Toleration]) -> String {
    list.iter()
        .map(|t| {
            let key = t.key.as_deref().unwrap_or("*");
            let mut s = match (t.operator.as_deref(), t.value.as_deref()) {
                (Some("Exists"), _) | (_, None | Some("")) => key.to_owned(),
                (_, Some(v)) => format!("{key}={v}"),
            };
            if let Some(e) = t.effect.as_deref().filter(|e| !e.is_empty()) {
                s.push(':');
                s.push_str(e);
            }
            if let Some(secs) = t.toleration_seconds {
                s.push_str(&format!(" ({secs}s)"));
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn field<'a>(app: &App, name: &str, value: impl Into<Span<'a>>) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!("   {name:<14}"), role(app, Role::Muted)),
        value.into(),
    ])
}

fn pods_in(app: &App, pods: &BTreeMap<String, Time>) -> String {
    pods.iter()
        .map(|(name, t)| format!("{name} (since {})", age(app.now, Some(t.0))))
        .collect::<Vec<_>>()
        .join(", ")
}

fn subset_lines<'a>(
    app: &App,
    spread: &WorkloadSpread,
    sub: &WorkloadSpreadSubset,
) -> Vec<Line<'a>> {
    let st = status_of(spread, &sub.name);
    let current = st.map_or(0, |s| s.replicas);
    let missing = match st.map(|s| s.missing_replicas) {
        Some(-1) => "no limit".to_owned(),
        Some(n) => format!("{n} missing"),
        None => "status not written yet".to_owned(),
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(format!(" {} ", sub.name), role(app, Role::Title)),
        Span::raw(format!(
            " max {} · {current} current · {missing}",
            max_replicas(sub.max_replicas.as_ref())
        )),
    ])];
    if let Some(t) = &sub.required_node_selector_term {
        lines.push(field(app, "required", node_term(t)));
    }
    if !sub.preferred_node_selector_terms.is_empty() {
        lines.push(field(
            app,
            "preferred",
            preferred_terms(&sub.preferred_node_selector_terms),
        ));
    }
    if !sub.tolerations.is_empty() {
        lines.push(field(app, "tolerations", tolerations(&sub.tolerations)));
    }
    if sub.patch.is_some() {
        lines.push(field(app, "patch", "yes (applied to the subset's pods)"));
    }
    if let Some(st) = st {
        if !st.creating_pods.is_empty() {
            lines.push(field(
                app,
                "creating",
                Span::styled(pods_in(app, &st.creating_pods), role(app, Role::StatusWarn)),
            ));
        }
        if !st.deleting_pods.is_empty() {
            lines.push(field(
                app,
                "deleting",
                Span::styled(pods_in(app, &st.deleting_pods), role(app, Role::StatusWarn)),
            ));
        }
    }
    lines
}

fn detail(app: &App, view: &WorkloadSpreadsView, area: Rect, buf: &mut Buffer) {
    let (ns, name) = view.detail.clone().unwrap_or_default();
    let block = detail_block(app, format!("WorkloadSpread {ns}/{name}"));
    let spread = match detail_object(app, &view.listing, view.current(), "WorkloadSpread") {
        Ok((_, s)) => s,
        Err(line) => return Paragraph::new(line).block(block).render(area, buf),
    };
    let strategy = spread
        .spec
        .schedule_strategy
        .as_ref()
        .and_then(|s| s.type_.clone())
        .unwrap_or_else(|| "Fixed".to_owned());
    let mut lines = vec![
        field(app, "Target", target(spread)),
        field(app, "Schedule", strategy),
    ];
    for sub in &spread.spec.subsets {
        lines.extend(subset_lines(app, spread, sub));
    }
    let pods = view.pods_of(spread);
    let rest = detail_head(lines, block, area, buf);
    let offset = table_offset(view.selected, view.offset, rest);
    let spec = TableSpec {
        title: Line::from(format!(" Pods per subset [{}] ", pods.len())),
        title_right: Line::from(" enter: pod "),
        columns: vec![
            Column::new("SUBSET", Constraint::Length(14), 0),
            Column::new("POD", Constraint::Fill(1), 0),
            Column::new("NODE", Constraint::Length(16), 0),
            Column::new("PHASE", Constraint::Length(11), 1),
            Column::new("READY", Constraint::Length(5), 1),
        ],
        len: pods.len(),
        selected: view.selected,
        offset,
        empty: vec![Line::styled(
            "No pod carries this spread's matched-workloadspread annotation",
            role(app, Role::Muted),
        )],
    };
    table::render(spec, &app.theme, rest, buf, |i| {
        let Some(p) = pods.get(i) else {
            return Vec::new();
        };
        let phase = if p.terminating {
            Span::styled("Terminating", role(app, Role::StatusWarn))
        } else {
            Span::raw(p.phase.clone())
        };
        vec![
            Cell::from(p.subset.clone()),
            Cell::from(p.name.clone()),
            Cell::from(if p.node.is_empty() {
                "(unscheduled)".to_owned()
            } else {
                p.node.clone()
            }),
            Cell::from(phase),
            Cell::from(if p.ready { "yes" } else { "no" }),
        ]
    });
}
