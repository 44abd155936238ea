//! `:triage all` as a user drives it: the command asks every context of the kubeconfig, the
//! screen reads until they answer, then lists every context's problems worst first with a
//! CONTEXT column (a context that could not be read first); Enter on another context's problem
//! switches the console there and opens the object once that context has loaded.

use crate::harness;

use harness::{Harness, discovery, fixture_stores};
use kruise_tui::app::{
    Effect, Kind, Level, Msg,
    msg::{EffectResult, ObjectRef},
    oncall::{
        Problem, ProblemKind,
        across::{ContextTriage, Verdict},
    },
    route::Route,
};

fn problem(kind: ProblemKind, subject: &str, why: &str, pod: Option<(&str, &str)>) -> Problem {
    Problem {
        kind,
        object: pod.map(|(namespace, name)| ObjectRef {
            kind: Kind::Pod,
            namespace: Some(namespace.to_owned()),
            name: name.to_owned(),
        }),
        owner: None,
        subject: subject.to_owned(),
        why: why.to_owned(),
        remedy: "r restart (enter: the pod)".to_owned(),
        weight: 1,
        reported: false,
    }
}

fn answers() -> Vec<ContextTriage> {
    vec![
        ContextTriage {
            context: "kind-demo".into(),
            verdict: Verdict::Problems(vec![problem(
                ProblemKind::BudgetExhausted,
                "PodUnavailableBudget demo/api-pub",
                "0 disruptions allowed (2/3 available, 2 needed); down: api-9qv4x",
                None,
            )]),
        },
        ContextTriage {
            context: "prod-eu".into(),
            verdict: Verdict::Problems(vec![problem(
                ProblemKind::CrashLoop,
                "CloneSet demo/api",
                "1 pod crash-looping on the new revision 7d9f (12 restarts): api-9qv4x",
                Some(("demo", "api-9qv4x")),
            )]),
        },
        ContextTriage {
            context: "prod-us".into(),
            verdict: Verdict::Unreachable("no answer within 15s".into()),
        },
    ]
}

#[test]
fn triage_all_lists_every_context_worst_first_and_enter_lands_in_the_right_context() {
    let mut h = Harness::loaded(Some("demo"), (130, 12));
    let effects = h.command("triage all");
    assert_eq!(
        effects,
        vec![Effect::TriageAcross {
            contexts: vec!["kind-demo".into(), "prod-eu".into(), "prod-us".into()]
        }]
    );
    let screen = h.screen();
    assert!(screen.contains("Reading 3 contexts…"), "{screen}");

    h.feed(Msg::EffectDone(EffectResult::TriagedAcross(answers())));
    let screen = h.screen();
    insta::assert_snapshot!(screen);

    // The context that could not be read says why.
    h.press(&["enter"]);
    let status = h.app.status().expect("a status line");
    assert_eq!(status.level, Level::Error);
    assert_eq!(status.text, "context prod-us: no answer within 15s");

    // prod-eu's crash loop: Enter switches there (the namespace follows the pod's) …
    let effects = h.press(&["j", "enter"]);
    assert_eq!(
        effects,
        vec![Effect::Switch {
            context: Some("prod-eu".into()),
            namespace: Some("demo".into())
        }]
    );
    assert!(
        matches!(h.app.current(), Route::List(_)),
        "back at the root while it loads"
    );
    // … and opens the pod once prod-eu has loaded.
    let (stores, writers) = fixture_stores();
    h.writers = writers;
    h.feed(Msg::StoresReplaced(stores));
    let mut found = discovery(Some("demo"));
    found.context = Some("prod-eu".into());
    h.feed(Msg::Discovered(found));
    for kind in [
        Kind::Pod,
        Kind::CloneSet,
        Kind::StatefulSet,
        Kind::DaemonSet,
    ] {
        h.feed(Msg::StoreReady(kind));
        assert!(
            !matches!(h.app.current(), Route::Pod(_)),
            "opened before {kind:?}'s neighbours loaded"
        );
    }
    h.feed(Msg::StoreReady(Kind::PodUnavailableBudget));
    assert!(
        matches!(h.app.current(), Route::Pod(p) if p.namespace == "demo" && p.name == "api-9qv4x"),
        "{:?}",
        h.app.current()
    );

    // A problem of the context the console is in opens at once.
    h.command("triage all");
    h.feed(Msg::EffectDone(EffectResult::TriagedAcross(answers())));
    h.press(&["j", "enter"]);
    assert!(
        matches!(h.app.current(), Route::Pod(p) if p.name == "api-9qv4x"),
        "{:?}",
        h.app.current()
    );
}

#[test]
fn triage_all_with_nothing_unhealthy_says_so() {
    let mut h = Harness::loaded(None, (100, 8));
    h.command("triage all");
    let healthy = ["kind-demo", "prod-eu", "prod-us"]
        .into_iter()
        .map(|c| ContextTriage {
            context: c.into(),
            verdict: Verdict::Problems(Vec::new()),
        })
        .collect();
    h.feed(Msg::EffectDone(EffectResult::TriagedAcross(healthy)));
    let screen = h.screen();
    assert!(
        screen.contains("Nothing unhealthy in any of 3 contexts ✓"),
        "{screen}"
    );
}
