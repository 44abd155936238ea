//! The console as a user with limited rights: a `kubectl create token` ServiceAccount bound to a
//! Role that lists pods only, against the embedded cluster (which enforces RBAC as a real server
//! does). The pods show, one plain line says CloneSets etc. are not permitted, nothing is retried
//! in a loop, no error is shown in its Rust Debug form; a permission granted later shows on the
//! next `:ns` (a new watch set).

use crate::harness;
use crate::kubectl;
use crate::msgs;

use std::time::Duration;

use kruise_tui::{
    app::{Kind, Msg},
    cluster::server::{EmbeddedCluster, ServerOptions},
    config::LoadedConfig,
    kube::{WatchSet, connect::Connection},
};
use kubectl::Kubectl;
use msgs::{PATIENCE, collect_after, has, ready, until};
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const POLICY: &str = r#"
apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-lister}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer-lists-pods}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-lister}
subjects:
- {kind: ServiceAccount, name: viewer}
"#;

const CLONESET_READER: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cloneset-lister}
rules:
- apiGroups: [apps.kruise.io]
  resources: [clonesets]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer-lists-clonesets}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cloneset-lister}
subjects:
- {kind: ServiceAccount, name: viewer}
"#;

/// The cluster with two pods and a CloneSet in `default`, and a token for `viewer`.
async fn cluster_and_token() -> (EmbeddedCluster, Kubectl, String) {
    let cluster = EmbeddedCluster::start(ServerOptions::default())
        .await
        .expect("starts");
    let store = cluster.store();
    for i in 0..2 {
        store
            .create(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("web-{i}"), "namespace": "default", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}))
            .unwrap();
    }
    store
        .create(json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}}}))
        .unwrap();
    let k = Kubectl::new(&cluster);
    k.apply(&[], POLICY).await;
    let token = k.ok(&["create", "token", "viewer"]).await.trim().to_owned();
    (cluster, k, token)
}

/// Watches of `default` as the token's user.
fn watch_as(cluster: &EmbeddedCluster, token: &str) -> (WatchSet, UnboundedReceiver<Msg>) {
    let mut config = kube::Config::new(cluster.url().parse().unwrap());
    config.default_namespace = "default".into();
    config.auth_info.token = Some(token.to_owned().into());
    let conn = Connection {
        client: kube::Client::try_from(config).unwrap(),
        context: Some("viewer".into()),
        contexts: vec!["viewer".into()],
        default_namespace: "default".into(),
        cluster_url: cluster.url(),
    };
    let (tx, rx) = unbounded_channel();
    (
        WatchSet::start(&conn, Some("default".into()), tx, false),
        rx,
    )
}

fn forbidden(seen: &[Msg], kind: Kind) -> bool {
    has(
        seen,
        |m| matches!(m, Msg::WatchForbidden { kind: k, .. } if *k == kind),
    )
}

fn screen_of(watches: &WatchSet, seen: Vec<Msg>) -> (String, harness::Harness) {
    let (_, writers) = harness::empty_stores();
    let mut h = harness::Harness::bare(
        watches.stores().clone(),
        writers,
        LoadedConfig::default(),
        (160, 14),
    );
    for msg in seen {
        h.feed(msg);
    }
    (h.screen(), h)
}

const LINE: &str = "no permission to list CloneSets, Advanced StatefulSets, Advanced DaemonSets \
                    in default as system:serviceaccount:default:viewer";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_show_and_one_line_says_what_is_not_permitted() {
    let (cluster, k, token) = cluster_and_token().await;
    let (watches, mut rx) = watch_as(&cluster, &token);
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        ready(s, Kind::Pod)
            && forbidden(s, Kind::CloneSet)
            && forbidden(s, Kind::StatefulSet)
            && forbidden(s, Kind::DaemonSet)
    })
    .await;
    // Quiet afterwards: a refusal is said once, never retried in a backoff loop.
    collect_after(&mut rx, &mut seen, Duration::from_secs(3)).await;
    assert!(
        !has(&seen, |m| matches!(m, Msg::WatchFailed { .. })),
        "a 403 is no outage: {seen:#?}"
    );
    for kind in [Kind::CloneSet, Kind::StatefulSet, Kind::DaemonSet] {
        let n = seen
            .iter()
            .filter(|m| matches!(m, Msg::WatchForbidden { kind: k, .. } if *k == kind))
            .count();
        assert_eq!(n, 1, "{kind:?} refused once: {seen:#?}");
    }
    assert_eq!(watches.stores().pods.len(), 2);

    let (screen, _) = screen_of(&watches, seen);
    assert!(screen.contains(LINE), "{screen}");
    assert_eq!(screen.matches("no permission").count(), 1, "{screen}");
    assert!(
        screen.contains("Pods — default [2]"),
        "opens on the pods:\n{screen}"
    );
    assert!(
        screen.contains("web-0") && screen.contains("web-1"),
        "{screen}"
    );
    for bad in ["retrying", "Status {", "ListMeta", "ApiError"] {
        assert!(!screen.contains(bad), "{bad}:\n{screen}");
    }

    // Granted later: a new watch set (what `:ns`/`:ctx` start) lists CloneSets.
    k.apply(&[], CLONESET_READER).await;
    drop(watches);
    let (watches, mut rx) = watch_as(&cluster, &token);
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, PATIENCE, |s| {
        ready(s, Kind::CloneSet)
            && ready(s, Kind::Pod)
            && forbidden(s, Kind::StatefulSet)
            && forbidden(s, Kind::DaemonSet)
    })
    .await;
    assert!(!forbidden(&seen, Kind::CloneSet), "{seen:#?}");
    let (screen, _) = screen_of(&watches, seen);
    assert!(
        screen.contains(
            "no permission to list Advanced StatefulSets, Advanced DaemonSets in default as \
             system:serviceaccount:default:viewer"
        ),
        "{screen}"
    );
    assert!(screen.contains("Workloads — default [1]"), "{screen}");
}
