use super::*;

const PAGE: &str = r#"{
  "kind": "PodMetricsList",
  "apiVersion": "metrics.k8s.io/v1beta1",
  "metadata": {"continue": "tok-1"},
  "items": [
    {
      "metadata": {"name": "web-abc", "namespace": "demo", "labels": {"app": "web"}},
      "timestamp": "2026-11-27T23:00:00Z",
      "window": "20.004s",
      "containers": [
        {"name": "app", "usage": {"cpu": "123456789n", "memory": "51200Ki"}},
        {"name": "sidecar", "usage": {"cpu": "2m", "memory": "1Mi"}}
      ]
    },
    {
      "metadata": {"name": "db-0", "namespace": "demo"},
      "timestamp": "2026-11-27T23:00:00Z",
      "window": "15s",
      "containers": [{"name": "db", "usage": {"cpu": "1", "memory": "1e3"}}]
    },
    {"metadata": {"namespace": "demo"}, "window": "15s", "containers": []}
  ]
}"#;

#[test]
fn a_page_becomes_millicores_and_bytes_per_container() {
    let page = parse_page(PAGE).unwrap();
    assert_eq!(page.continue_token.as_deref(), Some("tok-1"));
    assert_eq!(page.window_seconds, Some(20.004));
    assert_eq!(page.pods.len(), 2, "the nameless item is skipped");
    let web = &page.pods[0];
    assert_eq!((&*web.namespace, &*web.name), ("demo", "web-abc"));
    assert_eq!(web.containers[0].cpu_millis, 124);
    assert_eq!(web.containers[0].memory_bytes, 51200 * 1024);
    assert_eq!(web.cpu_millis(), 126);
    assert_eq!(web.memory_bytes(), 51200 * 1024 + 1024 * 1024);
    assert_eq!(page.pods[1].cpu_millis(), 1000);
    assert_eq!(page.pods[1].memory_bytes(), 1000);
}

#[test]
fn a_last_page_has_no_continue_and_bad_quantities_count_as_zero() {
    let page = parse_page(
        r#"{"metadata": {}, "items": [{"metadata": {"name": "p", "namespace": "n"},
            "containers": [{"name": "c", "usage": {"cpu": "lots"}}]}]}"#,
    )
    .unwrap();
    assert_eq!(page.continue_token, None);
    assert_eq!(page.window_seconds, None);
    assert_eq!(page.pods[0].cpu_millis(), 0);
    assert_eq!(page.pods[0].memory_bytes(), 0);
    assert!(parse_page("{\"items\": null}").unwrap().pods.is_empty());
    assert!(parse_page("not json").is_err());
}

#[test]
fn go_durations() {
    for (input, want) in [
        ("15s", Some(15.0)),
        ("20.004s", Some(20.004)),
        ("1m0s", Some(60.0)),
        ("1m30s", Some(90.0)),
        ("500ms", Some(0.5)),
        ("1h", Some(3600.0)),
        ("0", Some(0.0)),
        ("15", None),
        ("s", None),
        ("", Some(0.0)),
    ] {
        assert_eq!(go_duration_seconds(input), want, "{input}");
    }
}
