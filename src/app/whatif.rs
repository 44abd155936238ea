//! `w` what-if: simulate the pending action on an in-memory copy and show the predicted steps;
//! nothing is sent.
//!
//! The pending action is the one in the open confirm dialog (`]` `[` `u` `i` `s` `P` all end
//! there); with no dialog open, in the rollout view or the workloads list, it is the next
//! rollout step (`]`), or — at the last batch — nothing: what the controllers do as things
//! stand. From the dialog, `Esc` in the what-if view returns to the dialog.

use super::{
    App, Effect, Level,
    act::subject,
    dialog::{Confirm, Overlay},
    effect::{Pending, WhatIfRequest},
    route::{Fetch, Route},
};
use crate::actions::{Action, Target, whatif::Simulation};

/// The What-if view.
#[derive(Debug, Clone)]
pub struct WhatIfView {
    pub id: u64,
    pub target: Target,
    /// What is simulated, in words.
    pub what: String,
    pub result: Fetch<Box<Simulation>>,
    pub scroll: usize,
    /// The confirm dialog `w` was pressed in: `Esc` goes back to it.
    pub resume: Option<Box<Confirm>>,
}

fn open(
    app: &mut App,
    target: Target,
    what: String,
    pending: Pending,
    resume: Option<Box<Confirm>>,
) -> Vec<Effect> {
    let id = app.next_id();
    app.stack.push(Route::WhatIf(Box::new(WhatIfView {
        id,
        target: target.clone(),
        what,
        result: Fetch::Loading,
        scroll: 0,
        resume,
    })));
    vec![Effect::WhatIf(Box::new(WhatIfRequest {
        id,
        target,
        pending,
    }))]
}

/// `w` with no dialog open: the next rollout step of the selected workload.
pub fn key(app: &mut App) -> Vec<Effect> {
    if matches!(app.top(), Route::WhatIf(_)) {
        app.set_status(Level::Info, "this is the what-if: Esc goes back");
        return Vec::new();
    }
    let s = match subject(app) {
        Ok(s) => s,
        Err(why) => {
            app.set_status(Level::Info, why);
            return Vec::new();
        }
    };
    match s.summary.next_step(&app.rollout) {
        Some(step) => {
            let action = Action::Partition {
                value: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(
                    step.partition,
                ),
            };
            let what = format!("next batch: {}", action.describe());
            open(app, s.target, what, Pending::Action(action), None)
        }
        None => open(
            app,
            s.target,
            "no action pending: the controllers as things stand".to_owned(),
            Pending::Nothing,
            None,
        ),
    }
}

/// `w` in the confirm dialog: the action it would send.
pub fn from_confirm(app: &mut App, confirm: Box<Confirm>) -> Vec<Effect> {
    let prepared = confirm.preview.prepared.clone();
    let state = confirm.preview.state.clone();
    let target = prepared.target.clone();
    let what = prepared.action.describe();
    open(
        app,
        target,
        what,
        Pending::Prepared {
            prepared: Box::new(prepared),
            state: Box::new(state),
        },
        Some(confirm),
    )
}

/// The simulation's answer.
pub fn done(app: &mut App, id: u64, result: Result<Box<Simulation>, String>) {
    for route in &mut app.stack {
        if let Route::WhatIf(view) = route
            && view.id == id
        {
            view.result = match result {
                Ok(sim) => Fetch::Loaded(sim),
                Err(why) => Fetch::Failed(why),
            };
            return;
        }
    }
}

/// `Esc` on the What-if view: back to the view below, and to the dialog it came from.
pub fn back(app: &mut App) {
    if let Some(Route::WhatIf(view)) = app.stack.pop()
        && let Some(confirm) = view.resume
    {
        app.overlay = Some(Overlay::Confirm(confirm));
    }
}
