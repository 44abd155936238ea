//! Kruise v1.9's CloneSet conditions in the console (fixed clock): triage ranks a
//! `Progressing=False/ProgressDeadlineExceeded` CloneSet first with upstream's message, and the
//! rollout view shows the Progressing condition, the deadline left and past failures as
//! history.

use crate::acting;
use crate::harness;

use harness::{Harness, NOW, apply, fixture};
use kruise_tui::{
    api::CloneSet,
    app::{
        Kind, Msg,
        msg::{EffectResult, ObjectRef},
    },
};
use serde_json::{Value, json};

fn at(secs_before_now: i64) -> String {
    let now: jiff::Timestamp = NOW.parse().expect("fixed clock");
    jiff::Timestamp::from_second(now.as_second() - secs_before_now)
        .expect("time")
        .to_string()
}

/// The fixture CloneSet `name` with `progressDeadlineSeconds` and status `conditions`.
fn with_conditions(h: &mut Harness, name: &str, pds: i64, conditions: Value) {
    let mut cs: Vec<CloneSet> = fixture("clonesets.yaml");
    cs.retain(|c| c.metadata.name.as_deref() == Some(name));
    let mut value = serde_json::to_value(&cs[0]).expect("CloneSet serializes");
    value["spec"]["progressDeadlineSeconds"] = json!(pds);
    value["status"]["conditions"] = conditions;
    let cs: CloneSet = serde_json::from_value(value).expect("CloneSet parses");
    apply(&mut h.writers.clonesets, vec![cs]);
    h.feed(Msg::StoreChanged(Kind::CloneSet));
}

fn exceeded() -> Value {
    json!([{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
            "message": "CloneSet revision web-7d9fbc8c4 has timed out progressing",
            "lastUpdateTime": at(60), "lastTransitionTime": at(60)}])
}

fn web() -> ObjectRef {
    ObjectRef {
        kind: Kind::CloneSet,
        namespace: Some("demo".into()),
        name: "web".into(),
    }
}

/// The web rollout view (its plan and events answered).
fn web_rollout(h: &mut Harness) {
    h.press(&["j", "j", "j", "enter"]);
    h.feed(Msg::EffectDone(EffectResult::RolloutPlan {
        workload: web(),
        result: Box::new(Ok(acting::prediction())),
    }));
    h.feed(Msg::EffectDone(EffectResult::RolloutEvents {
        workload: web(),
        result: Ok(acting::events()),
    }));
}

#[test]
fn triage_ranks_an_exceeded_deadline_first_with_upstreams_message() {
    let mut h = Harness::loaded(Some("demo"), (150, 16));
    with_conditions(&mut h, "web", 30, exceeded());
    h.command("triage");
    let rows = &h.app.oncall().triage;
    // web's partition holds it as planned, so only the controller's verdict makes it stuck;
    // it outranks api's stuck rollout, which the console guesses from its pods.
    assert_eq!(rows[0].subject, "CloneSet demo/web");
    assert_eq!(
        rows[0].why,
        "CloneSet revision web-7d9fbc8c4 has timed out progressing (2/2 updated)"
    );
    assert_eq!(rows[1].subject, "CloneSet demo/api");
    insta::assert_snapshot!(h.screen());
}

#[test]
fn rollout_view_shows_progressing_the_deadline_left_and_past_failures() {
    let mut h = Harness::loaded(None, (120, 32));
    with_conditions(
        &mut h,
        "web",
        30,
        json!([
            {"type": "FailedUpdate", "status": "True", "lastTransitionTime": at(240),
             "message": "pod web-4xk2p: the server rejected our request"},
            {"type": "Progressing", "status": "True", "reason": "CloneSetUpdated",
             "message": "CloneSet is progressing", "lastUpdateTime": at(10),
             "lastTransitionTime": at(600)}
        ]),
    );
    web_rollout(&mut h);
    let screen = h.screen();
    assert!(
        screen
            .contains("True CloneSetUpdated  CloneSet is progressing  · deadline in 20s (of 30s)"),
        "{screen}"
    );
    assert!(
        screen.contains("FailedUpdate since 2026-01-10 11:56:00Z (4m ago)"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
}

#[test]
fn rollout_view_shows_an_exceeded_deadline() {
    let mut h = Harness::loaded(None, (120, 30));
    with_conditions(&mut h, "web", 30, exceeded());
    web_rollout(&mut h);
    let screen = h.screen();
    assert!(
        screen.contains(
            "False ProgressDeadlineExceeded  CloneSet revision web-7d9fbc8c4 has timed out progressing"
        ),
        "{screen}"
    );
    assert!(!screen.contains("deadline in"), "{screen}");
    insta::assert_snapshot!(screen);
}
