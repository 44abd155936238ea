//! rollout-validation.json: the Rollout validating webhook (`vrollout.kb.io`) on CREATE and
//! UPDATE of v1beta1 Rollouts.

use kruise_tui::api::rollout::Rollout;
use kruise_tui::kruise::rollout::controller::validate;
use serde_json::{Value, json};

use crate::eval::common::{expect_subset, expected, input, parse};

pub fn validation(op: Option<&str>, case: &Value) -> Result<(), String> {
    let inp = input(case)?;
    let new: Rollout = parse("rollout", &inp["rollout"])?;
    let others: Vec<Rollout> = parse("others", &inp["others"])?;
    let result = match op.ok_or("case has no op")? {
        "validateCreate" => validate::admit(&new, None, None, &others),
        "validateUpdate" => {
            let old: Rollout = parse("old", &inp["old"])?;
            let mut live = old.clone();
            let phase = inp["livePhase"].as_str().unwrap_or_default();
            live.status = Some(kruise_tui::api::rollout::RolloutStatus {
                phase: Some(phase.to_owned()),
                ..Default::default()
            });
            validate::admit(&new, Some(&old), Some(&live), &others)
        }
        other => return Err(format!("unknown op {other:?}")),
    };
    let actual = match &result {
        Ok(()) => json!({"allowed": true}),
        Err(m) => json!({"allowed": false, "message": m}),
    };
    let exp = expected(case)?;
    if let Some(part) = exp.get("messageContains").and_then(Value::as_str) {
        let message = result.as_ref().err().cloned().unwrap_or_default();
        if !message.contains(part) {
            return Err(format!("message {message:?} does not contain {part:?}"));
        }
    }
    expect_subset(&json!({"allowed": exp["allowed"]}), &actual)
}
