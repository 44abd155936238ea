//! Scripted key sessions of the acting console, without a cluster: which effects each key
//! emits, the typed confirm step (focus on Cancel, y / n / Esc / Enter / Tab), forms that
//! refuse bad input and keep it, marks, read-only, journal reverts, and the rollout view's
//! refreshes (asked again only after a change, at most once a second).

use crate::acting;
use crate::harness;

use harness::{Harness, now};
use jiff::ToSpan;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::{
    actions::Action,
    api::SlimPod,
    app::{
        Effect, Kind, Msg,
        dialog::{Button, Overlay},
        effect::PrepareRequest,
        msg::EffectResult,
    },
};
use kube::runtime::watcher;

/// The one `Prepare` in `effects`.
fn prepared(effects: &[Effect]) -> PrepareRequest {
    match effects {
        [Effect::Prepare(req)] => (**req).clone(),
        other => panic!("expected one Prepare, got {other:?}"),
    }
}

fn partition(n: i32) -> Action {
    Action::Partition {
        value: IntOrString::Int(n),
    }
}

/// web's rollout view (demo/web: 5 pods, partition 3).
fn web() -> Harness {
    let mut h = Harness::standard();
    h.press(&["j", "j", "j", "enter"]);
    h
}

fn status(h: &Harness) -> String {
    h.app.status().map(|s| s.text.clone()).unwrap_or_default()
}

#[test]
fn next_batch_prepares_then_confirms_exactly_what_was_shown() {
    let mut h = web();
    let req = prepared(&h.press(&["]"]));
    assert_eq!(req.action, partition(2), "25% → 50% of 5 pods: partition 2");
    assert_eq!(req.target, acting::web_target());
    assert!(matches!(h.app.overlay(), Some(Overlay::Busy { .. })));
    let preview = acting::preview(IntOrString::Int(2));
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id: req.id,
        result: Ok(Box::new(preview.clone())),
    }));
    let Some(Overlay::Confirm(c)) = h.app.overlay() else {
        panic!("confirm dialog");
    };
    assert_eq!(c.focus, Button::Cancel, "focus starts on Cancel");
    // Enter on Cancel closes and sends nothing.
    assert_eq!(h.press(&["enter"]), vec![]);
    assert!(h.app.overlay().is_none());
    assert!(status(&h).contains("nothing was sent"));

    // Again, and confirm with y: the Perform carries the very request shown.
    let req = prepared(&h.press(&["]"]));
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id: req.id,
        result: Ok(Box::new(preview.clone())),
    }));
    let effects = h.press(&["y"]);
    let [Effect::Perform(perform)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(perform.prepared, preview.prepared);
    assert_eq!(perform.state, preview.state);
    // y again while sending does nothing more; esc only hides the wait.
    assert_eq!(h.press(&["y"]), vec![]);
    assert!(matches!(h.app.overlay(), Some(Overlay::Busy { .. })));
    assert_eq!(h.press(&["esc"]), vec![]);
    assert!(h.app.overlay().is_none());
    assert!(status(&h).contains("waiting for the server"));
    h.feed(Msg::EffectDone(EffectResult::Performed {
        id: perform.id,
        target: acting::web_target(),
        result: Ok("sent: partition 3 → 2".into()),
    }));
    assert!(h.app.overlay().is_none());
    assert_eq!(status(&h), "CloneSet demo/web: sent: partition 3 → 2");
}

#[test]
fn n_esc_and_tab_enter_in_the_dialog() {
    let mut h = web();
    for (keys, sends) in [
        (&["n"][..], false),
        (&["esc"][..], false),
        (&["tab", "enter"][..], true),
        (&["right", "left", "enter"][..], false),
    ] {
        let req = prepared(&h.press(&["]"]));
        h.feed(Msg::EffectDone(EffectResult::Prepared {
            id: req.id,
            result: Ok(Box::new(acting::preview(IntOrString::Int(2)))),
        }));
        let effects = h.press(keys);
        assert_eq!(
            matches!(effects.as_slice(), [Effect::Perform(_)]),
            sends,
            "{keys:?}: {effects:?}"
        );
        // Close whatever is left (the wait for a send).
        h.app_overlay_clear();
    }
}

trait Clear {
    fn app_overlay_clear(&mut self);
}

impl Clear for Harness {
    fn app_overlay_clear(&mut self) {
        if let Some(Overlay::Busy { id, .. }) = self.app.overlay() {
            let id = *id;
            self.feed(Msg::EffectDone(EffectResult::Performed {
                id,
                target: acting::web_target(),
                result: Ok("sent".into()),
            }));
        }
    }
}

#[test]
fn refusals_are_one_line_and_no_dialog() {
    let mut h = web();
    let req = prepared(&h.press(&["P"]));
    assert_eq!(req.action, Action::Pause);
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id: req.id,
        result: Err("forbidden: you may not patch clonesets in demo".into()),
    }));
    assert!(h.app.overlay().is_none());
    assert!(
        h.screen()
            .contains("forbidden: you may not patch clonesets in demo")
    );
    // An answer after Esc stopped the wait is dropped.
    let req = prepared(&h.press(&["]"]));
    h.press(&["esc"]);
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id: req.id,
        result: Ok(Box::new(acting::preview(IntOrString::Int(2)))),
    }));
    assert!(h.app.overlay().is_none());
}

#[test]
fn read_only_keys_say_so_and_emit_nothing() {
    let mut h = Harness::loaded_with(None, (120, 24), true);
    assert!(h.screen().contains("READ-ONLY"));
    // In the list and in the rollout view.
    for key in ["]", "[", "p", "P", "u", "i", "s"] {
        assert_eq!(h.press(&[key]), vec![], "{key}");
        assert!(
            status(&h).starts_with("read-only:"),
            "{key}: {}",
            status(&h)
        );
        assert!(h.app.overlay().is_none(), "{key}");
    }
    h.press(&["j", "j", "j", "enter"]);
    for key in ["]", "[", "p", "P", "u", "i", "s"] {
        let effects = h.press(&[key]);
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, Effect::Prepare(_) | Effect::Perform(_))),
            "{key}: {effects:?}"
        );
        assert!(status(&h).starts_with("read-only:"), "{key}");
    }
}

#[test]
fn partition_form_refuses_bad_input_and_keeps_the_text() {
    let mut h = web();
    assert_eq!(h.press(&["p"]), vec![]);
    h.press(&["backspace"]);
    for (text, why) in [
        ("abc", "is not a number of pods"),
        ("150%", "is over 100%"),
        ("-1", "is negative"),
    ] {
        h.type_text(text);
        assert_eq!(h.press(&["enter"]), vec![], "{text} refused");
        let screen = h.screen();
        assert!(screen.contains(why), "{text}: {screen}");
        assert!(screen.contains(&format!("partition: {text}")), "text kept");
        for _ in text.chars() {
            h.press(&["backspace"]);
        }
    }
    h.type_text("40%");
    let req = prepared(&h.press(&["enter"]));
    assert_eq!(
        req.action,
        Action::Partition {
            value: IntOrString::String("40%".into())
        }
    );
}

#[test]
fn marked_pods_are_the_ones_a_scale_down_deletes() {
    let mut h = web();
    h.press(&["z"]); // unbound: nothing happens
    h.press(&["space", "space", "k", "space", "space"]);
    // Space marks and moves on: 4xk2p and 8m3qz marked; back on 8m3qz, unmarked; b7w9n marked.
    let req = {
        h.press(&["s"]);
        prepared(&h.press(&["enter"]))
    };
    assert_eq!(
        req.action,
        Action::Scale {
            replicas: 3,
            pods: vec!["web-4xk2p".into(), "web-b7w9n".into()]
        }
    );
}

#[test]
fn pause_resumes_a_paused_workload_and_keys_work_in_the_list() {
    let mut h = Harness::standard();
    // prod/checkout is paused (5th row); in the list, keys act on the selected workload.
    h.press(&["G"]);
    let req = prepared(&h.press(&["P"]));
    assert_eq!(req.action, Action::Resume);
    assert_eq!(req.target.name, "checkout");
    h.press(&["esc"]);
    // checkout: 2 pods at partition 50% (1 held): `]` lets the last one update.
    let req = prepared(&h.press(&["]"]));
    assert_eq!(req.action, partition(0));
    h.press(&["esc"]);
    // An Advanced DaemonSet has nothing to scale.
    h.press(&["g", "j", "j", "s"]);
    assert!(status(&h).contains("runs one pod per node"));
}

#[test]
fn undo_lists_the_revisions_and_prepares_the_picked_one() {
    let mut h = web();
    let effects = h.press(&["u"]);
    let [Effect::FetchRevisions { id, target }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let mut revisions = acting::web_state().revisions;
    revisions.reverse();
    h.feed(Msg::EffectDone(EffectResult::Revisions {
        id: *id,
        result: Ok(Box::new(kruise_tui::app::msg::Revisions {
            target: target.clone(),
            current: acting::template("nginx:1.27"),
            revisions,
        })),
    }));
    // The picker starts on the newest revision that differs (1); the current one is refused.
    h.press(&["k", "enter"]);
    assert!(status(&h).contains("is the current template"));
    h.press(&["j"]);
    let req = prepared(&h.press(&["enter"]));
    assert_eq!(
        req.action,
        Action::Undo {
            to_revision: Some(1)
        }
    );
}

#[test]
fn journal_u_reverts_an_entry_through_the_dialog() {
    let mut h = Harness::standard();
    h.type_text(":journal");
    h.press(&["enter"]);
    h.feed(Msg::EffectDone(EffectResult::Journal(Ok((
        acting::journal(),
        0,
    )))));
    // Newest first: the image change; its revert sets the image back.
    let req = prepared(&h.press(&["u"]));
    assert_eq!(
        req.action,
        Action::SetImage {
            images: vec![("nginx".into(), "nginx:1.27".into())]
        }
    );
    h.press(&["esc", "j"]);
    assert_eq!(
        h.press(&["u"]),
        vec![],
        "a refused request has nothing to revert"
    );
    assert!(status(&h).contains("it changed nothing"));
    h.press(&["j"]);
    let req = prepared(&h.press(&["u"]));
    assert_eq!(req.action, partition(3), "the partition it replaced");
    // After an action is sent, an open journal reads itself again.
    let effects = h.feed(Msg::EffectDone(EffectResult::Performed {
        id: req.id,
        target: req.target,
        result: Ok("sent: partition 1 → 3".into()),
    }));
    assert_eq!(effects, vec![Effect::ReadJournal]);
}

#[test]
fn the_rollout_view_refreshes_after_changes_only() {
    let mut h = web();
    let answer = |h: &mut Harness| {
        h.feed(Msg::EffectDone(EffectResult::RolloutPlan {
            workload: harness_web(),
            result: Box::new(Ok(acting::prediction())),
        }));
        h.feed(Msg::EffectDone(EffectResult::RolloutEvents {
            workload: harness_web(),
            result: Ok(acting::events()),
        }))
    };
    answer(&mut h);
    // Nothing changed: ticks ask nothing.
    for s in 1..5 {
        assert_eq!(h.feed(Msg::Tick(now() + s.seconds())), vec![]);
    }
    // Another workload's pod changes: still nothing.
    let mut pods: Vec<SlimPod> = harness::fixture("pods.yaml");
    let mut api_pod = pods.remove(5);
    api_pod.status.phase = Some("Failed".into());
    h.writers
        .pods
        .apply_watcher_event(&watcher::Event::Apply(api_pod));
    assert_eq!(h.feed(Msg::StoreChanged(Kind::Pod)), vec![]);
    // One of web's pods changes: the plan and the events are asked for again.
    let mut web_pod = pods.remove(0);
    web_pod.status.phase = Some("Pending".into());
    h.writers
        .pods
        .apply_watcher_event(&watcher::Event::Apply(web_pod));
    let effects = h.feed(Msg::StoreChanged(Kind::Pod));
    assert!(
        matches!(
            effects.as_slice(),
            [
                Effect::PlanRollout { .. },
                Effect::FetchRolloutEvents { .. }
            ]
        ),
        "{effects:?}"
    );
    // While those are in flight, more changes wait for the answers and the next tick.
    assert_eq!(h.feed(Msg::StoreChanged(Kind::Pod)), vec![]);
    answer(&mut h);
    // The workload changes (partition 3 → 2) within the second of the last ask: it waits for
    // the next ticks, which plan the new next step (3 updated → all 5: partition 0) and read
    // the events again (at most every 2 s).
    let mut cs: kruise_tui::api::CloneSet =
        harness::fixture::<kruise_tui::api::CloneSet>("clonesets.yaml")
            .into_iter()
            .find(|c| c.metadata.name.as_deref() == Some("web"))
            .expect("web");
    cs.spec.update_strategy.partition = Some(IntOrString::Int(2));
    h.writers
        .clonesets
        .apply_watcher_event(&watcher::Event::Apply(cs));
    assert_eq!(h.feed(Msg::StoreChanged(Kind::CloneSet)), vec![]);
    let effects = h.feed(Msg::Tick(now() + 6.seconds()));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::PlanRollout { partition: Some(p), .. }, Effect::FetchRolloutEvents { .. }]
                if p == "0"
        ),
        "{effects:?}"
    );
}

fn harness_web() -> kruise_tui::app::msg::ObjectRef {
    kruise_tui::app::msg::ObjectRef {
        kind: Kind::CloneSet,
        namespace: Some("demo".into()),
        name: "web".into(),
    }
}
