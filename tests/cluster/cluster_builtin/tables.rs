//! CRD printer columns and unreadable protobuf bodies.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_printer_columns_follow_the_real_table_convertor() {
    let c = common::start().await;
    let k = Kubectl::new(&c);
    k.apply(
        &[],
        "apiVersion: apps.kruise.io/v1alpha1\nkind: ContainerRecreateRequest\nmetadata:\n  name: web-0-restart\n  \
         labels:\n    crr.apps.kruise.io/node-name: node-7\nspec:\n  podName: web-0\n  containers:\n  - name: main\n",
    )
    .await;
    let out = k.ok(&["get", "crr"]).await;
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "PHASE", "POD", "NODE", "AGE"], "{out}");
    assert_eq!(cell_at(&out, "POD"), "web-0", "{out}");
    assert_eq!(cell_at(&out, "NODE"), "node-7", "{out}");
    // No status yet: an empty cell, as kubectl prints the real server's null.
    assert_eq!(cell_at(&out, "PHASE"), "", "{out}");

    k.apply(
        &[],
        "apiVersion: apps.kruise.io/v1alpha1\nkind: WorkloadSpread\nmetadata:\n  name: ws\nspec:\n  \
         targetRef:\n    apiVersion: apps.kruise.io/v1alpha1\n    kind: CloneSet\n    name: web\n  \
         scheduleStrategy:\n    type: Adaptive\n  subsets:\n  - name: a\n",
    )
    .await;
    let out = k.ok(&["get", "workloadspread"]).await;
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "WORKLOADNAME", "WORKLOADKIND", "ADAPTIVE", "AGE"],
        "{out}"
    );
    assert_eq!(cell_at(&out, "WORKLOADNAME"), "web", "{out}");
    assert_eq!(cell_at(&out, "WORKLOADKIND"), "CloneSet", "{out}");
    // `.spec.scheduleStrategy.type[?(@ == "Adaptive")]` filters a string, which selects
    // nothing on a real server either: the boolean column stays empty.
    assert_eq!(cell_at(&out, "ADAPTIVE"), "", "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_protobuf_body_is_415_with_a_hint() {
    let c = common::start().await;
    let client = c.client().await.expect("client");
    let mut body = b"k8s\0".to_vec();
    // runtime.Unknown{typeMeta{apiVersion: example.com/v1, kind: Widget}}
    let type_meta = [&[0x0a, 14][..], b"example.com/v1", &[0x12, 6], b"Widget"].concat();
    body.extend([&[0x0a, type_meta.len() as u8][..], &type_meta].concat());
    let req = http::Request::post("/api/v1/namespaces/default/configmaps")
        .header("content-type", "application/vnd.kubernetes.protobuf")
        .body(body)
        .expect("request");
    let err = client.request_text(req).await.expect_err("refused");
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err:?}")
    };
    assert_eq!(status.code, 415);
    assert!(
        status.message.contains("send it as JSON or YAML"),
        "{}",
        status.message
    );
    // A built-in kind whose bytes are not its message is a 400 that says so.
    let mut body = b"k8s\0".to_vec();
    let type_meta = [&[0x0a, 7][..], b"apps/v1", &[0x12, 10], b"Deployment"].concat();
    body.extend(
        [
            &[0x0a, type_meta.len() as u8][..],
            &type_meta,
            &[0x12, 2, 0x0a, 9],
        ]
        .concat(),
    );
    let req = http::Request::post("/apis/apps/v1/namespaces/default/deployments")
        .header("content-type", "application/vnd.kubernetes.protobuf")
        .body(body)
        .expect("request");
    let err = client.request_text(req).await.expect_err("refused");
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err:?}")
    };
    assert_eq!(status.code, 400);
    assert!(
        status
            .message
            .starts_with("the protobuf body could not be decoded: Deployment apps/v1"),
        "{}",
        status.message
    );
}
