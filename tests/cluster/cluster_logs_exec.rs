//! `kubectl logs` and `kubectl exec` against the embedded cluster with simulated nodes and the
//! controllers: the log lines a simulated container prints (in its image's style, the same every
//! time, a crash's failure, the run before a restart), kubectl's flags (`-c`, `--previous`,
//! `--timestamps`, `--tail`, `--limit-bytes`, `-f`), the real server's refusals, and commands
//! run through the WebSocket exec protocol (exit codes, stdin).

use crate::kubectl;

use std::{process::Stdio, time::Duration};

use kruise_tui::cluster::demo::{DemoCluster, DemoOptions};
use kubectl::Kubectl;
use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, BufReader};

async fn cluster() -> (DemoCluster, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let demo = DemoCluster::start(DemoOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        kubeconfig_out: dir.path().join("kubeconfig"),
        pods: None,
        seed: false,
        nodes: true,
        controllers: true,
        kruise_webhooks: true,
        remove_kubeconfig: true,
        kruise_version: kruise_tui::kruise::KruiseVersion::V1_9,
        kruise_rollout: true,
        streaming_lists: true,
        metrics: true,
    })
    .await
    .expect("demo cluster starts");
    (demo, dir)
}

const WEB: &str = "apiVersion: v1
kind: Pod
metadata: {name: web-x}
spec:
  containers:
  - name: nginx
    image: nginx:1.25.4
    env: [{name: MODE, value: demo}]
";

const TWO: &str = "apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  containers:
  - {name: nginx, image: 'nginx:1.26.0'}
  - {name: logtail, image: 'demo/logtail:1.0'}
";

const CRASH: &str = "apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers:
  - {name: checkout, image: 'demo/checkout:1.5.0-crash'}
";

async fn ready(k: &Kubectl, pod: &str) {
    k.ok(&[
        "wait",
        "--for=condition=Ready",
        &format!("pod/{pod}"),
        "--timeout=30s",
    ])
    .await;
}

/// Polls `kubectl ARGS` every 200 ms until its stdout satisfies `f`; returns that stdout.
async fn until(k: &Kubectl, args: &[&str], what: &str, f: impl Fn(&str) -> bool) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let o = k.run(args).await;
        if o.code == 0 && f(&o.stdout) {
            return o.stdout;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}: kubectl {args:?} printed {}{}",
            o.stdout,
            o.stderr
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn kubectl_logs_prints_the_containers_lines_in_its_images_style() {
    let (demo, _dir) = cluster().await;
    let k = Kubectl::new(demo.cluster());
    k.apply(&[], WEB).await;
    ready(&k, "web-x").await;
    let first = until(&k, &["logs", "web-x"], "an access line", |s| {
        s.contains("HTTP/1.1\"")
    })
    .await;
    assert!(first.starts_with("/docker-entrypoint.sh: "), "{first}");
    assert!(first.contains("[notice] 1#1: nginx/1.25.4\n"), "{first}");
    let access = first.lines().find(|l| l.contains("HTTP/1.1\"")).unwrap();
    assert!(
        access.starts_with("10.") && access.contains(" - - ["),
        "{access}"
    );

    // The same lines every time: a later read starts with the earlier one.
    let later = k.ok(&["logs", "web-x"]).await;
    assert!(later.starts_with(&first), "{first}\n---\n{later}");

    let tail = k.ok(&["logs", "web-x", "--tail", "2"]).await;
    assert_eq!(tail.lines().count(), 2, "{tail}");
    let stamped = k.ok(&["logs", "web-x", "--timestamps"]).await;
    for line in stamped.lines().take(first.lines().count()) {
        let (stamp, text) = line.split_once(' ').unwrap();
        assert!(
            stamp.ends_with('Z') && stamp.parse::<jiff::Timestamp>().is_ok(),
            "{line}"
        );
        assert!(first.lines().any(|l| l == text), "{text}");
    }
    let limited = k.ok(&["logs", "web-x", "--limit-bytes", "40"]).await;
    assert_eq!(limited, first[..40]);
    let since = k.ok(&["logs", "web-x", "--since", "1h"]).await;
    assert!(since.starts_with(&first));

    let o = k.run(&["logs", "nope"]).await;
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("pods \"nope\" not found"), "{}", o.stderr);
    demo.shutdown().await;
}

#[tokio::test]
async fn a_pod_with_several_containers_needs_one_named() {
    let (demo, _dir) = cluster().await;
    let k = Kubectl::new(demo.cluster());
    k.apply(&[], TWO).await;
    ready(&k, "two").await;
    // The server's refusal, as a client that names no container gets it.
    let o = k
        .run(&["get", "--raw", "/api/v1/namespaces/default/pods/two/log"])
        .await;
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stderr.contains(
            "a container name must be specified for pod two, choose one of: [nginx logtail]"
        ),
        "{}",
        o.stderr
    );
    // kubectl itself picks the first container and says so.
    let o = k.run(&["logs", "two"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("Defaulted container \"nginx\" out of: nginx, logtail")
    );
    let sidecar = k.ok(&["logs", "two", "-c", "logtail"]).await;
    assert!(
        sidecar.contains("msg=\"starting logtail\" version=1.0 image=demo/logtail:1.0"),
        "{sidecar}"
    );
    let o = k.run(&["logs", "two", "-c", "nope"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("container nope is not valid for pod two"),
        "{}",
        o.stderr
    );
    demo.shutdown().await;
}

#[tokio::test]
async fn previous_shows_the_crash_and_without_a_restart_the_servers_error() {
    let (demo, _dir) = cluster().await;
    let k = Kubectl::new(demo.cluster());
    k.apply(&[], CRASH).await;
    k.apply(&[], WEB).await;
    until(
        &k,
        &[
            "get",
            "pod",
            "crash",
            "-o",
            "jsonpath={.status.containerStatuses[0].restartCount}",
        ],
        "a restart",
        |s| s.parse::<i32>().is_ok_and(|n| n >= 1),
    )
    .await;
    let previous = k.ok(&["logs", "crash", "--previous"]).await;
    assert!(
        previous.starts_with("time=")
            && previous.contains("msg=\"starting checkout\" version=1.5.0-crash"),
        "{previous}"
    );
    assert!(previous.contains(" level=error "), "{previous}");
    assert!(
        previous
            .trim_end()
            .ends_with("level=error msg=\"checkout exited\" code=1"),
        "{previous}"
    );
    ready(&k, "web-x").await;
    let o = k.run(&["logs", "web-x", "--previous"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("previous terminated container \"nginx\" in pod \"web-x\" not found"),
        "{}",
        o.stderr
    );
    demo.shutdown().await;
}

#[tokio::test]
async fn a_container_that_has_not_started_refuses_logs_and_exec() {
    let (demo, _dir) = cluster().await;
    let k = Kubectl::new(demo.cluster());
    // Bound to a node nobody simulates: it stays ContainerCreating.
    demo.cluster()
        .store()
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pending", "namespace": "default"},
            "spec": {"nodeName": "elsewhere", "containers": [{"name": "nginx", "image": "nginx:1.25.4"}]},
            "status": {"phase": "Pending", "containerStatuses": [{
                "name": "nginx", "image": "nginx:1.25.4", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]},
        }))
        .expect("seeded");
    let o = k.run(&["logs", "pending"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains(
            "container \"nginx\" in pod \"pending\" is waiting to start: ContainerCreating"
        ),
        "{}",
        o.stderr
    );
    let o = k.run(&["exec", "pending", "--", "ls"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("unable to upgrade connection: container not found (\"nginx\")"),
        "{}",
        o.stderr
    );
    demo.shutdown().await;
}

type Lines = tokio::io::Lines<BufReader<tokio::process::ChildStdout>>;

/// The next line of a follow within 10 s (None: the stream ended).
async fn read(lines: &mut Lines) -> Option<String> {
    tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("a line within 10 s")
        .expect("readable")
}

#[tokio::test]
async fn follow_prints_new_lines_as_they_come_and_ends_with_the_pod() {
    let (demo, _dir) = cluster().await;
    let k = Kubectl::new(demo.cluster());
    k.apply(&[], WEB).await;
    ready(&k, "web-x").await;
    let mut child = k
        .cmd(&["logs", "-f", "web-x", "--tail", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let tail = read(&mut lines).await.expect("the tail line");
    let fresh = read(&mut lines).await.expect("a new line");
    assert_ne!(tail, fresh);
    assert!(fresh.contains("HTTP/1.1\""), "{fresh}");
    k.ok(&["delete", "pod", "web-x", "--wait=false"]).await;
    let mut rest = Vec::new();
    while let Some(line) = read(&mut lines).await {
        rest.push(line);
    }
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("kubectl ends with the pod")
        .expect("exit status");
    assert!(status.success());
    assert!(
        rest.last()
            .is_some_and(|l| l.ends_with("[notice] 1#1: exit")),
        "nginx's shutdown ends the log: {rest:?}"
    );
    demo.shutdown().await;
}

#[tokio::test]
async fn exec_runs_commands_with_their_exit_codes_and_stdin() {
    let (demo, _dir) = cluster().await;
    let k = Kubectl::new(demo.cluster());
    k.apply(&[], WEB).await;
    k.apply(&[], TWO).await;
    ready(&k, "web-x").await;
    assert_eq!(k.ok(&["exec", "web-x", "--", "hostname"]).await, "web-x\n");
    let env = k.ok(&["exec", "web-x", "--", "env"]).await;
    assert!(
        env.contains("HOSTNAME=web-x\n") && env.contains("MODE=demo\n"),
        "{env}"
    );

    let o = k.run(&["exec", "web-x", "--", "frobnicate"]).await;
    assert_eq!(o.code, 127, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("\"frobnicate\": executable file not found in $PATH")
    );
    let o = k.run(&["exec", "web-x", "--", "false"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("command terminated with exit code 1"),
        "{}",
        o.stderr
    );

    let o = k
        .run_stdin(
            &["exec", "-i", "web-x", "--", "sh"],
            "echo hi\nexit 3\necho never\n",
        )
        .await;
    assert_eq!((o.code, o.stdout.as_str()), (3, "hi\n"), "{}", o.stderr);
    let o = k
        .run(&[
            "exec",
            "web-x",
            "--",
            "sh",
            "-c",
            "echo out; echo err >&2; frob",
        ])
        .await;
    assert_eq!(o.code, 127);
    assert_eq!(o.stdout, "out\n");
    assert!(
        o.stderr.starts_with("err\nsh: frob: not found\n"),
        "{}",
        o.stderr
    );

    ready(&k, "two").await;
    let o = k.run(&["exec", "two", "--", "hostname"]).await;
    assert_eq!(o.stdout, "two\n");
    assert!(
        o.stderr.contains("Defaulted container \"nginx\""),
        "{}",
        o.stderr
    );
    let ps = k.ok(&["exec", "two", "-c", "logtail", "--", "ps"]).await;
    assert!(
        ps.contains("    1 root      0:00 /usr/local/bin/logtail\n"),
        "{ps}"
    );
    demo.shutdown().await;
}

#[tokio::test]
async fn previous_after_an_in_place_update_ran_the_old_image() {
    let (demo, _dir) = cluster().await;
    let k = Kubectl::new(demo.cluster());
    k.apply(
        &[],
        "apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: 'nginx:1.25.4'}]}
  updateStrategy: {type: InPlaceIfPossible}
",
    )
    .await;
    let pod = until(
        &k,
        &[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[0].metadata.name}",
        ],
        "a pod",
        |s| !s.is_empty(),
    )
    .await;
    ready(&k, &pod).await;
    k.ok(&["patch", "cloneset", "web", "--type=merge", "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26.0"}]}}}}"#])
        .await;
    until(
        &k,
        &[
            "get",
            "pod",
            &pod,
            "-o",
            "jsonpath={.status.containerStatuses[0].restartCount}",
        ],
        "the in-place restart",
        |s| s == "1",
    )
    .await;
    let previous = k.ok(&["logs", &pod, "--previous"]).await;
    assert!(
        previous.contains("[notice] 1#1: nginx/1.25.4\n"),
        "{previous}"
    );
    assert!(
        previous.trim_end().ends_with("[notice] 1#1: exit"),
        "{previous}"
    );
    let current = k.ok(&["logs", &pod]).await;
    assert!(
        current.contains("[notice] 1#1: nginx/1.26.0\n"),
        "{current}"
    );
    demo.shutdown().await;
}

#[tokio::test]
async fn discovery_lists_the_pod_subresources() {
    let (demo, _dir) = cluster().await;
    let k = Kubectl::new(demo.cluster());
    let list: serde_json::Value =
        serde_json::from_str(&k.ok(&["get", "--raw", "/api/v1"]).await).unwrap();
    let verbs = |name: &str| {
        list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["verbs"].clone())
    };
    assert_eq!(verbs("pods/log"), Some(json!(["get"])));
    assert_eq!(verbs("pods/exec"), Some(json!(["create", "get"])));
    assert_eq!(verbs("pods/attach"), Some(json!(["create", "get"])));
    demo.shutdown().await;
}
