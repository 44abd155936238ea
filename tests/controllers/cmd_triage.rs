//! `kruise-tui triage --all-contexts` as on-call runs it: one kubeconfig with two clusters (the
//! test bed — the embedded cluster or an existing one under KRUISE_TUI_TEST_KUBECONFIG — and a
//! second embedded cluster) and a context that points nowhere. Both clusters' problems are
//! listed worst first with their context, the dead context is one row within its timeout, exit
//! 1; once fixed, triage of the two clusters says so and exits 0.

use crate::cli::Cli;
use crate::kubectl::Kubectl;
use crate::testbed::{Testbed, kruise_version};

use std::{
    path::Path,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::Namespace;
use kruise_tui::cluster::demo::{DemoCluster, DemoOptions};
use kube::{
    Api,
    api::PostParams,
    config::{Kubeconfig, NamedCluster, NamedContext},
};

fn crashing(name: &str) -> String {
    format!(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {{name: {name}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{{name: main, image: "app:1-crash"}}]
"#
    )
}

/// One kubeconfig: context `a` (the test bed's current context), `b` (the second cluster, its
/// entries renamed so nothing clashes) and `dead` (a port nothing listens on).
fn merged_kubeconfig(a: &Path, b: &Path, out: &Path) {
    let mut merged = Kubeconfig::read_from(a).expect("a's kubeconfig");
    let current = merged.current_context.clone().expect("a current context");
    let a_context = merged
        .contexts
        .iter_mut()
        .find(|c| c.name == current)
        .expect("a's current context");
    a_context.name = "a".to_owned();
    let a_user = a_context.context.as_ref().and_then(|c| c.user.clone());
    merged.current_context = Some("a".to_owned());
    let b = Kubeconfig::read_from(b).expect("b's kubeconfig");
    for mut c in b.clusters {
        c.name = format!("b-{}", c.name);
        merged.clusters.push(c);
    }
    for mut u in b.auth_infos {
        u.name = format!("b-{}", u.name);
        merged.auth_infos.push(u);
    }
    for mut c in b.contexts {
        c.name = "b".to_owned();
        if let Some(ctx) = c.context.as_mut() {
            ctx.cluster = format!("b-{}", ctx.cluster);
            ctx.user = ctx.user.as_ref().map(|u| format!("b-{u}"));
        }
        merged.contexts.push(c);
    }
    merged.clusters.push(NamedCluster {
        name: "nowhere".to_owned(),
        cluster: Some(kube::config::Cluster {
            server: Some("https://127.0.0.1:1".to_owned()),
            ..Default::default()
        }),
        other: Default::default(),
    });
    merged.contexts.push(NamedContext {
        name: "dead".to_owned(),
        context: Some(kube::config::Context {
            cluster: "nowhere".to_owned(),
            user: a_user,
            ..Default::default()
        }),
        other: Default::default(),
    });
    std::fs::write(
        out,
        serde_json::to_string_pretty(&merged).expect("serializes"),
    )
    .expect("written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triage_all_contexts_lists_both_clusters_and_the_dead_one_and_pages() {
    let tb = Testbed::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let b_kubeconfig = dir.path().join("b.kubeconfig");
    let b = DemoCluster::start(DemoOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        kubeconfig_out: b_kubeconfig.clone(),
        pods: None,
        seed: false,
        nodes: true,
        controllers: true,
        kruise_webhooks: true,
        remove_kubeconfig: true,
        kruise_version: kruise_version(),
        kruise_rollout: false,
        streaming_lists: true,
        metrics: true,
    })
    .await
    .expect("the second cluster starts");
    // The same namespace on both clusters, so `-n` reads only this test's objects.
    let b_client = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(
            Kubeconfig::read_from(&b_kubeconfig).expect("reads"),
            &Default::default(),
        )
        .await
        .expect("b's config"),
    )
    .expect("b's client");
    let ns: Namespace = serde_json::from_value(
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": tb.ns()}}),
    )
    .expect("a Namespace");
    Api::<Namespace>::all(b_client)
        .create(&PostParams::default(), &ns)
        .await
        .expect("b's namespace");
    let merged = dir.path().join("merged.kubeconfig");
    merged_kubeconfig(tb.kubeconfig(), &b_kubeconfig, &merged);
    let a_kubectl = Kubectl::at(tb.kubeconfig(), tb.ns());
    let b_kubectl = Kubectl::at(&b_kubeconfig, tb.ns());
    a_kubectl.apply(&[], &crashing("web")).await;
    b_kubectl.apply(&[], &crashing("api")).await;

    let cli = Cli::new(&merged);
    let ns = tb.ns().to_owned();
    let args = [
        "triage",
        "--all-contexts",
        "-n",
        &ns,
        "-o",
        "json",
        "--timeout",
        "20s",
    ];
    // The crash loops show once each pod has crashed a few times.
    let deadline = Instant::now() + Duration::from_secs(90);
    let (run, rows) = loop {
        let run = cli.run(&args).await;
        let rows: Vec<serde_json::Value> = run
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect();
        let looping = |context: &str, name: &str| {
            rows.iter().any(|r| {
                r["context"] == context
                    && r["problem"] == "crash loop"
                    && r["subject"] == format!("CloneSet {ns}/{name}")
            })
        };
        if looping("a", "web") && looping("b", "api") {
            break (run, rows);
        }
        assert!(Instant::now() < deadline, "no crash loops listed: {run:?}");
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    assert_eq!(run.code, 1, "problems page: {run:?}");
    assert!(
        run.stderr
            .contains("problems found; 1 context could not be read"),
        "{run:?}"
    );
    // The dead context first (nothing can be seen there), then problems worst first.
    assert_eq!(rows[0]["context"], "dead", "{rows:?}");
    assert_eq!(rows[0]["problem"], "unreachable", "{rows:?}");
    // Why, in a few words (not every layer of the client's error).
    let why = rows[0]["why"].as_str().unwrap_or_default();
    assert!(
        why.ends_with("cannot reach the server: connection refused") && !why.contains("os error"),
        "{why}"
    );
    assert!(rows[1..].iter().all(|r| r["context"] != "dead"), "{rows:?}");
    let pod = rows
        .iter()
        .find(|r| r["context"] == "b" && r["problem"] == "crash loop")
        .expect("b's crash loop");
    assert_eq!(pod["object"]["kind"], "Pod", "{pod}");
    assert_eq!(pod["object"]["namespace"], ns.as_str(), "{pod}");

    // The table a person reads: a CONTEXT column, one line per row.
    let text = cli
        .run(&["triage", "--all-contexts", "-n", &ns, "--timeout", "20s"])
        .await;
    let header = text.stdout.lines().next().unwrap_or_default();
    assert!(header.starts_with("CONTEXT"), "{text:?}");
    assert!(
        text.stdout
            .lines()
            .any(|l| l.starts_with("dead ") && l.contains("unreachable")),
        "{text:?}"
    );

    // Other subcommands on the dead context say the server cannot be reached (not, for `top`,
    // that the metrics API is missing), exit 1.
    let top = cli.run(&["top", "cs/web", "--context", "dead"]).await;
    assert_eq!(top.code, 1, "{top:?}");
    assert!(
        top.stderr
            .contains("cannot reach the server: connection refused")
            && !top.stderr.contains("Metrics API"),
        "{top:?}"
    );

    // Fixed on both clusters: nothing unhealthy, exit 0.
    a_kubectl
        .ok(&["delete", "cloneset", "web", "--wait=true"])
        .await;
    b_kubectl
        .ok(&["delete", "cloneset", "api", "--wait=true"])
        .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let run = cli
            .run(&["triage", "--context", "a,b", "-n", &ns, "--timeout", "20s"])
            .await;
        if run.code == 0 {
            assert_eq!(run.stdout, "Nothing unhealthy right now.\n", "{run:?}");
            break;
        }
        assert!(Instant::now() < deadline, "still unhealthy: {run:?}");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    // --all-contexts with --context is a usage error.
    let run = cli
        .run(&["triage", "--all-contexts", "--context", "a"])
        .await;
    assert_eq!(run.code, 2, "{run:?}");
    b.shutdown().await;
    tb.shutdown().await;
}
