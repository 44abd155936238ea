//! Snapshots (insta + TestBackend) of the acting views: the rollout view (loading, with its
//! plan and events, marked pods, Advanced StatefulSet and DaemonSet, a narrow terminal), the
//! pod detail, the confirm dialog, the forms (with a refused input), the waiting overlay, the
//! undo revision picker and the journal. The `.snap` files under tests/pure/snapshots/ are the
//! spec.

use crate::acting;
use crate::harness;

use harness::Harness;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::{
    app::{
        Effect, Kind, Msg,
        msg::{EffectResult, ObjectRef, Revisions},
    },
    kruise::plan::WorkloadKind,
};

fn web() -> ObjectRef {
    ObjectRef {
        kind: Kind::CloneSet,
        namespace: Some("demo".into()),
        name: "web".into(),
    }
}

/// The web rollout view with its plan and events answered.
fn web_rollout(size: (u16, u16)) -> Harness {
    let mut h = Harness::loaded(None, size);
    h.press(&["j", "j", "j", "enter"]);
    h.feed(Msg::EffectDone(EffectResult::RolloutPlan {
        workload: web(),
        result: Box::new(Ok(acting::prediction())),
    }));
    h.feed(Msg::EffectDone(EffectResult::RolloutEvents {
        workload: web(),
        result: Ok(acting::events()),
    }));
    h
}

#[test]
fn rollout_view_loading() {
    let mut h = Harness::loaded(None, (120, 30));
    h.press(&["j", "j", "j", "enter"]);
    insta::assert_snapshot!(h.screen());
}

#[test]
fn rollout_view_with_plan_and_events() {
    let mut h = web_rollout((120, 30));
    insta::assert_snapshot!(h.screen());
}

#[test]
fn rollout_view_marked_pods() {
    let mut h = web_rollout((120, 30));
    h.press(&["j", "space", "space"]);
    insta::assert_snapshot!(h.screen());
}

#[test]
fn rollout_view_narrow_terminal() {
    let mut h = web_rollout((80, 24));
    insta::assert_snapshot!(h.screen());
}

#[test]
fn rollout_view_of_statefulset_and_daemonset() {
    let mut h = Harness::loaded(None, (120, 30));
    h.press(&["j", "enter"]);
    let asts = h.screen();
    h.press(&["esc", "j", "enter"]);
    let mut plan = acting::prediction();
    plan.plan.kind = WorkloadKind::AdvancedDaemonSet;
    plan.plan.moves.clear();
    h.feed(Msg::EffectDone(EffectResult::RolloutPlan {
        workload: ObjectRef {
            kind: Kind::DaemonSet,
            namespace: Some("demo".into()),
            name: "node-agent".into(),
        },
        result: Box::new(Ok(plan)),
    }));
    insta::assert_snapshot!("rollout_view_statefulset", asts);
    insta::assert_snapshot!("rollout_view_daemonset", h.screen());
}

#[test]
fn rollout_view_plan_failed() {
    let mut h = Harness::loaded(None, (120, 30));
    h.press(&["j", "j", "j", "enter"]);
    h.feed(Msg::EffectDone(EffectResult::RolloutPlan {
        workload: web(),
        result: Box::new(Err(
            "CloneSet web has no status yet: its controller has not seen it".into(),
        )),
    }));
    let screen = h.screen();
    assert!(
        screen.contains("No prediction: CloneSet web has no status yet"),
        "{screen}"
    );
}

#[test]
fn pod_detail() {
    let mut h = web_rollout((120, 30));
    h.press(&["enter"]);
    insta::assert_snapshot!(h.screen());
}

#[test]
fn confirm_dialog() {
    let mut h = web_rollout((120, 40));
    let effects = h.press(&["]"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    let id = req.id;
    let waiting = h.screen();
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id,
        result: Ok(Box::new(acting::preview(IntOrString::Int(2)))),
    }));
    insta::assert_snapshot!("confirm_waiting", waiting);
    insta::assert_snapshot!("confirm_dialog", h.screen());
    h.press(&["tab"]);
    insta::assert_snapshot!("confirm_dialog_focus_on_confirm", h.screen());
}

#[test]
fn confirm_dialog_raising_the_partition_warns() {
    let mut h = web_rollout((120, 40));
    let effects = h.press(&["["]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    let id = req.id;
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id,
        result: Ok(Box::new(acting::preview(IntOrString::Int(4)))),
    }));
    insta::assert_snapshot!(h.screen());
}

#[test]
fn partition_form_refuses_bad_input() {
    let mut h = web_rollout((120, 30));
    h.press(&["p", "backspace"]);
    h.type_text("150%");
    assert_eq!(h.press(&["enter"]), vec![]);
    insta::assert_snapshot!(h.screen());
}

#[test]
fn image_and_scale_forms() {
    let mut h = web_rollout((120, 30));
    h.press(&["i"]);
    let image = h.screen();
    h.press(&["esc", "space", "space", "s"]);
    insta::assert_snapshot!("image_form", image);
    insta::assert_snapshot!("scale_form_with_marked_pods", h.screen());
}

#[test]
fn undo_revision_picker() {
    let mut h = web_rollout((120, 30));
    let effects = h.press(&["u"]);
    let Some(Effect::FetchRevisions { id, target }) = effects.first() else {
        panic!("{effects:?}");
    };
    let (id, target) = (*id, target.clone());
    let loading = h.screen();
    let state = acting::web_state();
    let mut revisions = state.revisions.clone();
    revisions.reverse();
    h.feed(Msg::EffectDone(EffectResult::Revisions {
        id,
        result: Ok(Box::new(Revisions {
            target,
            current: acting::template("nginx:1.27"),
            revisions,
        })),
    }));
    insta::assert_snapshot!("undo_loading", loading);
    insta::assert_snapshot!("undo_revision_picker", h.screen());
}

#[test]
fn journal_view() {
    let mut h = Harness::loaded(None, (120, 24));
    h.type_text(":journal");
    assert_eq!(h.press(&["enter"]), vec![Effect::ReadJournal]);
    let loading = h.screen();
    h.feed(Msg::EffectDone(EffectResult::Journal(Ok((
        acting::journal(),
        1,
    )))));
    insta::assert_snapshot!("journal_loading", loading);
    insta::assert_snapshot!("journal_view", h.screen());
    // `/` keeps the entries whose row holds every word: the refused pause.
    h.press(&["/"]);
    h.type_text("pause 403");
    h.press(&["enter"]);
    let screen = h.screen();
    assert!(
        screen.contains("Journal — newest first [1] /pause 403"),
        "{screen}"
    );
    assert!(!screen.contains("partition → 1"), "{screen}");
    // u reverts the entry shown: the partition change (the oldest entry, not the first row of
    // the whole journal), by setting the partition back.
    h.press(&["esc", "/"]);
    h.type_text("partition ok");
    h.press(&["enter"]);
    assert!(h.screen().contains("[1] /partition ok"));
    let effects = h.press(&["u"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    assert!(
        matches!(req.action, kruise_tui::actions::Action::Partition { .. }),
        "{:?}",
        req.action
    );
    // A fresh read of the journal is filtered too; esc clears the filter.
    h.press(&["esc"]);
    h.feed(Msg::EffectDone(EffectResult::Journal(Ok((
        acting::journal(),
        1,
    )))));
    assert!(h.screen().contains("[1] /partition ok"));
    h.press(&["esc"]);
    assert!(h.screen().contains("Journal — newest first [3]"));
}
