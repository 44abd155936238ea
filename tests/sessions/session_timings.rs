//! `KRUISE_TUI_TIMINGS`: the real event loop (`runtime::event_loop::run`) drives the real `App`
//! and `Executor` on a TestBackend, connected through `kruise_client::connect` (the client with
//! the request counter), with keys from a scripted terminal event stream. The timings file gets
//! `start`, `first_frame`, `first_rows` and `all_rows` (the pods the test created, on the
//! all-pods list), a `key` line per key press with its latency and whether the pods were still
//! loading, and `requests` lines counting the console's HTTP requests. Nothing is timed: the
//! figures are measured by scripts/measure-console and benches/scale.rs.

use crate::kubectl::Kubectl;
use crate::testbed::Testbed;

use std::{io, path::Path, time::Duration};

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use futures::channel::mpsc as fmpsc;
use kruise_tui::{
    app::{App, AppInit},
    cli::KubeArgs,
    config::LoadedConfig,
    kube::{Executor, connect::Source},
    runtime::{
        event_loop::{LoopIo, run},
        timings::Timings,
    },
};
use ratatui::{Terminal, backend::TestBackend};
use serde_json::Value;
use tokio::sync::mpsc::unbounded_channel;

const PODS: usize = 3;

fn pod(i: usize) -> String {
    format!(
        r#"
apiVersion: v1
kind: Pod
metadata: {{name: timed-{i}, labels: {{app: timed}}}}
spec: {{containers: [{{name: main, image: "nginx:1.27"}}]}}
"#
    )
}

fn press(keys: &fmpsc::UnboundedSender<io::Result<TermEvent>>, code: KeyCode) {
    let mods = match code {
        KeyCode::Char('c') => KeyModifiers::CONTROL,
        _ => KeyModifiers::NONE,
    };
    keys.unbounded_send(Ok(TermEvent::Key(KeyEvent::new(code, mods))))
        .expect("the loop reads keys");
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect()
}

fn events<'a>(lines: &'a [Value], name: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["event"] == name).collect()
}

/// Waits (on the wall clock, up to `secs`) until the timings file has an `event` line.
async fn wait_for(path: &Path, event: &str, secs: u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while events(&lines(path), event).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {event:?} line after {secs}s: {:#?}",
            lines(path)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timings_file_records_rows_keys_and_requests() {
    let tb = Testbed::start().await;
    let kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    for i in 0..PODS {
        kubectl.apply(&[], &pod(i)).await;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("timings.jsonl");

    let source = Source {
        kubeconfig: Some(tb.kubeconfig_in_ns().to_owned()),
        context: None,
    };
    let conn = kruise_tui::kube::connect::connect(&source, None)
        .await
        .expect("connects through kruise_client::connect");
    let (msg_tx, msg_rx) = unbounded_channel();
    let (effect_tx, effect_rx) = unbounded_channel();
    let executor =
        Executor::with_connection(KubeArgs::default(), conn, Some(tb.ns().to_owned()), msg_tx)
            .with_journal(kruise_tui::journal::Journal::new(
                dir.path().join("journal.jsonl"),
            ));
    let size = (160, 40);
    let mut app = App::new(AppInit {
        stores: executor.stores(),
        config: LoadedConfig::default(),
        namespace: Some(tb.ns().to_owned()),
        now: jiff::Timestamp::now(),
        context: Some(tb.context()),
        size,
        readonly: true,
    });
    let executor_task = tokio::spawn(executor.run(effect_rx));
    let (keys, key_rx) = fmpsc::unbounded();
    let io = LoopIo {
        terminal_events: key_rx,
        msgs: msg_rx,
        effects: effect_tx,
        timings: Some(Timings::open(&path).expect("opens the timings file")),
    };
    let mut terminal = Terminal::new(TestBackend::new(size.0, size.1)).expect("terminal");

    let driver = {
        let path = path.clone();
        async move {
            wait_for(&path, "first_frame", 30).await;
            for c in ":pods".chars() {
                press(&keys, KeyCode::Char(c));
            }
            press(&keys, KeyCode::Enter);
            wait_for(&path, "all_rows", 60).await;
            press(&keys, KeyCode::Char('j'));
            press(&keys, KeyCode::Char('k'));
            // One clock tick at least, for a `requests` line.
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            press(&keys, KeyCode::Char('c'));
        }
    };
    let (result, ()) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(120), run(&mut terminal, &mut app, io)),
        driver
    );
    executor_task.abort();
    assert!(matches!(result, Ok(Ok(()))), "{result:?}");

    let got = lines(&path);
    let starts = events(&got, "start");
    assert_eq!(starts.len(), 1, "{got:#?}");
    assert!(starts[0]["unix_ms"].as_u64().is_some_and(|ms| ms > 0));
    assert_eq!(events(&got, "first_frame").len(), 1, "{got:#?}");
    let first = events(&got, "first_rows");
    assert_eq!(first.len(), 1, "{got:#?}");
    assert!(
        first[0]["rows"].as_u64().is_some_and(|n| n >= 1),
        "{got:#?}"
    );
    let all = events(&got, "all_rows");
    assert_eq!(all.len(), 1, "{got:#?}");
    assert_eq!(all[0]["rows"], PODS as u64, "every pod is a row: {got:#?}");
    let order: Vec<&str> = got
        .iter()
        .filter_map(|l| l["event"].as_str())
        .filter(|e| ["start", "first_frame", "first_rows", "all_rows"].contains(e))
        .collect();
    assert_eq!(order, ["start", "first_frame", "first_rows", "all_rows"]);

    let keys = events(&got, "key");
    let names: Vec<&str> = keys.iter().filter_map(|k| k["key"].as_str()).collect();
    // ctrl-c ends the loop before any frame: it has no line.
    assert_eq!(names, [":", "p", "o", "d", "s", "Enter", "j", "k"]);
    for key in &keys {
        assert!(key["latency_us"].as_u64().is_some(), "{key}");
        let (read, done) = (&key["read_unix_us"], &key["done_unix_us"]);
        assert!(read.as_u64() <= done.as_u64(), "{key}");
    }
    // `j` after the load moved the selection: a frame showed it, and the pods were in.
    let j = keys.iter().find(|k| k["key"] == "j").expect("j");
    assert_eq!(j["drawn"], true, "{j}");
    assert_eq!(j["loading"], false, "{j}");

    let requests = events(&got, "requests");
    assert!(
        requests
            .iter()
            .any(|r| r["count"].as_u64().is_some_and(|n| n > 0)),
        "the console's lists and watches are counted: {got:#?}"
    );
    tb.shutdown().await;
}
