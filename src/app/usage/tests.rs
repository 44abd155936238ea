use std::sync::Arc;

use super::*;
use crate::{
    api::{
        SlimPod,
        pod::{CpuMemory, SlimContainer, SlimResources},
    },
    app::rows::PodRow,
};
use kruise_client::metrics::ContainerUsage;

fn row(ns: &str, name: &str, owner: Option<&str>, cpu: Option<(&str, &str)>) -> Arc<PodRow> {
    let mut pod = SlimPod::default();
    pod.metadata.namespace = Some(ns.into());
    pod.metadata.name = Some(name.into());
    pod.spec.containers = vec![SlimContainer {
        name: "app".into(),
        image: "img".into(),
        resources: cpu.map(|(req, lim)| {
            Box::new(SlimResources {
                requests: CpuMemory {
                    cpu: Some(req.into()),
                    memory: Some("64Mi".into()),
                },
                limits: CpuMemory {
                    cpu: Some(lim.into()),
                    memory: None,
                },
            })
        }),
    }]
    .into();
    Arc::new(PodRow {
        pod: Arc::new(pod),
        namespace: ns.into(),
        name: name.into(),
        ready: "1/1".into(),
        all_ready: true,
        status: "Running".into(),
        restarts: 0,
        node: String::new(),
        revision: String::new(),
        owner_uid: owner.map(str::to_owned),
        created: None,
        search: String::new(),
    })
}

fn used(ns: &str, name: &str, cpu: i64, mem: i64) -> PodUsage {
    PodUsage {
        namespace: ns.into(),
        name: name.into(),
        containers: vec![ContainerUsage {
            name: "app".into(),
            cpu_millis: cpu,
            memory_bytes: mem,
        }]
        .into(),
    }
}

#[test]
fn a_workload_sums_its_pods_with_their_requests_and_limits() {
    // Sorted by namespace and name, as the console keeps them.
    let rows = vec![
        row("demo", "lone", None, None),
        row("demo", "web-a", Some("uid-web"), Some(("100m", "500m"))),
        row("demo", "web-b", Some("uid-web"), Some(("100m", "500m"))),
    ];
    let (pods, workloads) = fold(
        &rows,
        vec![
            used("demo", "web-b", 250, 100 << 20),
            used("demo", "web-a", 50, 20 << 20),
            used("demo", "lone", 5, 1 << 20),
            used("demo", "gone", 7, 1 << 20),
        ],
    );
    let web = workloads["uid-web"];
    assert_eq!((web.cpu, web.memory), (300, 120 << 20));
    assert_eq!(web.bounds.cpu_request, Some(200));
    assert_eq!(web.bounds.cpu_limit, Some(1000));
    assert_eq!(web.bounds.memory_request, Some(128 << 20));
    assert_eq!(web.bounds.memory_limit, None);
    assert_eq!(web.cpu_percent(), Some(30));
    assert_eq!(
        workloads.len(),
        1,
        "a pod without a controller sums into nothing"
    );
    // Sorted for the lookup; a pod the console does not know keeps its figures only.
    let names: Vec<&str> = pods.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(names, ["gone", "lone", "web-a", "web-b"]);
    assert_eq!(pods[0].2.bounds, figures::Bounds::default());
}

#[test]
fn the_interval_follows_the_window_within_bounds() {
    assert_eq!(interval(Some(15.0)), 15);
    assert_eq!(interval(Some(20.004)), 20);
    assert_eq!(interval(Some(1.0)), MIN_INTERVAL);
    assert_eq!(interval(Some(600.0)), MAX_INTERVAL);
    assert_eq!(interval(None), DEFAULT_INTERVAL);
    assert_eq!(interval(Some(f64::NAN)), DEFAULT_INTERVAL);
}

#[test]
fn figures_read_as_kubectl_top_prints_them() {
    assert_eq!(format_cpu(250), "250m");
    assert_eq!(format_memory(512 * 1024), "512Ki");
    assert_eq!(format_memory((120 << 20) + 1000), "120Mi");
    assert_eq!(format_memory(200 << 30), "200Gi");
    let mut f = Figures::used(95, 0);
    f.set_bounds(figures::Bounds {
        cpu_request: Some(50),
        cpu_limit: Some(100),
        ..Default::default()
    });
    assert_eq!(f.cpu_percent(), Some(95), "of the limit when set");
    assert_eq!(f.memory_percent(), None);
}
