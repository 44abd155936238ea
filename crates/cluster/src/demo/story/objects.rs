//! The objects of the demo story and the changes made to them, as a user writes them.

use serde_json::{Value, json};

use super::{Obj, resource};

/// The pod condition the `web-health` probe writes.
pub const PROBE_CONDITION: &str = "game.kruise.io/healthy";

/// The story: namespaces first, then every object at its first version, then the changes made
/// to them, in order (`(index into objects, merge patch)`).
pub(crate) struct Story {
    pub namespaces: Vec<Obj>,
    pub objects: Vec<Obj>,
    pub history: Vec<(usize, Value)>,
}

/// Pods the base scenario holds (web 10, checkout 6, db 3, api 5, shop 5, cart 6; daemon and
/// bulk pods aside).
pub(crate) fn base_pods() -> usize {
    19 + super::spread::PODS + super::rollout::PODS
}

pub(crate) fn namespace(name: &str, labels: Value) -> Obj {
    Obj {
        ar: resource("", "v1", "Namespace", "namespaces"),
        namespace: None,
        body: json!({"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": name, "labels": labels}}),
    }
}

pub(super) fn kruise(
    kind: &str,
    plural: &str,
    version: &str,
    ns: Option<&str>,
    body: Value,
) -> Obj {
    let ar = resource("apps.kruise.io", version, kind, plural);
    let mut body = body;
    body["apiVersion"] = json!(ar.api_version);
    body["kind"] = json!(kind);
    if let Some(ns) = ns {
        body["metadata"]["namespace"] = json!(ns);
    }
    Obj {
        ar,
        namespace: ns.map(str::to_owned),
        body,
    }
}

/// The requests and limits a user would have set on the story's main containers (the same in
/// every revision: an image change keeps them), so usage has something to be measured against.
fn resources(container: &str) -> Option<Value> {
    let (cpu_req, mem_req, cpu_lim, mem_lim) = match container {
        "nginx" => ("50m", "64Mi", "200m", "128Mi"),
        "checkout" => ("100m", "128Mi", "500m", "256Mi"),
        "postgres" => ("250m", "512Mi", "500m", "1Gi"),
        "fluent-bit" => ("20m", "32Mi", "100m", "64Mi"),
        _ => return None,
    };
    Some(json!({"requests": {"cpu": cpu_req, "memory": mem_req},
                "limits": {"cpu": cpu_lim, "memory": mem_lim}}))
}

fn containers(list: &[(&str, &str)]) -> Value {
    json!(
        list.iter()
            .map(|(name, image)| {
                let mut c = json!({"name": name, "image": image});
                if let Some(r) = resources(name) {
                    c["resources"] = r;
                }
                c
            })
            .collect::<Vec<_>>()
    )
}

fn template(app: &str, list: &[(&str, &str)]) -> Value {
    json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": containers(list)}})
}

fn image_change(list: &[(&str, &str)]) -> Value {
    json!({"spec": {"template": {"spec": {"containers": containers(list)}}}})
}

/// The whole story in `ns`, with bulk CloneSets for about `pods` pods in all.
pub(crate) fn story(ns: &str, pods: Option<usize>) -> Story {
    let mut namespaces = vec![
        namespace(ns, json!({"kruise-tui.io/demo": "true"})),
        namespace("kruise-system", json!({})),
    ];
    let mut objects = Vec::new();
    let mut history = Vec::new();
    let push = |objects: &mut Vec<Obj>, obj: Obj| {
        objects.push(obj);
        objects.len() - 1
    };

    // The sidecar every web pod gets, created before the pods so they are injected.
    let logtail = push(
        &mut objects,
        kruise(
            "SidecarSet",
            "sidecarsets",
            "v1alpha1",
            None,
            json!({
                "metadata": {"name": "logtail", "labels": {"app": "logtail"}},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "namespace": ns,
                    "containers": [{
                        "name": "logtail",
                        "image": "demo/logtail:1.0",
                        "podInjectPolicy": "AfterAppContainer",
                        "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}],
                    }],
                    "volumes": [{"name": "logs", "emptyDir": {}}],
                    "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1},
                },
            }),
        ),
    );

    // web: mid-rollout, walked half way; protected (Cascading); probed; budgeted.
    let web = push(
        &mut objects,
        kruise(
            "CloneSet",
            "clonesets",
            "v1alpha1",
            Some(ns),
            json!({
                "metadata": {"name": "web", "labels": {
                    "app": "web", "policy.kruise.io/delete-protection": "Cascading"}},
                "spec": {
                    "replicas": 10,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": template("web", &[("nginx", "nginx:1.25.4")]),
                    "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": 2},
                },
            }),
        ),
    );
    history.push((
        web,
        json!({"spec": {
            "template": {"spec": {"containers": containers(&[("nginx", "nginx:1.26.0")])}},
            "updateStrategy": {"partition": 6},
        }}),
    ));
    // The sidecar's second revision, upgraded in place on half the pods.
    history.push((
        logtail,
        json!({"spec": {
            "containers": [{
                "name": "logtail",
                "image": "demo/logtail:1.1",
                "podInjectPolicy": "AfterAppContainer",
                "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}],
            }],
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1, "partition": 5},
        }}),
    ));
    push(
        &mut objects,
        kruise(
            "PodProbeMarker",
            "podprobemarkers",
            "v1alpha1",
            Some(ns),
            json!({
                "metadata": {"name": "web-health"},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "probes": [{
                        "name": "healthy",
                        "containerName": "nginx",
                        "probe": {
                            "exec": {"command": ["curl", "-sf", "http://localhost/healthz"]},
                            "initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 1,
                            "successThreshold": 1, "failureThreshold": 3,
                        },
                        "podConditionType": PROBE_CONDITION,
                        "markerPolicy": [
                            {"state": "Succeeded", "labels": {"gameserver-state": "idle"},
                             "annotations": {"controller.kubernetes.io/pod-deletion-cost": "10"}},
                            {"state": "Failed", "labels": {"gameserver-state": "unhealthy"},
                             "annotations": {"controller.kubernetes.io/pod-deletion-cost": "-10"}},
                        ],
                    }],
                },
            }),
        ),
    );
    push(
        &mut objects,
        budget(ns, "web-pub", "web", json!({"maxUnavailable": "20%"})),
    );

    // checkout: a new image that crashes; the rollout is stuck after its first pod, and its
    // budget has nothing left.
    let checkout = push(
        &mut objects,
        kruise(
            "CloneSet",
            "clonesets",
            "v1alpha1",
            Some(ns),
            json!({
                "metadata": {"name": "checkout", "labels": {"app": "checkout"}},
                "spec": {
                    "replicas": 6,
                    "selector": {"matchLabels": {"app": "checkout"}},
                    "template": template("checkout", &[("checkout", "demo/checkout:1.4.2")]),
                    "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": 1},
                },
            }),
        ),
    );
    history.push((
        checkout,
        image_change(&[("checkout", "demo/checkout:1.5.0-crash")]),
    ));
    push(
        &mut objects,
        budget(ns, "checkout-pub", "checkout", json!({"maxUnavailable": 1})),
    );

    // db: an Advanced StatefulSet updated in place but for ordinal 0; protected (Always).
    let db = push(
        &mut objects,
        kruise(
            "StatefulSet",
            "statefulsets",
            "v1beta1",
            Some(ns),
            json!({
                "metadata": {"name": "db", "labels": {
                    "app": "db", "policy.kruise.io/delete-protection": "Always"}},
                "spec": {
                    "replicas": 3,
                    "serviceName": "db",
                    "selector": {"matchLabels": {"app": "db"}},
                    "template": {
                        // Busy: its pods run near their CPU limit (what the simulated usage
                        // reads), so the demo has something burning.
                        "metadata": {"labels": {"app": "db"}, "annotations": {
                            (kruise_core::sim::usage::HOT_ANNOTATION): "hot"}},
                        // In-place updates need this gate in the template (upstream's webhook
                        // insists).
                        "spec": {
                            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                            "containers": containers(&[("postgres", "postgres:16.2")]),
                        },
                    },
                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                        "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}},
                },
            }),
        ),
    );
    history.push((
        db,
        json!({"spec": {
            "template": {"spec": {"containers": containers(&[("postgres", "postgres:16.3")])}},
            "updateStrategy": {"rollingUpdate": {"partition": 1}},
        }}),
    ));

    // log-agent: an Advanced DaemonSet rolling to a new image, one node held back.
    let agent = push(
        &mut objects,
        kruise(
            "DaemonSet",
            "daemonsets",
            "v1alpha1",
            Some(ns),
            json!({
                "metadata": {"name": "log-agent", "labels": {"app": "log-agent"}},
                "spec": {
                    "selector": {"matchLabels": {"app": "log-agent"}},
                    "template": template("log-agent", &[("fluent-bit", "fluent/fluent-bit:2.2.2")]),
                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                        "rollingUpdateType": "Standard", "maxUnavailable": 1}},
                },
            }),
        ),
    );
    history.push((
        agent,
        json!({"spec": {
            "template": {"spec": {"containers": containers(&[("fluent-bit", "fluent/fluent-bit:3.0.4")])}},
            "updateStrategy": {"rollingUpdate": {"partition": 1}},
        }}),
    ));

    // Scheduled jobs: a nightly report read in New York time, and a weekday warm-up of web's
    // next image on every node, paused while the rollout is half way.
    push(
        &mut objects,
        kruise(
            "AdvancedCronJob",
            "advancedcronjobs",
            "v1alpha1",
            Some(ns),
            json!({
                "metadata": {"name": "nightly-report"},
                "spec": {
                    "schedule": "30 2 * * *",
                    "timeZone": "America/New_York",
                    "concurrencyPolicy": "Forbid",
                    "successfulJobsHistoryLimit": 3,
                    "template": {"jobTemplate": {"spec": {"template": {"spec": {
                        "restartPolicy": "OnFailure",
                        "containers": containers(&[("report", "busybox:1.36")]),
                    }}}}},
                },
            }),
        ),
    );
    push(
        &mut objects,
        kruise(
            "AdvancedCronJob",
            "advancedcronjobs",
            "v1alpha1",
            Some(ns),
            json!({
                "metadata": {"name": "image-warmup"},
                "spec": {
                    "schedule": "0 6 * * 1-5",
                    "timeZone": "Europe/Berlin",
                    "paused": true,
                    "template": {"broadcastJobTemplate": {"spec": {
                        "template": {"spec": {
                            "restartPolicy": "Never",
                            "containers": containers(&[("pull", "nginx:1.26.0")]),
                        }},
                        "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 600},
                    }}},
                },
            }),
        ),
    );

    // Bulk CloneSets for scale: about 100 pods each, ten to a namespace.
    let bulk_pods = pods.map_or(0, |p| p.saturating_sub(base_pods()));
    let sets = bulk_pods.div_ceil(100);
    for k in 0..sets {
        let replicas = bulk_pods / sets + usize::from(k < bulk_pods % sets);
        let bulk_ns = format!("{ns}-scale-{}", k / 10);
        if k.is_multiple_of(10) {
            namespaces.push(namespace(&bulk_ns, json!({"kruise-tui.io/demo": "scale"})));
        }
        let name = format!("bulk-{k:03}");
        push(
            &mut objects,
            kruise(
                "CloneSet",
                "clonesets",
                "v1alpha1",
                Some(&bulk_ns),
                json!({
                    "metadata": {"name": name, "labels": {"app": name}},
                    "spec": {
                        "replicas": replicas,
                        "selector": {"matchLabels": {"app": name}},
                        "template": template(&name, &[("app", "nginx:1.25.4")]),
                        "updateStrategy": {"type": "InPlaceIfPossible"},
                    },
                }),
            ),
        );
    }
    Story {
        namespaces,
        objects,
        history,
    }
}

fn budget(ns: &str, name: &str, target: &str, spec: Value) -> Obj {
    let ar = super::resource(
        "policy.kruise.io",
        "v1alpha1",
        "PodUnavailableBudget",
        "podunavailablebudgets",
    );
    let mut spec = spec;
    spec["targetRef"] =
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": target});
    Obj {
        body: json!({
            "apiVersion": ar.api_version,
            "kind": "PodUnavailableBudget",
            "metadata": {"name": name, "namespace": ns},
            "spec": spec,
        }),
        ar,
        namespace: Some(ns.to_owned()),
    }
}

/// The restarts the story makes once their pods run: one that finishes, one still going.
pub(crate) fn restarts(ns: &str) -> Vec<Obj> {
    let crr = |name: &str, pod: &str, container: &str, strategy: Value| {
        kruise(
            "ContainerRecreateRequest",
            "containerrecreaterequests",
            "v1alpha1",
            Some(ns),
            json!({
                "metadata": {"name": name},
                "spec": {
                    "podName": pod,
                    "containers": [{"name": container}],
                    "strategy": strategy,
                    "ttlSecondsAfterFinished": 86400,
                },
            }),
        )
    };
    vec![
        crr(
            "db-0-restart-postgres",
            "db-0",
            "postgres",
            json!({"failurePolicy": "Fail"}),
        ),
        // Waits for the restarted container to have run ten minutes: still running.
        crr(
            "db-1-restart-postgres",
            "db-1",
            "postgres",
            json!({"failurePolicy": "Fail", "minStartedSeconds": 600}),
        ),
    ]
}
