//! The raw metrics API on seeded pods and a node: what metrics-server answers, shape by shape.

use http::Request;
use http_body_util::BodyExt as _;
use kube::Client;
use serde_json::Value;

use super::{seeded, skip_on_existing};
use crate::kubectl::Kubectl;

/// Status, body and Content-Type of `method path` with `accept`.
pub async fn send(
    client: &Client,
    method: &str,
    path: &str,
    accept: &str,
) -> (u16, String, String) {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("Accept", accept)
        .body(kube::client::Body::from(Vec::new()))
        .unwrap();
    let resp = client.send(req).await.expect("an answer");
    let code = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (code, String::from_utf8_lossy(&body).into_owned(), ct)
}

pub async fn get(client: &Client, path: &str) -> (u16, String, String) {
    send(client, "GET", path, "application/json").await
}

async fn json(client: &Client, path: &str) -> Value {
    let (code, body, _) = get(client, path).await;
    assert_eq!(code, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// The groups aggregated discovery lists (what kubectl reads first).
pub async fn api_resource_names(client: &Client) -> Vec<String> {
    let (code, body, _) = send(
        client,
        "GET",
        "/apis",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let doc: Value = serde_json::from_str(&body).unwrap();
    doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

fn names(list: &Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect()
}

const PODS: &str = "/apis/metrics.k8s.io/v1beta1/namespaces/m1/pods";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_metrics_are_listed_and_read_as_metrics_server_answers() {
    if skip_on_existing("seeds the embedded server's store") {
        return;
    }
    let c = seeded(true).await;
    let client = c.client().await.unwrap();
    let list = json(&client, PODS).await;
    assert_eq!(list["kind"], "PodMetricsList");
    assert_eq!(list["apiVersion"], "metrics.k8s.io/v1beta1");
    assert_eq!(list["metadata"], serde_json::json!({}));
    // Sorted by name; the pending pod has no figures and is left out.
    assert_eq!(names(&list), ["db-0", "web-0", "web-1"]);
    let item = &list["items"][1];
    assert!(
        item.get("kind").is_none(),
        "list items carry no kind: {item}"
    );
    assert_eq!(item["metadata"]["namespace"], "m1");
    assert_eq!(item["metadata"]["labels"]["app"], "web");
    assert!(
        item["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    let ts: jiff::Timestamp = item["timestamp"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        ts.as_second() % 15,
        0,
        "scrapes fall on the 15 s resolution"
    );
    let window = item["window"].as_str().unwrap();
    assert!(
        window.starts_with("15") && window.ends_with('s'),
        "{window}"
    );
    let containers: Vec<&str> = item["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(containers, ["main", "side"]);
    let usage = &item["containers"][0]["usage"];
    let cpu = usage["cpu"].as_str().unwrap();
    let mem = usage["memory"].as_str().unwrap();
    let cpu_n = kruise_tui::kruise::sidecarset::quantity::nanos(cpu).unwrap();
    let mem_n = kruise_tui::kruise::sidecarset::quantity::nanos(mem).unwrap() / 1_000_000_000;
    assert!(
        cpu_n > 0 && cpu_n <= 200_000_000,
        "within the 200m limit: {cpu}"
    );
    assert!(
        mem_n > 0 && mem_n <= 128 * 1024 * 1024,
        "within the 128Mi limit: {mem}"
    );
    assert!(mem.ends_with("Ki") || mem.ends_with("Mi"), "{mem}");

    // One pod: the same figures, with its kind.
    let one = json(&client, &format!("{PODS}/web-0")).await;
    assert_eq!(one["kind"], "PodMetrics");
    assert_eq!(one["apiVersion"], "metrics.k8s.io/v1beta1");
    assert_eq!(one["containers"], item["containers"]);

    // Every namespace: the m1 pods among them.
    let all = json(&client, "/apis/metrics.k8s.io/v1beta1/pods").await;
    assert!(names(&all).contains(&"db-0"));

    // Selectors.
    let web = json(&client, &format!("{PODS}?labelSelector=app%3Dweb")).await;
    assert_eq!(names(&web), ["web-0", "web-1"]);
    let named = json(
        &client,
        &format!("{PODS}?fieldSelector=metadata.name%3Dweb-1"),
    )
    .await;
    assert_eq!(names(&named), ["web-1"]);
    let (code, body, _) = get(&client, &format!("{PODS}?fieldSelector=spec.nodeName%3Dx")).await;
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains(r#"\"spec.nodeName\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""#),
        "{body}"
    );
    let (code, body, _) = get(&client, &format!("{PODS}?labelSelector=app%3D%3D%3D")).await;
    assert_eq!(code, 400, "{body}");

    // limit and continue are ignored, as metrics-server ignores them: the whole list, no token.
    let limited = json(&client, &format!("{PODS}?limit=1")).await;
    assert_eq!(names(&limited), ["db-0", "web-0", "web-1"]);
    assert!(limited["metadata"].get("continue").is_none(), "{limited}");

    // A Table for kubectl get.
    let (code, body, _) = send(
        &client,
        "GET",
        PODS,
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let table: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(table["kind"], "Table");
    let cols: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["Name", "cpu", "memory", "Window"]);
    assert_eq!(table["rows"][0]["cells"][0], "db-0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_pods_and_nodes_watches_and_writes_are_refused_as_metrics_server_refuses_them() {
    if skip_on_existing("seeds the embedded server's store") {
        return;
    }
    let c = seeded(true).await;
    let client = c.client().await.unwrap();
    let status = |body: &str| serde_json::from_str::<Value>(body).expect("a Status");
    // No such pod; a pod that is not running (metrics-server's informer holds running pods only).
    for name in ["nosuch", "idle-0"] {
        let (code, body, _) = get(&client, &format!("{PODS}/{name}")).await;
        assert_eq!(code, 404, "{body}");
        let s = status(&body);
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["message"], format!("pods \"{name}\" not found"));
        assert_eq!(
            s["details"],
            serde_json::json!({"name": name, "kind": "pods"})
        );
    }
    let (code, body, _) = get(&client, "/apis/metrics.k8s.io/v1beta1/nodes/nosuch").await;
    assert_eq!(code, 404, "{body}");
    assert_eq!(status(&body)["message"], "node \"nosuch\" not found");

    // No watch: refused on the list, and no /watch/ route at all.
    let (code, body, _) = get(&client, &format!("{PODS}?watch=true")).await;
    assert_eq!(code, 405, "{body}");
    let s = status(&body);
    assert_eq!(s["reason"], "MethodNotAllowed");
    assert_eq!(
        s["message"],
        "watch is not supported on resources of kind \"pods.metrics.k8s.io\""
    );
    let (code, body, ct) = get(
        &client,
        "/apis/metrics.k8s.io/v1beta1/watch/namespaces/m1/pods",
    )
    .await;
    assert_eq!((code, body.as_str()), (404, "404 page not found\n"));
    assert!(ct.starts_with("text/plain"), "{ct}");

    // Read-only.
    for method in ["POST", "PUT", "PATCH", "DELETE"] {
        let path = if method == "POST" {
            PODS.to_owned()
        } else {
            format!("{PODS}/web-0")
        };
        let (code, body, _) = send(&client, method, &path, "application/json").await;
        assert_eq!(code, 405, "{method}: {body}");
        assert_eq!(status(&body)["reason"], "MethodNotAllowed", "{method}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_metrics_sum_their_pods_and_discovery_lists_the_group() {
    if skip_on_existing("seeds the embedded server's store") {
        return;
    }
    let c = seeded(true).await;
    let client = c.client().await.unwrap();
    let nodes = json(&client, "/apis/metrics.k8s.io/v1beta1/nodes").await;
    assert_eq!(nodes["kind"], "NodeMetricsList");
    assert_eq!(names(&nodes), ["sim-node-0"]);
    let node = json(&client, "/apis/metrics.k8s.io/v1beta1/nodes/sim-node-0").await;
    assert_eq!(node["kind"], "NodeMetrics");
    assert_eq!(
        node["metadata"]["labels"]["kubernetes.io/hostname"],
        "sim-node-0"
    );
    let nanos =
        |q: &Value| kruise_tui::kruise::sidecarset::quantity::nanos(q.as_str().unwrap()).unwrap();
    let pods = json(&client, PODS).await;
    let pod_cpu: i128 = pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["containers"].as_array().unwrap().iter())
        .map(|c| nanos(&c["usage"]["cpu"]))
        .sum();
    // The node's pods plus its system's overhead.
    assert!(nanos(&node["usage"]["cpu"]) > pod_cpu, "{node}");
    let label = json(
        &client,
        "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=kubernetes.io%2Fhostname%3Dother",
    )
    .await;
    assert!(names(&label).is_empty());

    // Discovery: /apis, the group, its resources, and aggregated discovery.
    let apis = json(&client, "/apis").await;
    let group = apis["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "metrics.k8s.io")
        .expect("the group in /apis");
    assert_eq!(
        group["preferredVersion"]["groupVersion"],
        "metrics.k8s.io/v1beta1"
    );
    let g = json(&client, "/apis/metrics.k8s.io").await;
    assert_eq!(g["kind"], "APIGroup");
    let list = json(&client, "/apis/metrics.k8s.io/v1beta1").await;
    let resources: Vec<(&str, bool, &str)> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["verbs"], serde_json::json!(["get", "list"]));
            (
                r["name"].as_str().unwrap(),
                r["namespaced"].as_bool().unwrap(),
                r["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        resources,
        [
            ("nodes", false, "NodeMetrics"),
            ("pods", true, "PodMetrics")
        ]
    );
    assert!(
        api_resource_names(&client)
            .await
            .iter()
            .any(|g| g == "metrics.k8s.io")
    );
    // And what installing metrics-server stores.
    let k = Kubectl::new(&c);
    k.ok(&["get", "apiservice", "v1beta1.metrics.k8s.io"]).await;
}

/// RBAC as for any resource: view (aggregating metrics-server's reader role) may read pod
/// metrics; a ServiceAccount with no binding gets 403.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_metrics_takes_the_rights_view_aggregates() {
    if skip_on_existing("seeds the embedded server's store") {
        return;
    }
    let c = seeded(true).await;
    let k = Kubectl::new(&c);
    k.ok(&["create", "serviceaccount", "reader", "-n", "m1"])
        .await;
    k.ok(&["create", "serviceaccount", "nobody", "-n", "m1"])
        .await;
    k.ok(&[
        "create",
        "rolebinding",
        "reader-view",
        "-n",
        "m1",
        "--clusterrole=view",
        "--serviceaccount=m1:reader",
    ])
    .await;
    let token = |sa: &'static str| {
        let k = &k;
        async move {
            k.ok(&["create", "token", sa, "-n", "m1"])
                .await
                .trim()
                .to_owned()
        }
    };
    let reader = token("reader").await;
    let nobody = token("nobody").await;
    let mut ok = false;
    // The aggregation controller updates view in the background.
    for _ in 0..50 {
        let out = k
            .run(&[
                "--token",
                &reader,
                "top",
                "pods",
                "-n",
                "m1",
                "--no-headers",
            ])
            .await;
        if out.code == 0 {
            assert_eq!(out.stdout.lines().count(), 3, "{}", out.stdout);
            ok = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(ok, "view does not read pod metrics");
    let out = k.run(&["--token", &nobody, "get", "--raw", PODS]).await;
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("Forbidden") && out.stderr.contains("metrics.k8s.io"),
        "{}",
        out.stderr
    );
}
