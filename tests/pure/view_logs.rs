//! The Log view and the shell key without a cluster: `l` asks for exactly the stream kubectl
//! would read, its lines arrive as messages, the toggles and `c` ask for new streams and Esc
//! stops them; `S` produces the shell request for the chosen container (a SidecarSet
//! hot-upgrade pair's working twin). Snapshots (insta + TestBackend) of the view: following,
//! searched with the current match highlighted, wrapped, previous run, dropped lines.

use crate::harness;

use harness::Harness;
use kruise_tui::{
    api::{SlimPod, pod::SlimContainer},
    app::{
        Effect, Msg,
        logs::{LogEvent, LogEventKind, LogRequest},
        shell::ShellRequest,
    },
    config::LoadedConfig,
};

/// The lines the simulated checkout printed before it crashed (the style of sim::logs).
const CRASH: [&str; 6] = [
    r#"time=2026-01-10T11:59:01.002Z level=info msg="starting checkout" version=1.5.0-crash image=demo/checkout:1.5.0-crash pid=1"#,
    r#"time=2026-01-10T11:59:02.601Z level=info msg="connecting to database" addr=checkout-db.demo.svc.cluster.local:5432"#,
    r#"time=2026-01-10T11:59:02.632Z level=warn msg="database not reachable, retrying" attempt=1 err="dial tcp 10.96.58.136:5432: connect: connection refused""#,
    r#"time=2026-01-10T11:59:02.655Z level=warn msg="database not reachable, retrying" attempt=2 err="dial tcp 10.96.58.136:5432: connect: connection refused""#,
    r#"time=2026-01-10T11:59:02.683Z level=error msg="giving up on the database" attempts=3 err="dial tcp 10.96.58.136:5432: connect: connection refused""#,
    r#"time=2026-01-10T11:59:02.707Z level=error msg="checkout exited" code=1"#,
];

fn pod(name: &str, containers: &[&str], annotations: &[(&str, &str)]) -> SlimPod {
    let mut pod = SlimPod::default();
    pod.metadata.name = Some(name.into());
    pod.metadata.namespace = Some("shop".into());
    pod.metadata.uid = Some(format!("uid-{name}").into());
    pod.metadata.annotations = annotations.iter().copied().collect();
    pod.spec.containers = containers
        .iter()
        .map(|c| SlimContainer {
            name: (*c).into(),
            image: format!("demo/{c}:1").into(),
            resources: None,
        })
        .collect();
    pod.status.phase = Some("Running".into());
    pod
}

/// A console on the pods list of namespace shop with the pods given, `size` columns × rows.
fn shop(pods: Vec<SlimPod>, size: (u16, u16)) -> Harness {
    let (stores, mut writers) = harness::empty_stores();
    harness::apply(&mut writers.pods, pods);
    let mut h = Harness::bare(stores, writers, LoadedConfig::default(), size);
    h.feed(Msg::Discovered(harness::discovery(Some("shop"))));
    for kind in [
        kruise_tui::app::Kind::CloneSet,
        kruise_tui::app::Kind::StatefulSet,
        kruise_tui::app::Kind::DaemonSet,
        kruise_tui::app::Kind::Pod,
    ] {
        h.feed(Msg::StoreReady(kind));
    }
    h.type_text(":pods");
    h.press(&["enter"]);
    h
}

fn stream(effects: &[Effect]) -> LogRequest {
    match effects {
        [.., Effect::StreamLogs(req)] => req.clone(),
        other => panic!("expected a StreamLogs, got {other:?}"),
    }
}

fn lines(h: &mut Harness, id: u64, text: &[&str]) {
    h.feed(Msg::Log(LogEvent {
        stream: id,
        kind: LogEventKind::Lines(text.iter().map(|s| (*s).to_owned()).collect()),
    }));
}

fn checkout() -> Harness {
    shop(
        vec![pod("checkout-7d9xk", &["checkout", "envoy"], &[])],
        (110, 16),
    )
}

#[test]
fn l_streams_the_default_container_and_esc_stops_it() {
    let mut h = checkout();
    let req = stream(&h.press(&["l"]));
    assert_eq!(
        req,
        LogRequest {
            id: req.id,
            namespace: "shop".into(),
            pod: "checkout-7d9xk".into(),
            container: "checkout".into(),
            follow: true,
            timestamps: false,
            previous: false,
            tail_lines: Some(5000),
        }
    );
    lines(&mut h, req.id, &CRASH);
    let screen = h.screen();
    assert!(screen.contains("giving up on the database"), "{screen}");
    // p: the previous run; the followed stream stops first.
    let effects = h.press(&["p"]);
    assert!(matches!(effects.first(), Some(Effect::StopLogs(id)) if *id == req.id));
    let prev = stream(&effects);
    assert!(prev.previous && !prev.follow);
    // c: the other container, same settings.
    let other = stream(&h.press(&["c"]));
    assert_eq!((other.container.as_str(), other.previous), ("envoy", true));
    // Esc closes the view and stops its stream.
    assert_eq!(h.press(&["esc"]), vec![Effect::StopLogs(other.id)]);
    // A stream gone from the screen does not write anywhere.
    lines(&mut h, other.id, &["late"]);
    assert!(!h.screen().contains("late"));
}

#[test]
fn a_command_that_replaces_the_view_stops_its_stream() {
    let mut h = checkout();
    let req = stream(&h.press(&["l"]));
    // `:ns` starts over from the root view.
    h.type_text(":ns prod");
    let effects = h.press(&["enter"]);
    assert!(effects.contains(&Effect::StopLogs(req.id)), "{effects:?}");
}

#[test]
fn log_view_following() {
    let mut h = checkout();
    let req = stream(&h.press(&["l"]));
    lines(&mut h, req.id, &CRASH);
    insta::assert_snapshot!("log_following", h.screen());
}

#[test]
fn log_view_search_highlights_the_matches() {
    let mut h = checkout();
    let req = stream(&h.press(&["l"]));
    lines(&mut h, req.id, &CRASH);
    h.press(&["/"]);
    h.type_text("database");
    insta::assert_snapshot!("log_search_typing", h.screen());
    h.press(&["enter"]);
    let screen = h.screen();
    assert!(screen.contains("\"database\" match 4/4"), "{screen}");
    h.press(&["n"]);
    assert!(h.screen().contains("match 1/4"));
    h.press(&["N"]);
    insta::assert_snapshot!("log_search_current_match", h.screen());
    // The highlight: every "database" cell styled, the current one differently.
    let buf = h.term.backend().buffer().clone();
    let styled_at = |row: u16| {
        let text: String = (0..buf.area.width)
            .map(|x| buf[(x, row)].symbol().to_owned())
            .collect();
        let col = text
            .find("database")
            .map(|c| text[..c].chars().count() as u16);
        col.map(|c| buf[(c, row)].style())
    };
    // Rows 2..: lines 1 (connecting), 2, 3 (retry), 4 (giving up: current after N).
    let plain = buf[(2, 3)].style();
    let hit = styled_at(4).unwrap_or_default();
    let current = styled_at(7).unwrap_or_default();
    assert_ne!(hit, plain, "matches are highlighted");
    assert_ne!(current, hit, "the current match stands out");
}

#[test]
fn log_view_wrapped_previous_run_with_dropped_lines() {
    let mut config = LoadedConfig::default();
    config.logs.buffer_lines = 4;
    let (stores, mut writers) = harness::empty_stores();
    harness::apply(
        &mut writers.pods,
        vec![pod("checkout-7d9xk", &["checkout"], &[])],
    );
    let mut h = Harness::bare(stores, writers, config, (80, 14));
    h.feed(Msg::Discovered(harness::discovery(Some("shop"))));
    h.feed(Msg::StoreReady(kruise_tui::app::Kind::Pod));
    h.type_text(":pods");
    h.press(&["enter"]);
    h.press(&["l"]);
    let req = stream(&h.press(&["p"]));
    assert_eq!(req.tail_lines, Some(4));
    lines(&mut h, req.id, &CRASH);
    h.feed(Msg::Log(LogEvent {
        stream: req.id,
        kind: LogEventKind::Ended,
    }));
    h.press(&["w"]);
    let screen = h.screen();
    assert!(
        screen.contains("2 older lines dropped (buffer 4)"),
        "{screen}"
    );
    insta::assert_snapshot!("log_wrapped_previous", screen);
}

#[test]
fn a_failed_stream_says_what_the_server_said() {
    let mut h = checkout();
    let req = stream(&h.press(&["l"]));
    h.feed(Msg::Log(LogEvent {
        stream: req.id,
        kind: LogEventKind::Failed(
            "previous terminated container \"checkout\" in pod \"checkout-7d9xk\" not found".into(),
        ),
    }));
    let screen = h.screen();
    assert!(
        screen.contains("Cannot read the log: previous terminated container"),
        "{screen}"
    );
}

#[test]
fn s_asks_for_a_shell_in_the_chosen_container() {
    let mut h = checkout();
    let effects = h.press(&["S"]);
    assert_eq!(
        effects,
        vec![Effect::Shell(ShellRequest {
            namespace: "shop".into(),
            pod: "checkout-7d9xk".into(),
            container: "checkout".into(),
            context: Some("kind-demo".into()),
            note: None,
        })]
    );
    // In the pod detail, c picks the container S and l use.
    h.press(&["enter", "c"]);
    assert!(h.screen().contains("▸"), "the chosen container is marked");
    assert!(matches!(h.press(&["S"]).as_slice(), [Effect::Shell(r)] if r.container == "envoy"));
    assert_eq!(stream(&h.press(&["l"])).container, "envoy");
    // From the Log view, its container.
    assert!(matches!(h.press(&["S"]).as_slice(), [Effect::Shell(r)] if r.container == "envoy"));
}

#[test]
fn s_on_a_hot_upgrade_pair_enters_the_working_twin() {
    let mut h = shop(
        vec![pod(
            "mesh-0",
            &["istio-proxy-1", "istio-proxy-2", "app"],
            &[(
                "kruise.io/sidecarset-working-hotupgrade-container",
                r#"{"istio-proxy":"istio-proxy-2"}"#,
            )],
        )],
        (100, 14),
    );
    let effects = h.press(&["S"]);
    let [Effect::Shell(req)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(req.container, "istio-proxy-2");
    assert!(
        req.note
            .as_deref()
            .is_some_and(|n| n.contains("working container of hot-upgrade sidecar istio-proxy")),
        "{req:?}"
    );
}
