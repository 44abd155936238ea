//! `kruise-tui demo-server` as a user runs it: the real binary, `ready <url>` on stdout, kubectl
//! with the written kubeconfig sees the seeded scenario, a request without the token is refused,
//! and SIGTERM stops it cleanly.

use std::{
    io::{BufRead as _, BufReader, Read as _, Write as _},
    net::TcpStream,
    process::{Child, Command, Stdio},
};

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(kubeconfig: &std::path::Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise-tui"))
        .arg("demo-server")
        .arg("--kubeconfig-out")
        .arg(kubeconfig)
        .args(extra)
        .env("KRUISE_TUI_STATE_DIR", kubeconfig.parent().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("ready ")
        .unwrap_or_else(|| panic!("expected `ready <url>`, got {line:?}"))
        .to_owned();
    Server { child, url }
}

fn kubectl(kubeconfig: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn kubectl_sees_the_seeded_scenario_and_the_token_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("demo.kubeconfig");
    let mut server = start(&kubeconfig, &["--listen", "127.0.0.1:0"]);
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );

    let out = kubectl(
        &kubeconfig,
        &["get", "clonesets", "-n", "demo", "-o", "name"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // api (spread by api-spread), cart (released by the Rollout cart), checkout, web, and
    // shop's two subset CloneSets.
    let names = String::from_utf8_lossy(&out.stdout).into_owned();
    let names: Vec<&str> = names.lines().collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for want in ["api", "cart", "checkout", "web"] {
        assert!(
            names.contains(&format!("cloneset.apps.kruise.io/{want}").as_str()),
            "{names:?}"
        );
    }
    assert!(
        names
            .iter()
            .filter(|n| n.starts_with("cloneset.apps.kruise.io/shop-zone-"))
            .count()
            == 2,
        "{names:?}"
    );
    // The controllers walk web's rollout half way: 4 of 10 pods on the new revision.
    let mut web = serde_json::Value::Null;
    for _ in 0..200 {
        let out = kubectl(
            &kubeconfig,
            &["get", "cloneset", "web", "-n", "demo", "-o", "json"],
        );
        web = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if web["status"]["updatedReadyReplicas"] == 4 && web["status"]["readyReplicas"] == 10 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(web["status"]["updatedReplicas"], 4, "{web}");
    assert_ne!(
        web["status"]["currentRevision"],
        web["status"]["updateRevision"]
    );

    // The restarts come once their pods run: db-0's finishes, db-1's waits for its container to
    // have run ten minutes (minStartedSeconds).
    let mut phases = String::new();
    for _ in 0..300 {
        let out = kubectl(
            &kubeconfig,
            &[
                "get",
                "crr",
                "-n",
                "demo",
                "-o",
                "jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}",
            ],
        );
        phases = String::from_utf8_lossy(&out.stdout).into_owned();
        if phases.contains("db-0-restart-postgres=Completed")
            && phases.contains("db-1-restart-postgres=Recreating")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        phases.contains("db-0-restart-postgres=Completed")
            && phases.contains("db-1-restart-postgres=Recreating"),
        "{phases}"
    );

    for (kind, expected) in [
        ("statefulsets.apps.kruise.io", "db"),
        ("daemonsets.apps.kruise.io", "log-agent"),
        ("podprobemarkers", "web-health"),
        ("podunavailablebudgets", "web-pub"),
        ("podunavailablebudgets", "checkout-pub"),
    ] {
        let out = kubectl(&kubeconfig, &["get", kind, "-n", "demo", "-o", "name"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(expected),
            "{kind}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = kubectl(&kubeconfig, &["get", "sidecarsets", "-o", "name"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("logtail"));

    // Without a token: system:anonymous, refused by RBAC (403, as a real server with anonymous
    // auth on answers), over plain HTTP on the same port ...
    let port = server.url.rsplit(':').next().unwrap();
    let mut stream = TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    stream
        .write_all(b"GET /api/v1/namespaces/demo/pods HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    assert!(
        response.contains("User \\\"system:anonymous\\\" cannot list resource \\\"pods\\\""),
        "{response}"
    );
    // ... and a wrong token is a 401, through kubectl.
    let out = kubectl(
        &kubeconfig,
        &["--token", "not-the-token", "get", "pods", "-n", "demo"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Unauthorized"));

    // SIGTERM: a clean exit.
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn no_seed_starts_an_empty_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("k");
    let _server = start(
        &kubeconfig,
        &["--no-seed", "--no-controllers", "--no-nodes"],
    );
    let out = kubectl(&kubeconfig, &["get", "clonesets", "-A", "-o", "name"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = kubectl(&kubeconfig, &["get", "namespace", "demo", "-o", "name"]);
    assert!(out.status.success(), "the kubeconfig's namespace exists");
    let out = kubectl(&kubeconfig, &["get", "nodes", "-o", "name"]);
    assert!(out.stdout.is_empty(), "no simulated nodes with --no-nodes");
}

/// The first commands a new user types against `demo-server`: kubectl's typed generators
/// (`create deployment|job|configmap|service`, `run`), which send protobuf bodies; `explain`, a
/// malformed Pod, and the seeded ContainerRecreateRequests' NODE.
#[test]
fn a_new_users_first_kubectl_commands_work() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("k");
    let _server = start(&kubeconfig, &[]);
    let run = |args: &[&str]| {
        let out = kubectl(&kubeconfig, args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    // The generators send protobuf bodies, which the server reads for every built-in kind.
    let generate = run;
    for (args, want) in [
        (
            &["create", "deployment", "hello", "--image=nginx:1.25"][..],
            "deployment.apps/hello created",
        ),
        (
            &["create", "job", "once", "--image=busybox"],
            "job.batch/once created",
        ),
        (
            &["create", "configmap", "cfg", "--from-literal=a=b"],
            "configmap/cfg created",
        ),
        (
            &["create", "service", "clusterip", "hello", "--tcp=80:8080"],
            "service/hello created",
        ),
        (&["run", "solo", "--image=nginx:1.25"], "pod/solo created"),
    ] {
        assert_eq!(generate(args).trim(), want, "kubectl {args:?}");
    }
    let names = run(&["get", "deploy,job,cm,svc,pod", "-o", "name"]);
    for n in [
        "deployment.apps/hello",
        "job.batch/once",
        "configmap/cfg",
        "service/hello",
        "pod/solo",
    ] {
        assert!(names.lines().any(|l| l == n), "{n}: {names}");
    }
    let explain = run(&["explain", "pod.spec.containers"]);
    assert!(
        explain.contains("FIELD: containers <[]Container>"),
        "{explain}"
    );

    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["apply", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: oops\nspec:\n  containers: \"oops\"\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container"),
        "{err}"
    );

    // The story creates its two restarts one after the other: wait for the second.
    let mut crr = String::new();
    for _ in 0..120 {
        crr = run(&["get", "crr", "-n", "demo"]);
        if crr.lines().any(|l| l.starts_with("db-1-restart-postgres")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let header = crr.lines().next().unwrap_or("");
    let node = header.find("NODE").expect("a NODE column");
    let rows: Vec<&str> = crr.lines().skip(1).collect();
    assert!(
        rows.iter().any(|l| l.starts_with("db-1-restart-postgres")),
        "{crr}"
    );
    for row in rows {
        assert!(row[node..].starts_with("sim-node-"), "{crr}");
    }
}

/// `--no-streaming-lists`: a watch-list (`sendInitialEvents`) is refused with v1.33's 422, a
/// plain list still answers; without the flag the same watch-list ends its initial events with
/// the annotated bookmark.
#[test]
fn no_streaming_lists_refuses_watch_lists_as_v1_33_does() {
    const WATCH_LIST: &str = "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true\
                              &resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true\
                              &timeoutSeconds=1";
    let quiet = ["--no-seed", "--no-controllers", "--no-nodes"];
    let dir = tempfile::tempdir().unwrap();
    let refusing = dir.path().join("refusing");
    let _server = start(&refusing, &[&quiet[..], &["--no-streaming-lists"]].concat());
    let out = kubectl(&refusing, &["get", "--raw", WATCH_LIST]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the \
             WatchList feature gate is enabled"
        ),
        "{stderr}"
    );
    let out = kubectl(
        &refusing,
        &["get", "configmaps", "-n", "default", "-o", "name"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let serving = dir.path().join("serving");
    let _server = start(&serving, &quiet);
    let out = kubectl(&serving, &["get", "--raw", WATCH_LIST]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(r#""type":"BOOKMARK""#)
            && stdout.contains(r#""k8s.io/initial-events-end":"true""#),
        "{stdout}"
    );
}

/// `--no-metrics`: no `metrics.k8s.io` in discovery and kubectl top says the API is not
/// available, as on a cluster without metrics-server; without the flag the group is served and
/// its APIService stored.
#[test]
fn no_metrics_serves_no_metrics_api() {
    let quiet = ["--no-seed", "--no-controllers", "--no-nodes"];
    let dir = tempfile::tempdir().unwrap();
    let without = dir.path().join("without");
    let _server = start(&without, &[&quiet[..], &["--no-metrics"]].concat());
    let out = kubectl(&without, &["api-versions"]);
    assert!(out.status.success());
    let versions = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!versions.contains("metrics.k8s.io"), "{versions}");
    let out = kubectl(&without, &["top", "nodes"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Metrics API not available"), "{stderr}");

    let with = dir.path().join("with");
    let _server = start(&with, &quiet);
    let out = kubectl(&with, &["api-versions"]);
    let versions = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        versions.lines().any(|l| l == "metrics.k8s.io/v1beta1"),
        "{versions}"
    );
    let out = kubectl(
        &with,
        &["get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "name"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
