//! Rendering only: `render(&App, &mut Frame)` draws the header, banners, the view on top of the
//! navigation stack, the status line and the help overlay. Views read state; they never change
//! it, never sort and never read a clock: ages are relative to the last `Msg::Tick`.
//!
//! Must not depend on kube clients, tokio or any IO.

pub mod broadcastjobs;
pub mod cronjobs;
pub mod dialog;
pub mod distributions;
pub mod events;
pub mod header;
pub mod help;
pub mod images;
pub mod journal;
pub mod logs;
pub mod oncall;
pub mod persistentpodstates;
pub mod pod;
pub mod pods;
pub mod prediction;
pub mod protect;
pub mod rollout;
pub mod seedlist;
pub mod uniteddeployments;
pub mod usage;
pub mod whatif;
pub mod widgets;
pub mod workloads;
pub mod workloadspreads;
pub mod yaml;

use jiff::Timestamp;
use ratatui::{
    Frame,
    layout::{Constraint, Layout},
};

use crate::app::{App, Mode, route::Route};

/// Draws the whole console.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    let banners = app.banner_count() as u16;
    let [head, banner_area, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(banners),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let buf = frame.buffer_mut();
    header::render_header(app, head, buf);
    header::render_banners(app, banner_area, buf);
    match app.top() {
        Route::List(list) if list.scope.is_pods() => pods::render(app, list, body, buf),
        Route::List(list) => workloads::render(app, list, body, buf),
        Route::Yaml(view) => yaml::render(app, view, body, buf),
        Route::Events(view) => events::render(app, view, body, buf),
        Route::Rollout(view) => rollout::render(app, view, body, buf),
        Route::Pod(view) => pod::render(app, view, body, buf),
        Route::Journal(view) => journal::render(app, view, body, buf),
        Route::Protect(view) => protect::render(app, view, body, buf),
        Route::WhatIf(view) => whatif::render(app, view, body, buf),
        Route::Log(view) => logs::render(app, view, body, buf),
        Route::Oncall(view) => oncall::render(app, view, body, buf),
        Route::CronJobs(view) => cronjobs::render(app, view, body, buf),
        Route::BroadcastJobs(view) => broadcastjobs::render(app, view, body, buf),
        Route::WorkloadSpreads(view) => workloadspreads::render(app, view, body, buf),
        Route::UnitedDeployments(view) => uniteddeployments::render(app, view, body, buf),
        Route::Images(view) => images::render(app, view, body, buf),
        Route::PersistentPodStates(view) => persistentpodstates::render(app, view, body, buf),
        Route::Distributions(view) => distributions::render(app, view, body, buf),
    }
    header::render_status(app, status, buf);
    if let Some(overlay) = app.overlay() {
        dialog::render(app, overlay, body, buf);
    }
    if let Mode::Help { scroll } = app.mode {
        help::render(app, scroll, body, buf);
    }
}

/// A kubectl-style age: `45s`, `12m`, `5h`, `3d`; `-` when unknown.
pub fn age(now: Timestamp, then: Option<Timestamp>) -> String {
    let Some(then) = then else {
        return "-".to_owned();
    };
    let secs = (now.as_second() - then.as_second()).max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 120 * 60 => format!("{}m", s / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_like_kubectl() {
        let now: Timestamp = "2026-01-10T12:00:00Z".parse().unwrap();
        let ago = |s: i64| Some(Timestamp::from_second(now.as_second() - s).unwrap());
        assert_eq!(age(now, ago(5)), "5s");
        assert_eq!(age(now, ago(600)), "10m");
        assert_eq!(age(now, ago(3 * 3600)), "3h");
        assert_eq!(age(now, ago(4 * 86400)), "4d");
        assert_eq!(age(now, None), "-");
    }
}
