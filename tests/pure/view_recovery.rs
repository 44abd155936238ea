//! Snapshots (insta + TestBackend) of the recovery views: the restart form, the restart panel
//! with a request's per-container states, the `:protect` view and the delete confirmation with
//! its protection and budget verdicts. The `.snap` files under tests/pure/snapshots/ are the spec.

use crate::harness;

use harness::Harness;
use kruise_tui::{
    actions::{
        Action, ApiRequest, ObjectState, Prepared, Target,
        guard::{Enforcement, Verdict},
    },
    api::kinds::parse_kind,
    app::{
        Effect, Msg,
        msg::{EffectResult, Preview},
        protect::{ProtectReport, ProtectRow},
        restart::{Step, Update},
    },
};

/// web's rollout view, its first pod selected.
fn web_rollout() -> Harness {
    let mut h = Harness::loaded(None, (120, 36));
    h.press(&["j", "j", "j", "enter"]);
    h
}

/// The kube layer's answer to the restart form: the request prepared, as the confirm shows it.
fn prepared_restart(
    h: &mut Harness,
    req: &kruise_tui::app::effect::PrepareRequest,
    change: &str,
    notes: Vec<String>,
) {
    let prepared = Prepared {
        target: req.target.clone(),
        action: req.action.clone(),
        request: ApiRequest {
            verb: "POST".into(),
            path: "/apis/apps.kruise.io/v1alpha1/namespaces/demo/containerrecreaterequests".into(),
            content_type: "application/json".into(),
            body: serde_json::json!({"kind": "ContainerRecreateRequest"}),
        },
        inverse: None,
        changes: vec![change.into()],
        notes,
        then: Vec::new(),
    };
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id: req.id,
        result: Ok(Box::new(Preview {
            prepared,
            state: ObjectState {
                version: "v1".into(),
                plural: "pods".into(),
                object: serde_json::json!({}),
                revisions: Vec::new(),
            },
            prediction: None,
        })),
    }));
}

#[test]
fn restart_form_and_panel() {
    let mut h = web_rollout();
    h.press(&["r"]);
    insta::assert_snapshot!("restart_form", h.screen());
    let effects = h.press(&["enter"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    let pod = req.target.clone();
    prepared_restart(
        &mut h,
        req,
        "restart in place: main (restarts 0)",
        vec!["budget: allowed: PodUnavailableBudget web-pub has 1 unavailable allowed".into()],
    );
    let effects = h.press(&["y"]);
    let Some(Effect::Restart(run)) = effects.first() else {
        panic!("{effects:?}");
    };
    let id = run.id;
    h.feed(Msg::EffectDone(EffectResult::Restart {
        id,
        update: Update::Step(Step {
            pod: pod.name.clone(),
            crr: Some(format!("{}-restart-x7k2p", pod.name)),
            state: "Recreating".into(),
            containers: vec![("main".into(), "Recreating".into(), String::new())],
            message: String::new(),
        }),
    }));
    insta::assert_snapshot!("restart_panel_recreating", h.screen());
    h.feed(Msg::EffectDone(EffectResult::Restart {
        id,
        update: Update::Step(Step {
            pod: pod.name.clone(),
            crr: Some(format!("{}-restart-x7k2p", pod.name)),
            state: "ready again".into(),
            containers: vec![("main".into(), "Succeeded".into(), String::new())],
            message: String::new(),
        }),
    }));
    h.feed(Msg::EffectDone(EffectResult::Restart {
        id,
        update: Update::Done(Ok(format!(
            "restarted 1 pod(s) in place: {}-restart-x7k2p",
            pod.name
        ))),
    }));
    insta::assert_snapshot!("restart_panel_done", h.screen());
}

/// `r` on a workload: every pod of it, in name order, one after another (the form says the
/// order and the pace); `Esc` on the running panel stops after the pod in flight.
#[test]
fn restart_of_a_workload_goes_pod_by_pod_and_esc_stops_it() {
    let mut h = Harness::loaded(None, (120, 36));
    h.press(&["j", "j", "j", "r"]);
    let screen = h.screen();
    assert!(screen.contains("Restart containers of "), "{screen}");
    assert!(screen.contains("then, one after another"), "{screen}");
    let effects = h.press(&["enter"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    prepared_restart(&mut h, req, "restart in place: main", Vec::new());
    let effects = h.press(&["y"]);
    let Some(Effect::Restart(run)) = effects.first() else {
        panic!("{effects:?}");
    };
    let mut names = vec![run.prepared.target.name.clone()];
    names.extend(run.rest.iter().map(|t| t.name.clone()));
    assert!(names.len() > 1, "every pod of the workload: {names:?}");
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "in name order");
    let id = run.id;
    assert_eq!(h.press(&["esc"]), vec![Effect::StopRestart(id)]);
    let screen = h.screen();
    assert!(
        screen.contains("stopping after the pod in flight"),
        "{screen}"
    );
    // A second Esc hides the panel (nothing more to stop).
    assert_eq!(h.press(&["esc"]), Vec::new());
    assert!(!h.screen().contains("Restart in place"));
}

fn target(kind: &str, ns: Option<&str>, name: &str) -> Target {
    Target::new(parse_kind(kind).expect("kind"), ns, name)
}

#[test]
fn protect_view() {
    let mut h = Harness::loaded(None, (120, 20));
    let effects = h.press(&[":", "p", "r", "o", "t", "e", "c", "t", "enter"]);
    assert_eq!(
        effects,
        vec![Effect::List(kruise_tui::app::Listing::Protected)]
    );
    insta::assert_snapshot!("protect_loading", h.screen());
    h.feed(Msg::EffectDone(EffectResult::Protected(Ok(
        ProtectReport {
            enforcement: Enforcement::decide(
                false,
                true,
                &kruise_tui::kruise::FeatureGates::new().with("ResourcesDeletionProtection", true),
                "the embedded controllers",
            ),
            rows: vec![
                ProtectRow {
                    target: target("ns", None, "demo"),
                    value: "Cascading".into(),
                    verdict: Verdict::Denied("Cascading, 12 active pods in the namespace".into()),
                },
                ProtectRow {
                    target: target("cs", Some("demo"), "web"),
                    value: "Cascading".into(),
                    verdict: Verdict::Denied("5 active replicas".into()),
                },
                ProtectRow {
                    target: target("asts", Some("demo"), "db"),
                    value: "Always".into(),
                    verdict: Verdict::Denied("delete-protection Always".into()),
                },
                ProtectRow {
                    target: target("cs", Some("demo"), "batch"),
                    value: "Cascading".into(),
                    verdict: Verdict::Allowed("Cascading, and 0 replicas".into()),
                },
            ],
            errors: Vec::new(),
        },
    ))));
    insta::assert_snapshot!("protect_view", h.screen());
    // `/` keeps the rows that hold every word (object, label value, verdict); x acts on the
    // row shown.
    h.press(&["/"]);
    h.type_text("cascading allowed");
    h.press(&["enter"]);
    let screen = h.screen();
    assert!(
        screen.contains("Protected objects [1] /cascading allowed"),
        "{screen}"
    );
    assert!(screen.contains("batch"), "{screen}");
    assert!(!screen.contains("web"), "{screen}");
    let effects = h.press(&["x"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    assert_eq!(req.target.name, "batch");
    h.press(&["esc"]);
    h.press(&["esc"]);
    assert!(h.screen().contains("Protected objects [4]"));
    // Not enforced: said plainly.
    h.feed(Msg::EffectDone(EffectResult::Protected(Ok(
        ProtectReport {
            enforcement: Enforcement::decide(
                false,
                false,
                &kruise_tui::kruise::FeatureGates::new(),
                "upstream's defaults",
            ),
            rows: Vec::new(),
            errors: Vec::new(),
        },
    ))));
    let screen = h.screen();
    assert!(screen.contains("the label is only advice"), "{screen}");
}

#[test]
fn delete_confirmation_shows_the_verdicts() {
    let mut h = web_rollout();
    let effects = h.press(&["ctrl-d"]);
    let Some(Effect::Prepare(req)) = effects.first() else {
        panic!("{effects:?}");
    };
    assert_eq!(req.action, Action::Delete);
    assert_eq!(req.target.kind.kind, "Pod");
    let prepared = Prepared {
        target: req.target.clone(),
        action: Action::Delete,
        request: ApiRequest {
            verb: "DELETE".into(),
            path: format!("/api/v1/namespaces/demo/pods/{}", req.target.name),
            content_type: "application/json".into(),
            body: serde_json::json!({"kind": "DeleteOptions", "apiVersion": "v1",
                "preconditions": {"uid": "uid-pod"}}),
        },
        inverse: None,
        changes: vec![format!("delete {}", req.target.describe())],
        notes: vec![
            "deletion protection: Pod: not a kind deletion protection guards".into(),
            "budget: would be denied: PodUnavailableBudget web-pub has 0 unavailable allowed"
                .into(),
            "a delete has no inverse: the journal records it but cannot revert it".into(),
        ],
        then: Vec::new(),
    };
    h.feed(Msg::EffectDone(EffectResult::Prepared {
        id: req.id,
        result: Ok(Box::new(Preview {
            prepared,
            state: ObjectState {
                version: "v1".into(),
                plural: "pods".into(),
                object: serde_json::json!({}),
                revisions: Vec::new(),
            },
            prediction: None,
        })),
    }));
    insta::assert_snapshot!("delete_confirmation", h.screen());
    assert_eq!(h.press(&["n"]), vec![], "n sends nothing");
}
