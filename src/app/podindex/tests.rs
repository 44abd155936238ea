//! The incremental path (pod keys) must leave exactly what a whole rebuild would: rows, their
//! order, the indexes, the lists' visible rows and triage.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use kube::runtime::{reflector, reflector::store::Writer, watcher::Event};

use super::*;
use crate::{
    api::{
        CloneSet, SlimPod,
        cloneset::{CloneSetSpec, CloneSetStatus},
        pod::{
            SlimContainer, SlimContainerState, SlimContainerStatus, SlimPodSpec, SlimPodStatus,
            SlimStateDetail,
        },
    },
    app::{
        App, AppInit, Kind, Msg,
        stores::{OncallStores, PodWriter},
        update,
    },
    config::LoadedConfig,
};

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

/// A tiny deterministic generator (no dependency, the same sequence every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn cloneset(ns: &str, name: &str) -> CloneSet {
    CloneSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            uid: Some(format!("uid-{ns}-{name}")),
            ..Default::default()
        },
        spec: CloneSetSpec {
            replicas: Some(5),
            selector: LabelSelector {
                match_labels: Some(BTreeMap::from([("app".into(), name.into())])),
                ..Default::default()
            },
            ..Default::default()
        },
        status: Some(CloneSetStatus {
            replicas: 5,
            updated_replicas: 2,
            current_revision: format!("{name}-old"),
            update_revision: format!("{name}-new"),
            ..Default::default()
        }),
    }
}

fn pod(ns: &str, owner: &str, i: u64, ready: bool, restarts: i32, crash: bool) -> SlimPod {
    SlimPod {
        metadata: ObjectMeta {
            name: Some(format!("{owner}-{i:03}")),
            namespace: Some(ns.into()),
            uid: Some(format!("uid-pod-{ns}-{owner}-{i}")),
            creation_timestamp: Some(Time(at(-3600))),
            labels: Some(BTreeMap::from([
                ("app".into(), owner.into()),
                (
                    "controller-revision-hash".into(),
                    format!(
                        "{owner}-{}",
                        if i.is_multiple_of(2) { "new" } else { "old" }
                    ),
                ),
            ])),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps.kruise.io/v1alpha1".into(),
                kind: "CloneSet".into(),
                name: owner.into(),
                uid: format!("uid-{ns}-{owner}"),
                controller: Some(true),
                ..Default::default()
            }]),
            ..Default::default()
        }
        .into(),
        spec: SlimPodSpec {
            node_name: Some(format!("node-{}", i % 3).into()),
            containers: vec![SlimContainer {
                name: "app".into(),
                image: "app:1".into(),
                resources: None,
            }]
            .into(),
            ..Default::default()
        },
        status: SlimPodStatus {
            phase: Some("Running".into()),
            container_statuses: vec![SlimContainerStatus {
                name: "app".into(),
                ready,
                restart_count: restarts,
                state: crash.then(|| SlimContainerState {
                    waiting: Some(Box::new(SlimStateDetail {
                        reason: Some("CrashLoopBackOff".into()),
                        ..Default::default()
                    })),
                    ..Default::default()
                }),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        },
    }
}

fn stores() -> (Stores, Writer<CloneSet>, PodWriter) {
    let (clonesets, cw) = reflector::store::<CloneSet>();
    let (statefulsets, _) = reflector::store();
    let (daemonsets, _) = reflector::store();
    let (pods, pw) = crate::app::stores::pod_store();
    let (oncall, _) = OncallStores::new();
    (
        Stores {
            clonesets,
            statefulsets,
            daemonsets,
            pods,
            oncall,
        },
        cw,
        pw,
    )
}

fn app(stores: &Stores, namespace: Option<&str>, now: Timestamp) -> App {
    let mut app = App::new(AppInit {
        stores: stores.clone(),
        config: LoadedConfig::default(),
        namespace: namespace.map(str::to_owned),
        now,
        context: Some("test".into()),
        size: (200, 50),
        readonly: false,
    });
    for kind in [
        Kind::CloneSet,
        Kind::StatefulSet,
        Kind::DaemonSet,
        Kind::Pod,
    ] {
        update::update(&mut app, Msg::StoreReady(kind));
    }
    app
}

/// Rows, pods needing attention, pods per workload, triage, the list's visible rows.
type Summary = (
    Vec<String>,
    Vec<String>,
    Vec<(String, usize)>,
    Vec<String>,
    Vec<u32>,
);

/// What must agree between the incremental and the rebuilt state.
fn summary(app: &App) -> Summary {
    let rows = app
        .pods
        .iter()
        .map(|r| {
            format!(
                "{}/{} {} {} {} {}",
                r.namespace, r.name, r.ready, r.status, r.restarts, r.node
            )
        })
        .collect();
    let attention = app.pod_index.attention().map(|r| r.key()).collect();
    let owned = app
        .workloads
        .iter()
        .map(|w| (w.name.clone(), app.pod_index.owned(&w.uid).len()))
        .collect();
    let triage = app
        .oncall
        .triage
        .iter()
        .map(|p| format!("{:?} {} {}", p.kind, p.subject, p.why))
        .collect();
    let visible = match app.stack.last() {
        Some(crate::app::route::Route::List(list)) => list.visible.clone(),
        _ => Vec::new(),
    };
    (rows, attention, owned, triage, visible)
}

#[test]
fn pod_changes_applied_by_key_equal_a_whole_rebuild() {
    for namespace in [None, Some("b")] {
        let (stores, mut cw, mut pw) = stores();
        let owners = [("a", "web"), ("b", "api"), ("b", "zeta"), ("c", "web")];
        for (ns, name) in owners {
            cw.apply_watcher_event(&Event::Apply(cloneset(ns, name)));
        }
        let now = at(0);
        let mut live: BTreeMap<(usize, u64), SlimPod> = BTreeMap::new();
        let mut rng = Lcg(7);
        let mut incremental = app(&stores, namespace, now);
        // On the Pods view, filtered half the time, so the lists are compared too.
        update::update(
            &mut incremental,
            Msg::Key(crossterm::event::KeyEvent::from(
                crossterm::event::KeyCode::Char(':'),
            )),
        );
        for c in "pods\n".chars() {
            let code = if c == '\n' {
                crossterm::event::KeyCode::Enter
            } else {
                crossterm::event::KeyCode::Char(c)
            };
            update::update(
                &mut incremental,
                Msg::Key(crossterm::event::KeyEvent::from(code)),
            );
        }
        for round in 0..60 {
            let mut keys = Vec::new();
            // Big batches (a list page) and small ones (a status update) alike.
            let batch = if round % 10 == 0 { 40 } else { 1 + rng.next(4) };
            for _ in 0..batch {
                let o = rng.next(owners.len() as u64) as usize;
                let i = rng.next(12);
                let (ns, owner) = owners[o];
                let slot = (o, i);
                if rng.next(5) == 0 && live.contains_key(&slot) {
                    let gone = live.remove(&slot).unwrap();
                    pw.apply_watcher_event(&Event::Delete(gone));
                } else {
                    let restarts = live
                        .get(&slot)
                        .map_or(0, |p| p.status.container_statuses[0].restart_count)
                        + i32::from(rng.next(3) == 0);
                    let mut p = pod(ns, owner, i, rng.next(3) != 0, restarts, rng.next(7) == 0);
                    // A pod created again under the same name is another pod.
                    p.metadata.uid = Some(match live.get(&slot) {
                        Some(old) => old.metadata.uid.clone().unwrap_or_default(),
                        None => format!("uid-{round}-{}", rng.next(1 << 30)).into(),
                    });
                    pw.apply_watcher_event(&Event::Apply(p.clone()));
                    live.insert(slot, p);
                }
                keys.push(PodKey {
                    namespace: ns.into(),
                    name: format!("{owner}-{i:03}"),
                });
            }
            update::update(&mut incremental, Msg::PodsChanged(keys));
            let rebuilt = {
                let mut a = app(&stores, namespace, now);
                a.stack = incremental.stack.clone();
                // Restart history is what only the incremental path saw (compared below).
                a.pod_index.restart_rose = incremental.pod_index.restart_rose.clone();
                a.refresh_lists();
                a.rebuild_triage();
                a
            };
            assert_eq!(
                summary(&incremental),
                summary(&rebuilt),
                "round {round}, namespace {namespace:?}"
            );
            // Every stamp is of a pod that is there and whose count rose.
            for k in incremental.pod_index.restart_rose.keys() {
                assert!(
                    find(&incremental.pods, &k.namespace, &k.name).is_some_and(|p| p.restarts > 0),
                    "{k:?}"
                );
            }
        }
        assert!(!incremental.pods.is_empty());
    }
}

#[test]
fn a_restart_count_that_rises_is_stamped_when_its_event_arrives() {
    let (stores, _cw, mut pw) = stores();
    let mut a = app(&stores, None, at(0));
    let first = pod("a", "web", 1, true, 0, false);
    pw.apply_watcher_event(&Event::Apply(first));
    let key = PodKey {
        namespace: "a".into(),
        name: "web-001".into(),
    };
    update::update(&mut a, Msg::PodsChanged(vec![key.clone()]));
    assert_eq!(a.pod_index.restart_rose("a", "web-001"), None);
    update::update(&mut a, Msg::Tick(at(50)));
    pw.apply_watcher_event(&Event::Apply(pod("a", "web", 1, true, 1, false)));
    update::update(&mut a, Msg::PodsChanged(vec![key.clone()]));
    assert_eq!(a.pod_index.restart_rose("a", "web-001"), Some(at(50)));
    // A whole rebuild (a relist) keeps the stamp.
    update::update(&mut a, Msg::StoreChanged(Kind::Pod));
    assert_eq!(a.pod_index.restart_rose("a", "web-001"), Some(at(50)));
    pw.apply_watcher_event(&Event::Delete(pod("a", "web", 1, true, 1, false)));
    update::update(&mut a, Msg::PodsChanged(vec![key]));
    assert_eq!(a.pod_index.restart_rose("a", "web-001"), None);
    assert!(a.pods.is_empty());
}
