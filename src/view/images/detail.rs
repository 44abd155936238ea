//! One image pre-download object in detail: an ImagePullJob with its image's pull state on each
//! node, an ImageListPullJob with each image's ImagePullJob and pull state per node, a
//! NodeImage with each image tag's phase, progress, version and message.

use ratatui::{
    buffer::Buffer,
    layout::Rect,
    text::{Line, Span},
    widgets::{Paragraph, Widget, Wrap},
};

use crate::{
    api::{ImageListPullJob, ImagePullJob, NodeImage, common::CompletionPolicy, kinds},
    app::{
        App,
        images::{
            ImageKind, ImagesView, Listing,
            pulls::{JobRef, Pull, job_pulls, node_tags},
        },
    },
    config::Role,
    view::{
        age,
        header::role,
        seedlist::{detail_block, detail_object},
    },
};

pub fn render(app: &App, view: &ImagesView, area: Rect, buf: &mut Buffer) {
    let (ns, name) = view.detail.clone().unwrap_or_default();
    let shown = if ns.is_empty() {
        name
    } else {
        format!("{ns}/{name}")
    };
    let singular = view.kind.kind_name();
    let block = detail_block(app, format!("{singular} {shown}"));
    let found = view.has_current().then_some(());
    let lines = match detail_object(app, &view.listing, found, singular) {
        Err(line) => vec![line],
        Ok((l, ())) => match view.kind {
            ImageKind::PullJobs => view
                .pull_job()
                .map(|j| pull_job(app, l, j))
                .unwrap_or_default(),
            ImageKind::ListPullJobs => view
                .list_job()
                .map(|j| list_job(app, l, j))
                .unwrap_or_default(),
            ImageKind::NodeImages => view
                .node_image()
                .map(|n| node_image(app, n))
                .unwrap_or_default(),
        },
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block)
        .render(area, buf);
}

fn field<'a>(app: &App, name: &str, value: impl Into<Span<'a>>) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!(" {name:<18}"), role(app, Role::Muted)),
        value.into(),
    ])
}

fn title<'a>(app: &App, text: String) -> Line<'a> {
    Line::styled(text, role(app, Role::Title))
}

fn time(app: &App, t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> String {
    t.map_or_else(
        || "-".to_owned(),
        |t| {
            format!(
                "{} ({} ago)",
                t.0.strftime("%Y-%m-%d %H:%M UTC"),
                age(app.now, Some(t.0))
            )
        },
    )
}

fn phase_role(phase: &str) -> Role {
    match phase {
        "Succeeded" => Role::StatusOk,
        "Failed" => Role::StatusError,
        _ => Role::StatusWarn,
    }
}

fn completion(p: &CompletionPolicy) -> String {
    let secs = |s: Option<i64>| s.map_or_else(|| "-".to_owned(), |s| format!("{s}s"));
    format!(
        "{}; active deadline {}; ttl after finished {}",
        p.type_.as_deref().unwrap_or("Always"),
        secs(p.active_deadline_seconds),
        secs(p.ttl_seconds_after_finished.map(i64::from))
    )
}

fn parallelism(p: Option<&k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>) -> String {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match p {
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        // Upstream pulls on one node at a time when unset.
        None => "1".to_owned(),
    }
}

/// Which nodes a job pulls on, as its spec says.
fn selection(
    selector: Option<&crate::api::imagepulljob::ImagePullJobNodeSelector>,
    pods: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
) -> String {
    let labels = |s: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector| {
        let mut terms: Vec<String> = s
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        terms.extend(s.match_expressions.iter().flatten().map(|e| {
            format!(
                "{} {} ({})",
                e.key,
                e.operator,
                e.values.as_deref().unwrap_or_default().join(",")
            )
        }));
        terms.join(", ")
    };
    if let Some(p) = pods {
        return format!("nodes of the pods {}", labels(p));
    }
    match selector {
        Some(s) if !s.names.is_empty() => format!("nodes {}", s.names.join(", ")),
        Some(s) if !labels(&s.label_selector).is_empty() => {
            format!("nodes labelled {}", labels(&s.label_selector))
        }
        _ => "every node".to_owned(),
    }
}

/// The pull state per node, one line each, under a heading.
fn pull_lines<'a>(app: &App, listing: &Listing, pulls: &[Pull], indent: &str) -> Vec<Line<'a>> {
    if let Err(e) = &listing.node_images {
        return vec![Line::styled(
            format!("{indent}{e}"),
            role(app, Role::StatusError),
        )];
    }
    if pulls.is_empty() {
        return vec![Line::styled(
            format!("{indent}no node asked yet"),
            role(app, Role::Muted),
        )];
    }
    let mut lines = vec![Line::styled(
        format!(
            "{indent}{:<16} {:<10} {:>8}  {:<8} MESSAGE",
            "NODE", "PHASE", "PROGRESS", "VERSION"
        ),
        role(app, Role::Muted),
    )];
    for p in pulls {
        lines.push(Line::from(vec![
            Span::raw(format!("{indent}{:<16} ", p.node)),
            Span::styled(format!("{:<10} ", p.phase), role(app, phase_role(&p.phase))),
            Span::raw(format!(
                "{:>8}  {:<8} {}",
                p.progress
                    .map_or_else(|| "-".to_owned(), |n| format!("{n}%")),
                version(p),
                p.message
            )),
        ]));
    }
    lines
}

/// `v2`, or `v1→v2` while a new round is asked for.
fn version(p: &Pull) -> String {
    match (p.version, p.wanted) {
        (Some(v), Some(w)) if v != w => format!("v{v}→v{w}"),
        (Some(v), _) => format!("v{v}"),
        (None, Some(w)) => format!("→v{w}"),
        (None, None) => "-".to_owned(),
    }
}

fn job_ref(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> JobRef<'_> {
    JobRef {
        uid: meta.uid.as_deref().unwrap_or_default(),
        namespace: meta.namespace.as_deref().unwrap_or_default(),
        name: meta.name.as_deref().unwrap_or_default(),
    }
}

fn pull_job<'a>(app: &App, listing: &Listing, job: &ImagePullJob) -> Vec<Line<'a>> {
    let s = job.status.clone().unwrap_or_default();
    let spec = &job.spec;
    let mut lines = vec![
        field(app, "Image", spec.image.clone()),
        field(
            app,
            "Nodes",
            format!(
                "{} desired, {} active, {} succeeded, {} failed",
                s.desired, s.active, s.succeeded, s.failed
            ),
        ),
        field(
            app,
            "Pulls on",
            selection(spec.selector.as_ref(), spec.pod_selector.as_ref()),
        ),
        field(app, "Parallelism", parallelism(spec.parallelism.as_ref())),
        field(app, "Completion", completion(&spec.completion_policy)),
    ];
    let pull = spec.pull_policy.clone().unwrap_or_default();
    lines.push(field(
        app,
        "Pull policy",
        format!(
            "{}; timeout {}s, backoff limit {}",
            spec.image_pull_policy.as_deref().unwrap_or("IfNotPresent"),
            pull.timeout_seconds.unwrap_or(600),
            pull.backoff_limit.unwrap_or(3)
        ),
    ));
    lines.push(field(app, "Started", time(app, s.start_time.as_ref())));
    lines.push(field(
        app,
        "Completed",
        time(app, s.completion_time.as_ref()),
    ));
    if let Some(m) = s.message.as_ref().filter(|m| !m.is_empty()) {
        lines.push(field(app, "Message", m.clone()));
    }
    if !s.failed_nodes.is_empty() {
        lines.push(field(
            app,
            "Failed nodes",
            Span::styled(s.failed_nodes.join(", "), role(app, Role::StatusError)),
        ));
    }
    lines.push(Line::from(""));
    let pulls = job_pulls(job_ref(&job.metadata), &spec.image, listing.node_images());
    lines.push(title(
        app,
        format!(" Pull state per node ({})", pulls.len()),
    ));
    lines.extend(pull_lines(app, listing, &pulls, "   "));
    lines
}

fn list_job<'a>(app: &App, listing: &Listing, job: &ImageListPullJob) -> Vec<Line<'a>> {
    let s = job.status.clone().unwrap_or_default();
    let spec = &job.spec;
    let mut lines = vec![
        field(app, "Images", spec.images.len().to_string()),
        field(
            app,
            "ImagePullJobs",
            format!(
                "{} desired, {} active, {} succeeded, {} completed",
                s.desired, s.active, s.succeeded, s.completed
            ),
        ),
        field(
            app,
            "Pulls on",
            selection(spec.selector.as_ref(), spec.pod_selector.as_ref()),
        ),
        field(app, "Parallelism", parallelism(spec.parallelism.as_ref())),
        field(app, "Completion", completion(&spec.completion_policy)),
        field(app, "Started", time(app, s.start_time.as_ref())),
        field(app, "Completed", time(app, s.completion_time.as_ref())),
    ];
    for f in &s.failed_image_statuses {
        lines.push(field(
            app,
            "Failed image",
            Span::styled(
                format!(
                    "{} ({}): {}",
                    f.name.as_deref().unwrap_or_default(),
                    f.image_pull_job.as_deref().unwrap_or_default(),
                    f.message.as_deref().unwrap_or_default()
                ),
                role(app, Role::StatusError),
            ),
        ));
    }
    let (ns, name) = (
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default(),
    );
    let uid = job.metadata.uid.as_deref().unwrap_or_default();
    // The ImagePullJobs this list job created, one per image (upstream: owned by it).
    let children: Vec<&ImagePullJob> = listing
        .pull_jobs
        .iter()
        .filter(|p| p.metadata.namespace.as_deref().unwrap_or_default() == ns)
        .filter(|p| {
            p.metadata.owner_references.iter().flatten().any(|o| {
                kinds::of_owner(o) == Some(&kinds::IMAGE_LIST_PULL_JOB)
                    && (o.uid == uid || (uid.is_empty() && o.name == name))
            })
        })
        .collect();
    for image in &spec.images {
        lines.push(Line::from(""));
        let Some(child) = children.iter().find(|c| c.spec.image == *image) else {
            lines.push(title(app, format!(" {image}")));
            lines.push(Line::styled(
                "   no ImagePullJob for it yet",
                role(app, Role::Muted),
            ));
            continue;
        };
        let cs = child.status.clone().unwrap_or_default();
        lines.push(Line::from(vec![
            Span::styled(format!(" {image}"), role(app, Role::Title)),
            Span::styled(
                format!(
                    "  ImagePullJob {}: {}/{} nodes succeeded, {} failed",
                    child.metadata.name.as_deref().unwrap_or_default(),
                    cs.succeeded,
                    cs.desired,
                    cs.failed
                ),
                role(app, Role::Muted),
            ),
        ]));
        let pulls = job_pulls(job_ref(&child.metadata), image, listing.node_images());
        lines.extend(pull_lines(app, listing, &pulls, "   "));
    }
    lines
}

fn node_image<'a>(app: &App, ni: &NodeImage) -> Vec<Line<'a>> {
    let s = ni.status.clone().unwrap_or_default();
    let mut lines = vec![
        field(app, "Node", ni.metadata.name.clone().unwrap_or_default()),
        field(
            app,
            "Images",
            format!(
                "{} desired, {} pulling, {} succeeded, {} failed",
                s.desired, s.pulling, s.succeeded, s.failed
            ),
        ),
    ];
    if let Some(sync) = &s.first_sync_status {
        lines.push(field(
            app,
            "First sync",
            format!(
                "{} {} {}",
                sync.status.as_deref().unwrap_or("-"),
                time(app, sync.sync_at.as_ref()),
                sync.message.as_deref().unwrap_or_default()
            ),
        ));
    }
    lines.push(Line::from(""));
    let tags = node_tags(ni);
    lines.push(title(app, format!(" Images on this node ({})", tags.len())));
    if tags.is_empty() {
        lines.push(Line::styled("   none", role(app, Role::Muted)));
        return lines;
    }
    lines.push(Line::styled(
        format!(
            "   {:<28} {:<10} {:<10} {:>8}  {:<8} {:<22} MESSAGE",
            "IMAGE", "TAG", "PHASE", "PROGRESS", "VERSION", "ASKED BY"
        ),
        role(app, Role::Muted),
    ));
    for t in tags {
        let p = &t.pull;
        let jobs = if t.jobs.is_empty() {
            "-".to_owned()
        } else {
            t.jobs.join(", ")
        };
        lines.push(Line::from(vec![
            Span::raw(format!("   {:<28} {:<10} ", t.image, t.tag)),
            Span::styled(format!("{:<10} ", p.phase), role(app, phase_role(&p.phase))),
            Span::raw(format!(
                "{:>8}  {:<8} {:<22} {}",
                p.progress
                    .map_or_else(|| "-".to_owned(), |n| format!("{n}%")),
                version(p),
                jobs,
                p.message
            )),
        ]));
    }
    lines
}
