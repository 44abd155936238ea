//! The image pre-download views: `:imagepulljobs` (image, nodes desired/active/succeeded/failed,
//! completion, age), `:imagelistpulljobs` (images, ImagePullJobs desired/active/succeeded/
//! completed, failed images) and `:nodeimages` (per node: images desired/pulling/succeeded/
//! failed); Enter shows one object with the pull state per node or per image ([`detail`]).

mod detail;

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::Span,
};

use super::{
    age,
    header::role,
    seedlist::list_table,
    widgets::table::{self, Cell, Column},
};
use crate::{
    api::{ImageListPullJob, ImagePullJob, NodeImage},
    app::{
        App,
        images::{ImageKind, ImagesView},
    },
    config::Role,
};

pub fn render(app: &App, view: &ImagesView, area: Rect, buf: &mut Buffer) {
    if view.detail.is_some() {
        return detail::render(app, view, area, buf);
    }
    let listing = view.loaded();
    let none = format!("No {} here", view.kind.kind_name());
    let spec = |columns: Vec<Column>, hint: &str| {
        list_table(app, view, (view.kind.title(), &none), hint, columns)
    };
    match view.kind {
        ImageKind::PullJobs => {
            let jobs = listing.map_or(&[][..], |l| &l.pull_jobs);
            table::render(
                spec(pull_job_columns(), "enter: pull state per node"),
                &app.theme,
                area,
                buf,
                |i| jobs.get(i).map_or_else(Vec::new, |j| pull_job_row(app, j)),
            );
        }
        ImageKind::ListPullJobs => {
            let jobs = listing.map_or(&[][..], |l| &l.list_jobs);
            table::render(
                spec(list_job_columns(), "enter: each image per node"),
                &app.theme,
                area,
                buf,
                |i| jobs.get(i).map_or_else(Vec::new, |j| list_job_row(app, j)),
            );
        }
        ImageKind::NodeImages => {
            let nodes = listing.map_or(&[][..], |l| l.node_images());
            table::render(
                spec(node_image_columns(), "enter: images on the node"),
                &app.theme,
                area,
                buf,
                |i| {
                    nodes
                        .get(i)
                        .map_or_else(Vec::new, |n| node_image_row(app, n))
                },
            );
        }
    }
}

fn pull_job_columns() -> Vec<Column> {
    vec![
        Column::new("NAMESPACE", Constraint::Length(12), 2),
        Column::new("NAME", Constraint::Fill(1), 0),
        Column::new("IMAGE", Constraint::Fill(2), 0),
        Column::new("DESIRED", Constraint::Length(7), 0),
        Column::new("ACTIVE", Constraint::Length(6), 0),
        Column::new("SUCCEEDED", Constraint::Length(9), 0),
        Column::new("FAILED", Constraint::Length(6), 0),
        Column::new("COMPLETED", Constraint::Length(9), 1),
        Column::new("AGE", Constraint::Length(5), 1),
    ]
}

fn pull_job_row<'a>(app: &App, j: &ImagePullJob) -> Vec<Cell<'a>> {
    let s = j.status.clone().unwrap_or_default();
    vec![
        Cell::from(j.metadata.namespace.clone().unwrap_or_default()),
        Cell::from(j.metadata.name.clone().unwrap_or_default()),
        Cell::from(j.spec.image.clone()),
        Cell::from(s.desired.to_string()),
        Cell::from(s.active.to_string()),
        Cell::from(s.succeeded.to_string()),
        failed_cell(app, s.failed),
        completion_cell(
            app,
            s.completion_time.as_ref().map(|t| t.0),
            s.start_time.is_some(),
        ),
        Cell::from(age(app.now, created(&j.metadata))),
    ]
}

fn list_job_columns() -> Vec<Column> {
    vec![
        Column::new("NAMESPACE", Constraint::Length(12), 2),
        Column::new("NAME", Constraint::Fill(1), 0),
        Column::new("IMAGES", Constraint::Fill(2), 0),
        Column::new("JOBS", Constraint::Length(4), 0),
        Column::new("ACTIVE", Constraint::Length(6), 0),
        Column::new("SUCCEEDED", Constraint::Length(9), 0),
        Column::new("FAILED", Constraint::Length(6), 0),
        Column::new("COMPLETED", Constraint::Length(9), 1),
        Column::new("AGE", Constraint::Length(5), 1),
    ]
}

fn list_job_row<'a>(app: &App, j: &ImageListPullJob) -> Vec<Cell<'a>> {
    let s = j.status.clone().unwrap_or_default();
    let images = match j.spec.images.as_slice() {
        [] => "-".to_owned(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} +{}", rest.len()),
    };
    // Upstream's ImageListPullJob has no completion time of its own until every ImagePullJob
    // finished; `completed` counts those.
    let done = s.completion_time.as_ref().map(|t| t.0);
    vec![
        Cell::from(j.metadata.namespace.clone().unwrap_or_default()),
        Cell::from(j.metadata.name.clone().unwrap_or_default()),
        Cell::from(images),
        Cell::from(s.desired.to_string()),
        Cell::from(s.active.to_string()),
        Cell::from(s.succeeded.to_string()),
        failed_cell(app, s.failed_image_statuses.len() as i32),
        match done {
            Some(_) => completion_cell(app, done, true),
            None => Cell::from(format!("{}/{}", s.completed, s.desired)),
        },
        Cell::from(age(app.now, created(&j.metadata))),
    ]
}

fn node_image_columns() -> Vec<Column> {
    vec![
        Column::new("NODE", Constraint::Fill(1), 0),
        Column::new("DESIRED", Constraint::Length(7), 0),
        Column::new("PULLING", Constraint::Length(7), 0),
        Column::new("SUCCEEDED", Constraint::Length(9), 0),
        Column::new("FAILED", Constraint::Length(6), 0),
        Column::new("IMAGES", Constraint::Fill(2), 1),
        Column::new("AGE", Constraint::Length(5), 1),
    ]
}

fn node_image_row<'a>(app: &App, n: &NodeImage) -> Vec<Cell<'a>> {
    let s = n.status.clone().unwrap_or_default();
    let names: Vec<&String> = n.spec.images.keys().collect();
    let images = match names.as_slice() {
        [] => "-".to_owned(),
        [a] => (*a).clone(),
        [a, b] => format!("{a}, {b}"),
        [a, b, rest @ ..] => format!("{a}, {b} +{}", rest.len()),
    };
    vec![
        Cell::from(n.metadata.name.clone().unwrap_or_default()),
        Cell::from(s.desired.to_string()),
        Cell::from(s.pulling.to_string()),
        Cell::from(s.succeeded.to_string()),
        failed_cell(app, s.failed),
        Cell::from(images),
        Cell::from(age(app.now, created(&n.metadata))),
    ]
}

fn created(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<jiff::Timestamp> {
    meta.creation_timestamp.as_ref().map(|t| t.0)
}

fn failed_cell<'a>(app: &App, failed: i32) -> Cell<'a> {
    if failed > 0 {
        Cell::from(Span::styled(
            failed.to_string(),
            role(app, Role::StatusError),
        ))
    } else {
        Cell::from("0")
    }
}

/// How long ago the job completed, `running` while it runs, `-` before it started.
fn completion_cell<'a>(app: &App, done: Option<jiff::Timestamp>, started: bool) -> Cell<'a> {
    match done {
        Some(t) => Cell::from(Span::styled(
            format!("{} ago", age(app.now, Some(t))),
            role(app, Role::StatusOk),
        )),
        None if started => Cell::from(Span::styled("running", role(app, Role::StatusWarn))),
        None => Cell::from("-"),
    }
}
