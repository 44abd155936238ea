//! kubectl v1.32 as an outside client of the embedded API server: discovery, create, apply
//! (client-side and server-side, re-apply), get with selectors, watch, label, annotate, scale,
//! every patch type, the status subresource, replace conflicts, finalizers and delete --all.
//! kubectl must be on PATH (or named by $KUBECTL).

use crate::common;
use crate::kubectl;

use std::time::Duration;

use kubectl::Kubectl;
use tokio::io::AsyncReadExt;

/// `.spec.replicas` of the CloneSet `name`, as kubectl prints it.
async fn replicas(k: &Kubectl, name: &str) -> String {
    k.jsonpath(&["clonesets", name], "{.spec.replicas}").await
}

/// `kubectl patch KIND NAME --type TYPE -p BODY` arguments.
fn patch<'a>(kind: &'a str, name: &'a str, kind_of_patch: &'a str, body: &'a str) -> [&'a str; 7] {
    ["patch", kind, name, "--type", kind_of_patch, "-p", body]
}

fn cloneset_yaml(name: &str, replicas: &str) -> String {
    format!(
        "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: {name}\n  labels:\n    app: {name}\n\
         spec:\n  replicas: {replicas}\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      \
         labels:\n        app: {name}\n    spec:\n      containers:\n      - name: main\n        image: nginx:1.25\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_create_apply_and_validation() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    let out = k.ok(&["api-resources"]).await;
    for needle in [
        "clonesets",
        "apps.kruise.io/v1alpha1",
        "podunavailablebudgets",
        "deployments",
        "sts,asts",
    ] {
        assert!(out.contains(needle), "api-resources lacks {needle}:\n{out}");
    }
    let out = k
        .ok(&["api-resources", "--api-group=apps.kruise.io", "-o", "name"])
        .await;
    assert!(
        out.lines().any(|l| l == "clonesets.apps.kruise.io"),
        "{out}"
    );

    let out = k
        .ok_stdin(&["create", "-f", "-"], &cloneset_yaml("web", "3"))
        .await;
    assert_eq!(out.trim(), "cloneset.apps.kruise.io/web created");
    let o = k
        .run_stdin(&["create", "-f", "-"], &cloneset_yaml("web", "3"))
        .await;
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("AlreadyExists"), "{}", o.stderr);

    let o = k
        .run_stdin(&["create", "-f", "-"], &cloneset_yaml("bad", "three"))
        .await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("spec.replicas: Invalid value"),
        "{}",
        o.stderr
    );
    let unknown =
        cloneset_yaml("unk", "1").replace("  replicas: 1\n", "  replicas: 1\n  bogus: true\n");
    let o = k.run_stdin(&["create", "-f", "-"], &unknown).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("strict decoding error: unknown field \"spec.bogus\""),
        "{}",
        o.stderr
    );

    // Client-side apply: create, change, re-apply unchanged.
    let out = k.apply(&[], &cloneset_yaml("app", "1")).await;
    assert_eq!(out.trim(), "cloneset.apps.kruise.io/app created");
    let out = k.apply(&[], &cloneset_yaml("app", "2")).await;
    assert_eq!(out.trim(), "cloneset.apps.kruise.io/app configured");
    let out = k.apply(&[], &cloneset_yaml("app", "2")).await;
    assert_eq!(out.trim(), "cloneset.apps.kruise.io/app unchanged");
    assert_eq!(replicas(&k, "app").await, "2");

    // Server-side apply: create and re-apply, and take over a client-side-applied object.
    let out = k
        .apply(&["--server-side"], &cloneset_yaml("ssa", "1"))
        .await;
    assert_eq!(out.trim(), "cloneset.apps.kruise.io/ssa serverside-applied");
    k.apply(&["--server-side"], &cloneset_yaml("ssa", "4"))
        .await;
    assert_eq!(replicas(&k, "ssa").await, "4");
    // Re-applying without a field the same manager applied before removes it.
    let labelled =
        cloneset_yaml("ssa", "4").replacen("    app: ssa\n", "    app: ssa\n    extra: x\n", 1);
    k.apply(&["--server-side"], &labelled).await;
    k.assert_jsonpath(&["clonesets", "ssa"], "{.metadata.labels.extra}", "x")
        .await;
    k.apply(&["--server-side"], &cloneset_yaml("ssa", "4"))
        .await;
    k.assert_jsonpath(
        &["clonesets", "ssa"],
        "{.metadata.labels}",
        r#"{"app":"ssa"}"#,
    )
    .await;
    k.apply(&["--server-side"], &cloneset_yaml("app", "5"))
        .await;
    assert_eq!(replicas(&k, "app").await, "5");

    // Server-side dry runs change nothing; kubectl diff shows the change (exit code 1).
    let out = k
        .apply(&["--dry-run=server"], &cloneset_yaml("app", "9"))
        .await;
    assert!(out.contains("(server dry run)"), "{out}");
    assert_eq!(replicas(&k, "app").await, "5");
    let o = k
        .run_stdin(&["diff", "-f", "-"], &cloneset_yaml("app", "9"))
        .await;
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("+  replicas: 9"), "{}", o.stdout);
    assert_eq!(replicas(&k, "app").await, "5");

    // Built-in kinds: client-side apply uses strategic merge.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: a:1\n  - name: b\n    image: b:1\n";
    k.apply(&[], pod).await;
    k.apply(&[], &pod.replace("a:1", "a:2")).await;
    k.assert_jsonpath(&["pod", "p"], "{.spec.containers[*].image}", "a:2 b:1")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_selectors_label_annotate_scale_patch() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    for (name, tier, node) in [("a", "fe", "n1"), ("b", "fe", "n2"), ("c", "be", "n1")] {
        let mut p = common::pod_json(name, serde_json::json!({"app": "web", "tier": tier}));
        p["spec"]["nodeName"] = serde_json::json!(node);
        c.store().create(p).unwrap();
    }
    let names = |s: String| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let out = k.ok(&["get", "pods", "-l", "tier=fe", "-o", "name"]).await;
    assert_eq!(names(out), ["pod/a", "pod/b"]);
    let out = k
        .ok(&["get", "pods", "-l", "tier in (be),app", "-o", "name"])
        .await;
    assert_eq!(names(out), ["pod/c"]);
    let out = k.ok(&["get", "pods", "-l", "tier!=fe", "-o", "name"]).await;
    assert_eq!(names(out), ["pod/c"]);
    let out = k
        .ok(&[
            "get",
            "pods",
            "--field-selector",
            "spec.nodeName=n1",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(names(out), ["pod/a", "pod/c"]);
    let out = k.ok(&["get", "pods"]).await;
    assert!(
        out.starts_with("NAME") && out.contains("STATUS") && out.contains("Pending"),
        "{out}"
    );

    k.ok_stdin(&["create", "-f", "-"], &cloneset_yaml("web", "1"))
        .await;
    let out = k.ok(&["get", "clonesets"]).await;
    assert!(
        out.contains("DESIRED") && out.contains("web"),
        "printer columns: {out}"
    );
    assert_eq!(
        k.ok(&["label", "cloneset", "web", "team=blue"])
            .await
            .trim(),
        "cloneset.apps.kruise.io/web labeled"
    );
    assert_eq!(
        k.ok(&["annotate", "cloneset", "web", "note=hi"])
            .await
            .trim(),
        "cloneset.apps.kruise.io/web annotated"
    );
    assert_eq!(
        k.ok(&["scale", "cloneset", "web", "--replicas=4"])
            .await
            .trim(),
        "cloneset.apps.kruise.io/web scaled"
    );
    let got = k
        .jsonpath(
            &["clonesets", "web"],
            "{.metadata.labels.team} {.metadata.annotations.note} {.spec.replicas}",
        )
        .await;
    assert_eq!(got, "blue hi 4");

    k.ok(&patch(
        "cloneset",
        "web",
        "merge",
        r#"{"spec":{"replicas":5}}"#,
    ))
    .await;
    k.ok(&patch(
        "cloneset",
        "web",
        "json",
        r#"[{"op":"replace","path":"/spec/replicas","value":6}]"#,
    ))
    .await;
    assert_eq!(replicas(&k, "web").await, "6");
    let o = k
        .run(&patch(
            "cloneset",
            "web",
            "json",
            r#"[{"op":"test","path":"/spec/replicas","value":1}]"#,
        ))
        .await;
    assert_eq!(o.code, 1, "failed test op: {}", o.stderr);
    k.ok(&patch(
        "pod",
        "a",
        "strategic",
        r#"{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}"#,
    ))
    .await;
    k.assert_jsonpath(&["pod", "a"], "{.spec.containers[*].image}", "nginx:2")
        .await;

    let o = k
        .run(&[
            "patch",
            "cloneset",
            "web",
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"replicas":1}}"#,
        ])
        .await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("status.availableReplicas: Required value"),
        "{}",
        o.stderr
    );
    k.ok(&[
        "patch", "cloneset", "web", "--subresource=status", "--type", "merge", "-p",
        r#"{"status":{"replicas":1,"readyReplicas":1,"availableReplicas":1,"updatedReplicas":1,"updatedReadyReplicas":1}}"#,
    ])
    .await;
    k.assert_jsonpath(&["clonesets", "web"], "{.status.readyReplicas}", "1")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_conflict_finalizers_delete_all_and_watch() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    k.ok_stdin(&["create", "-f", "-"], &cloneset_yaml("web", "1"))
        .await;
    let stale = k.ok(&["get", "cloneset", "web", "-o", "yaml"]).await;
    k.ok(&["label", "cloneset", "web", "x=1"]).await;
    let o = k.run_stdin(&["replace", "-f", "-"], &stale).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("the object has been modified"),
        "{}",
        o.stderr
    );

    // kubectl get -w prints changes as they happen.
    let mut watch = k
        .cmd(&["get", "clonesets", "-w", "--output-watch-events"])
        .spawn()
        .unwrap();
    let mut stdout = watch.stdout.take().unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let read_until = async |stdout: &mut tokio::process::ChildStdout,
                            buf: &mut Vec<u8>,
                            chunk: &mut [u8],
                            needle: &str| {
        tokio::time::timeout(Duration::from_secs(20), async {
            while !String::from_utf8_lossy(buf).contains(needle) {
                let n = stdout.read(chunk).await.unwrap();
                assert!(
                    n > 0,
                    "kubectl -w ended early: {}",
                    String::from_utf8_lossy(buf)
                );
                buf.extend_from_slice(&chunk[..n]);
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "kubectl -w never printed {needle:?}: {}",
                String::from_utf8_lossy(buf)
            )
        });
    };
    read_until(&mut stdout, &mut buf, &mut chunk, "ADDED").await;
    k.ok(&["scale", "cloneset", "web", "--replicas=3"]).await;
    // The whole MODIFIED line: kubectl may write it in more than one piece.
    read_until(&mut stdout, &mut buf, &mut chunk, "MODIFIED").await;
    let line_done = |buf: &[u8]| {
        let text = String::from_utf8_lossy(buf);
        text.split_once("MODIFIED")
            .is_some_and(|(_, rest)| rest.contains('\n'))
    };
    while !line_done(&buf) {
        let n = tokio::time::timeout(Duration::from_secs(20), stdout.read(&mut chunk))
            .await
            .expect("the MODIFIED line ends")
            .unwrap();
        assert!(n > 0, "kubectl -w ended mid-line");
        buf.extend_from_slice(&chunk[..n]);
    }
    let printed = String::from_utf8_lossy(&buf).to_string();
    assert!(
        printed
            .lines()
            .any(|l| l.starts_with("MODIFIED") && l.contains("web") && l.contains(" 3 ")),
        "{printed}"
    );
    watch.kill().await.unwrap();

    // A finalizer holds the object after delete; removing it lets it go.
    k.ok(&patch(
        "cloneset",
        "web",
        "merge",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ))
    .await;
    let out = k.ok(&["delete", "cloneset", "web", "--wait=false"]).await;
    assert_eq!(out.trim(), "cloneset.apps.kruise.io \"web\" deleted");
    assert!(
        !k.jsonpath(&["cloneset", "web"], "{.metadata.deletionTimestamp}")
            .await
            .is_empty()
    );
    k.ok(&patch(
        "cloneset",
        "web",
        "json",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ))
    .await;
    let o = k.run(&["get", "cloneset", "web"]).await;
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("NotFound"), "{}", o.stderr);

    // Typed generators send protobuf bodies (read for every built-in kind).
    for n in ["a", "b", "c"] {
        let out = k
            .ok(&["create", "configmap", n, "--from-literal=k=v"])
            .await;
        assert_eq!(out.trim(), format!("configmap/{n} created"));
    }
    k.assert_jsonpath(&["configmap", "a"], "{.data.k}", "v")
        .await;
    assert_eq!(
        k.ok(&["create", "namespace", "team"]).await.trim(),
        "namespace/team created"
    );
    k.ok(&[
        "create",
        "secret",
        "generic",
        "s",
        "-n",
        "team",
        "--from-literal=pw=hunter2",
    ])
    .await;
    k.assert_jsonpath(&["secret", "s", "-n", "team"], "{.data.pw}", "aHVudGVyMg==")
        .await;
    assert_eq!(
        k.ok(&["delete", "namespace", "team"]).await.trim(),
        "namespace \"team\" deleted"
    );
    let o = k.run(&["get", "namespace", "team"]).await;
    assert_eq!(
        o.code, 1,
        "the namespace is gone once emptied: {}",
        o.stdout
    );
    // `--all` takes the namespace's kube-root-ca.crt too, as on a real cluster.
    let out = k.ok(&["delete", "configmaps", "--all"]).await;
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(
        out.contains("configmap \"kube-root-ca.crt\" deleted"),
        "{out}"
    );
    let o = k.run(&["get", "configmaps"]).await;
    assert!(o.stderr.contains("No resources found"), "{}", o.stderr);

    // Deleting a pod with kubectl waits until it is gone.
    c.store()
        .create(common::pod_json("p", serde_json::json!({})))
        .unwrap();
    let out = k.ok(&["delete", "pod", "p"]).await;
    assert_eq!(out.trim(), "pod \"p\" deleted");
    assert_eq!(
        k.ok(&["auth", "can-i", "delete", "pods"]).await.trim(),
        "yes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_shows_events_from_the_kube_rs_recorder() {
    use kube::{
        Resource,
        runtime::events::{Event, EventType, Recorder, Reporter},
    };
    let c = common::start().await;
    let k = Kubectl::new(&c);
    let client = c.client().await.unwrap();
    let api = common::clonesets(&client, "default");
    let cs = api
        .create(&Default::default(), &common::cloneset("web", 1))
        .await
        .unwrap();
    let recorder = Recorder::new(
        client,
        Reporter {
            controller: "kruise-tui".into(),
            instance: None,
        },
    );
    let ev = Event {
        type_: EventType::Normal,
        reason: "SuccessfulCreate".into(),
        note: Some("created pod web-abcde".into()),
        action: "Create".into(),
        secondary: None,
    };
    let reference = cs.object_ref(&common::cloneset_resource());
    recorder.publish(&ev, &reference).await.unwrap();
    recorder.publish(&ev, &reference).await.unwrap();
    let out = k.ok(&["describe", "cloneset", "web"]).await;
    let line = out
        .lines()
        .find(|l| l.contains("SuccessfulCreate"))
        .unwrap_or_else(|| panic!("no event in describe:\n{out}"));
    assert!(
        line.contains("created pod web-abcde") && line.contains("kruise-tui"),
        "{line}"
    );
    let out = k
        .ok(&[
            "get",
            "events.v1.events.k8s.io",
            "-o",
            "jsonpath={.items[*].series.count}",
        ])
        .await;
    assert_eq!(out, "2", "the second publish became a series");
    let out = k.ok(&["get", "events"]).await;
    assert!(out.starts_with("LAST SEEN"), "{out}");
    assert!(
        out.contains("cloneset/web") && out.contains("SuccessfulCreate"),
        "{out}"
    );
    c.store()
        .create(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.32.0"}}}))
        .unwrap();
    let out = k.ok(&["get", "nodes"]).await;
    let line = out
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>();
    assert_eq!(
        (line[0], line[1], line[2], line[4]),
        ("node-1", "Ready", "<none>", "v1.32.0"),
        "{out}"
    );
}
