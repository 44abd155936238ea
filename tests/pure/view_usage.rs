//! The usage columns (issue 23): CPU and memory from `metrics.k8s.io` in the Workloads and Pods
//! views, with requests/limits beside them; none (and no error) without the API; read again on
//! the API's own interval, one read at a time, only while a view that shows usage is on top.

use crate::harness;

use harness::{Harness, fixture, now};
use kruise_tui::{
    api::{
        SlimPod,
        pod::{CpuMemory, SlimResources},
    },
    app::{Effect, Kind, Msg, msg::EffectResult, usage::Answer},
    kube::metrics::{ContainerUsage, PodUsage},
};

/// The fixtures with requests and limits on the web pods (100m/500m CPU, 64Mi/128Mi memory).
fn with_resources(namespace: Option<&str>, size: (u16, u16)) -> Harness {
    let mut h = Harness::loaded(namespace, size);
    for mut pod in fixture::<SlimPod>("pods.yaml") {
        let name = pod.metadata.name.as_deref().unwrap_or("").to_owned();
        if !name.starts_with("web-") {
            continue;
        }
        let mut containers = pod.spec.containers.to_vec();
        for c in &mut containers {
            c.resources = Some(Box::new(SlimResources {
                requests: CpuMemory {
                    cpu: Some("100m".into()),
                    memory: Some("64Mi".into()),
                },
                limits: CpuMemory {
                    cpu: Some("500m".into()),
                    memory: Some("128Mi".into()),
                },
            }));
        }
        pod.spec.containers = containers.into();
        use harness::Fill;
        h.writers.pods.fill(pod);
    }
    h.feed(Msg::StoreChanged(Kind::Pod));
    h
}

fn pod(ns: &str, name: &str, cpu: i64, mem_mi: i64) -> PodUsage {
    PodUsage {
        namespace: ns.into(),
        name: name.into(),
        containers: vec![ContainerUsage {
            name: "main".into(),
            cpu_millis: cpu,
            memory_bytes: mem_mi << 20,
        }]
        .into(),
    }
}

fn read() -> Answer {
    Answer::Read {
        pods: vec![
            pod("demo", "web-4xk2p", 120, 60),
            pod("demo", "web-8m3qz", 480, 120),
            pod("demo", "web-b7w9n", 90, 50),
            pod("demo", "web-c2d5r", 100, 40),
            pod("demo", "web-h6j8t", 10, 30),
            pod("demo", "db-0", 250, 900),
            pod("demo", "db-1", 230, 880),
        ],
        window_seconds: Some(15.0),
    }
}

/// Answers the read out now.
fn answer(h: &mut Harness, answer: Answer) -> Vec<Effect> {
    let id = h.app.usage().in_flight.expect("a read is out");
    h.feed(Msg::EffectDone(EffectResult::Usage { id, answer }))
}

fn tick(h: &mut Harness, seconds: i64) -> Vec<Effect> {
    let at = now() + jiff::SignedDuration::from_secs(seconds);
    h.feed(Msg::Tick(at))
}

fn fetches(effects: &[Effect]) -> Vec<bool> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::FetchUsage { check, .. } => Some(*check),
            _ => None,
        })
        .collect()
}

#[test]
fn without_a_metrics_api_there_are_no_usage_columns_and_no_error() {
    let mut h = with_resources(Some("demo"), (160, 24));
    assert!(
        h.app.usage().in_flight.is_some(),
        "the first read goes out at once"
    );
    answer(&mut h, Answer::NotServed);
    let screen = h.screen();
    for absent in ["CPU", "MEM", "metrics", "rror"] {
        assert!(!screen.contains(absent), "{absent}:\n{screen}");
    }
    h.command("pods");
    let screen = h.screen();
    assert!(!screen.contains("CPU"), "{screen}");
    // Asked again only after a minute (it may be installed meanwhile), with discovery first.
    assert_eq!(fetches(&tick(&mut h, 59)), Vec::<bool>::new());
    assert_eq!(fetches(&tick(&mut h, 60)), vec![true]);
}

#[test]
fn workloads_show_usage_summed_per_workload() {
    let mut h = with_resources(Some("demo"), (160, 24));
    answer(&mut h, read());
    let screen = h.screen();
    insta::assert_snapshot!(screen);
    // web: 800m of 2500m limits (5 pods × 500m), 300Mi of 640Mi.
    let web = screen
        .lines()
        .find(|l| l.contains(" web "))
        .expect("web row");
    assert!(web.contains("800m"), "{web}");
    assert!(web.contains("500m/2500m"), "{web}");
    assert!(web.contains("300Mi"), "{web}");
    assert!(web.contains("320Mi/640Mi"), "{web}");
}

#[test]
fn pods_show_usage_with_requests_and_limits() {
    let mut h = with_resources(Some("demo"), (160, 24));
    answer(&mut h, read());
    h.command("pods");
    let screen = h.screen();
    insta::assert_snapshot!(screen);
    let row = screen
        .lines()
        .find(|l| l.contains("web-8m3qz"))
        .expect("pod row");
    assert!(row.contains("480m") && row.contains("100m/500m"), "{row}");
    assert!(row.contains("120Mi") && row.contains("64Mi/128Mi"), "{row}");
    let db = screen.lines().find(|l| l.contains("db-0")).expect("db-0");
    assert!(db.contains("250m") && db.contains("900Mi"), "{db}");
    // A pod the metrics do not list yet has dashes.
    let api = screen
        .lines()
        .find(|l| l.contains("api-f5k7m"))
        .expect("api");
    assert!(api.contains(" - "), "{api}");
}

#[test]
fn reads_follow_the_window_one_at_a_time_and_only_on_a_usage_view() {
    let mut h = with_resources(Some("demo"), (160, 24));
    // One read out: nothing more is asked, however many ticks pass.
    assert_eq!(fetches(&tick(&mut h, 30)), Vec::<bool>::new());
    answer(&mut h, read());
    let answered = 30;
    assert_eq!(fetches(&tick(&mut h, answered + 14)), Vec::<bool>::new());
    assert_eq!(
        fetches(&tick(&mut h, answered + 15)),
        vec![false],
        "served: no discovery before the next read"
    );
    answer(
        &mut h,
        Answer::Read {
            pods: vec![pod("demo", "web-4xk2p", 1, 1)],
            window_seconds: Some(30.0),
        },
    );
    // On the YAML view nothing is read.
    h.press(&["y"]);
    assert_eq!(
        fetches(&tick(&mut h, answered + 15 + 60)),
        Vec::<bool>::new()
    );
    // Back on the Workloads view, the read that was due goes out at once.
    assert_eq!(fetches(&h.press(&["esc"])), vec![false]);
    assert_eq!(
        fetches(&tick(&mut h, answered + 15 + 61)),
        Vec::<bool>::new()
    );
}

#[test]
fn a_failed_read_keeps_the_last_figures() {
    let mut h = with_resources(Some("demo"), (160, 24));
    answer(&mut h, read());
    let before = h.screen();
    tick(&mut h, 15);
    answer(
        &mut h,
        Answer::Failed("the server is currently unable".into()),
    );
    let after = h.screen();
    assert!(h.app.usage().stale);
    let web = after
        .lines()
        .find(|l| l.contains(" web "))
        .expect("web row");
    assert!(web.contains("800m"), "{web}");
    assert!(!after.contains("unable"), "no error shown:\n{after}");
    assert_eq!(before.lines().count(), after.lines().count());
}

/// `kruise-tui top`'s table: every pod (a pod not measured yet with dashes), per container with
/// `--containers`, and the total of the measured ones.
#[test]
fn top_prints_a_table_with_the_total() {
    use kruise_tui::{
        app::usage::{Bounds, Figures},
        cli::TopTarget,
        cmd::top::{ContainerLine, PodLine, Report, table},
    };
    let bounds = Bounds {
        cpu_request: Some(100),
        cpu_limit: Some(500),
        memory_request: Some(64 << 20),
        memory_limit: Some(128 << 20),
    };
    let measured = |cpu: i64, mem: i64| Figures {
        cpu,
        memory: mem << 20,
        bounds,
    };
    let pod = |name: &str, f: Option<Figures>| PodLine {
        namespace: "demo".into(),
        name: name.into(),
        figures: f,
        bounds,
        containers: vec![ContainerLine {
            name: "main".into(),
            figures: f,
            bounds,
        }],
    };
    let report = Report {
        what: "CloneSet demo/web".into(),
        all_namespaces: false,
        pods: vec![
            pod("web-a", Some(measured(120, 60))),
            pod("web-b", Some(measured(480, 120))),
            pod("web-c", None),
        ],
    };
    insta::assert_snapshot!(table(&report, true));
    let plain = table(&report, false);
    assert_eq!(plain.lines().count(), 5, "{plain}");
    let total: Vec<&str> = plain.lines().last().unwrap().split_whitespace().collect();
    assert_eq!(
        total,
        [
            "TOTAL",
            "(2/3",
            "pods)",
            "600m",
            "200m/1000m",
            "180Mi",
            "128Mi/256Mi"
        ],
        "{plain}"
    );
    assert_eq!(TopTarget::parse("pods"), Ok(TopTarget::Pods));
    assert!(matches!(
        TopTarget::parse("cs/web"),
        Ok(TopTarget::Workload(_))
    ));
    assert!(TopTarget::parse("deploy/web").is_err());
}

fn scopes(effects: &[Effect]) -> Vec<Option<Vec<String>>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::FetchUsage { namespaces, .. } => Some(namespaces.clone()),
            _ => None,
        })
        .collect()
}

/// At scale (all namespaces watched, more than `SCOPE_ABOVE_PODS` pods) a read asks only for
/// the namespaces of the rows on screen; scrolling onto another namespace asks for it at once,
/// and its figures show.
#[test]
fn a_big_cluster_reads_the_usage_of_the_namespaces_on_screen() {
    use kruise_tui::app::usage::SCOPE_ABOVE_PODS;
    let mut h = with_resources(None, (160, 24));
    assert_eq!(scopes(&[]), Vec::<Option<Vec<String>>>::new());
    answer(&mut h, read());
    let template = fixture::<SlimPod>("pods.yaml")
        .into_iter()
        .next()
        .expect("a fixture pod");
    let per_ns = 100;
    let namespaces = SCOPE_ABOVE_PODS / per_ns + 5;
    for ns in 0..namespaces {
        for i in 0..per_ns {
            let mut p = template.clone();
            p.metadata.name = Some(format!("bulk-{i:03}").into());
            p.metadata.namespace = Some(format!("scale-{ns:02}").into());
            use harness::Fill;
            h.writers.pods.fill(p);
        }
    }
    h.feed(Msg::StoreChanged(Kind::Pod));
    h.command("pods");
    // Due on the interval: only the namespaces on screen (the fixtures' and the first bulk one).
    let first = scopes(&tick(&mut h, 15));
    assert_eq!(first.len(), 1, "{first:?}");
    let on_screen = first[0].clone().expect("a scoped read");
    let screen = h.screen();
    assert!(
        !on_screen.is_empty() && on_screen.len() <= 8,
        "{on_screen:?}"
    );
    for ns in &on_screen {
        assert!(screen.contains(ns.as_str()), "{ns} is on screen:\n{screen}");
    }
    assert!(
        !on_screen.iter().any(|ns| ns == "scale-20"),
        "{on_screen:?}"
    );
    answer(&mut h, read());
    // Nothing more until the interval while the screen stays where it is.
    assert_eq!(scopes(&tick(&mut h, 16)), Vec::<Option<Vec<String>>>::new());
    // The last page: another namespace on screen is read at once, before the interval.
    let effects = h.press(&["G"]);
    let last = format!("scale-{:02}", namespaces - 1);
    assert_eq!(scopes(&effects), vec![Some(vec![last.clone()])]);
    answer(
        &mut h,
        Answer::Read {
            pods: vec![pod(&last, &format!("bulk-{:03}", per_ns - 1), 321, 77)],
            window_seconds: Some(15.0),
        },
    );
    let screen = h.screen();
    let row = screen
        .lines()
        .find(|l| l.contains(&last) && l.contains(&format!("bulk-{:03}", per_ns - 1)))
        .unwrap_or_default();
    assert!(
        row.contains("321m") && row.contains("77Mi"),
        "{row}\n{screen}"
    );
}

/// A small cluster (or one namespace watched) reads everything watched, as before.
#[test]
fn a_small_cluster_reads_all_its_usage_at_once() {
    let mut h = with_resources(None, (160, 24));
    answer(&mut h, read());
    h.command("pods");
    assert_eq!(scopes(&tick(&mut h, 15)), vec![None]);
}

/// No read while the pods load: their rows attribute the figures (requests, limits, workloads)
/// and say which namespaces are on screen. The first read goes out when they are in.
#[test]
fn the_first_read_waits_for_the_pods() {
    let (stores, writers) = harness::fixture_stores();
    let mut h = Harness::bare(
        stores,
        writers,
        kruise_tui::config::LoadedConfig::default(),
        (160, 24),
    );
    let mut effects = h.feed(Msg::Discovered(harness::discovery(None)));
    for kind in [Kind::CloneSet, Kind::StatefulSet, Kind::DaemonSet] {
        effects.extend(h.feed(Msg::StoreReady(kind)));
    }
    effects.extend(tick(&mut h, 30));
    assert_eq!(fetches(&effects), Vec::<bool>::new());
    assert!(h.app.usage().in_flight.is_none());
    assert_eq!(fetches(&h.feed(Msg::StoreReady(Kind::Pod))), vec![true]);
}
