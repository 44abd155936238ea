//! `r`: restart containers in place. On the selected pod (any pod list, the rollout view, the
//! pod view), on the pods marked with Space in the rollout view, or on a workload (every pod
//! of it, in name order): a form for the containers
//! and the ContainerRecreateRequest strategy, the confirm dialog (with the pod's
//! PodUnavailableBudget verdict), then a panel with each pod's request and per-container state,
//! live, until every pod is Ready again or one fails. Many pods go one after another, each
//! once the previous is Ready again and its budget allows; `Esc` stops after the pod in flight.

use super::{
    App, Effect, Level,
    dialog::{Form, Overlay},
    keys::selection,
    msg::Kind,
    route::Route,
};
use crate::actions::{Action, ObjectState, Prepared, Target};

/// Where one pod's restart is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub pod: String,
    /// The ContainerRecreateRequest, once created.
    pub crr: Option<String>,
    /// `queued`, `waiting for the budget`, `Pending`, `Recreating`, `Completed`,
    /// `waiting for Ready`, `ready again`, `failed`.
    pub state: String,
    /// Per container: name, phase (`Pending`, `Recreating`, `Succeeded`, `Failed`), message.
    pub containers: Vec<(String, String, String)>,
    pub message: String,
}

impl Step {
    pub fn queued(pod: &str) -> Step {
        Step {
            pod: pod.to_owned(),
            crr: None,
            state: "queued".to_owned(),
            containers: Vec::new(),
            message: String::new(),
        }
    }
}

/// One report of a running sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    Step(Step),
    /// The sequence ended: what happened, or why it stopped (one line).
    Done(Result<String, String>),
}

/// What `Effect::Restart` carries: the first pod's request as the dialog showed it, the pods
/// after it, and the action each of them gets.
#[derive(Debug, Clone, PartialEq)]
pub struct RestartRun {
    pub id: u64,
    pub prepared: Prepared,
    pub state: ObjectState,
    pub rest: Vec<Target>,
}

/// The live panel of a running restart.
#[derive(Debug, Clone, PartialEq)]
pub struct RestartPanel {
    pub id: u64,
    pub action: Action,
    pub steps: Vec<Step>,
    pub done: Option<Result<String, String>>,
    /// `Esc` asked it to stop after the pod in flight.
    pub stopping: bool,
}

impl RestartPanel {
    pub fn new(id: u64, action: Action, pods: &[String]) -> Self {
        Self {
            id,
            action,
            steps: pods.iter().map(|p| Step::queued(p)).collect(),
            done: None,
            stopping: false,
        }
    }

    pub fn apply(&mut self, update: Update) {
        match update {
            Update::Step(step) => match self.steps.iter_mut().find(|s| s.pod == step.pod) {
                Some(s) => *s = step,
                None => self.steps.push(step),
            },
            Update::Done(result) => self.done = Some(result),
        }
    }
}

fn pod_target(namespace: &str, name: &str) -> Option<Target> {
    let info = crate::api::kinds::parse_kind("pod").ok()?;
    Some(Target::new(info, Some(namespace), name))
}

/// `r`.
pub fn key(app: &mut App) -> Vec<Effect> {
    if app.readonly {
        app.set_status(Level::Error, "read-only: restart not sent");
        return Vec::new();
    }
    // Marked pods of the rollout view first, else the selected pod.
    let (namespace, pods): (String, Vec<String>) = match app.top() {
        Route::Rollout(view) if !view.marked.is_empty() => (
            view.owner.namespace.clone(),
            view.marked.iter().cloned().collect(),
        ),
        _ => match selection(app) {
            Some(sel) if sel.kind == Kind::Pod => (
                sel.namespace.clone().unwrap_or_default(),
                vec![sel.name.clone()],
            ),
            // On a workload: every pod of it, in name order, one after another.
            Some(sel)
                if matches!(
                    sel.kind,
                    Kind::CloneSet | Kind::StatefulSet | Kind::DaemonSet
                ) =>
            {
                let namespace = sel.namespace.clone().unwrap_or_default();
                let Some(w) = app
                    .workloads
                    .iter()
                    .find(|w| w.kind == sel.kind && w.namespace == namespace && w.name == sel.name)
                else {
                    return Vec::new();
                };
                let mut pods: Vec<String> = app
                    .pod_index
                    .owned(&w.uid)
                    .iter()
                    .map(|p| p.name.clone())
                    .collect();
                pods.sort();
                if pods.is_empty() {
                    let text = format!("{} {namespace}/{} has no pods", sel.kind.title(), sel.name);
                    app.set_status(Level::Info, text);
                    return Vec::new();
                }
                (namespace, pods)
            }
            // On a restart (`:crr`): restart its pod again.
            Some(sel) if sel.kind == Kind::ContainerRecreateRequest => {
                let namespace = sel.namespace.clone().unwrap_or_default();
                match app
                    .oncall
                    .restarts
                    .iter()
                    .find(|r| r.namespace == namespace && r.name == sel.name)
                {
                    Some(r) => (namespace, vec![r.pod.clone()]),
                    None => return Vec::new(),
                }
            }
            _ => {
                app.set_status(
                    Level::Info,
                    "select a pod first (r restarts the selected pod's containers, or the pods \
                     marked with space)",
                );
                return Vec::new();
            }
        },
    };
    let Some(first) = pods.first() else {
        return Vec::new();
    };
    let Some(row) = app
        .pods
        .iter()
        .find(|r| r.namespace == namespace && r.name == *first)
    else {
        app.set_status(
            Level::Error,
            format!("pod {first} is not in the cluster any more"),
        );
        return Vec::new();
    };
    let containers: Vec<String> = row
        .pod
        .spec
        .containers
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    let Some(target) = pod_target(&namespace, first) else {
        return Vec::new();
    };
    app.overlay = Some(Overlay::Form(Box::new(Form::restart(
        target,
        containers,
        pods[1..].to_vec(),
    ))));
    Vec::new()
}

/// The form was submitted: prepare the first pod, and remember the pods after it.
pub fn submitted(app: &mut App, target: Target, action: Action, rest: Vec<String>) -> Vec<Effect> {
    let namespace = target.namespace.clone().unwrap_or_default();
    let effects = app.prepare(target, action);
    if let Some(Overlay::Busy { id, .. }) = &app.overlay {
        let rest = rest
            .iter()
            .filter_map(|p| pod_target(&namespace, p))
            .collect();
        app.restart_batch = Some((*id, rest));
    }
    effects
}

/// The pods queued after the one a confirm dialog shows (empty for a single pod).
pub fn batch_for(app: &App, id: u64) -> Vec<Target> {
    match &app.restart_batch {
        Some((batch, rest)) if *batch == id => rest.clone(),
        _ => Vec::new(),
    }
}

/// The user confirmed a restart: run it (and the queued pods) and open the live panel.
pub fn confirmed(app: &mut App, id: u64, prepared: Prepared, state: ObjectState) -> Vec<Effect> {
    let rest = batch_for(app, id);
    app.restart_batch = None;
    let mut pods = vec![prepared.target.name.clone()];
    pods.extend(rest.iter().map(|t| t.name.clone()));
    app.overlay = Some(Overlay::Restart(Box::new(RestartPanel::new(
        id,
        prepared.action.clone(),
        &pods,
    ))));
    vec![Effect::Restart(Box::new(RestartRun {
        id,
        prepared,
        state,
        rest,
    }))]
}

/// A report from the kube layer.
pub fn progress(app: &mut App, id: u64, update: Update) {
    if let Update::Done(result) = &update {
        match result {
            Ok(text) => app.set_status(Level::Info, text.clone()),
            Err(why) => app.set_status(Level::Error, why.clone()),
        }
    }
    if let Some(Overlay::Restart(panel)) = &mut app.overlay
        && panel.id == id
    {
        panel.apply(update);
    }
}
