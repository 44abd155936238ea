//! `DemoCluster` as `kruise-tui --demo` uses it: a private kubeconfig (0600) that kube-rs can
//! load, the seeded scenario, simulated nodes running new pods, and cleanup on shutdown.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kruise_tui::{
    api::{AdvancedCronJob, CloneSet},
    cluster::demo::{DemoCluster, DemoOptions, NAMESPACE},
};
use kube::{
    Api, Client, Config,
    api::{ObjectMeta, PostParams},
    config::{KubeConfigOptions, Kubeconfig},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_demo_cluster_runs_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("demo-test.kubeconfig");
    let demo = DemoCluster::start(DemoOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        kubeconfig_out: path.clone(),
        pods: None,
        seed: true,
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
    .unwrap();
    assert_eq!(demo.kubeconfig_path(), path);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the kubeconfig holds the token");
    }

    let kubeconfig = Kubeconfig::read_from(&path).unwrap();
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    assert_eq!(config.default_namespace, NAMESPACE);
    let client = Client::try_from(config).unwrap();
    let clonesets: Api<CloneSet> = Api::default_namespaced(client.clone());
    let (subsets, users): (Vec<CloneSet>, Vec<CloneSet>) = clonesets
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .partition(|c| {
            c.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind == "UnitedDeployment" && o.name == "shop")
        });
    let mut names: Vec<String> = users.into_iter().filter_map(|c| c.metadata.name).collect();
    names.sort();
    assert_eq!(names, ["api", "cart", "checkout", "web"]);
    // The UnitedDeployment's subset CloneSets, named and labelled as upstream's controller does.
    let mut subsets: Vec<(String, String)> = subsets
        .into_iter()
        .map(|c| {
            let label =
                c.metadata.labels.clone().unwrap_or_default()["apps.kruise.io/subset-name"].clone();
            (c.metadata.name.unwrap_or_default(), label)
        })
        .collect();
    subsets.sort();
    assert_eq!(subsets.len(), 2, "{subsets:?}");
    assert!(subsets[0].0.starts_with("shop-zone-a-") && subsets[0].1 == "zone-a");
    assert!(subsets[1].0.starts_with("shop-zone-b-") && subsets[1].1 == "zone-b");

    // The scheduled jobs, with the status upstream's controller writes for a new job.
    let acjs: Api<AdvancedCronJob> = Api::default_namespaced(client.clone());
    let mut jobs: Vec<(String, bool, Option<String>)> = acjs
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|j| {
            (
                j.metadata.name.unwrap_or_default(),
                j.spec.paused,
                j.status.and_then(|s| s.type_),
            )
        })
        .collect();
    jobs.sort();
    assert_eq!(
        jobs,
        [
            ("image-warmup".into(), true, Some("BroadcastJob".into())),
            ("nightly-report".into(), false, Some("Job".into())),
        ]
    );

    let pods: Api<Pod> = Api::default_namespaced(client);
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("fresh".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some("nginx:1.27".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    };
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let mut ready = false;
    for _ in 0..300 {
        let p = pods.get("fresh").await.unwrap();
        ready = p
            .status
            .and_then(|s| s.conditions)
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        if ready {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "the simulated nodes run new pods");

    demo.shutdown().await;
    assert!(
        !path.exists(),
        "a private kubeconfig is removed on shutdown"
    );
}
