use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

fn view(limit: usize) -> LogView {
    LogView::new(
        "demo".into(),
        "checkout-x".into(),
        vec!["init".into(), "checkout".into(), "proxy".into()],
        "checkout".into(),
        limit,
        1,
    )
}

fn lines(v: &mut LogView, stream: u64, text: &[&str]) {
    assert!(v.apply(LogEvent {
        stream,
        kind: LogEventKind::Lines(text.iter().map(|s| (*s).to_owned()).collect()),
    }));
}

fn key(v: &mut LogView, c: char, next: &mut u64) -> Vec<Effect> {
    let ev = KeyEvent::new(KeyCode::Char(c), KeyModifiers::empty());
    match v.key(
        &ev,
        &mut || {
            *next += 1;
            *next
        },
        5,
        40,
    ) {
        Handled::Yes(effects) => effects,
        Handled::No => panic!("{c} is a log-view key"),
    }
}

fn press(v: &mut LogView, code: KeyCode) {
    let ev = KeyEvent::new(code, KeyModifiers::empty());
    let mut id = 100;
    let _ = v.key(
        &ev,
        &mut || {
            id += 1;
            id
        },
        5,
        40,
    );
}

#[test]
fn the_buffer_keeps_the_newest_lines_and_counts_the_dropped() {
    let mut v = view(3);
    assert_eq!(
        v.request().tail_lines,
        Some(3),
        "no more is asked than kept"
    );
    lines(&mut v, 1, &["a", "b"]);
    assert_eq!(v.state, StreamState::Streaming);
    lines(&mut v, 1, &["c", "d", "e"]);
    assert_eq!(v.lines, ["c", "d", "e"]);
    assert_eq!(v.dropped, 2);
    // Another stream's lines are not this view's.
    assert!(!v.apply(LogEvent {
        stream: 9,
        kind: LogEventKind::Lines(vec!["x".into()])
    }));
    assert_eq!(v.lines.len(), 3);
    assert!(v.apply(LogEvent {
        stream: 1,
        kind: LogEventKind::Ended
    }));
    assert_eq!(v.state, StreamState::Ended);
}

#[test]
fn toggles_ask_for_the_stream_kubectl_would_read() {
    let mut v = view(100);
    let mut next = 1;
    lines(&mut v, 1, &["one"]);
    // p: the previous run, not followed; the old stream stops, the buffer is refilled.
    let effects = key(&mut v, 'p', &mut next);
    let [Effect::StopLogs(1), Effect::StreamLogs(req)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(req.previous && !req.follow);
    assert_eq!((req.id, req.container.as_str()), (2, "checkout"));
    assert!(v.lines.is_empty());
    // Lines of the stopped stream arriving late are ignored.
    assert!(!v.apply(LogEvent {
        stream: 1,
        kind: LogEventKind::Lines(vec!["late".into()])
    }));
    // t: timestamps on the same run.
    let effects = key(&mut v, 't', &mut next);
    let [Effect::StopLogs(2), Effect::StreamLogs(req)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(req.previous && req.timestamps);
    v.apply(LogEvent {
        stream: 3,
        kind: LogEventKind::Ended,
    });
    // f: back to the current run, followed (the ended stream needs no stop).
    let effects = key(&mut v, 'f', &mut next);
    let [Effect::StreamLogs(req)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(req.follow && !req.previous && req.timestamps);
    // f again while following: stop, keep the lines.
    lines(&mut v, 4, &["kept"]);
    assert_eq!(key(&mut v, 'f', &mut next), vec![Effect::StopLogs(4)]);
    assert_eq!(v.lines, ["kept"]);
    assert_eq!(v.state, StreamState::Stopped);
    // w only changes the view.
    assert_eq!(key(&mut v, 'w', &mut next), vec![]);
    assert!(v.wrap);
    // Other keys are the keymap's.
    let ev = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::empty());
    assert!(matches!(v.key(&ev, &mut || 0, 5, 40), Handled::No));
}

#[test]
fn c_walks_every_container_of_the_pod() {
    let mut v = view(10);
    let effects = v.next_container(7);
    assert_eq!(v.container, "proxy");
    assert!(
        matches!(effects.as_slice(), [Effect::StopLogs(1), Effect::StreamLogs(r)] if r.container == "proxy" && r.id == 7)
    );
    v.next_container(8);
    assert_eq!(v.container, "init", "init containers have logs too");
}

#[test]
fn search_jumps_to_the_newest_match_and_steps_with_wrap_around() {
    let mut v = view(100);
    let text: Vec<String> = (0..20)
        .map(|i| {
            if i % 5 == 0 {
                format!("line {i} ERROR database refused")
            } else {
                format!("line {i} ok")
            }
        })
        .collect();
    let refs: Vec<&str> = text.iter().map(String::as_str).collect();
    lines(&mut v, 1, &refs);
    press(&mut v, KeyCode::Char('x')); // not searching yet: the keymap's
    v.start_search();
    for c in "error".chars() {
        press(&mut v, KeyCode::Char(c));
    }
    assert_eq!(v.search.input.as_deref(), Some("error"));
    press(&mut v, KeyCode::Enter);
    // Smart case: lower-case finds ERROR; the newest match (line 15) is current.
    assert_eq!(v.search.current, Some(15));
    assert_eq!(v.search.position(&v.lines), (Some(4), 4));
    press(&mut v, KeyCode::Char('n'));
    assert_eq!(v.search.current, Some(0), "n wraps around to the first");
    press(&mut v, KeyCode::Char('n'));
    assert_eq!(v.search.current, Some(5));
    assert!(!v.stick, "a match above the bottom scrolls the view to it");
    assert!(v.first_shown(5, 40) <= 5 && 5 < v.first_shown(5, 40) + 5);
    press(&mut v, KeyCode::Char('N'));
    assert_eq!(v.search.current, Some(0));
    // A capital makes it case-sensitive.
    v.search.query = "Error".into();
    assert_eq!(v.search.position(&v.lines).1, 0);
    assert_eq!(
        Search {
            query: "ab".into(),
            ..Search::default()
        }
        .ranges("xabyAB"),
        vec![(1, 3), (4, 6)]
    );
    // Esc clears the search first, then the view may close.
    assert!(v.escape());
    assert!(v.search.query.is_empty());
    assert!(!v.escape());
}

#[test]
fn scrolling_up_unglues_and_the_bottom_glues_again() {
    let mut v = view(100);
    let text: Vec<String> = (0..30).map(|i| format!("l{i}")).collect();
    let refs: Vec<&str> = text.iter().map(String::as_str).collect();
    lines(&mut v, 1, &refs);
    assert_eq!(v.first_shown(10, 40), 20, "glued: the last 10 lines");
    v.scroll(-3, 10, 40);
    assert!(!v.stick);
    assert_eq!(v.first_shown(10, 40), 17);
    // New lines do not move a view that was scrolled up.
    lines(&mut v, 1, &["new"]);
    assert_eq!(v.first_shown(10, 40), 17);
    v.scroll(isize::MAX / 2, 10, 40);
    assert!(v.stick);
    assert_eq!(v.first_shown(10, 40), 21);
    // Wrapped, a long line takes several rows.
    let mut w = view(10);
    lines(&mut w, 1, &["a", &"x".repeat(95), "b"]);
    assert_eq!(bottom_top(&w.lines, 4, 40, true), 1, "3 rows + 1 row");
    assert_eq!(bottom_top(&w.lines, 4, 40, false), 0);
}

#[test]
fn the_log_views_own_keys_shadow_no_global_key_but_partition_and_what_if() {
    use crate::config::{Action, Key, Keymap};
    let keymap = Keymap::default_keymap();
    for c in ['f', 't', 'n', 'N'] {
        let key = Key::parse(&c.to_string()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(keymap.action(&key), None, "{c} is bound globally");
    }
    // p is partition and w what-if elsewhere; neither has anything to act on in a log, and w
    // wraps a log in k9s too.
    let key = |k: &str| Key::parse(k).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(keymap.action(&key("p")), Some(Action::Partition));
    assert_eq!(keymap.action(&key("w")), Some(Action::WhatIf));
}
