//! View snapshots (insta + TestBackend) of every console view from the YAML fixtures, at a fixed
//! clock. The `.snap` files under tests/pure/snapshots/ are the spec: review them on change.

use crate::harness;

use harness::{Harness, discovery, empty_stores};
use kruise_tui::{
    app::{
        Kind, Msg,
        msg::{Denied, EffectResult, EventRow, ObjectRef},
    },
    config::LoadedConfig,
};

#[test]
fn workloads_all_namespaces() {
    let mut h = Harness::standard();
    insta::assert_snapshot!(h.screen());
}

#[test]
fn workloads_one_namespace() {
    let mut h = Harness::loaded(Some("demo"), (120, 24));
    insta::assert_snapshot!(h.screen());
}

/// On a wide terminal the NAME column is as wide as the longest name (and a space), not half
/// the screen; the room left over stays at the right.
#[test]
fn workloads_name_column_fits_the_names_at_180_columns() {
    let mut h = Harness::loaded(Some("demo"), (180, 24));
    let screen = h.screen();
    let (width, longest) = harness::name_column(&screen, "PROTECT");
    assert!(longest >= 3, "{screen}");
    assert_eq!(width, longest.max("NAME".len()) + 1, "{screen}");
}

#[test]
fn workloads_narrow_terminal() {
    let mut h = Harness::loaded(Some("demo"), (80, 24));
    insta::assert_snapshot!(h.screen());
}

#[test]
fn clonesets_only() {
    let mut h = Harness::standard();
    h.command("cs");
    insta::assert_snapshot!(h.screen());
}

#[test]
fn all_pods() {
    let mut h = Harness::loaded(None, (120, 26));
    h.type_text(":pods");
    h.press(&["enter"]);
    insta::assert_snapshot!(h.screen());
}

#[test]
fn pods_of_cloneset() {
    let mut h = Harness::standard();
    // demo/api, demo/db, demo/node-agent, demo/web, prod/checkout: web is the 4th row.
    // Enter opens its rollout view; `:pods` there lists its pods.
    h.press(&["j", "j", "j", "enter"]);
    h.type_text(":pods");
    h.press(&["enter"]);
    insta::assert_snapshot!(h.screen());
}

#[test]
fn help_overlay() {
    let mut h = Harness::loaded(None, (120, 32));
    h.press(&["?"]);
    insta::assert_snapshot!(h.screen());
}

/// Taller than the screen, the overlay says so and scrolls: its last line comes into view, and
/// scrolling past the end or above the top stops there.
#[test]
fn help_overlay_scrolls_to_its_last_line() {
    let mut h = Harness::loaded(None, (120, 32));
    h.press(&["?"]);
    let top = h.screen();
    assert!(top.contains("j/k scroll"), "{top}");
    assert!(!top.contains("In a confirm dialog"), "{top}");
    h.press(&["pgdown", "pgdown", "pgdown", "pgdown", "pgdown"]);
    let bottom = h.screen();
    assert!(bottom.contains("In a confirm dialog"), "{bottom}");
    assert!(bottom.contains("of "), "{bottom}");
    h.press(&["pgup", "pgup", "pgup", "pgup", "pgup", "pgup", "pgup"]);
    assert_eq!(h.screen(), top);
}

#[test]
fn command_mode_with_completion_hint() {
    let mut h = Harness::standard();
    h.type_text(":ns ");
    h.press(&["tab"]);
    insta::assert_snapshot!(h.screen());
}

#[test]
fn filter_mode() {
    let mut h = Harness::standard();
    h.type_text("/web");
    insta::assert_snapshot!(h.screen());
}

#[test]
fn filter_with_no_match() {
    let mut h = Harness::standard();
    h.type_text("/zzz");
    h.press(&["enter"]);
    insta::assert_snapshot!(h.screen());
}

#[test]
fn watch_failed_banner() {
    let mut h = Harness::standard();
    h.feed(Msg::WatchFailed {
        kind: Kind::Pod,
        error: "error trying to connect: tcp connect error: Connection refused (os error 111)"
            .into(),
    });
    h.feed(Msg::WatchFailed {
        kind: Kind::CloneSet,
        error: "connection refused".into(),
    });
    insta::assert_snapshot!(h.screen());
}

#[test]
fn loading_before_first_list() {
    let (stores, writers) = empty_stores();
    let mut h = Harness::bare(stores, writers, LoadedConfig::default(), (100, 12));
    insta::assert_snapshot!(h.screen());
}

#[test]
fn empty_namespace() {
    let (stores, writers) = empty_stores();
    let mut h = Harness::bare(stores, writers, LoadedConfig::default(), (100, 12));
    h.feed(Msg::Discovered(discovery(Some("empty"))));
    for kind in [
        Kind::CloneSet,
        Kind::StatefulSet,
        Kind::DaemonSet,
        Kind::Pod,
    ] {
        h.feed(Msg::StoreReady(kind));
    }
    insta::assert_snapshot!(h.screen());
}

#[test]
fn kruise_missing_opens_on_pods() {
    let (stores, mut writers) = empty_stores();
    harness::apply(&mut writers.pods, harness::fixture("pods.yaml"));
    let mut h = Harness::bare(stores, writers, LoadedConfig::default(), (120, 24));
    let mut d = discovery(None);
    d.kruise_missing = true;
    d.kruise_kinds.clear();
    h.feed(Msg::Discovered(d));
    h.feed(Msg::StoreReady(Kind::Pod));
    insta::assert_snapshot!(h.screen());
    // The workloads view says why it is empty.
    h.type_text(":cs");
    h.press(&["enter"]);
    insta::assert_snapshot!("kruise_missing_workloads", h.screen());
}

/// A ServiceAccount that may list pods in `demo` and nothing of Kruise (a 403 per kind).
#[test]
fn no_permission_for_workloads_opens_on_pods_with_one_line() {
    let (stores, mut writers) = empty_stores();
    harness::apply(&mut writers.pods, harness::fixture("pods.yaml"));
    let mut h = Harness::bare(stores, writers, LoadedConfig::default(), (120, 16));
    h.feed(Msg::Discovered(discovery(Some("demo"))));
    h.feed(Msg::StoreReady(Kind::Pod));
    for (kind, resource) in [
        (Kind::CloneSet, "clonesets"),
        (Kind::StatefulSet, "statefulsets"),
        (Kind::DaemonSet, "daemonsets"),
    ] {
        h.feed(Msg::WatchForbidden {
            kind,
            denied: Denied {
                verb: "list".into(),
                user: Some("system:serviceaccount:demo:viewer".into()),
                namespace: Some("demo".into()),
                message: format!(
                    "{resource}.apps.kruise.io is forbidden: User \"system:serviceaccount:demo:viewer\" \
                     cannot list resource \"{resource}\" in API group \"apps.kruise.io\" in the namespace \"demo\""
                ),
            },
        });
    }
    let screen = h.screen();
    assert!(
        !screen.contains("retrying"),
        "a 403 is not an outage:\n{screen}"
    );
    insta::assert_snapshot!(screen);
    // The Workloads view says what is refused.
    h.type_text(":cs");
    h.press(&["enter"]);
    insta::assert_snapshot!("no_permission_clonesets", h.screen());
}

#[test]
fn config_warnings_banner() {
    let (stores, writers) = harness::fixture_stores();
    let config = LoadedConfig {
        warnings: vec![
            "unknown theme `solarized`, using default-dark (shipped: default-dark, \
             default-light, high-contrast; no solarized.toml in /home/u/.config/kruise-tui/themes)"
                .into(),
            "keymap /home/u/.config/kruise-tui/keymaps/default.toml: `events`: duplicate \
             binding: `j` is already bound to `down`; keeping its default keys"
                .into(),
        ],
        ..LoadedConfig::default()
    };
    let mut h = Harness::bare(stores, writers, config, (120, 14));
    for kind in [
        Kind::CloneSet,
        Kind::StatefulSet,
        Kind::DaemonSet,
        Kind::Pod,
    ] {
        h.feed(Msg::StoreReady(kind));
    }
    insta::assert_snapshot!(h.screen());
}

fn web() -> ObjectRef {
    ObjectRef {
        kind: Kind::CloneSet,
        namespace: Some("demo".into()),
        name: "web".into(),
    }
}

#[test]
fn yaml_view_loading_and_loaded() {
    let mut h = Harness::loaded(None, (100, 16));
    h.press(&["j", "j", "j", "y"]);
    insta::assert_snapshot!("yaml_loading", h.screen());
    let text: String = std::iter::once("apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: web\n  namespace: demo\nspec:\n  replicas: 5\n  updateStrategy:\n    partition: 3\n  template:\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.27\n".to_owned())
        .chain((0..20).map(|i| format!("  # line {i}\n")))
        .collect();
    h.yaml_done(web(), &text);
    insta::assert_snapshot!("yaml_loaded", h.screen());
    h.press(&["G"]);
    insta::assert_snapshot!("yaml_scrolled_to_end", h.screen());
}

#[test]
fn yaml_view_failed() {
    let mut h = Harness::loaded(None, (100, 12));
    h.press(&["j", "j", "j", "y"]);
    h.feed(Msg::EffectDone(EffectResult::Failed {
        what: "YAML of CloneSet demo/web".into(),
        error: "forbidden: User \"dev\" cannot get resource \"clonesets\"".into(),
    }));
    insta::assert_snapshot!(h.screen());
}

#[test]
fn events_view() {
    let mut h = Harness::loaded(None, (120, 14));
    h.press(&["j", "j", "j", "e"]);
    insta::assert_snapshot!("events_loading", h.screen());
    let at = |s: &str| Some(s.parse().expect("time"));
    h.feed(Msg::EffectDone(EffectResult::Events {
        target: web(),
        events: vec![
            EventRow {
                type_: "Normal".into(),
                reason: "SuccessfulUpdatePodInPlace".into(),
                message: "successfully update pod web-4xk2p in-place(revision web-7d9fbc8c4)"
                    .into(),
                count: 1,
                last_seen: at("2026-01-10T11:40:00Z"),
                source: "cloneset-controller".into(),
            },
            EventRow {
                type_: "Warning".into(),
                reason: "FailedUpdate".into(),
                message: "pod web-8m3qz not ready after update".into(),
                count: 3,
                last_seen: at("2026-01-10T11:58:30Z"),
                source: "cloneset-controller".into(),
            },
        ],
    }));
    insta::assert_snapshot!("events_loaded", h.screen());
    h.feed(Msg::EffectDone(EffectResult::Events {
        target: web(),
        events: vec![],
    }));
    insta::assert_snapshot!("events_empty", h.screen());
}

/// The header names the cluster's Kruise release once it is told, and how.
#[test]
fn the_header_names_the_kruise_release() {
    use kruise_tui::kruise::{
        KruiseVersion,
        release::{ClusterRelease, ReleaseSource},
    };
    let first_line = |h: &mut Harness| h.screen().lines().next().unwrap_or_default().to_owned();
    let mut h = Harness::loaded(Some("demo"), (160, 24));
    assert!(!first_line(&mut h).contains("kruise "), "not told yet");
    h.feed(Msg::KruiseRelease(
        ClusterRelease::from_image_tag("v1.9.0").unwrap(),
    ));
    let line = first_line(&mut h);
    assert!(
        line.contains("context kind-demo  kruise v1.9.0  cluster"),
        "{line}"
    );
    h.feed(Msg::KruiseRelease(ClusterRelease {
        version: KruiseVersion::V1_8,
        tag: None,
        source: ReleaseSource::Crds,
    }));
    let line = first_line(&mut h);
    assert!(line.contains("kruise unknown (v1.8 CRDs)"), "{line}");
    h.feed(Msg::KruiseRelease(ClusterRelease {
        version: KruiseVersion::V1_9,
        tag: None,
        source: ReleaseSource::EmbeddedControllers,
    }));
    let line = first_line(&mut h);
    assert!(
        line.contains("kruise v1.9 (kruise-tui controllers)"),
        "{line}"
    );
}
