//! Merge patches (`application/merge-patch+json`), the writes kubectl-kruise makes on a Kruise
//! Rollout: pause and resume on the object, an approval on its `/status`. A conflict (the
//! approval's resourceVersion moved) is re-read and re-prepared, so the preconditions are checked
//! again on the fresh object; an approval is **checked and retried**: the Rollout controller
//! replaces its whole status from the copy it reconciled, which can wipe an approval that landed
//! in between, so after the write the Rollout is read again and, still paused at the same step,
//! the approval is sent again (research `kruise-rollout.md` §7.3; upstream's e2e `ResumeRollout`
//! loops the same way).

use std::time::Duration;

use kube::api::{Patch, PatchParams};

use super::{ActError, Actor, Done, RETRIES, classify};
use crate::actions::{
    self, Action, Prepared,
    rollout::{Approval, approval},
};

/// How many times an approval is sent before giving up (the first included).
pub const APPROVE_TRIES: usize = 5;

/// How long after an approval the Rollout is read again: time for a reconcile that was under
/// way to write its status (and wipe the approval) first.
pub const APPROVE_SETTLE: Duration = Duration::from_millis(500);

impl Actor {
    /// Sends a merge patch (on `/status` when the path ends so), journaling every attempt.
    pub(super) async fn perform_merge(&self, prepared: Prepared) -> Result<Done, ActError> {
        if self.readonly {
            return Err(ActError::ReadOnly(prepared.action.describe()));
        }
        let ar = self.resource(&prepared.target).await?;
        let api = self.api(&prepared.target, &ar);
        let status = prepared.request.path.ends_with("/status");
        let step = match prepared.action {
            Action::Approve { step } => Some(step),
            _ => None,
        };
        let mut prepared = prepared;
        let (mut conflicts, mut sent) = (0, 0);
        loop {
            let body = prepared.request.body.clone();
            let params = PatchParams::default();
            let patch = Patch::Merge(&body);
            let name = prepared.target.name.clone();
            let result = if status {
                api.patch_status(&name, &params, &patch).await
            } else {
                api.patch(&name, &params, &patch).await
            };
            self.journal(&prepared, Self::outcome(&result, 200)).await;
            sent += 1;
            if let Err(err) = result {
                if !matches!(&err, kube::Error::Api(s) if s.code == 409) {
                    return Err(classify(&err));
                }
                if conflicts >= RETRIES {
                    return Err(ActError::Conflict(format!(
                        "{} kept changing ({} attempts)",
                        prepared.target.describe(),
                        conflicts + 1
                    )));
                }
                conflicts += 1;
                let fresh = self.read(&prepared.target, false).await?;
                // The preconditions, checked again on what the object is now.
                prepared =
                    actions::prepare(&prepared.target, &prepared.action, &fresh).map_err(|e| {
                        ActError::Conflict(format!(
                            "{} changed meanwhile: {e}",
                            prepared.target.describe()
                        ))
                    })?;
                continue;
            }
            let Some(step) = step else {
                return Ok(Done {
                    prepared,
                    retries: conflicts,
                    created: None,
                });
            };
            tokio::time::sleep(APPROVE_SETTLE).await;
            let fresh = self.read(&prepared.target, false).await?;
            match approval(step, &fresh.object) {
                Approval::MovedOn(_) => {
                    return Ok(Done {
                        prepared,
                        retries: sent - 1,
                        created: None,
                    });
                }
                Approval::Wiped if sent >= APPROVE_TRIES => {
                    return Err(ActError::Failed(format!(
                        "the approval of step {step} of {} was overwritten {sent} times (the \
                         Rollout controller wrote its status over it): it is still waiting; \
                         look again",
                        prepared.target.describe()
                    )));
                }
                Approval::Wiped => {
                    prepared = actions::prepare(&prepared.target, &prepared.action, &fresh)?;
                }
            }
        }
    }
}
