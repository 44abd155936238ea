//! The seam between the runtime and the console state: what the event loop needs from `App`.
//!
//! The loop is generic over [`Console`] so it runs against the real `App` and, in tests, against
//! a scripted one. `App` implements it by delegating to `app::update`, `App::should_quit`, its
//! redraw flag and `view::render`.

use ratatui::Frame;

use crate::app::{Effect, Msg};

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
}
