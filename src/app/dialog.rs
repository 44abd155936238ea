//! Overlays over the current view, which take every key while open: the wait for the kube
//! layer, the input forms (`p` partition, `s` scale, `i` image), the undo revision picker and the
//! typed confirm step every mutation passes through.
//!
//! The confirm dialog shows the exact request and the plan API's prediction; its focus starts
//! on **Cancel**; `y` confirms, `n`/`Esc` cancel, `Enter` activates the focused button,
//! Tab/←/→ move the focus. Only a confirm emits [`Effect::Perform`], with exactly the request
//! shown.

pub mod form;

use crossterm::event::{KeyCode, KeyEvent};

pub use form::{Form, FormKind};

use super::{
    App, Effect, Level,
    effect::{PerformRequest, PrepareRequest},
    msg::{Preview, Revisions},
    route::Fetch,
};
use crate::actions::{Action, Target};

/// What is open over the view.
#[derive(Debug, Clone)]
pub enum Overlay {
    /// Waiting for the kube layer to prepare or send an action. `Esc` stops waiting for a
    /// preparation (its answer is then dropped); a request already sent cannot be called back,
    /// so `Esc` then only hides the wait (the answer still reaches the status line).
    Busy {
        id: u64,
        what: String,
        sending: bool,
    },
    Form(Box<Form>),
    Confirm(Box<Confirm>),
    Revisions(Box<RevisionPicker>),
    /// A running restart, live (`r`).
    Restart(Box<super::restart::RestartPanel>),
}

/// The confirm dialog's buttons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Button {
    Cancel,
    Confirm,
}

/// The typed confirm step.
#[derive(Debug, Clone)]
pub struct Confirm {
    pub id: u64,
    pub preview: Box<Preview>,
    pub focus: Button,
    /// Lines scrolled in the dialog's body.
    pub scroll: u16,
}

/// The undo picker: the workload's revisions, newest first, with the template diff of the
/// highlighted one against the current template.
#[derive(Debug, Clone)]
pub struct RevisionPicker {
    pub id: u64,
    pub target: Target,
    pub revisions: Fetch<Box<Revisions>>,
    pub selected: usize,
    pub scroll: u16,
}

impl RevisionPicker {
    /// The diff of the highlighted revision's template against the current one.
    pub fn diff(&self) -> Vec<String> {
        match &self.revisions {
            Fetch::Loaded(r) => r
                .revisions
                .get(self.selected)
                .map(|rev| crate::actions::template_diff(&r.current, &rev.template))
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

impl App {
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Asks the kube layer to prepare `action` on `target` (waiting overlay meanwhile).
    pub(crate) fn prepare(&mut self, target: Target, action: Action) -> Vec<Effect> {
        if self.readonly {
            self.set_status(
                Level::Error,
                format!("read-only: {} not sent", action.describe()),
            );
            self.overlay = None;
            return Vec::new();
        }
        let id = self.next_id();
        self.overlay = Some(Overlay::Busy {
            id,
            what: format!("preparing {} on {}…", action.describe(), target.describe()),
            sending: false,
        });
        vec![Effect::Prepare(Box::new(PrepareRequest {
            id,
            target,
            action,
        }))]
    }
}

/// Keys while an overlay is open.
pub fn key(app: &mut App, ev: KeyEvent) -> Vec<Effect> {
    let Some(overlay) = app.overlay.take() else {
        return Vec::new();
    };
    match overlay {
        Overlay::Busy { id, what, sending } => {
            match (ev.code, sending) {
                (KeyCode::Esc, false) => {
                    app.set_status(Level::Info, "cancelled: nothing was sent");
                }
                (KeyCode::Esc, true) => app.set_status(
                    Level::Info,
                    "sent; waiting for the server (its answer will show here)",
                ),
                _ => app.overlay = Some(Overlay::Busy { id, what, sending }),
            }
            Vec::new()
        }
        Overlay::Form(mut form) => match form.key(ev) {
            form::Outcome::Open => {
                app.overlay = Some(Overlay::Form(form));
                Vec::new()
            }
            form::Outcome::Cancel => {
                app.set_status(Level::Info, "cancelled: nothing was sent");
                Vec::new()
            }
            form::Outcome::Submit(action) => {
                let target = form.target.clone();
                match &form.kind {
                    FormKind::Restart { then, .. } => {
                        super::restart::submitted(app, target, action, then.clone())
                    }
                    _ => app.prepare(target, action),
                }
            }
        },
        Overlay::Confirm(confirm)
            if app.keymap.action(&crate::config::Key::from_event(&ev))
                == Some(crate::config::Action::WhatIf) =>
        {
            super::whatif::from_confirm(app, confirm)
        }
        Overlay::Confirm(mut confirm) => confirm_key(app, &mut confirm, ev).unwrap_or_else(|| {
            app.overlay = Some(Overlay::Confirm(confirm));
            Vec::new()
        }),
        Overlay::Revisions(mut picker) => picker_key(app, &mut picker, ev).unwrap_or_else(|| {
            app.overlay = Some(Overlay::Revisions(picker));
            Vec::new()
        }),
        Overlay::Restart(mut panel) => {
            let running = panel.done.is_none();
            // Esc on a running restart of many pods stops it after the pod in flight (the
            // panel stays to show it); a second Esc, Enter or q hides the panel.
            if ev.code == KeyCode::Esc && running && !panel.stopping && panel.steps.len() > 1 {
                panel.stopping = true;
                let id = panel.id;
                app.overlay = Some(Overlay::Restart(panel));
                app.set_status(Level::Info, "stopping after the pod in flight…");
                return vec![Effect::StopRestart(id)];
            }
            if matches!(ev.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q')) {
                if running {
                    app.set_status(
                        Level::Info,
                        "the restart goes on; how it ends shows on the status line",
                    );
                }
            } else {
                app.overlay = Some(Overlay::Restart(panel));
            }
            Vec::new()
        }
    }
}

/// `Some(effects)` when the dialog closes.
fn confirm_key(app: &mut App, c: &mut Confirm, ev: KeyEvent) -> Option<Vec<Effect>> {
    let confirm = |app: &mut App, c: &Confirm| {
        let prepared = c.preview.prepared.clone();
        if matches!(prepared.action, Action::Restart { .. }) {
            return super::restart::confirmed(app, c.id, prepared, c.preview.state.clone());
        }
        app.overlay = Some(Overlay::Busy {
            id: c.id,
            what: format!(
                "sending {} to {}…",
                prepared.action.describe(),
                prepared.target.describe()
            ),
            sending: true,
        });
        vec![Effect::Perform(Box::new(PerformRequest {
            id: c.id,
            prepared,
            state: c.preview.state.clone(),
        }))]
    };
    let cancel = |app: &mut App| {
        app.set_status(Level::Info, "cancelled: nothing was sent");
        Vec::new()
    };
    match ev.code {
        KeyCode::Char('y') => Some(confirm(app, c)),
        KeyCode::Char('n') | KeyCode::Esc => Some(cancel(app)),
        KeyCode::Enter => Some(match c.focus {
            Button::Confirm => confirm(app, c),
            Button::Cancel => cancel(app),
        }),
        KeyCode::Tab | KeyCode::BackTab | KeyCode::Left | KeyCode::Right => {
            c.focus = match c.focus {
                Button::Cancel => Button::Confirm,
                Button::Confirm => Button::Cancel,
            };
            None
        }
        KeyCode::Up | KeyCode::Char('k') => {
            c.scroll = c.scroll.saturating_sub(1);
            None
        }
        KeyCode::Down | KeyCode::Char('j') => {
            c.scroll = c.scroll.saturating_add(1);
            None
        }
        KeyCode::PageUp => {
            c.scroll = c.scroll.saturating_sub(10);
            None
        }
        KeyCode::PageDown => {
            c.scroll = c.scroll.saturating_add(10);
            None
        }
        _ => None,
    }
}

fn picker_key(app: &mut App, p: &mut RevisionPicker, ev: KeyEvent) -> Option<Vec<Effect>> {
    let len = match &p.revisions {
        Fetch::Loaded(r) => r.revisions.len(),
        _ => 0,
    };
    match ev.code {
        KeyCode::Esc | KeyCode::Char('n') => {
            app.set_status(Level::Info, "cancelled: nothing was sent");
            Some(Vec::new())
        }
        KeyCode::Up | KeyCode::Char('k') => {
            p.selected = p.selected.saturating_sub(1);
            p.scroll = 0;
            None
        }
        KeyCode::Down | KeyCode::Char('j') => {
            p.selected = (p.selected + 1).min(len.saturating_sub(1));
            p.scroll = 0;
            None
        }
        KeyCode::PageDown => {
            p.scroll = p.scroll.saturating_add(5);
            None
        }
        KeyCode::PageUp => {
            p.scroll = p.scroll.saturating_sub(5);
            None
        }
        KeyCode::Enter => {
            let Fetch::Loaded(revs) = &p.revisions else {
                return None;
            };
            let rev = revs.revisions.get(p.selected)?;
            if rev.template == revs.current {
                app.set_status(
                    Level::Info,
                    format!(
                        "revision {} ({}) is the current template: pick another",
                        rev.number, rev.name
                    ),
                );
                return None;
            }
            let action = Action::Undo {
                to_revision: Some(rev.number),
            };
            Some(app.prepare(p.target.clone(), action))
        }
        _ => None,
    }
}

/// The newest revision whose template differs from the current one (what a plain undo picks).
pub fn default_revision(revs: &Revisions) -> usize {
    revs.revisions
        .iter()
        .position(|r| r.template != revs.current)
        .unwrap_or(0)
}
