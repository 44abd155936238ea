//! `update(&mut App, Msg) -> Vec<Effect>`: the only place state changes. No IO, no clock.

use super::{
    App, Effect, Level, STATUS_SECONDS,
    dialog::{Confirm, Overlay, default_revision},
    keys, logs,
    msg::{EffectResult, Kind, Msg},
    route::{Fetch, Route},
    shell::ShellOutcome,
};

/// Applies one message; returns the IO the runtime must perform.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    let streams = logs::open::streams(app);
    let mut effects = apply(app, msg);
    // A Log view that went away (Esc, a `:` command) stops its stream.
    for id in streams.difference(&logs::open::streams(app)) {
        if !effects.contains(&Effect::StopLogs(*id)) {
            effects.push(Effect::StopLogs(*id));
        }
    }
    // Whatever changed, the rollout view on top asks for its plan and events when they are
    // stale (throttled; nothing is asked while nothing changes).
    effects.extend(app.rollout_due());
    effects.extend(super::poll::due(app, false));
    effects.extend(super::usage::due(app));
    effects
}

fn apply(app: &mut App, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(ev) => return keys::handle(app, ev),
        Msg::Resize { width, height } => {
            app.size = (width, height);
            app.refresh_lists();
            app.mark_dirty();
        }
        Msg::Tick(now) => {
            app.now = now;
            if app
                .status
                .as_ref()
                .is_some_and(|s| now.as_second() - s.since.as_second() >= STATUS_SECONDS)
            {
                app.status = None;
            }
            // Stalls and deadlines move with the clock (triage reads only the pods that need
            // attention: a tick costs nothing per healthy pod).
            app.pod_index
                .forget_restarts_before(now, super::oncall::triage::RESTART_WINDOW_SECONDS);
            app.rebuild_triage();
            // Ages on screen move with the clock.
            app.mark_dirty();
            // What appeared or cleared since the last tick goes to the triage record.
            return super::oncall::record::changes(app).into_iter().collect();
        }
        Msg::StoreChanged(kind) => {
            rebuild(app, kind);
            app.mark_dirty();
        }
        Msg::PodsChanged(keys) => app.apply_pod_changes(keys),
        Msg::StoreReady(kind) => {
            app.ready.insert(kind);
            if kind == Kind::Pod && app.pods.len() == app.stores.pods.len() {
                // The pods came by key as the list arrived: the rows are whole already (a
                // rebuild of 100,000 rows here would stall the keys for a tenth of a second).
                app.refresh_lists();
            } else {
                rebuild(app, kind);
            }
            // A problem chosen in `:triage all` for this context opens once it has loaded.
            super::oncall::across::open_pending(app);
            app.mark_dirty();
        }
        Msg::ListMode { kind, mode } => {
            app.list_modes.insert(kind, mode);
            if !app.ready.contains(&kind) {
                app.mark_dirty();
            }
        }
        Msg::Discovered(d) => {
            app.context = d.context.or(app.context.take());
            app.contexts = d.contexts;
            app.cluster_url = d.cluster_url;
            let ns_changed = app.namespace != d.namespace;
            app.namespace = d.namespace;
            app.namespaces = d.namespaces;
            app.kruise_missing = d.kruise_missing;
            // Without Kruise the useful view is pods: open on it (and back once it is there).
            app.choose_root();
            if ns_changed {
                app.rebuild_workloads();
                app.rebuild_pods();
            } else {
                app.refresh_lists();
            }
            app.mark_dirty();
            // Triage lists the deletes the journal says were refused.
            return vec![Effect::ReadJournal];
        }
        Msg::KruiseRelease(release) => {
            app.kruise_release = Some(release);
            app.mark_dirty();
        }
        Msg::WatchFailed { kind, error } => {
            app.failed.insert(kind, error);
            app.refresh_lists();
            app.mark_dirty();
        }
        Msg::WatchForbidden { kind, denied } => {
            // Not an outage: the kind is as loaded as it will get for this user.
            app.failed.remove(&kind);
            app.forbidden.insert(kind, denied);
            app.ready.insert(kind);
            app.choose_root();
            app.refresh_lists();
            app.mark_dirty();
        }
        Msg::WatchRecovered(kind) => {
            let failed = app.failed.remove(&kind).is_some();
            if app.forbidden.remove(&kind).is_some() {
                // Permission granted meanwhile: its list is loading now.
                app.ready.remove(&kind);
                app.choose_root();
            } else if !failed {
                return Vec::new();
            }
            app.refresh_lists();
            app.mark_dirty();
        }
        Msg::EffectDone(result) => {
            let effects = effect_done(app, result);
            app.mark_dirty();
            return effects;
        }
        Msg::StoresReplaced(stores) => {
            // New watches (after `:ns`/`:ctx`): nothing is known until their first lists land.
            app.stores = stores;
            app.ready.clear();
            app.list_modes.clear();
            app.failed.clear();
            app.forbidden.clear();
            // Another cluster or namespace: its usage is read afresh (a read still out is
            // ignored when it answers).
            app.usage.reset();
            app.rebuild_workloads();
            app.rebuild_pods();
            app.mark_dirty();
        }
        Msg::Log(event) => logs::open::apply(app, event),
        Msg::Shell(outcome) => {
            match outcome {
                ShellOutcome::Exited {
                    pod,
                    container,
                    code,
                    error,
                } => {
                    let how = match code {
                        Some(0) => "exited".to_owned(),
                        Some(n) => format!("exited with {n}"),
                        None => "was killed".to_owned(),
                    };
                    match error {
                        Some(why) if code != Some(0) => app.set_status(
                            Level::Error,
                            format!("shell in {pod}/{container} {how}: {why}"),
                        ),
                        _ => {
                            app.set_status(Level::Info, format!("shell in {pod}/{container} {how}"))
                        }
                    }
                }
                ShellOutcome::Failed(why) => app.set_status(Level::Error, why),
            }
            app.mark_dirty();
        }
    }
    Vec::new()
}

fn rebuild(app: &mut App, kind: Kind) {
    match kind {
        Kind::Pod => app.rebuild_pods(),
        Kind::CloneSet | Kind::StatefulSet | Kind::DaemonSet => app.rebuild_workloads(),
        _ => app.rebuild_oncall(),
    }
}

fn effect_done(app: &mut App, result: EffectResult) -> Vec<Effect> {
    match result {
        EffectResult::Yaml { target, yaml } => {
            for route in app.stack.iter_mut().rev() {
                if let Route::Yaml(view) = route
                    && view.target == target
                {
                    view.lines = Fetch::Loaded(yaml.lines().map(str::to_owned).collect());
                    view.scroll = 0;
                }
            }
        }
        EffectResult::Events { target, events } => {
            for route in app.stack.iter_mut().rev() {
                if let Route::Events(view) = route
                    && view.target == target
                {
                    view.events = Fetch::Loaded(events.clone());
                    view.selected = 0;
                    view.offset = 0;
                }
            }
        }
        EffectResult::Switched => {
            let target = app
                .namespace
                .as_deref()
                .unwrap_or("all namespaces")
                .to_owned();
            app.set_status(Level::Info, format!("watching {target}"));
        }
        EffectResult::Usage { id, answer } => super::usage::apply(app, id, answer),
        EffectResult::Failed { what, error } => {
            // A YAML/Events view still waiting is the one that failed.
            if let Some(route) = app.stack.last_mut() {
                match route {
                    Route::Yaml(v) if v.lines == Fetch::Loading => {
                        v.lines = Fetch::Failed(error.clone())
                    }
                    Route::Events(v) if v.events == Fetch::Loading => {
                        v.events = Fetch::Failed(error.clone())
                    }
                    _ => {}
                }
            }
            app.set_status(Level::Error, format!("{what}: {error}"));
        }
        EffectResult::Prepared { id, result } => {
            if !matches!(&app.overlay, Some(Overlay::Busy { id: waiting, .. }) if *waiting == id) {
                // The user stopped waiting: drop it.
                return Vec::new();
            }
            match result {
                Ok(mut preview) => {
                    let then = super::restart::batch_for(app, id);
                    if !then.is_empty() {
                        let names: Vec<&str> = then.iter().map(|t| t.name.as_str()).collect();
                        preview.prepared.notes.insert(
                            0,
                            format!(
                                "then {} more pod(s), one after another, each once the previous                                  is Ready again and only while its budget allows: {}",
                                names.len(),
                                names.join(", ")
                            ),
                        );
                    }
                    app.overlay = Some(Overlay::Confirm(Box::new(Confirm {
                        id,
                        preview,
                        focus: super::dialog::Button::Cancel,
                        scroll: 0,
                    })));
                }
                Err(why) => {
                    app.overlay = None;
                    app.set_status(Level::Error, why);
                }
            }
        }
        EffectResult::Performed { id, target, result } => {
            if matches!(&app.overlay, Some(Overlay::Busy { id: waiting, .. }) if *waiting == id) {
                app.overlay = None;
            }
            match result {
                Ok(done) => app.set_status(Level::Info, format!("{}: {done}", target.describe())),
                Err(why) => app.set_status(Level::Error, why),
            }
            for route in &mut app.stack {
                match route {
                    Route::Rollout(view) => {
                        view.plan_refresh.stale = true;
                        view.events_refresh.stale = true;
                    }
                    Route::Protect(view) => view.fetched = None,
                    Route::CronJobs(view) => super::cronjobs::invalidate(view),
                    Route::BroadcastJobs(view) => view.fetched = None,
                    Route::WorkloadSpreads(view) => view.fetched = None,
                    Route::UnitedDeployments(view) => view.fetched = None,
                    Route::Images(view) => super::images::invalidate(view),
                    Route::PersistentPodStates(view) => {
                        super::persistentpodstates::invalidate(view)
                    }
                    Route::Distributions(view) => view.fetched = None,
                    _ => {}
                }
            }
            // An open journal shows the new entry; triage re-reads the refused deletes.
            if app
                .stack
                .iter()
                .any(|r| matches!(r, Route::Journal(_) | Route::Oncall(_)))
            {
                return vec![Effect::ReadJournal];
            }
        }
        EffectResult::RolloutPlan { workload, result } => {
            for route in &mut app.stack {
                if let Route::Rollout(view) = route
                    && view.workload() == workload
                {
                    view.plan_refresh.in_flight = false;
                    view.plan = match (*result).clone() {
                        Ok(p) => Fetch::Loaded(p),
                        Err(e) => Fetch::Failed(e),
                    };
                }
            }
        }
        EffectResult::RolloutEvents { workload, result } => {
            for route in &mut app.stack {
                if let Route::Rollout(view) = route
                    && view.workload() == workload
                {
                    view.events_refresh.in_flight = false;
                    view.events = match result.clone() {
                        Ok(e) => Fetch::Loaded(e),
                        Err(e) => Fetch::Failed(e),
                    };
                }
            }
        }
        EffectResult::Revisions { id, result } => {
            if let Some(Overlay::Revisions(picker)) = &mut app.overlay
                && picker.id == id
            {
                match result {
                    Ok(revs) if revs.revisions.is_empty() => {
                        app.overlay = None;
                        app.set_status(
                            Level::Error,
                            format!(
                                "{} has no revisions to roll back to",
                                revs.target.describe()
                            ),
                        );
                    }
                    Ok(revs) => {
                        picker.selected = default_revision(&revs);
                        picker.revisions = Fetch::Loaded(revs);
                    }
                    Err(why) => {
                        app.overlay = None;
                        app.set_status(Level::Error, why);
                    }
                }
            }
        }
        EffectResult::Restart { id, update } => super::restart::progress(app, id, update),
        EffectResult::Protected(result) => super::protect::loaded(app, result),
        EffectResult::CronJobs(result) => super::cronjobs::loaded(app, result),
        EffectResult::BroadcastJobs(result) => super::broadcastjobs::loaded(app, result),
        EffectResult::WorkloadSpreads(result) => super::workloadspreads::loaded(app, result),
        EffectResult::UnitedDeployments(result) => super::uniteddeployments::loaded(app, result),
        EffectResult::Images { kind, result } => super::images::loaded(app, kind, result),
        EffectResult::PersistentPodStates(result) => {
            super::persistentpodstates::loaded(app, result)
        }
        EffectResult::Distributions(result) => super::distributions::loaded(app, result),
        EffectResult::WhatIf { id, result } => super::whatif::done(app, id, result),
        EffectResult::Exported(result) => match result {
            Ok(path) => app.set_status(Level::Info, format!("incident report written to {path}")),
            Err(err) => app.set_status(Level::Error, format!("no report: {err}")),
        },
        EffectResult::TriagedAcross(results) => super::oncall::across::answered(app, &results),
        EffectResult::Journal(result) => {
            if let Ok((entries, _)) = &result {
                app.oncall.denials = super::oncall::denials(entries);
                app.rebuild_triage();
            }
            for route in &mut app.stack {
                if let Route::Journal(view) = route {
                    view.loaded(result.clone());
                }
            }
            let page = app.page();
            if let Some(Route::Journal(view)) = app.stack.last_mut() {
                let len = view.len();
                super::route::keep_in_window(view.selected, &mut view.offset, len, page);
            }
        }
    }
    Vec::new()
}
