//! The built-in kinds as a new user meets them through kubectl v1.32: the typed generators
//! (`create deployment|job|configmap|secret|service|cronjob|role|ingress`, `run`, `expose`) send
//! protobuf bodies, which the embedded server reads for every built-in kind and stores as the
//! same command's JSON would be stored (a protobuf body of a custom kind is refused with a 415
//! and a hint); `explain` reads the OpenAPI v3 schemas; a malformed Pod
//! is refused as the real server refuses it; every built-in resource lists and watches; CRD
//! printer columns (CRR's NODE) are evaluated like the real server's table convertor.

use crate::common;
use crate::kubectl;

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams, WatchEvent, WatchParams},
};
use kubectl::Kubectl;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_generators_send_protobuf_and_store_what_json_stores() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    // Each command runs as is (a protobuf body) in `default`, and its JSON twin (the same
    // command's `--dry-run=client -o json`, created from that file) in `twin`.
    k.ok(&["create", "namespace", "twin"]).await;
    let out = k
        .run(&["create", "deployment", "probe", "--image=nginx", "-v=8"])
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "kubectl sends protobuf: {}",
        out.stderr
    );
    let cases: [(&[&str], &str); 13] = [
        (
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx:1.25",
                "--replicas=0",
            ],
            "deployment.apps/web created",
        ),
        (
            &[
                "create",
                "job",
                "once",
                "--image=busybox",
                "--",
                "echo",
                "hi",
            ],
            "job.batch/once created",
        ),
        (
            &["create", "configmap", "cfg", "--from-literal=a=b"],
            "configmap/cfg created",
        ),
        (
            &["create", "secret", "generic", "pw", "--from-literal=x=y"],
            "secret/pw created",
        ),
        (
            &["create", "service", "clusterip", "svc", "--tcp=80:8080"],
            "service/svc created",
        ),
        (&["run", "solo", "--image=nginx:1.25"], "pod/solo created"),
        (
            &[
                "expose",
                "deployment",
                "web",
                "--port=80",
                "--target-port=8080",
                "--name=web-svc",
            ],
            "service/web-svc exposed",
        ),
        (
            &[
                "create",
                "cronjob",
                "tick",
                "--image=busybox",
                "--schedule=*/5 * * * *",
            ],
            "cronjob.batch/tick created",
        ),
        (
            &["create", "job", "manual", "--from=cronjob/tick"],
            "job.batch/manual created",
        ),
        (
            &["create", "role", "reader", "--verb=get", "--resource=pods"],
            "role.rbac.authorization.k8s.io/reader created",
        ),
        (
            &[
                "create",
                "rolebinding",
                "reader",
                "--role=reader",
                "--user=bob",
            ],
            "rolebinding.rbac.authorization.k8s.io/reader created",
        ),
        (
            &[
                "create",
                "pdb",
                "web",
                "--selector=app=web",
                "--min-available=1",
            ],
            "poddisruptionbudget.policy/web created",
        ),
        (
            &["create", "ingress", "www", "--rule=foo.com/bar=svc:8080"],
            "ingress.networking.k8s.io/www created",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(k.ok(args).await.trim(), want, "kubectl {args:?}");
        json_twin(&k, args).await;
    }
    // The stored objects are the JSON twins', but for what the server assigns.
    for what in [
        ["deployment", "web"],
        ["job", "once"],
        ["configmap", "cfg"],
        ["secret", "pw"],
        ["service", "svc"],
        ["pod", "solo"],
        ["service", "web-svc"],
        ["cronjob", "tick"],
        ["job", "manual"],
        ["role", "reader"],
        ["rolebinding", "reader"],
        ["pdb", "web"],
        ["ingress", "www"],
    ] {
        let proto = stored(&k, &what, "default").await;
        let json = stored(&k, &what, "twin").await;
        assert_eq!(proto, json, "{what:?}");
        assert!(proto["metadata"]["name"] == what[1], "{proto}");
    }
    // What the generators said is what the store keeps.
    for (what, path, want) in [
        (&["deployment", "web"][..], "{.spec.replicas}", "0"),
        (
            &["deployment", "web"],
            "{.spec.template.spec.containers[0].image}",
            "nginx:1.25",
        ),
        (
            &["deployment", "web"],
            "{.spec.selector.matchLabels.app}",
            "web",
        ),
        (
            &["job", "once"],
            "{.spec.template.spec.containers[0].command}",
            r#"["echo","hi"]"#,
        ),
        (
            &["job", "once"],
            "{.spec.template.spec.restartPolicy}",
            "Never",
        ),
        (&["configmap", "cfg"], "{.data.a}", "b"),
        (&["secret", "pw"], "{.data.x}", "eQ=="),
        (&["service", "svc"], "{.spec.ports[0].targetPort}", "8080"),
        (&["service", "svc"], "{.spec.type}", "ClusterIP"),
        (&["service", "svc"], "{.spec.ports[0].protocol}", "TCP"),
        (&["service", "web-svc"], "{.spec.selector.app}", "web"),
        (
            &["pod", "solo"],
            "{.spec.containers[0].image}",
            "nginx:1.25",
        ),
        (&["cronjob", "tick"], "{.spec.schedule}", "*/5 * * * *"),
        (&["role", "reader"], "{.rules[0].verbs[0]}", "get"),
        (&["rolebinding", "reader"], "{.subjects[0].name}", "bob"),
        (&["pdb", "web"], "{.spec.minAvailable}", "1"),
        // IngressRuleValue is an embedded Go struct: its `http` sits in the rule itself.
        (
            &["ingress", "www"],
            "{.spec.rules[0].http.paths[0].backend.service.port.number}",
            "8080",
        ),
    ] {
        k.assert_jsonpath(what, path, want).await;
    }
    // `kubectl get` columns, as the real server's table convertors print them.
    for (what, column, want) in [
        (&["configmap", "cfg"][..], "DATA", "1"),
        (&["secret", "pw"], "TYPE", "Opaque"),
        (&["job", "once"], "STATUS", "Running"),
        (&["job", "once"], "COMPLETIONS", "0/1"),
        (&["cronjob", "tick"], "SUSPEND", "False"),
        (&["rolebinding", "reader"], "ROLE", "Role/reader"),
        (&["pdb", "web"], "MIN AVAILABLE", "1"),
        (&["ingress", "www"], "HOSTS", "foo.com"),
    ] {
        let mut args = vec!["get"];
        args.extend_from_slice(what);
        let out = k.ok(&args).await;
        assert_eq!(cell_at(&out, column), want, "{what:?} {column}:\n{out}");
    }
    // Services get a cluster IP, which an apply that leaves it out keeps.
    let svc_ip = k.jsonpath(&["service", "svc"], "{.spec.clusterIP}").await;
    assert!(svc_ip.starts_with("10.96."), "{svc_ip}");
    assert_eq!(
        cell_at(&k.ok(&["get", "service", "svc"]).await, "CLUSTER-IP"),
        svc_ip
    );
    assert_ne!(
        k.jsonpath(&["service", "web-svc"], "{.spec.clusterIP}")
            .await,
        svc_ip
    );
    k.apply(
        &[],
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n  labels:\n    applied: \"yes\"\nspec:\n  \
         ports:\n  - port: 80\n    targetPort: 8080\n",
    )
    .await;
    k.assert_jsonpath(&["service", "svc"], "{.spec.clusterIP}", &svc_ip)
        .await;
    // kubectl v1.32 autoscales through autoscaling/v1; the object is stored as v2.
    let out = k
        .ok(&[
            "autoscale",
            "deployment",
            "web",
            "--max=3",
            "--cpu-percent=50",
        ])
        .await;
    assert_eq!(
        out.trim(),
        "horizontalpodautoscaler.autoscaling/web autoscaled"
    );
    k.assert_jsonpath(
        &["hpa", "web"],
        "{.spec.metrics[0].resource.target.averageUtilization}",
        "50",
    )
    .await;
    let v1 = k
        .ok(&[
            "get",
            "--raw",
            "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web",
        ])
        .await;
    let v1: serde_json::Value = serde_json::from_str(&v1).expect("json");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 50, "{v1}");
    assert!(v1["spec"].get("metrics").is_none(), "{v1}");
    // A Secret's stringData is merged into data and not kept.
    k.apply(
        &[],
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: plain\nstringData:\n  token: hi\n",
    )
    .await;
    k.assert_jsonpath(&["secret", "plain"], "{.data.token}", "aGk=")
        .await;
    k.assert_jsonpath(&["secret", "plain"], "{.stringData}", "")
        .await;
    // Kinds that were not served before: listed by kubectl's categories and names.
    let out = k
        .ok(&["get", "jobs,cronjobs,ingresses,pdb", "-o", "name"])
        .await;
    for name in [
        "job.batch/once",
        "cronjob.batch/tick",
        "ingress.networking.k8s.io/www",
        "poddisruptionbudget.policy/web",
    ] {
        assert!(out.lines().any(|l| l == name), "{name} missing:\n{out}");
    }
}

/// The JSON twin of a generator command: its `--dry-run=client -o json` output created in the
/// `twin` namespace.
async fn json_twin(k: &Kubectl, args: &[&str]) {
    // The flags go before `--`, after which come the container's command.
    let mut dry = args.to_vec();
    let at = dry.iter().position(|a| *a == "--").unwrap_or(dry.len());
    dry.splice(at..at, ["-n", "twin", "--dry-run=client", "-o", "json"]);
    let json = k.ok(&dry).await;
    k.ok_stdin(&["create", "-n", "twin", "-f", "-"], &json)
        .await;
}

/// An object as `kubectl get -o json` shows it, without what the server assigns per object
/// (uid, times, resource version, cluster IPs, the node, owners' uids, status).
async fn stored(k: &Kubectl, what: &[&str], ns: &str) -> serde_json::Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend(["-n", ns, "-o", "json"]);
    let mut v: serde_json::Value = serde_json::from_str(&k.ok(&args).await).expect("json");
    if let Some(m) = v["metadata"].as_object_mut() {
        for f in [
            "uid",
            "creationTimestamp",
            "resourceVersion",
            "namespace",
            "managedFields",
        ] {
            m.remove(f);
        }
        for o in m
            .get_mut("ownerReferences")
            .and_then(|o| o.as_array_mut())
            .into_iter()
            .flatten()
        {
            o["uid"] = json!("");
        }
    }
    if let Some(m) = v.as_object_mut() {
        m.remove("status");
    }
    if let Some(spec) = v["spec"].as_object_mut() {
        for f in ["clusterIP", "clusterIPs", "nodeName"] {
            spec.remove(f);
        }
    }
    // The service account token volume's name ends in five random characters.
    let text = regex::Regex::new("kube-api-access-[a-z0-9]{5}")
        .expect("a regex")
        .replace_all(&v.to_string(), "kube-api-access-xxxxx")
        .into_owned();
    serde_json::from_str(&text).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_and_malformed_objects_answer_like_the_real_server() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    let out = k.ok(&["explain", "pod.spec.containers"]).await;
    assert!(out.contains("FIELD: containers <[]Container>"), "{out}");
    assert!(
        out.contains("List of containers belonging to the pod."),
        "{out}"
    );
    assert!(out.contains("name\t<string> -required-"), "{out}");
    assert!(out.contains("image\t<string>"), "{out}");
    let out = k
        .ok(&["explain", "deployment.spec.strategy.rollingUpdate.maxSurge"])
        .await;
    assert!(out.contains("GROUP:      apps"), "{out}");
    assert!(out.contains("FIELD: maxSurge <IntOrString>"), "{out}");
    let out = k.ok(&["explain", "cronjobs.spec"]).await;
    assert!(out.contains("schedule\t<string> -required-"), "{out}");
    let out = k.run(&["explain", "pod.spec.nosuchfield"]).await;
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("field \"nosuchfield\" does not exist"),
        "{}",
        out.stderr
    );

    let pod =
        |spec: &str| format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n{spec}");
    let o = k
        .run_stdin(&["apply", "-f", "-"], &pod("  containers: \"oops\"\n"))
        .await;
    assert_ne!(o.code, 0);
    assert!(
        o.stderr.contains(
            "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container"
        ),
        "{}",
        o.stderr
    );
    let o = k
        .run_stdin(
            &["create", "-f", "-"],
            &pod("  containers:\n  - name: a\n    image: nginx\n    imagePullPolcy: Always\n"),
        )
        .await;
    assert_ne!(o.code, 0);
    assert!(
        o.stderr
            .contains("strict decoding error: unknown field \"spec.containers[0].imagePullPolcy\""),
        "{}",
        o.stderr
    );
    let o = k
        .run_stdin(
            &["create", "-f", "-"],
            &pod("  containers:\n  - image: nginx\n"),
        )
        .await;
    assert_ne!(o.code, 0);
    assert!(
        o.stderr
            .contains("The Pod \"bad\" is invalid: spec.containers[0].name: Required value"),
        "{}",
        o.stderr
    );
    let o = k
        .run_stdin(
            &["create", "-f", "-"],
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: two\n",
        )
        .await;
    assert!(
        o.stderr.contains(
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        ),
        "{}",
        o.stderr
    );
    // Nothing was stored by the refused writes.
    let o = k.ok(&["get", "pods,deployments", "-o", "name"]).await;
    assert!(o.trim().is_empty(), "{o}");

    // A failed JSON-patch test: 422 with the real server's bare message (no causes).
    k.ok(&["create", "configmap", "cfg", "--from-literal=a=b"])
        .await;
    let o = k
        .run(&[
            "patch",
            "configmap",
            "cfg",
            "--type",
            "json",
            "-p",
            r#"[{"op":"test","path":"/data/a","value":"zz"}]"#,
        ])
        .await;
    assert_ne!(o.code, 0);
    assert!(
        o.stderr.contains(
            "The request is invalid: the server rejected our request due to an error in our request"
        ),
        "{}",
        o.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_builtin_resource_lists_and_a_job_watches_with_its_status_subresource() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    let names = k.ok(&["api-resources", "--verbs=list", "-o", "name"]).await;
    let names: Vec<&str> = names.lines().collect();
    for want in [
        "jobs.batch",
        "cronjobs.batch",
        "horizontalpodautoscalers.autoscaling",
        "poddisruptionbudgets.policy",
        "ingresses.networking.k8s.io",
        "networkpolicies.networking.k8s.io",
        "roles.rbac.authorization.k8s.io",
        "clusterrolebindings.rbac.authorization.k8s.io",
        "leases.coordination.k8s.io",
        "endpointslices.discovery.k8s.io",
        "priorityclasses.scheduling.k8s.io",
        "runtimeclasses.node.k8s.io",
        "storageclasses.storage.k8s.io",
        "certificatesigningrequests.certificates.k8s.io",
        "persistentvolumes",
        "resourcequotas",
    ] {
        assert!(names.contains(&want), "{want} not served: {names:?}");
    }
    let all = names.join(",");
    k.ok(&["get", &all, "-A", "-o", "name"]).await;

    let client = c.client().await.expect("client");
    let jobs: Api<Job> = Api::default_namespaced(client);
    let rv = c.store().current_rv().to_string();
    let mut events = jobs
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    let job: Job = serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "w"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}}
    }))
    .expect("job");
    jobs.create(&PostParams::default(), &job)
        .await
        .expect("create");
    let first = tokio::time::timeout(Duration::from_secs(10), events.try_next())
        .await
        .expect("an event")
        .expect("no error");
    assert!(
        matches!(&first, Some(WatchEvent::Added(j)) if j.metadata.name.as_deref() == Some("w")),
        "{first:?}"
    );
    let status = json!({"status": {"succeeded": 1}});
    jobs.patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    // The main endpoint keeps the live status, as the real server does.
    let spec_and_status = json!({"metadata": {"labels": {"a": "b"}}, "status": {"succeeded": 7}});
    let after = jobs
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(&spec_and_status),
        )
        .await
        .expect("patch");
    assert_eq!(after.status.and_then(|s| s.succeeded), Some(1));
}

/// The first row's cell under `column` in kubectl's table output.
fn cell_at(out: &str, column: &str) -> String {
    let mut lines = out.lines();
    let header = lines.next().unwrap_or("");
    let row = lines.next().unwrap_or("");
    let start = header.find(column).unwrap_or(usize::MAX);
    row.get(start..)
        .unwrap_or("")
        .split_whitespace()
        .next()
        .filter(|_| !row[start..].starts_with(' '))
        .unwrap_or("")
        .to_string()
}

mod tables;
