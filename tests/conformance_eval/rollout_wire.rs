//! rollout-wire.json: the writes a console sends to a Kruise Rollout (research §5.2 V21, §6,
//! §7.3), built by the action layer the console and the subcommands share: approve is
//! kubectl-kruise's merge patch on `/status` (`{"status":{"canaryStatus":{"currentStepState":
//! "StepReady"}}}`, the console adds a resourceVersion precondition), pause and resume its merge
//! patch of `spec.strategy.paused` on the main resource.

use kruise_tui::actions::{Action, ObjectState, Target, prepare};
use kruise_tui::api::kinds;
use serde_json::{Value, json};

use crate::eval::common::{expect_subset, expected, input};

pub fn wire(op: Option<&str>, case: &Value) -> Result<(), String> {
    let input = input(case)?;
    let want = expected(case)?;
    let rollout = input["rollout"].clone();
    let namespace = rollout["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default");
    let name = rollout["metadata"]["name"].as_str().unwrap_or_default();
    let target = Target::new(&kinds::ROLLOUT, Some(namespace), name);
    let action = match op {
        Some("approve") => Action::Approve {
            step: input["step"]
                .as_i64()
                .and_then(|s| i32::try_from(s).ok())
                .unwrap_or(0),
        },
        Some("pause") => Action::Pause,
        Some("resume") => Action::Resume,
        other => return Err(format!("unknown op {other:?}")),
    };
    let state = ObjectState {
        version: "v1beta1".into(),
        plural: "rollouts".into(),
        object: rollout,
        revisions: Vec::new(),
    };
    let actual = match prepare(&target, &action, &state) {
        Ok(p) => json!({
            "verb": p.request.verb,
            "path": p.request.path,
            "contentType": p.request.content_type,
            "body": p.request.body,
        }),
        Err(e) => json!({"error": e.to_string()}),
    };
    if let (Some(w), Some(a)) = (want["error"].as_str(), actual["error"].as_str()) {
        return if a.contains(w) {
            Ok(())
        } else {
            Err(format!("error {a:?} lacks {w:?}"))
        };
    }
    expect_subset(want, &actual)
}
