//! In-place restarts, one pod after another: before each pod the port checks that its
//! PodUnavailableBudget allows one more unavailable pod (waiting while it does not), the
//! ContainerRecreateRequest is created through the action layer (SSAR, read-only, journal),
//! watched until Completed (every change reported), and the pod must be Ready again before the
//! next one starts. The console reports through messages, `kruise-tui restart` prints.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client, runtime::wait::await_condition};

use super::{act::Actor, guard::pod_budget_verdict};
pub use crate::app::restart::{Step, Update};
use crate::{
    actions::{Action, ObjectState, Prepared, Target, guard::Verdict},
    api::{ContainerRecreateRequest, pod::is_ready},
    kruise::pub_budget::PubOperation,
};

/// How long each wait (budget, request, readiness) may take, and when to stop.
pub struct Limits {
    pub timeout: Duration,
    /// False: refuse (rather than wait) while the budget allows no disruption, and stop once
    /// the request is created.
    pub wait: bool,
    /// Cancelled: no further pod starts; the pod in flight finishes (Ctrl-C, `Esc`).
    pub stop: tokio_util::sync::CancellationToken,
}

fn crr_step(pod: &str, crr: &ContainerRecreateRequest) -> Step {
    let status = crr.status.clone().unwrap_or_default();
    Step {
        pod: pod.to_owned(),
        crr: crr.metadata.name.clone(),
        state: if status.phase.is_empty() {
            "Pending".to_owned()
        } else {
            status.phase.clone()
        },
        containers: status
            .container_recreate_states
            .iter()
            .map(|s| (s.name.clone(), s.phase.clone(), s.message.clone()))
            .collect(),
        message: status.message.clone(),
    }
}

/// Restarts `first` (prepared and confirmed already, when given) and then `rest`, one after
/// another. Returns the names of the requests created.
pub async fn run(
    actor: &Actor,
    client: &Client,
    first: Option<(Prepared, ObjectState)>,
    rest: Vec<Target>,
    action: &Action,
    limits: &Limits,
    report: &(dyn Fn(Update) + Send + Sync),
) -> Result<Vec<String>, String> {
    let mut pods: Vec<(Target, Option<(Prepared, ObjectState)>)> = Vec::new();
    if let Some((p, s)) = first {
        pods.push((p.target.clone(), Some((p, s))));
    }
    pods.extend(rest.into_iter().map(|t| (t, None)));
    let mut created = Vec::new();
    let total = pods.len();
    for (started, (target, prepared)) in pods.into_iter().enumerate() {
        if limits.stop.is_cancelled() {
            let why = format!(
                "stopped after {started} of {total} pod(s) (asked to stop): {}",
                if created.is_empty() {
                    "none restarted".to_owned()
                } else {
                    created.join(", ")
                }
            );
            return Err(why);
        }
        let name = target.name.clone();
        let mut step = Step::queued(&name);
        let ns = target.namespace.clone().unwrap_or_default();
        // The budget, with the port, before each pod: wait while it allows no disruption.
        let deadline = tokio::time::Instant::now() + limits.timeout;
        let (prepared, state) = loop {
            let (prepared, state) = match &prepared {
                Some((p, s)) if created.is_empty() => (p.clone(), s.clone()),
                _ => actor
                    .prepare(&target, action)
                    .await
                    .map_err(|e| e.to_string())?,
            };
            match pod_budget_verdict(client, &state.object, PubOperation::Update).await {
                Verdict::Denied(why) => {
                    if !limits.wait {
                        return Err(format!("pod {name} not restarted: {why} now"));
                    }
                    step.state = "waiting for the budget".to_owned();
                    step.message = why.clone();
                    report(Update::Step(step.clone()));
                    if tokio::time::Instant::now() > deadline {
                        return Err(format!(
                            "pod {name} not restarted: {why} (waited {}s)",
                            limits.timeout.as_secs()
                        ));
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                _ => break (prepared, state),
            }
        };
        let done = actor
            .perform(prepared, state)
            .await
            .map_err(|e| e.to_string())?;
        let crr_name = done
            .created
            .ok_or_else(|| format!("the server named no request for pod {name}"))?;
        created.push(crr_name.clone());
        step.crr = Some(crr_name.clone());
        step.state = "Pending".to_owned();
        step.message.clear();
        report(Update::Step(step.clone()));
        if !limits.wait {
            continue;
        }

        let crrs: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), &ns);
        let pod_name = name.clone();
        let watched = tokio::time::timeout(
            limits.timeout,
            await_condition(
                crrs,
                &crr_name,
                move |c: Option<&ContainerRecreateRequest>| {
                    let Some(c) = c else {
                        return false;
                    };
                    report(Update::Step(crr_step(&pod_name, c)));
                    c.status.as_ref().is_some_and(|s| s.phase == "Completed")
                },
            ),
        )
        .await;
        let finished = match watched {
            Err(_) => {
                return Err(format!(
                    "{crr_name} did not complete within {}s",
                    limits.timeout.as_secs()
                ));
            }
            Ok(Err(e)) => return Err(format!("cannot watch {crr_name}: {e}")),
            Ok(Ok(None)) => return Err(format!("{crr_name} was deleted before it completed")),
            Ok(Ok(Some(c))) => c,
        };
        let last = crr_step(&name, &finished);
        let failed: Vec<String> = last
            .containers
            .iter()
            .filter(|(_, phase, _)| phase != "Succeeded")
            .map(|(c, phase, msg)| {
                if msg.is_empty() {
                    format!("{c} {phase}")
                } else {
                    format!("{c} {phase}: {msg}")
                }
            })
            .collect();
        if !failed.is_empty() {
            let mut step = last.clone();
            step.state = "failed".to_owned();
            report(Update::Step(step));
            return Err(format!(
                "{crr_name} on pod {name} failed: {}{}",
                failed.join("; "),
                if last.message.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", last.message)
                }
            ));
        }
        // Ready again before the next pod goes.
        let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
        let mut waiting = last.clone();
        waiting.state = "waiting for Ready".to_owned();
        report(Update::Step(waiting));
        let ready = tokio::time::timeout(
            limits.timeout,
            await_condition(pods, &name, |p: Option<&Pod>| p.is_some_and(is_ready)),
        )
        .await;
        match ready {
            Ok(Ok(Some(_))) => {}
            Ok(Ok(None)) => return Err(format!("pod {name} went away after its restart")),
            Ok(Err(e)) => return Err(format!("cannot watch pod {name}: {e}")),
            Err(_) => {
                return Err(format!(
                    "pod {name} was not Ready again within {}s",
                    limits.timeout.as_secs()
                ));
            }
        }
        let mut step = last;
        step.state = "ready again".to_owned();
        report(Update::Step(step));
    }
    let verb = if limits.wait {
        "restarted"
    } else {
        "asked to restart"
    };
    report(Update::Done(Ok(format!(
        "{verb} {total} pod(s) in place: {}",
        created.join(", ")
    ))));
    Ok(created)
}
