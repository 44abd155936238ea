//! The pod detail (Enter on a pod): node, phase, revision and lifecycle state; containers with
//! their images, readiness, restarts and state; conditions; readiness gates; and the in-place
//! update state Kruise records in `apps.kruise.io/inplace-update-state`. Read live from the
//! store.

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use super::{age, header::role};
use crate::{
    api::{SlimPod, keys, pod::SlimContainerState, podstate::InPlaceUpdateState},
    app::{App, route::PodView, rows},
    config::Role,
};

pub fn render(app: &App, view: &PodView, area: Rect, buf: &mut Buffer) {
    let block = super::rollout::block(app, format!(" Pod {}/{} ", view.namespace, view.name));
    let inner = block.inner(area);
    block.render(area, buf);
    let lines = match app.stores.pods.get(&view.namespace, &view.name) {
        Some(pod) => lines(app, &pod, view.container),
        None => vec![Line::styled(
            "This pod is gone (deleted, or not listed yet).",
            role(app, Role::Muted),
        )],
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((view.scroll.min(u16::MAX as usize) as u16, 0))
        .render(inner, buf);
}

fn section(app: &App, title: &str) -> Line<'static> {
    Line::styled(title.to_owned(), role(app, Role::TableHeader))
}

fn field(app: &App, k: &str, v: String) -> [Span<'static>; 2] {
    [
        Span::styled(format!("{k} "), role(app, Role::HeaderKey)),
        Span::styled(v, role(app, Role::HeaderValue)),
    ]
}

/// `chosen`: the container `c` picked (marked ▸ when the pod has several).
fn lines(app: &App, pod: &SlimPod, chosen: usize) -> Vec<Line<'static>> {
    let meta = &pod.metadata;
    let labels = &meta.labels;
    let mut out = Vec::new();
    let status = rows::pod_status(pod);
    let mut first: Vec<Span> = Vec::new();
    first.extend(field(app, "status", status));
    first.push(Span::raw("  "));
    first.extend(field(
        app,
        "node",
        pod.spec.node_name.as_deref().unwrap_or("-").to_owned(),
    ));
    first.push(Span::raw("  "));
    first.extend(field(
        app,
        "ip",
        pod.status.pod_ip.as_deref().unwrap_or("-").to_owned(),
    ));
    first.push(Span::raw("  "));
    first.extend(field(
        app,
        "age",
        age(app.now, meta.creation_timestamp.as_ref().map(|t| t.0)),
    ));
    out.push(Line::from(first));
    let mut second: Vec<Span> = Vec::new();
    second.extend(field(
        app,
        "revision",
        labels
            .get(keys::CONTROLLER_REVISION_HASH)
            .unwrap_or("-")
            .to_owned(),
    ));
    second.push(Span::raw("  "));
    second.extend(field(
        app,
        "lifecycle state",
        labels.get(keys::LIFECYCLE_STATE).unwrap_or("-").to_owned(),
    ));
    if meta.deletion_timestamp.is_some() {
        second.push(Span::styled("  terminating", role(app, Role::StatusWarn)));
    }
    out.push(Line::from(second));
    out.push(Line::default());

    out.push(section(app, "Containers"));
    let several = pod.spec.containers.len() > 1;
    for (i, c) in pod.spec.containers.iter().enumerate() {
        let st = pod
            .status
            .container_statuses
            .iter()
            .find(|s| s.name == c.name);
        let ready = st.is_some_and(|s| s.ready);
        let restarts = st.map_or(0, |s| s.restart_count);
        let mut spans = vec![
            Span::styled(
                match (several && i == chosen, ready) {
                    (true, true) => "▸ ✓ ",
                    (true, false) => "▸ ✗ ",
                    (false, true) => "  ✓ ",
                    (false, false) => "  ✗ ",
                },
                role(
                    app,
                    if ready {
                        Role::StatusOk
                    } else {
                        Role::StatusWarn
                    },
                ),
            ),
            Span::styled(format!("{}  ", c.name), role(app, Role::Text)),
            Span::styled(c.image.to_string(), role(app, Role::HeaderValue)),
            Span::styled(
                format!("  restarts {restarts}"),
                role(
                    app,
                    if restarts > 0 {
                        Role::StatusWarn
                    } else {
                        Role::Muted
                    },
                ),
            ),
        ];
        if let Some(state) = st.and_then(|s| s.state.as_ref()) {
            spans.push(Span::styled(
                format!("  {}", describe_state(app, state)),
                role(app, Role::Muted),
            ));
        }
        out.push(Line::from(spans));
        if let Some(s) = st
            && !s.image.is_empty()
            && s.image != c.image
        {
            out.push(Line::styled(
                format!(
                    "      running image {} (the spec asks for {})",
                    s.image, c.image
                ),
                role(app, Role::StatusWarn),
            ));
        }
        if let Some(last) = st
            .and_then(|s| s.last_state.as_ref())
            .and_then(|l| l.terminated.as_ref())
        {
            out.push(Line::styled(
                format!(
                    "      last terminated: {} (exit {}){}",
                    last.reason.as_deref().unwrap_or("-"),
                    last.exit_code.map_or("-".to_owned(), |c| c.to_string()),
                    last.message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ),
                role(app, Role::Muted),
            ));
        }
    }
    out.push(Line::default());

    out.push(section(app, "Conditions"));
    if pod.status.conditions.is_empty() {
        out.push(Line::styled("  none reported", role(app, Role::Muted)));
    }
    for c in &pod.status.conditions {
        let ok = c.status == "True";
        out.push(Line::from(vec![
            Span::styled(format!("  {:<22}", c.type_), role(app, Role::Text)),
            Span::styled(
                format!("{:<6}", c.status),
                role(app, if ok { Role::StatusOk } else { Role::StatusWarn }),
            ),
            Span::styled(
                format!(
                    "{}{}",
                    c.reason.as_deref().unwrap_or(""),
                    c.message
                        .as_deref()
                        .filter(|m| !m.is_empty())
                        .map(|m| format!(" {m}"))
                        .unwrap_or_default()
                ),
                role(app, Role::Muted),
            ),
        ]));
    }
    out.push(Line::default());

    out.push(section(app, "Readiness gates"));
    if pod.spec.readiness_gates.is_empty() {
        out.push(Line::styled("  none", role(app, Role::Muted)));
    }
    for g in &pod.spec.readiness_gates {
        let status = pod
            .status
            .conditions
            .iter()
            .find(|c| c.type_ == g.condition_type)
            .map_or("not reported", |c| c.status.as_str());
        out.push(Line::from(vec![
            Span::styled(format!("  {:<22}", g.condition_type), role(app, Role::Text)),
            Span::styled(
                status.to_owned(),
                role(
                    app,
                    if status == "True" {
                        Role::StatusOk
                    } else {
                        Role::StatusWarn
                    },
                ),
            ),
        ]));
    }
    out.push(Line::default());

    out.push(section(app, "In-place update"));
    out.extend(in_place(app, pod));
    out
}

fn describe_state(app: &App, s: &SlimContainerState) -> String {
    if let Some(r) = &s.running {
        return format!(
            "running for {}",
            age(app.now, r.started_at.as_ref().map(|t| t.0))
        );
    }
    if let Some(w) = &s.waiting {
        return format!("waiting: {}", w.reason.as_deref().unwrap_or("-"));
    }
    if let Some(t) = &s.terminated {
        return format!(
            "terminated: {} (exit {})",
            t.reason.as_deref().unwrap_or("-"),
            t.exit_code.map_or("-".to_owned(), |c| c.to_string())
        );
    }
    String::new()
}

fn in_place(app: &App, pod: &SlimPod) -> Vec<Line<'static>> {
    let muted = role(app, Role::Muted);
    match InPlaceUpdateState::from_annotations(Some(&pod.metadata.annotations)) {
        Ok(None) => vec![Line::styled(
            "  none recorded (never updated in place)",
            muted,
        )],
        Err(err) => vec![Line::styled(
            format!("  {} is not valid: {err}", keys::INPLACE_UPDATE_STATE),
            role(app, Role::StatusError),
        )],
        Ok(Some(state)) => {
            let mut out = vec![Line::from(vec![
                Span::styled("  to revision ", role(app, Role::HeaderKey)),
                Span::styled(state.revision.clone(), role(app, Role::RevisionUpdate)),
                Span::styled(
                    format!(
                        "  started {} ago",
                        age(app.now, state.update_timestamp.as_ref().map(|t| t.0))
                    ),
                    muted,
                ),
            ])];
            let mut what = Vec::new();
            if state.update_images {
                what.push("images");
            }
            if state.update_resources {
                what.push("resources");
            }
            if state.update_env_from_metadata {
                what.push("env from metadata");
            }
            if !what.is_empty() {
                out.push(Line::styled(
                    format!("  updates {}", what.join(", ")),
                    muted,
                ));
            }
            for (name, before) in state
                .last_container_statuses
                .iter()
                .flatten()
                .filter(|(_, b)| !b.image_id.is_empty())
            {
                out.push(Line::styled(
                    format!("  {name}: was image {}", before.image_id),
                    muted,
                ));
            }
            for (name, image) in &state.next_container_images {
                out.push(Line::styled(
                    format!("  {name}: next {image} (waits for higher-priority containers)"),
                    role(app, Role::StatusWarn),
                ));
            }
            out
        }
    }
}
