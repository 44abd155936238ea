//! The header tells how the big lists load while they do: `pods loading · streaming list`, or
//! `· paged list (server refused streaming)` where the server refused streaming lists; nothing
//! else (no banner, no error) on that fallback, and nothing once the kinds are ready.

use crate::harness;

use harness::{Harness, discovery, empty_stores};
use kruise_tui::{
    app::{Kind, Msg, msg::ListMode},
    config::LoadedConfig,
};

fn header(h: &mut Harness) -> String {
    h.screen().lines().next().unwrap_or_default().to_owned()
}

#[test]
fn the_header_shows_each_slow_kind_s_list_mode_while_it_loads() {
    let (stores, writers) = empty_stores();
    let mut h = Harness::bare(stores, writers, LoadedConfig::default(), (220, 12));
    h.feed(Msg::Discovered(discovery(Some("demo"))));
    assert!(!header(&mut h).contains("loading"), "no mode known yet");
    h.feed(Msg::ListMode {
        kind: Kind::Pod,
        mode: ListMode::Streaming,
    });
    h.feed(Msg::ListMode {
        kind: Kind::CloneSet,
        mode: ListMode::Paged,
    });
    h.feed(Msg::ListMode {
        kind: Kind::StatefulSet,
        mode: ListMode::Paged,
    });
    let line = header(&mut h);
    assert!(line.contains("pods loading · streaming list"), "{line}");
    assert!(
        line.contains("clonesets, statefulsets loading · paged list (server refused streaming)"),
        "{line}"
    );
    let screen = h.screen();
    assert!(
        !screen.contains("fail") && !screen.contains("error"),
        "{screen}"
    );
    h.feed(Msg::StoreReady(Kind::Pod));
    let line = header(&mut h);
    assert!(!line.contains("pods loading"), "{line}");
    assert!(line.contains("clonesets, statefulsets loading"), "{line}");
    for kind in [Kind::CloneSet, Kind::StatefulSet, Kind::DaemonSet] {
        h.feed(Msg::StoreReady(kind));
    }
    assert!(!header(&mut h).contains("loading"));
}

#[test]
fn a_namespace_switch_forgets_the_old_watches_modes() {
    let (stores, writers) = empty_stores();
    let mut h = Harness::bare(stores.clone(), writers, LoadedConfig::default(), (220, 12));
    h.feed(Msg::ListMode {
        kind: Kind::Pod,
        mode: ListMode::Paged,
    });
    assert!(header(&mut h).contains("pods loading · paged list"));
    h.feed(Msg::StoresReplaced(stores));
    assert!(!header(&mut h).contains("loading"));
    h.feed(Msg::ListMode {
        kind: Kind::Pod,
        mode: ListMode::Streaming,
    });
    assert!(header(&mut h).contains("pods loading · streaming list"));
}
