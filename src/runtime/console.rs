//! The seam between the runtime and the console state: what the event loop needs from `App`.
//!
//! The loop is generic over [`Console`] so it runs against the real `App` and, in tests, against
//! a scripted one. `App` implements it by delegating to `app::update`, `App::should_quit`, its
//! redraw flag and `view::render`.

use ratatui::Frame;

use crate::app::{
    Effect, Kind, Msg,
    route::{Route, Scope},
};

/// How far the pod list has loaded, as the frame just drawn shows it (`KRUISE_TUI_TIMINGS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadState {
    /// The rows of the pod list on screen; None when the view on top is not the all-pods list.
    pub pod_rows: Option<usize>,
    /// The pod watch's initial list is complete (its store reported ready).
    pub pods_ready: bool,
}

/// The console state as the event loop drives it.
pub trait Console {
    /// Applies one message (`app::update`), returning the IO it asks for.
    fn update(&mut self, msg: Msg) -> Vec<Effect>;
    /// True once the user asked to leave.
    fn should_quit(&self) -> bool;
    /// True when the screen is stale; clears the flag (the loop draws right after).
    fn take_redraw(&mut self) -> bool;
    /// Draws the whole screen from state (`view::render`).
    fn render(&self, frame: &mut Frame);
    /// How far the pod list has loaded (read only when timings are recorded).
    fn load_state(&self) -> LoadState {
        LoadState::default()
    }
}

impl Console for crate::app::App {
    fn update(&mut self, msg: Msg) -> Vec<Effect> {
        crate::app::update(self, msg)
    }

    fn should_quit(&self) -> bool {
        crate::app::App::should_quit(self)
    }

    fn take_redraw(&mut self) -> bool {
        self.take_dirty()
    }

    fn render(&self, frame: &mut Frame) {
        crate::view::render(self, frame);
    }

    fn load_state(&self) -> LoadState {
        let pod_rows = match self.current() {
            Route::List(list) if matches!(list.scope, Scope::Pods) => Some(list.visible.len()),
            _ => None,
        };
        LoadState {
            pod_rows,
            pods_ready: self.ready.contains(&Kind::Pod),
        }
    }
}
