//! Scripted key sessions on a Rollout-controlled CloneSet (objects by hand, `rollout_fixture`):
//! `]` approves the current step through the typed confirm step on the Rollout target and
//! confirm emits the Perform; `P` pauses (and resumes) the Rollout, not the CloneSet; `u` offers
//! the Rollout's rollback; `]` where nothing waits for approval sends nothing; a direct partition
//! key still goes to the executor, whose refusal lands on the status line; the same keys on a
//! `:rollouts` row; `:rollouts` and its aliases.

use crate::harness::Harness;
use crate::rollout_fixture::{self as fx, At};
use kruise_tui::{
    actions::{Action, ApiRequest, ObjectState, Prepared, Target},
    api::kinds::{CLONESET, ROLLOUT},
    app::{
        Effect, Msg,
        dialog::Overlay,
        effect::PrepareRequest,
        msg::{EffectResult, Preview},
    },
};
use serde_json::json;

fn prepared(effects: &[Effect]) -> PrepareRequest {
    match effects {
        [Effect::Prepare(req)] => (**req).clone(),
        other => panic!("expected one Prepare, got {other:?}"),
    }
}

fn rollout_target() -> Target {
    Target {
        kind: &ROLLOUT,
        namespace: Some("demo".into()),
        name: "shop-rollout".into(),
    }
}

fn status(h: &Harness) -> String {
    h.app.status().map(|s| s.text.clone()).unwrap_or_default()
}

/// What the action layer would answer for `action` on the Rollout (built by hand: the action
/// layer is another helper's, these tests are about the console's side).
fn preview(action: Action) -> Preview {
    Preview {
        prepared: Prepared {
            target: rollout_target(),
            action,
            request: ApiRequest {
                verb: "PATCH".into(),
                path:
                    "/apis/rollouts.kruise.io/v1beta1/namespaces/demo/rollouts/shop-rollout/status"
                        .into(),
                content_type: "application/merge-patch+json".into(),
                body: json!({"status": {"canaryStatus": {"currentStepState": "StepReady"}}}),
            },
            inverse: None,
            changes: vec!["step 1 StepPaused → StepReady".into()],
            notes: vec![],
            then: vec![],
        },
        state: ObjectState {
            version: "v1beta1".into(),
            plural: "rollouts".into(),
            object: serde_json::to_value(fx::rollout(At::step(1, "StepPaused", 75))).expect("json"),
            revisions: vec![],
        },
        prediction: None,
    }
}

#[test]
fn approve_on_a_step_paused_workload_confirms_then_performs_on_the_rollout() {
    let mut h = fx::harness(At::step(1, "StepPaused", 75), (130, 44));
    fx::open_shop(&mut h);
    let req = prepared(&h.press(&["]"]));
    assert_eq!(req.target, rollout_target());
    assert_eq!(req.action, Action::Approve { step: 1 });
    assert!(matches!(h.app.overlay(), Some(Overlay::Busy { .. })));
    let shown = preview(Action::Approve { step: 1 });
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id: req.id,
        result: Ok(Box::new(shown.clone())),
    }));
    assert!(matches!(h.app.overlay(), Some(Overlay::Confirm(_))));
    let effects = h.press(&["y"]);
    let [Effect::Perform(perform)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(perform.prepared, shown.prepared);
    assert_eq!(perform.prepared.target.kind, &ROLLOUT);
}

#[test]
fn approve_where_nothing_waits_sends_nothing_and_says_why() {
    let mut h = fx::harness(At::step(2, "StepUpgrade", 10), (130, 44));
    fx::open_shop(&mut h);
    assert_eq!(h.press(&["]"]), vec![]);
    assert!(status(&h).contains("nothing to approve"), "{}", status(&h));
    assert!(status(&h).contains("StepUpgrade"), "{}", status(&h));
}

#[test]
fn pause_and_resume_target_the_rollout_not_the_cloneset() {
    let mut h = fx::harness(At::step(2, "StepPaused", 18), (130, 44));
    fx::open_shop(&mut h);
    let req = prepared(&h.press(&["P"]));
    assert_eq!(req.target, rollout_target());
    assert_ne!(req.target.kind, &CLONESET);
    assert_eq!(req.action, Action::Pause);
    h.press(&["esc"]);
    // Paused already: P resumes it.
    fx::put(
        &mut h,
        At {
            paused: true,
            ..At::step(2, "StepPaused", 18)
        },
    );
    let req = prepared(&h.press(&["P"]));
    assert_eq!((req.target, req.action), (rollout_target(), Action::Resume));
}

#[test]
fn undo_offers_the_rollouts_rollback() {
    let mut h = fx::harness(At::step(2, "StepPaused", 18), (130, 44));
    fx::open_shop(&mut h);
    let req = prepared(&h.press(&["u"]));
    assert_eq!(req.target, rollout_target());
    assert_eq!(req.action, Action::Undo { to_revision: None });
}

#[test]
fn the_keys_act_on_the_rollout_from_the_workloads_list_too() {
    let mut h = fx::harness(At::step(1, "StepPaused", 75), (130, 44));
    let at = h
        .app
        .workloads()
        .iter()
        .position(|w| w.name == "shop")
        .expect("shop");
    for _ in 0..at {
        h.press(&["j"]);
    }
    let req = prepared(&h.press(&["]"]));
    assert_eq!(
        (req.target, req.action),
        (rollout_target(), Action::Approve { step: 1 })
    );
}

#[test]
fn a_direct_partition_key_goes_to_the_executor_and_its_refusal_is_shown() {
    let mut h = fx::harness(At::step(2, "StepPaused", 18), (130, 44));
    fx::open_shop(&mut h);
    let req = prepared(&h.press(&["["]));
    assert_eq!(
        req.target.kind, &CLONESET,
        "the guard decides, not the keys"
    );
    let refusal = "CloneSet demo/shop is controlled by Rollout demo/shop-rollout: its partition \
                   and pause are the Rollout's (] approves, P pauses, u rolls back there)";
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id: req.id,
        result: Err(refusal.into()),
    }));
    assert!(h.app.overlay().is_none());
    assert_eq!(status(&h), refusal);
    assert!(
        h.screen()
            .contains("controlled by Rollout demo/shop-rollout")
    );
}

#[test]
fn rollouts_rows_take_the_rollout_keys_and_enter_opens_the_workload() {
    let mut h = fx::harness(At::step(1, "StepPaused", 75), (130, 30));
    for alias in ["rollouts", "rollout", "ro", "rollouts.rollouts.kruise.io"] {
        h.press(&["esc"]);
        assert_eq!(h.command(alias), vec![], "{alias}");
        assert!(
            h.screen().contains("Rollouts (rollouts.kruise.io)"),
            "{alias}"
        );
    }
    let req = prepared(&h.press(&["]"]));
    assert_eq!(
        (req.target, req.action),
        (rollout_target(), Action::Approve { step: 1 })
    );
    h.press(&["esc"]);
    let req = prepared(&h.press(&["P"]));
    assert_eq!((req.target, req.action), (rollout_target(), Action::Pause));
    h.press(&["esc"]);
    assert_eq!(h.press(&["["]), vec![]);
    assert!(
        status(&h).contains("owns CloneSet/shop's partition"),
        "{}",
        status(&h)
    );
    h.press(&["enter"]);
    assert!(
        h.screen().contains("Kruise Rollout demo/shop-rollout"),
        "{}",
        h.screen()
    );
}

#[test]
fn triage_remedies_on_a_stuck_rollout_act_on_the_rollout() {
    let at = At {
        crashing: true,
        ..At::step(2, "StepUpgrade", 900)
    };
    let mut h = fx::harness(at, (140, 30));
    h.command("triage");
    let row = h
        .app
        .oncall()
        .triage
        .iter()
        .position(|p| p.subject == "Rollout demo/shop-rollout")
        .expect("the stuck Rollout is listed");
    for _ in 0..row {
        h.press(&["j"]);
    }
    assert!(h.screen().contains("u rollback"), "{}", h.screen());
    let req = prepared(&h.press(&["u"]));
    assert_eq!(
        (req.target, req.action),
        (rollout_target(), Action::Undo { to_revision: None })
    );
    h.press(&["esc"]);
    let req = prepared(&h.press(&["P"]));
    assert_eq!((req.target, req.action), (rollout_target(), Action::Pause));
}

#[test]
fn a_controlled_rollout_view_asks_for_no_next_batch_plan() {
    let mut h = fx::harness(At::step(1, "StepPaused", 75), (140, 44));
    let rows: Vec<String> = h.app.workloads().iter().map(|w| w.name.clone()).collect();
    let at = rows.iter().position(|n| n == "shop").expect("shop");
    for _ in 0..at {
        h.press(&["j"]);
    }
    let effects = h.press(&["enter"]);
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::PlanRollout { .. })),
        "{effects:?}"
    );
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::FetchRolloutEvents { .. })),
        "the events feed the batch health panel: {effects:?}"
    );
}
