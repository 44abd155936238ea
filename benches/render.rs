//! Render benchmark (harness = false, std::time): 10,000 pods owned by 100 CloneSets, all
//! namespaces, drawn into a 200x50 TestBackend. Prints median and p99 per frame for the
//! Workloads view, the all-Pods view and one CloneSet's pods, the time of the row rebuild on
//! `StoreChanged`, and of one filter keystroke over 10,000 pods.
//!
//! Run: `cargo bench --bench render` (add `--profile dev` for a quick, pessimistic run). On a
//! shared machine the wall-clock median and p99 include time the scheduler gave to others; the
//! minimum is the closest figure to the uncontended cost.

use std::{
    collections::BTreeMap,
    hint::black_box,
    time::{Duration, Instant},
};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use kruise_tui::{
    api::{
        CloneSet, SlimPod,
        cloneset::{CloneSetSpec, CloneSetStatus},
        pod::{SlimContainer, SlimContainerStatus, SlimPodSpec, SlimPodStatus},
    },
    app::{
        self, App, AppInit, Kind, Msg, Stores,
        stores::{PodWriter, pod_store},
    },
    config::LoadedConfig,
    view,
};
use kube::runtime::{reflector, watcher};
use ratatui::{Terminal, backend::TestBackend};

const CLONESETS: usize = 100;
const PODS_PER_SET: usize = 100;
const FRAMES: usize = 300;

fn labels(pairs: &[(&str, String)]) -> Option<BTreeMap<String, String>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

fn world(now: Timestamp) -> (Stores, PodWriter, Vec<SlimPod>) {
    let (clonesets, mut cw) = reflector::store::<CloneSet>();
    let (statefulsets, _sw) = reflector::store();
    let (daemonsets, _dw) = reflector::store();
    let (pods, mut pw) = pod_store();
    let created = Some(Time(
        Timestamp::from_second(now.as_second() - 86_400).unwrap_or(now),
    ));
    let mut all = Vec::new();
    for c in 0..CLONESETS {
        let name = format!("svc-{c:03}");
        let ns = format!("team-{}", c % 10);
        let uid = format!("uid-{name}");
        let update = format!("{name}-7d9fbc8c4");
        let current = format!("{name}-6c8b5d4f2");
        cw.apply_watcher_event(&watcher::Event::Apply(CloneSet {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(ns.clone()),
                uid: Some(uid.clone()),
                creation_timestamp: created.clone(),
                ..Default::default()
            },
            spec: CloneSetSpec {
                replicas: Some(PODS_PER_SET as i32),
                selector: LabelSelector {
                    match_labels: labels(&[("app", name.clone())]),
                    ..Default::default()
                },
                ..Default::default()
            },
            status: Some(CloneSetStatus {
                replicas: PODS_PER_SET as i32,
                ready_replicas: PODS_PER_SET as i32 - 3,
                updated_replicas: 40,
                expected_updated_replicas: Some(50),
                current_revision: current.clone(),
                update_revision: update.clone(),
                ..Default::default()
            }),
        }));
        for p in 0..PODS_PER_SET {
            let rev = if p < 40 { &update } else { &current };
            let pod = SlimPod {
                metadata: ObjectMeta {
                    name: Some(format!("{name}-{p:05x}")),
                    namespace: Some(ns.clone()),
                    uid: Some(format!("uid-{name}-{p}")),
                    creation_timestamp: created.clone(),
                    labels: labels(&[
                        ("app", name.clone()),
                        ("controller-revision-hash", rev.clone()),
                    ]),
                    owner_references: Some(vec![OwnerReference {
                        api_version: "apps.kruise.io/v1alpha1".into(),
                        kind: "CloneSet".into(),
                        name: name.clone(),
                        uid: uid.clone(),
                        controller: Some(true),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }
                .into(),
                spec: SlimPodSpec {
                    node_name: Some(format!("node-{}", p % 20).into()),
                    containers: vec![SlimContainer {
                        name: "main".into(),
                        image: "img".into(),
                        resources: None,
                    }]
                    .into(),
                    ..Default::default()
                },
                status: SlimPodStatus {
                    phase: Some("Running".into()),
                    container_statuses: vec![SlimContainerStatus {
                        name: "main".into(),
                        ready: p % 33 != 0,
                        restart_count: (p % 7) as i32,
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                },
            };
            pw.apply(pod.clone());
            all.push(pod);
        }
    }
    (
        Stores {
            clonesets,
            statefulsets,
            daemonsets,
            pods,
            oncall: kruise_tui::app::stores::OncallStores::new().0,
        },
        pw,
        all,
    )
}

fn key(c: char) -> Msg {
    let code = match c {
        '\n' => KeyCode::Enter,
        '\x1b' => KeyCode::Esc,
        c => KeyCode::Char(c),
    };
    Msg::Key(KeyEvent::new(code, KeyModifiers::empty()))
}

fn keys(app: &mut App, text: &str) {
    for c in text.chars() {
        app::update(app, key(c));
    }
}

struct Stats {
    min: Duration,
    median: Duration,
    p99: Duration,
    max: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        min: at(0.0),
        median: at(0.5),
        p99: at(0.99),
        max: at(1.0),
    }
}

fn report(name: &str, samples: Vec<Duration>) {
    let n = samples.len();
    let s = stats(samples);
    println!(
        "{name:<42} n={n:<4} min {:>8.3} ms  median {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms",
        s.min.as_secs_f64() * 1e3,
        s.median.as_secs_f64() * 1e3,
        s.p99.as_secs_f64() * 1e3,
        s.max.as_secs_f64() * 1e3
    );
}

/// Draws `FRAMES` frames, moving the cursor one row between frames (as a user holding `j`).
fn frames(app: &mut App, term: &mut Terminal<TestBackend>) -> Vec<Duration> {
    (0..FRAMES)
        .map(|_| {
            app::update(app, key('j'));
            let start = Instant::now();
            term.draw(|f| view::render(app, f)).expect("draw");
            start.elapsed()
        })
        .collect()
}

fn main() {
    let now: Timestamp = "2026-01-10T12:00:00Z".parse().expect("time");
    let (stores, mut writer, mut all) = world(now);
    let pods = all.len();
    let cold = Instant::now();
    let mut app = App::new(AppInit {
        stores,
        config: LoadedConfig::default(),
        namespace: None,
        now,
        context: Some("bench".into()),
        size: (200, 50),
        readonly: false,
    });
    for kind in [
        Kind::CloneSet,
        Kind::StatefulSet,
        Kind::DaemonSet,
        Kind::Pod,
    ] {
        app::update(&mut app, Msg::StoreReady(kind));
    }
    let mut term = Terminal::new(TestBackend::new(200, 50)).expect("terminal");
    let cold = cold.elapsed();
    println!("render bench: {CLONESETS} CloneSets, {pods} pods, all namespaces, 200x50");
    println!(
        "{:<42} {:.3} ms",
        "App::new: build all rows from cold stores",
        cold.as_secs_f64() * 1e3
    );

    let rebuild = |app: &mut App, kind: Kind, n: usize| -> Vec<Duration> {
        (0..n)
            .map(|_| {
                let start = Instant::now();
                black_box(app::update(app, Msg::StoreChanged(kind)));
                start.elapsed()
            })
            .collect()
    };
    report(
        "StoreChanged(Pod): rebuild 10k pod rows",
        rebuild(&mut app, Kind::Pod, 30),
    );
    let one_changed: Vec<Duration> = (0..30)
        .map(|i| {
            let pod = &mut all[i * 37 % pods];
            pod.status.container_statuses[0].restart_count += 1;
            writer.apply_watcher_event(&watcher::Event::Apply(pod.clone()));
            let start = Instant::now();
            black_box(app::update(&mut app, Msg::StoreChanged(Kind::Pod)));
            start.elapsed()
        })
        .collect();
    report("StoreChanged(Pod) after one pod changed", one_changed);
    // What the watch sends: the pods a frame's events touched (here 4, ~200 changes/s).
    let keyed: Vec<Duration> = (0..300)
        .map(|i| {
            let keys = (0..4)
                .map(|k| {
                    let pod = &mut all[(i * 4 + k) * 37 % pods];
                    pod.status.container_statuses[0].restart_count += 1;
                    writer.apply_watcher_event(&watcher::Event::Apply(pod.clone()));
                    app::msg::PodKey {
                        namespace: pod.key().0.to_owned(),
                        name: pod.key().1.to_owned(),
                    }
                })
                .collect();
            let start = Instant::now();
            black_box(app::update(&mut app, Msg::PodsChanged(keys)));
            start.elapsed()
        })
        .collect();
    report("PodsChanged: 4 pods changed", keyed);
    let ticks: Vec<Duration> = (0..60)
        .map(|i| {
            let start = Instant::now();
            let at = Timestamp::from_second(now.as_second() + i).unwrap_or(now);
            black_box(app::update(&mut app, Msg::Tick(at)));
            start.elapsed()
        })
        .collect();
    report("Tick (the 1 s clock) with 10k pods", ticks);
    report(
        "StoreChanged(CloneSet): rebuild workloads",
        rebuild(&mut app, Kind::CloneSet, 30),
    );

    let first = Instant::now();
    term.draw(|f| view::render(&app, f)).expect("draw");
    println!(
        "{:<44} {:.3} ms",
        "first frame (Workloads)",
        first.elapsed().as_secs_f64() * 1e3
    );
    report("frame: Workloads view", frames(&mut app, &mut term));

    keys(&mut app, ":pods\n");
    report("frame: Pods view (10k rows)", frames(&mut app, &mut term));
    report(
        "StoreChanged(Pod) while on the Pods view",
        rebuild(&mut app, Kind::Pod, 30),
    );

    let filter: Vec<Duration> = (0..30)
        .map(|_| {
            app::update(&mut app, key('/'));
            let start = Instant::now();
            keys(&mut app, "s");
            let d = start.elapsed();
            keys(&mut app, "\x1b");
            d
        })
        .collect();
    report("filter keystroke over 10k pods", filter);

    keys(&mut app, ":cs\n");
    app::update(&mut app, key('G'));
    app::update(&mut app, key('\n'));
    report("frame: Pods of one CloneSet", frames(&mut app, &mut term));
    let enter: Vec<Duration> = (0..30)
        .map(|_| {
            app::update(&mut app, key('\x1b'));
            let start = Instant::now();
            app::update(&mut app, key('\n'));
            start.elapsed()
        })
        .collect();
    report("Enter on a CloneSet (select its pods)", enter);
}
