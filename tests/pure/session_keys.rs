//! Scripted key sessions: press keys, feed kube-layer messages, assert the effects returned and
//! what the screen shows. Deterministic: no sleeps, a fixed clock.

use crate::harness;

use harness::{Harness, now};
use jiff::{Timestamp, ToSpan};
use kruise_tui::{
    api::CloneSet,
    app::{
        Effect, Kind, Msg,
        msg::{EffectResult, ObjectRef},
    },
    config::{LoadedConfig, Role},
};
use kube::runtime::watcher;

fn web() -> ObjectRef {
    ObjectRef {
        kind: Kind::CloneSet,
        namespace: Some("demo".into()),
        name: "web".into(),
    }
}

/// The table's data rows (lines between the column titles and the bottom border).
fn rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip_while(|l| !l.contains("NAME"))
        .skip(1)
        .take_while(|l| !l.contains('└'))
        .map(|l| l.trim_matches(['"', '│', ' ']).to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn enter_on_a_cloneset_opens_its_rollout_and_pods_lists_its_pods() {
    let mut h = Harness::standard();
    let effects = h.press(&["j", "j", "j", "enter"]);
    // 5 pods, partition 3 (2 updated): the plan's steps are 1, 2, 3, 5 pods; the next is 3
    // updated, partition 2. The view asks for that step's plan, the events and the NodeImages.
    assert_eq!(
        effects,
        vec![
            Effect::PlanRollout {
                workload: web(),
                partition: Some("2".into())
            },
            Effect::FetchRolloutEvents {
                workload: web(),
                pods: [
                    "web-4xk2p",
                    "web-8m3qz",
                    "web-b7w9n",
                    "web-c2d5r",
                    "web-h6j8t"
                ]
                .map(String::from)
                .to_vec()
            },
            // The nodes' NodeImages, for the next-image mark.
            Effect::List(kruise_tui::app::Listing::Images(
                kruise_tui::app::images::ImageKind::NodeImages
            )),
        ]
    );
    assert!(h.screen().contains("Rollout · CloneSet demo/web"));
    // The flat pod list stays one command away.
    h.type_text(":pods");
    assert_eq!(h.press(&["enter"]), vec![]);
    let screen = h.screen();
    assert!(
        screen.contains("Pods of CloneSet web — demo [5]"),
        "{screen}"
    );
    let shown = rows(&screen);
    assert_eq!(shown.len(), 5);
    assert!(shown.iter().all(|r| r.starts_with("web-")), "{shown:?}");
    assert_eq!(
        shown.iter().filter(|r| r.contains("✓")).count(),
        2,
        "two pods updated"
    );
    assert_eq!(shown.iter().filter(|r| r.contains(" old")).count(), 3);
    h.press(&["esc"]);
    assert!(h.screen().contains("Rollout · CloneSet demo/web"));
    h.press(&["esc"]);
    assert!(h.screen().contains("Workloads — all namespaces [5]"));
}

#[test]
fn enter_on_a_statefulset_and_daemonset_matches_by_owner() {
    let mut h = Harness::standard();
    h.press(&["j", "enter"]);
    h.type_text(":pods");
    h.press(&["enter"]);
    let shown = rows(&h.screen());
    assert_eq!(shown.len(), 3);
    assert!(
        shown[0].starts_with("db-0") && shown[0].contains("old"),
        "{shown:?}"
    );
    assert!(
        shown[2].starts_with("db-2") && shown[2].contains("✓"),
        "{shown:?}"
    );
    h.press(&["esc", "esc", "j", "enter"]);
    h.type_text(":pods");
    h.press(&["enter"]);
    let shown = rows(&h.screen());
    assert_eq!(shown.len(), 2);
    assert!(
        shown
            .iter()
            .all(|r| r.starts_with("node-agent-") && r.contains("✓"))
    );
}

#[test]
fn ns_command_emits_switch_and_ctx_keeps_the_namespace() {
    let mut h = Harness::standard();
    h.type_text(":ns foo");
    let effects = h.press(&["enter"]);
    assert_eq!(
        effects,
        vec![Effect::Switch {
            context: Some("kind-demo".into()),
            namespace: Some("foo".into())
        }]
    );
    assert!(h.screen().contains("namespace foo"));
    h.type_text(":ctx prod-eu");
    assert_eq!(
        h.press(&["enter"]),
        vec![Effect::Switch {
            context: Some("prod-eu".into()),
            namespace: Some("foo".into())
        }]
    );
    h.type_text(":ns all");
    assert_eq!(
        h.press(&["enter"]),
        vec![Effect::Switch {
            context: Some("prod-eu".into()),
            namespace: None
        }]
    );
    h.feed(Msg::EffectDone(EffectResult::Switched));
    assert!(h.screen().contains("watching all namespaces"));
}

#[test]
fn unknown_commands_and_contexts_say_so_and_emit_nothing() {
    let mut h = Harness::standard();
    h.type_text(":deploy");
    assert_eq!(h.press(&["enter"]), vec![]);
    assert!(
        h.screen()
            .contains("unknown command `:deploy` (try :cs :asts :ads :pods")
    );
    h.type_text(":ctx nowhere");
    assert_eq!(h.press(&["enter"]), vec![]);
    assert!(
        h.screen()
            .contains("unknown context `nowhere` (known: kind-demo, prod-eu, prod-us)")
    );
    // Status messages expire with the clock.
    h.feed(Msg::Tick(now() + 10.seconds()));
    assert!(!h.screen().contains("unknown context"));
}

#[test]
fn tab_completes_namespaces_from_discovery() {
    let mut h = Harness::standard();
    h.type_text(":ns ku");
    h.press(&["tab"]);
    assert!(h.screen().contains(":ns kube-system█"));
    let effects = h.press(&["enter"]);
    assert_eq!(
        effects,
        vec![Effect::Switch {
            context: Some("kind-demo".into()),
            namespace: Some("kube-system".into())
        }]
    );
}

#[test]
fn slash_filters_live_and_esc_clears() {
    let mut h = Harness::standard();
    h.type_text("/we");
    assert_eq!(rows(&h.screen()).len(), 1, "live while typing");
    h.press(&["backspace", "backspace"]);
    assert_eq!(rows(&h.screen()).len(), 5);
    h.type_text("web");
    h.press(&["enter"]);
    let shown = rows(&h.screen());
    assert_eq!(shown.len(), 1);
    assert!(shown[0].contains("web"));
    // The filter stays after Enter; Enter now opens the one row left.
    h.press(&["enter"]);
    assert!(h.screen().contains("Rollout · CloneSet demo/web"));
    h.press(&["esc"]);
    assert!(h.screen().contains("/web"));
    h.press(&["esc"]);
    assert_eq!(rows(&h.screen()).len(), 5, "esc cleared the filter");
}

#[test]
fn filter_on_pods_matches_status_and_node() {
    let mut h = Harness::standard();
    h.type_text(":pods");
    h.press(&["enter"]);
    h.type_text("/crashloop");
    let shown = rows(&h.screen());
    assert_eq!(shown.len(), 1);
    assert!(shown[0].contains("api-9qv4x") && shown[0].contains("CrashLoopBackOff"));
    h.press(&["esc"]);
    h.type_text("/node-3");
    assert_eq!(rows(&h.screen()).len(), 2);
}

#[test]
fn y_fetches_yaml_and_shows_it_when_done() {
    let mut h = Harness::loaded(None, (90, 14));
    let effects = h.press(&["j", "j", "j", "y"]);
    assert_eq!(effects, vec![Effect::FetchYaml(web())]);
    assert!(h.screen().contains("Loading YAML…"));
    // A reply for another object is not shown here.
    let other = ObjectRef {
        name: "api".into(),
        ..web()
    };
    h.yaml_done(other, "kind: CloneSet\nmetadata:\n  name: api\n");
    assert!(h.screen().contains("Loading YAML…"));
    h.yaml_done(web(), "kind: CloneSet\nmetadata:\n  name: web\n");
    insta::assert_snapshot!(h.screen());
    // `e` from the YAML view asks for the same object's events.
    assert_eq!(h.press(&["e"]), vec![Effect::FetchEvents(web())]);
    h.press(&["esc"]);
    assert!(
        h.screen().contains("Workloads"),
        "events replaced the YAML view"
    );
}

#[test]
fn y_on_a_pod_targets_the_pod() {
    let mut h = Harness::standard();
    h.press(&["j", "j", "j", "enter", "G"]);
    let effects = h.press(&["y"]);
    assert_eq!(
        effects,
        vec![Effect::FetchYaml(ObjectRef {
            kind: Kind::Pod,
            namespace: Some("demo".into()),
            name: "web-h6j8t".into()
        })]
    );
}

#[test]
fn q_and_ctrl_c_quit_from_any_mode() {
    let mut h = Harness::standard();
    assert_eq!(h.press(&["q"]), vec![Effect::Quit]);
    assert!(h.app.should_quit());
    let mut h = Harness::standard();
    h.type_text(":ns fo");
    assert_eq!(h.press(&["ctrl-c"]), vec![Effect::Quit]);
    assert!(h.app.should_quit());
    let mut h = Harness::standard();
    h.type_text(":q");
    assert_eq!(h.press(&["enter"]), vec![Effect::Quit]);
    // `q` typed into the filter is text, not quit.
    let mut h = Harness::standard();
    h.type_text("/q");
    assert!(!h.app.should_quit());
}

#[test]
fn navigation_keys_move_the_selection() {
    let mut h = Harness::loaded(None, (120, 12));
    h.type_text(":pods");
    h.press(&["enter"]);
    let selected = |h: &mut Harness| {
        let s = h.screen();
        s.lines().last().map(|l| {
            l.trim_matches(['"', ' '])
                .rsplit(' ')
                .next()
                .unwrap_or("")
                .to_owned()
        })
    };
    assert_eq!(selected(&mut h).as_deref(), Some("1/16"));
    h.press(&["G"]);
    assert_eq!(selected(&mut h).as_deref(), Some("16/16"));
    assert!(
        h.screen().contains("checkout-d3e4f"),
        "the window follows the cursor"
    );
    h.press(&["g", "pgdown"]);
    // 12 rows: header, border, titles, border, status leave 7 rows a page.
    assert_eq!(selected(&mut h).as_deref(), Some("8/16"));
    h.press(&["k", "up"]);
    assert_eq!(selected(&mut h).as_deref(), Some("6/16"));
    h.press(&["pgup", "pgup"]);
    assert_eq!(selected(&mut h).as_deref(), Some("1/16"));
}

#[test]
fn store_changes_keep_the_selection_on_the_same_object() {
    let mut h = Harness::standard();
    h.press(&["j", "j", "j"]); // demo/web
    let mut extra: CloneSet = harness::fixture::<CloneSet>("clonesets.yaml").remove(0);
    extra.metadata.name = Some("aaa".into());
    extra.metadata.uid = Some("uid-aaa".into());
    h.writers
        .clonesets
        .apply_watcher_event(&watcher::Event::Apply(extra));
    h.feed(Msg::StoreChanged(Kind::CloneSet));
    assert!(h.screen().contains("[6]"));
    h.press(&["enter"]);
    assert!(h.screen().contains("Rollout · CloneSet demo/web"));
}

#[test]
fn pods_view_follows_pod_deletions() {
    let mut h = Harness::standard();
    h.press(&["j", "j", "j", "enter"]);
    h.type_text(":pods");
    h.press(&["enter"]);
    let pods: Vec<kruise_tui::api::SlimPod> = harness::fixture("pods.yaml");
    let gone = pods
        .into_iter()
        .find(|p| p.metadata.name.as_deref() == Some("web-b7w9n"))
        .expect("fixture pod");
    h.writers
        .pods
        .apply_watcher_event(&watcher::Event::Delete(gone));
    h.feed(Msg::StoreChanged(Kind::Pod));
    let shown = rows(&h.screen());
    assert_eq!(shown.len(), 4);
    assert!(!shown.iter().any(|r| r.starts_with("web-b7w9n")));
}

#[test]
fn watch_banner_appears_and_clears() {
    let mut h = Harness::standard();
    h.feed(Msg::WatchFailed {
        kind: Kind::Pod,
        error: "connection refused".into(),
    });
    assert!(
        h.screen()
            .contains("watch failing for Pods, retrying with backoff")
    );
    h.feed(Msg::WatchRecovered(Kind::Pod));
    assert!(!h.screen().contains("watch failing"));
}

#[test]
fn ticks_move_ages_and_mark_the_screen_dirty() {
    let mut h = Harness::standard();
    assert!(
        h.screen().contains(" 45m "),
        "node-agent is 45m old at the fixed clock"
    );
    assert!(h.app.take_dirty());
    assert!(!h.app.take_dirty(), "nothing changed since");
    h.feed(Msg::WatchRecovered(Kind::Pod));
    assert!(
        !h.app.take_dirty(),
        "recovering a healthy watch changes nothing"
    );
    let later: Timestamp = now() + 2.hours();
    h.feed(Msg::Tick(later));
    assert!(h.app.take_dirty());
    assert!(h.screen().contains(" 2h "), "node-agent is 2h45m old now");
}

#[test]
fn help_is_generated_from_the_active_keymap() {
    let (stores, writers) = harness::fixture_stores();
    let mut config = LoadedConfig::default();
    let warnings = config
        .keymap
        .apply_toml("[keys]\nyaml = [\"Y\"]\nhelp = [\"f1\"]\n", "test");
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut h = Harness::bare(stores, writers, config, (120, 30));
    h.press(&["?"]);
    assert!(!h.screen().contains("Help"), "? is no longer help");
    h.press(&["f1"]);
    let screen = h.screen();
    assert!(screen.contains("Y  YAML of the selection"), "{screen}");
    assert!(screen.contains("f1  this help"), "{screen}");
    assert!(screen.contains("Y yaml"), "status hints use the keymap too");
    h.press(&["esc"]);
    assert!(!h.screen().contains("Help —"));
}

#[test]
fn selected_row_and_badges_use_theme_roles() {
    let mut h = Harness::standard();
    h.press(&["j", "j", "j"]);
    h.screen();
    let theme = kruise_tui::config::Theme::default_theme();
    let buf = h.term.backend().buffer().clone();
    // The triage strip (api's crashing rollout: two problems) sits above the table.
    let strip = 2;
    // Row of demo/web: the 4th data row, under header, strip, border and column titles.
    let y = strip + 3 + 3;
    let line: String = (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_owned())
        .collect();
    assert!(line.contains("web"), "{line}");
    assert_eq!(
        buf[(10, y)].bg,
        theme.style(Role::RowSelected).bg.expect("bg")
    );
    // The protection badge of demo/db keeps its own role.
    let y = strip + 3 + 1;
    let line: String = (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_owned())
        .collect();
    let x = line.find("Cascading").expect("badge") as u16;
    let x = line[..x as usize].chars().count() as u16;
    assert_eq!(
        buf[(x, y)].bg,
        theme.style(Role::BadgeProtected).bg.expect("bg")
    );
}

#[test]
fn missing_kruise_opens_pods_until_a_switch_finds_it() {
    let mut h = Harness::standard();
    let mut d = harness::discovery(None);
    d.kruise_missing = true;
    h.feed(Msg::Discovered(d));
    let screen = h.screen();
    assert!(screen.contains("Pods — all namespaces [16]"), "{screen}");
    assert!(screen.contains("OpenKruise is not installed in this cluster"));
    h.type_text(":ctx prod-eu");
    assert_eq!(h.press(&["enter"]).len(), 1);
    let mut d = harness::discovery(None);
    d.context = Some("prod-eu".into());
    h.feed(Msg::Discovered(d));
    let screen = h.screen();
    assert!(
        screen.contains("Workloads — all namespaces [5]"),
        "{screen}"
    );
    assert!(screen.contains("context prod-eu"));
    assert!(!screen.contains("OpenKruise is not installed"));
}

#[test]
fn command_history_is_bounded_and_esc_walks_it_back() {
    let mut h = Harness::standard();
    for _ in 0..20 {
        h.type_text(":pods");
        h.press(&["enter"]);
        h.type_text(":cs");
        h.press(&["enter"]);
    }
    let mut pops = 0;
    while !h.screen().contains("Workloads — all namespaces") {
        h.press(&["esc"]);
        pops += 1;
        assert!(pops < 20, "esc reaches the root");
    }
    assert_eq!(pops, 15, "16 views deep at most");
}

#[test]
fn rows_arriving_at_start_keep_the_cursor_on_the_top_row() {
    let (stores, writers) = harness::empty_stores();
    let mut h = Harness::bare(stores, writers, LoadedConfig::default(), (120, 20));
    // The DaemonSet list lands first, then the CloneSets sort above it.
    harness::apply(
        &mut h.writers.daemonsets,
        harness::fixture("daemonsets.yaml"),
    );
    h.feed(Msg::StoreChanged(Kind::DaemonSet));
    harness::apply(&mut h.writers.clonesets, harness::fixture("clonesets.yaml"));
    h.feed(Msg::StoreChanged(Kind::CloneSet));
    let screen = h.screen();
    assert!(screen.contains(" 1/4 "), "{screen}");
    // Once the user picked a row, it follows the object.
    h.press(&["G"]);
    harness::apply(
        &mut h.writers.statefulsets,
        harness::fixture("statefulsets.yaml"),
    );
    h.feed(Msg::StoreChanged(Kind::StatefulSet));
    assert!(h.screen().contains(" 5/5 "));
}
