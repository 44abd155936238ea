//! The What-if view (`w`): what it asks the kube layer for (reads only: the next batch of the
//! selected workload, or the open confirm dialog's exact request), and snapshots of the view
//! while simulating and with the predicted steps. The `.snap` files under tests/pure/snapshots/ are
//! the spec.

use crate::harness;

use harness::Harness;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_tui::{
    actions::{
        Action, ApiRequest,
        whatif::{Counts, Simulation, Step, Stop},
    },
    app::{Effect, Msg, effect::Pending, msg::EffectResult, route::Route},
};
use serde_json::json;

fn counts(updated: i32, ready: i32) -> Counts {
    Counts {
        pods: 10,
        desired: 10,
        updated,
        ready,
        updated_ready: updated.min(ready),
    }
}

fn simulation(target: kruise_tui::actions::Target) -> Simulation {
    let step = |at, pods: [&str; 2], after| Step {
        at,
        in_place: pods.iter().map(|p| p.to_string()).collect(),
        after,
        ..Step::default()
    };
    Simulation {
        target,
        action: Some("partition → 0".into()),
        request: Some(ApiRequest {
            verb: "PATCH".into(),
            path: "/apis/apps.kruise.io/v1alpha1/namespaces/demo/clonesets/web".into(),
            content_type: "application/json-patch+json".into(),
            body: json!([]),
        }),
        before: counts(4, 10),
        steps: vec![
            step(0, ["web-4x7kp", "web-9fzq2"], counts(6, 10)),
            step(3, ["web-bq5lm", "web-c2r8d"], counts(8, 10)),
            step(6, ["web-h6tnw", "web-k3v9x"], counts(10, 10)),
        ],
        stop: Stop::Converged,
        seconds: 69,
    }
}

#[test]
fn w_simulates_the_next_batch_and_shows_the_steps() {
    let mut h = Harness::loaded(None, (120, 30));
    h.press(&["j", "j", "j", "enter"]);
    let effects = h.press(&["w"]);
    let [Effect::WhatIf(req)] = effects.as_slice() else {
        panic!("expected one what-if effect, got {effects:?}");
    };
    assert_eq!(req.target.name, "web");
    let Pending::Action(Action::Partition {
        value: IntOrString::Int(_),
    }) = &req.pending
    else {
        panic!("the next batch is simulated, got {:?}", req.pending);
    };
    insta::assert_snapshot!("whatif_simulating", h.screen());
    h.feed(Msg::EffectDone(EffectResult::WhatIf {
        id: req.id,
        result: Ok(Box::new(simulation(req.target.clone()))),
    }));
    let screen = h.screen();
    assert!(screen.contains("simulation — nothing sent"), "{screen}");
    insta::assert_snapshot!("whatif_steps", screen);
    // Esc goes back to the rollout view.
    h.press(&["esc"]);
    assert!(matches!(h.app.current(), Route::Rollout(_)));
}

#[test]
fn a_stuck_rollout_says_why() {
    let mut h = Harness::loaded(None, (120, 24));
    h.press(&["j", "j", "j", "enter"]);
    let effects = h.press(&["w"]);
    let [Effect::WhatIf(req)] = effects.as_slice() else {
        panic!("expected one what-if effect, got {effects:?}");
    };
    let mut sim = simulation(req.target.clone());
    sim.steps.truncate(1);
    sim.steps[0].after = counts(6, 8);
    sim.stop = Stop::NeverReady {
        pods: vec!["web-4x7kp".into(), "web-9fzq2".into()],
        kept: 4,
    };
    h.feed(Msg::EffectDone(EffectResult::WhatIf {
        id: req.id,
        result: Ok(Box::new(sim)),
    }));
    insta::assert_snapshot!("whatif_stuck", h.screen());
}

#[test]
fn a_failed_simulation_is_one_line() {
    let mut h = Harness::loaded(None, (120, 20));
    h.press(&["j", "j", "j", "enter"]);
    let effects = h.press(&["w"]);
    let [Effect::WhatIf(req)] = effects.as_slice() else {
        panic!("expected one what-if effect, got {effects:?}");
    };
    h.feed(Msg::EffectDone(EffectResult::WhatIf {
        id: req.id,
        result: Err("what-if: CloneSet demo/web does not exist".into()),
    }));
    assert!(
        h.screen()
            .contains("what-if: CloneSet demo/web does not exist")
    );
}
