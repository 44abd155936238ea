//! View snapshots (insta + TestBackend) of the on-call views from YAML fixtures at a fixed
//! clock: the triage strip over Workloads, `:triage`, `:crr`, `:pub` (and a budget's pods),
//! `:sidecarset` (and one set's pods), `:ppm`, and a refusal (403) said in its own view.

use crate::harness;

use harness::{Harness, apply, fixture};
use kruise_tui::{
    api::SlimPod,
    app::{Denied, Kind, Msg, route::Route},
};
use serde_json::json;

fn oncall_fixture<T: serde::de::DeserializeOwned>(file: &str) -> Vec<T> {
    fixture(&format!("oncall/{file}"))
}

/// The pods of the fixture, with what the on-call kinds leave on them: the logtail sidecar
/// (two web pods on its second revision), the mesh's hot-upgrade twins on the api pods, and
/// the probe marker's labels and condition on two web pods.
fn pods() -> Vec<SlimPod> {
    let mut pods: Vec<SlimPod> = fixture("pods.yaml");
    for pod in &mut pods {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let mut value = serde_json::to_value(&*pod).expect("pod serializes");
        if name.starts_with("web-") {
            let second = name == "web-4xk2p" || name == "web-8m3qz";
            let (hash, rev, image) = if second {
                ("hash-two", "logtail-rev2", "demo/logtail:1.1")
            } else {
                ("hash-one", "logtail-rev1", "demo/logtail:1.0")
            };
            let spec = json!({"logtail": {"hash": hash, "sidecarSetName": "logtail",
                                           "sidecarList": ["logtail"], "controllerRevision": rev}});
            value["metadata"]["annotations"] =
                json!({"kruise.io/sidecarset-hash": spec.to_string()});
            value["spec"]["containers"]
                .as_array_mut()
                .expect("containers")
                .push(json!({"name": "logtail", "image": image}));
            value["status"]["containerStatuses"]
                .as_array_mut()
                .expect("statuses")
                .push(json!({"name": "logtail", "ready": true, "restartCount": 0, "image": image}));
            let probe = match name.as_str() {
                "web-4xk2p" => Some(("idle", "True")),
                "web-b7w9n" => Some(("unhealthy", "False")),
                _ => None,
            };
            if let Some((label, status)) = probe {
                value["metadata"]["labels"]["gameserver-state"] = json!(label);
                let mut conditions = value["status"]["conditions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                conditions.push(json!({"type": "game.kruise.io/healthy", "status": status,
                                       "lastProbeTime": "2026-01-10T11:59:50Z"}));
                value["status"]["conditions"] = json!(conditions);
            }
        }
        if name.starts_with("api-") {
            let spec = json!({"mesh": {"hash": "mesh-hash", "sidecarSetName": "mesh",
                                        "controllerRevision": "mesh-rev1"}});
            let working = if name == "api-f5k7m" {
                "envoy-2"
            } else {
                "envoy-1"
            };
            value["metadata"]["annotations"] = json!({
                "kruise.io/sidecarset-hash": spec.to_string(),
                "kruise.io/sidecarset-working-hotupgrade-container":
                    json!({"envoy": working}).to_string(),
            });
            for c in ["envoy-1", "envoy-2"] {
                // The working twin runs envoy; the other the empty image.
                let image = if c == working {
                    "envoy:1.30"
                } else {
                    "envoy-empty:1"
                };
                value["spec"]["containers"]
                    .as_array_mut()
                    .expect("containers")
                    .push(json!({"name": c, "image": image}));
                value["status"]["containerStatuses"]
                    .as_array_mut()
                    .expect("statuses")
                    .push(json!({"name": c, "ready": true, "restartCount": 0, "image": image}));
            }
        }
        *pod = serde_json::from_value(value).expect("pod parses");
    }
    pods
}

fn oncall(size: (u16, u16)) -> Harness {
    oncall_with(size, true)
}

/// The on-call fixtures; without `budgets`, the PUB store stays empty (as for a user who may
/// not list them).
fn oncall_with(size: (u16, u16), budgets: bool) -> Harness {
    let mut h = Harness::loaded(Some("demo"), size);
    apply(&mut h.writers.pods, pods());
    if budgets {
        apply(
            &mut h.writers.oncall.budgets,
            oncall_fixture("budgets.yaml"),
        );
    }
    apply(
        &mut h.writers.oncall.restarts,
        oncall_fixture("restarts.yaml"),
    );
    apply(
        &mut h.writers.oncall.sidecarsets,
        oncall_fixture("sidecarsets.yaml"),
    );
    apply(
        &mut h.writers.oncall.sidecar_revisions,
        oncall_fixture("revisions.yaml"),
    );
    apply(
        &mut h.writers.oncall.probe_markers,
        oncall_fixture("probemarkers.yaml"),
    );
    apply(
        &mut h.writers.oncall.node_probes,
        oncall_fixture("nodepodprobes.yaml"),
    );
    h.feed(Msg::StoreChanged(Kind::Pod));
    for kind in [
        Kind::PodUnavailableBudget,
        Kind::ContainerRecreateRequest,
        Kind::SidecarSet,
        Kind::SidecarSetRevision,
        Kind::PodProbeMarker,
        Kind::NodePodProbe,
    ] {
        h.feed(Msg::StoreReady(kind));
    }
    h
}

#[test]
fn workloads_with_triage_strip_and_pub_column() {
    let mut h = oncall((150, 20));
    let screen = h.screen();
    // api's budget is spent (0), web's has 2 left; the others have no budget.
    assert!(screen.contains("▲ triage"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn triage_view() {
    let mut h = oncall((150, 16));
    h.command("triage");
    let rows = &h.app.oncall().triage;
    // Worst first: api's stuck rollout, its crash loop, its budget, then the restarts.
    assert_eq!(rows[0].subject, "CloneSet demo/api");
    insta::assert_snapshot!(h.screen());
    // Enter on the stuck rollout opens its rollout view; on the crash loop, the pod.
    h.press(&["enter"]);
    assert!(matches!(h.app.current(), Route::Rollout(v) if v.owner.name == "api"));
    h.press(&["esc", "j", "enter"]);
    assert!(matches!(h.app.current(), Route::Pod(p) if p.name == "api-9qv4x"));
    // Enter on the exhausted budget opens its pods.
    h.press(&["esc", "j", "enter"]);
    let screen = h.screen();
    assert!(
        screen.contains("PodUnavailableBudget demo/api-pub — pods down"),
        "{screen}"
    );
}

#[test]
fn restarts_view() {
    let mut h = oncall((130, 12));
    h.command("crr");
    insta::assert_snapshot!(h.screen());
}

#[test]
fn budgets_view_and_one_budget() {
    let mut h = oncall((150, 12));
    h.command("pub");
    insta::assert_snapshot!("budgets_view", h.screen());
    h.press(&["enter"]);
    insta::assert_snapshot!("budget_pods", h.screen());
}

#[test]
fn sidecarsets_view_and_pods() {
    let mut h = oncall((150, 14));
    h.command("sidecarset");
    insta::assert_snapshot!("sidecarsets_view", h.screen());
    h.press(&["enter"]);
    insta::assert_snapshot!("sidecarset_logtail_pods", h.screen());
    h.press(&["esc", "j", "enter"]);
    // The hot-upgrade twins: which one works on each pod.
    insta::assert_snapshot!("sidecarset_mesh_pods", h.screen());
}

/// On a wide terminal the NAME column is as wide as the longest SidecarSet name (and a
/// space), not half the screen.
#[test]
fn sidecarsets_name_column_fits_the_names_at_180_columns() {
    let mut h = oncall((180, 14));
    h.command("sidecarset");
    let screen = h.screen();
    let (width, longest) = harness::name_column(&screen, "MATCHED");
    assert_eq!(longest, "logtail".len(), "{screen}");
    assert_eq!(width, "logtail".len() + 1, "{screen}");
}

#[test]
fn probe_markers_view() {
    let mut h = oncall((150, 14));
    h.command("ppm");
    insta::assert_snapshot!(h.screen());
}

#[test]
fn a_refused_oncall_kind_is_said_in_its_view_not_in_a_banner() {
    let mut h = oncall_with((120, 10), false);
    h.feed(Msg::WatchForbidden {
        kind: Kind::PodUnavailableBudget,
        denied: Denied {
            verb: "list".into(),
            user: Some("system:serviceaccount:demo:viewer".into()),
            namespace: Some("demo".into()),
            message: "podunavailablebudgets.policy.kruise.io is forbidden".into(),
        },
    });
    let workloads = h.screen();
    assert!(!workloads.contains("no permission"), "{workloads}");
    h.command("pub");
    insta::assert_snapshot!(h.screen());
}

#[test]
fn commands_complete_and_show_in_help() {
    let mut h = oncall((120, 40));
    h.press(&[":"]);
    h.type_text("tri");
    h.press(&["tab"]);
    let line = h.screen();
    let last = line.lines().last().unwrap_or_default();
    assert!(last.contains(":triage"), "{last}");
    h.press(&["esc", "?"]);
    let help = h.screen();
    for cmd in [":triage", ":crr :pub", ":sidecarset", ":ppm"] {
        assert!(help.contains(cmd), "{cmd} in help:\n{help}");
    }
}

#[test]
fn r_restarts_the_pod_of_a_restart_row_and_of_a_triage_row() {
    use kruise_tui::app::dialog::Overlay;
    let mut h = oncall((130, 12));
    h.command("crr");
    let pod = h.app.oncall().restarts[0].pod.clone();
    h.press(&["r"]);
    match h.app.overlay() {
        Some(Overlay::Form(form)) => assert_eq!(form.target.name, pod),
        other => panic!("r on a restart row opens the restart form for {pod}: {other:?}"),
    }
    h.press(&["esc"]);
    // The crash loop in triage (second row): r restarts its pod.
    h.command("triage");
    h.press(&["j"]);
    let want = match &h.app.oncall().triage[1].object {
        Some(o) => o.name.clone(),
        None => panic!("the crash loop names its pod"),
    };
    h.press(&["r"]);
    match h.app.overlay() {
        Some(Overlay::Form(form)) => assert_eq!(form.target.name, want),
        other => panic!("r on the crash loop opens the restart form for {want}: {other:?}"),
    }
}

#[test]
fn slash_filters_an_oncall_list_and_acts_on_the_row_shown() {
    let mut h = oncall((130, 12));
    h.command("crr");
    // Every word must occur in the row: the restarts on node-1 that are not done.
    h.press(&["/"]);
    h.type_text("node-1 recreating");
    let screen = h.screen();
    assert!(
        screen.contains("Restarts (ContainerRecreateRequests) — demo [1] /node-1 recreating"),
        "{screen}"
    );
    assert!(screen.contains("web-restart"), "{screen}");
    assert!(!screen.contains("db-0-restart"), "{screen}");
    h.press(&["enter"]);
    // y and Enter act on the row shown, not on the first row of the whole list.
    h.press(&["y"]);
    assert!(
        matches!(h.app.current(), Route::Yaml(v) if v.target.name == "web-restart"),
        "{:?}",
        h.app.current()
    );
    h.press(&["esc"]);
    // A filter that keeps nothing says so; esc clears it and every row is back.
    h.press(&["esc", "/"]);
    h.type_text("nothing-like-this");
    assert!(
        h.screen()
            .contains("Nothing matches /nothing-like-this (esc clears the filter)")
    );
    h.press(&["esc"]);
    assert!(h.screen().contains("demo [4]"));
    // Triage filters by what its rows say.
    h.command("triage");
    h.press(&["/"]);
    h.type_text("budget");
    h.press(&["enter", "enter"]);
    let screen = h.screen();
    assert!(
        screen.contains("PodUnavailableBudget demo/api-pub — pods down"),
        "{screen}"
    );
    // A budget's pods (one object's detail) take no filter.
    h.press(&["/"]);
    assert!(h.screen().contains("nothing to filter in this view"));
}

/// The triage record: each tick, what appeared or cleared since the last one, once the kinds
/// triage reads have loaded; nothing when nothing changed.
#[test]
fn ticks_record_problems_as_they_appear_and_clear() {
    use kruise_tui::{app::Effect, journal::triage_log::Change};
    // Before the budgets and restarts have loaded nothing is recorded.
    let mut early = Harness::loaded(Some("demo"), (120, 20));
    apply(&mut early.writers.pods, pods());
    early.feed(Msg::StoreChanged(Kind::Pod));
    assert_eq!(early.feed(Msg::Tick(harness::now())), Vec::new());

    let mut h = oncall((120, 20));
    assert_eq!(
        h.feed(Msg::Tick(harness::now())),
        Vec::new(),
        "Rollouts not loaded yet"
    );
    h.feed(Msg::StoreReady(Kind::Rollout));
    h.feed(Msg::StoreReady(Kind::BatchRelease));
    let effects = h.feed(Msg::Tick(harness::now()));
    let [Effect::RecordTriage(notes)] = effects.as_slice() else {
        panic!("one record of what appeared: {effects:?}");
    };
    let seen: Vec<(Change, &str, &str)> = notes
        .iter()
        .map(|n| (n.change, n.problem.as_str(), n.subject.as_str()))
        .collect();
    assert!(
        seen.contains(&(Change::Appeared, "stuck rollout", "CloneSet demo/api")),
        "{seen:?}"
    );
    assert_eq!(notes.len(), h.app.oncall().triage.len(), "{seen:?}");
    assert!(
        notes
            .iter()
            .all(|n| n.context.as_deref() == Some("kind-demo"))
    );
    // Nothing changed: nothing recorded.
    assert_eq!(h.feed(Msg::Tick(harness::now())), Vec::new());
    // The budgets go away: their problem cleared.
    let budgets: Vec<kruise_tui::api::PodUnavailableBudget> = oncall_fixture("budgets.yaml");
    for b in budgets {
        h.writers
            .oncall
            .budgets
            .apply_watcher_event(&kube::runtime::watcher::Event::Delete(b));
    }
    h.feed(Msg::StoreChanged(Kind::PodUnavailableBudget));
    let effects = h.feed(Msg::Tick(harness::now()));
    let [Effect::RecordTriage(notes)] = effects.as_slice() else {
        panic!("one record of what cleared: {effects:?}");
    };
    assert!(
        notes
            .iter()
            .all(|n| n.change == Change::Cleared && n.problem == "no budget"),
        "{notes:?}"
    );
    assert!(!notes.is_empty());
    // A switch starts over: the old context's problems do not "clear".
    h.command("ctx prod-eu");
    assert_eq!(h.feed(Msg::Tick(harness::now())), Vec::new());
}
