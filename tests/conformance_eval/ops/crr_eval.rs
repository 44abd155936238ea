//! crr.json: the CRR webhook, manager reconcile and daemon state machine.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStatus, Node, Pod,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kruise_tui::kruise::admission::Verdict;
use kruise_tui::kruise::crr::{
    self, ContainerRecreateRequest,
    admission::{self, Lookup},
    controller,
    daemon::{self, ContainerInputs, DaemonAction, RuntimeContainer},
    types::{
        ContainerRecreateRequestContainer, ContainerRecreateRequestContainerRecreateState,
        ContainerRecreateRequestStatus, ContainerRecreateRequestStrategy, CrrSyncContainerStatus,
        phase,
    },
};
use kruise_tui::kruise::{FeatureGates, KruiseVersion};
use serde_json::{Value, json};

use crate::eval::common::{at_versions, expect_eq, expect_subset, input, parse};

fn now() -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_735_689_600).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

fn ago(seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(now().as_second() - seconds).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

fn gates(v: &Value) -> FeatureGates {
    let mut g = FeatureGates::new();
    for (k, on) in v.as_object().into_iter().flatten() {
        g.set(k, on.as_bool().unwrap_or(false));
    }
    g
}

/// The verdict as the vectors state it. When `expected` gives a `messagePrefix` (the rest of
/// the message is a lister error the vector cannot predict), the actual message must start with
/// it: that is checked here, and the prefix is then not compared again.
fn verdict_json(v: &Verdict, e: &Value) -> Result<Value, String> {
    if v.allowed {
        return Ok(json!({"allowed": true}));
    }
    let mut out = json!({"allowed": false, "code": v.code});
    match e["messagePrefix"].as_str() {
        Some(prefix) => {
            if !v.message_text().starts_with(prefix) {
                return Err(format!(
                    "message {:?} does not start with {prefix:?}",
                    v.message_text()
                ));
            }
        }
        None => out["message"] = json!(v.message_text()),
    }
    Ok(out)
}

/// `expected` without `messagePrefix` (checked by [`verdict_json`]).
fn without_prefix(e: &Value) -> Value {
    let mut e = e.clone();
    if let Some(o) = e.as_object_mut() {
        o.remove("messagePrefix");
    }
    e
}

pub fn eval(op: &str, case: &Value) -> Result<(), String> {
    let i = input(case)?;
    at_versions(case, |version, e| eval_at(op, i, e, version))
}

fn eval_at(op: &str, i: &Value, e: &Value, version: KruiseVersion) -> Result<(), String> {
    match op {
        "injectPodIntoCRR" => {
            let mut obj: ContainerRecreateRequest = parse("crr", &i["crr"])?;
            let pod: Pod = parse("pod", &i["pod"])?;
            let node: Option<Node> = parse("node", &i["node"])?;
            let res = admission::inject_pod_into_crr(version, &mut obj, &pod, node.as_ref());
            let actual = json!({
                "error": res.err(),
                "labels": obj.metadata.labels,
                "spec.containers": obj.spec.containers,
            });
            expect_eq(e, &actual)
        }
        "crrAdmissionCreate" => {
            let obj: ContainerRecreateRequest = parse("crr", &i["crr"])?;
            let pod: Option<Pod> = parse("pod", &i["pod"])?;
            let node: Option<Node> = parse("node", &i["node"])?;
            let lookup = pod.as_ref().map_or(Lookup::NotFound, Lookup::Found);
            // `nodeError`: the node lookup fails with that error (not a NotFound).
            let node_result = match i["nodeError"].as_str() {
                Some(err) => Err(err.to_owned()),
                None => Ok(node.clone()),
            };
            let out =
                admission::admit_create(version, &gates(&i["featureGates"]), &obj, lookup, |_| {
                    node_result
                });
            let mut actual = verdict_json(&out.verdict, e)?;
            if e.get("patchedCRR").is_some() {
                actual["patchedCRR"] =
                    serde_json::to_value(&out.patched).map_err(|e| e.to_string())?;
            }
            let e = without_prefix(e);
            expect_subset(&e, &actual)
                .and_then(|()| expect_eq(&strip_patched(&e), &strip_patched(&actual)))
        }
        "crrAdmissionUpdate" => {
            let old: ContainerRecreateRequest = parse("oldCrr", &i["oldCrr"])?;
            let new: ContainerRecreateRequest = parse("crr", &i["crr"])?;
            let v = admission::admit_update(&gates(&i["featureGates"]), &old, &new);
            expect_eq(&without_prefix(e), &verdict_json(&v, e)?)
        }
        "crrControllerReconcile" => controller_reconcile(i, e),
        "crrContainerState" => container_state(i, e, version),
        "crrPickOrder" => pick_order(i, e),
        "crrEndState" => end_state(i, e, version),
        other => Err(format!("unknown op {other:?}")),
    }
}

fn strip_patched(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("patchedCRR");
    }
    v
}

fn controller_reconcile(i: &Value, e: &Value) -> Result<(), String> {
    let c = &i["crr"];
    let mut labels: BTreeMap<String, String> = parse("labels", &c["labels"]).unwrap_or_default();
    if let Some(uid) = c["podUIDLabel"].as_str() {
        labels.insert(crr::POD_UID_KEY.to_owned(), uid.to_owned());
    }
    if c["labels"].is_null() {
        labels.insert(crr::ACTIVE_KEY.to_owned(), "true".to_owned());
    }
    let obj = ContainerRecreateRequest {
        metadata: ObjectMeta {
            name: Some("crr".to_owned()),
            namespace: Some("default".to_owned()),
            labels: Some(labels),
            creation_timestamp: Some(Time(ago(c["ageSeconds"].as_i64().unwrap_or(0)))),
            ..Default::default()
        },
        spec: crr::types::ContainerRecreateRequestSpec {
            pod_name: "pod".to_owned(),
            active_deadline_seconds: c["activeDeadlineSeconds"].as_i64(),
            ttl_seconds_after_finished: c["ttlSecondsAfterFinished"].as_i64().map(|v| v as i32),
            ..Default::default()
        },
        status: Some(ContainerRecreateRequestStatus {
            phase: c["phase"].as_str().unwrap_or_default().to_owned(),
            completion_time: c["completionTimeAgeSeconds"].as_i64().map(|s| Time(ago(s))),
            ..Default::default()
        }),
    };
    let p = &i["pod"];
    let pod = (p["exists"].as_bool() == Some(true)).then(|| Pod {
        metadata: ObjectMeta {
            uid: p["uid"].as_str().map(str::to_owned),
            deletion_timestamp: (p["deleting"].as_bool() == Some(true)).then(|| Time(now())),
            ..Default::default()
        },
        ..Default::default()
    });
    let d = controller::reconcile(&obj, pod.as_ref(), now());
    let actual = if let Some(status) = d.completed_status(&obj, now()) {
        json!({"action": "complete", "status": {"phase": status.phase, "message": status.message,
            "completionTime": if status.completion_time.is_some() { "set" } else { "unset" }}})
    } else if d.delete {
        json!({"action": "delete"})
    } else if d.remove_active_label {
        json!({"action": "patchMetadata", "removeLabels": [crr::ACTIVE_KEY]})
    } else if let Some(after) = d.requeue_after_seconds {
        json!({"action": "requeue", "requeueAfterSeconds": after})
    } else {
        json!({"action": "none"})
    };
    expect_eq(e, &actual)
}

fn container_state(i: &Value, e: &Value, version: KruiseVersion) -> Result<(), String> {
    let container: ContainerRecreateRequestContainer = parse("container", &i["container"])?;
    let previous: Option<ContainerRecreateRequestContainerRecreateState> = match &i["previousState"]
    {
        Value::Null => None,
        v => {
            let mut s: ContainerRecreateRequestContainerRecreateState = parse(
                "previousState",
                &json!({"name": container.name, "phase": v["phase"], "isKilled": v["isKilled"]}),
            )?;
            s.name = container.name.clone();
            Some(s)
        }
    };
    let runtime = match &i["runtimeContainer"] {
        Value::Null => None,
        r => Some(RuntimeContainer {
            id: r["id"].as_str().unwrap_or_default().to_owned(),
            running: r["state"] == "running",
            restart_count: r["restartCount"].as_i64().unwrap_or(0) as i32,
            started_at: ago(r["startedSecondsAgo"].as_i64().unwrap_or(0)),
        }),
    };
    let sync: Option<CrrSyncContainerStatus> = match &i["syncStatus"] {
        Value::Null => None,
        s => Some(CrrSyncContainerStatus {
            name: container.name.clone(),
            ready: s["ready"].as_bool().unwrap_or(false),
            restart_count: s["restartCount"].as_i64().unwrap_or(0) as i32,
            container_id: s["containerID"].as_str().unwrap_or_default().to_owned(),
        }),
    };
    let strategy: ContainerRecreateRequestStrategy = parse("strategy", &i["strategy"])?;
    let state = daemon::container_state(ContainerInputs {
        container: &container,
        previous: previous.as_ref(),
        runtime: runtime.as_ref(),
        sync: sync.as_ref(),
        strategy: &strategy,
        crr_created: ago(i["crrAgeSeconds"].as_i64().unwrap_or(0)),
        now: now(),
        version,
    });
    let mut actual = json!({"phase": state.phase, "isKilled": state.is_killed});
    if !state.message.is_empty() {
        actual["message"] = json!(state.message);
    }
    expect_eq(e, &actual)
}

fn pick_order(i: &Value, e: &Value) -> Result<(), String> {
    let mut crrs: Vec<ContainerRecreateRequest> = i["crrs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| ContainerRecreateRequest {
            metadata: ObjectMeta {
                name: c["name"].as_str().map(str::to_owned),
                creation_timestamp: Some(Time(ago(c["createdSecondsAgo"].as_i64().unwrap_or(0)))),
                ..Default::default()
            },
            status: Some(ContainerRecreateRequestStatus {
                phase: c["phase"].as_str().unwrap_or_default().to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .collect();
    let (picked, pending) = daemon::pick(&mut crrs);
    let name = |k: usize| crrs[k].metadata.name.clone().unwrap_or_default();
    let actual = json!({
        "sortedNames": (0..crrs.len()).map(name).collect::<Vec<_>>(),
        "picked": picked.map(name),
        "setToPending": pending.into_iter().map(name).collect::<Vec<_>>(),
    });
    expect_eq(e, &actual)
}

/// Drives webhook, manager and daemon against a simulated runtime until the CRR settles.
fn end_state(i: &Value, e: &Value, version: KruiseVersion) -> Result<(), String> {
    let names: Vec<String> = parse("containers", &i["containers"])?;
    let mut t = now();
    let tick = |t: jiff::Timestamp| jiff::Timestamp::from_second(t.as_second() + 1).unwrap_or(t);
    let mut runtime: BTreeMap<String, RuntimeContainer> = names
        .iter()
        .map(|n| {
            let rc = RuntimeContainer {
                id: format!("containerd://{n}-0"),
                running: true,
                restart_count: 0,
                started_at: ago(3600),
            };
            (n.clone(), rc)
        })
        .collect();
    let pod_of = |runtime: &BTreeMap<String, RuntimeContainer>| -> Pod {
        let statuses = runtime
            .iter()
            .map(|(n, rc)| ContainerStatus {
                name: n.clone(),
                container_id: Some(rc.id.clone()),
                restart_count: rc.restart_count,
                ready: rc.running,
                state: Some(ContainerState {
                    running: Some(ContainerStateRunning {
                        started_at: Some(Time(rc.started_at)),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "pod", "namespace": "default", "uid": "uid-1"},
            "spec": {"nodeName": "node-1", "containers": names.iter().map(|n| json!({"name": n, "image": "img"})).collect::<Vec<_>>()},
            "status": {"phase": "Running"},
        }))
        .map(|mut p: Pod| {
            if let Some(s) = p.status.as_mut() {
                s.container_statuses = Some(statuses);
            }
            p
        })
        .unwrap_or_default()
    };
    let request: ContainerRecreateRequest = serde_json::from_value(json!({
        "metadata": {"name": "crr", "namespace": "default"},
        "spec": {"podName": "pod", "containers": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()},
    }))
    .map_err(|e| e.to_string())?;
    let pod = pod_of(&runtime);
    let node = Node::default();
    let created = admission::admit_create(
        version,
        &FeatureGates::new(),
        &request,
        Lookup::Found(&pod),
        |_| Ok(Some(node.clone())),
    );
    let mut obj = created
        .patched
        .ok_or_else(|| created.verdict.message_text().to_owned())?;
    obj.metadata.creation_timestamp = Some(Time(t));
    for _ in 0..100 {
        t = tick(t);
        let pod = pod_of(&runtime);
        let d = controller::reconcile(&obj, Some(&pod), t);
        if let Some(status) = d.completed_status(&obj, t) {
            obj.status = Some(status);
        }
        if d.remove_active_label
            && let Some(l) = obj.metadata.labels.as_mut()
        {
            l.remove(crr::ACTIVE_KEY);
            break;
        }
        if let Some(synced) = d.sync_container_statuses {
            let encoded = serde_json::to_string(&synced).map_err(|e| e.to_string())?;
            obj.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(crr::SYNC_CONTAINER_STATUSES_KEY.to_owned(), encoded);
        }
        let step = match daemon::daemon_sync(version, &obj, &runtime, t) {
            DaemonAction::StartRecreating => {
                obj.status
                    .get_or_insert_with(ContainerRecreateRequestStatus::default)
                    .phase = phase::RECREATING.to_owned();
                continue;
            }
            DaemonAction::Idle | DaemonAction::Wait(_) => continue,
            DaemonAction::Step(step) => step,
        };
        if let Some(name) = &step.kill
            && let Some(rc) = runtime.get_mut(name)
        {
            rc.restart_count += 1;
            rc.id = format!("containerd://{name}-{}", rc.restart_count);
            rc.started_at = t;
        }
        let status = obj
            .status
            .get_or_insert_with(ContainerRecreateRequestStatus::default);
        status.container_recreate_states = step.states;
        if let Some(message) = step.complete {
            status.phase = phase::COMPLETED.to_owned();
            status.completion_time = Some(Time(t));
            status.message = message;
        }
    }
    let status = obj.status.clone().unwrap_or_default();
    let actual = json!({
        "phase": status.phase,
        "completionTime": if status.completion_time.is_some() { "set" } else { "unset" },
        "labels.crr.apps.kruise.io/active": if obj.label(crr::ACTIVE_KEY).is_empty() { "absent" } else { "present" },
        "containerRecreateStates": status.container_recreate_states,
        "podContainerRestartCount": runtime.iter().map(|(n, rc)| (n.clone(), rc.restart_count)).collect::<BTreeMap<_, _>>(),
    });
    expect_eq(e, &actual)
}
