//! Where an end-to-end test runs: the embedded cluster (the default, and CI), or an existing
//! cluster whose kubeconfig `KRUISE_TUI_TEST_KUBECONFIG` names (an admin context on a cluster
//! without Kruise; like controller-runtime's `USE_EXISTING_CLUSTER`).
//!
//! On an existing cluster the fixture installs the Kruise CRDs (server-side apply) and, once per
//! test process, runs the simulated nodes and the Kruise controllers in this process against it
//! (on their own runtime, shared by the process's tests); every test works in a namespace of its
//! own (`e2e-<random>`), deleted at the end. On the embedded cluster each test gets an empty
//! demo cluster (simulated nodes, controllers, Kruise webhooks) and a namespace of its own.
//!
//! A test that needs what only the embedded cluster gives (its store, simulated logs and exec,
//! the embedded admission webhooks) calls [`skip_on_existing_cluster`] first.
#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    sync::OnceLock,
    time::Duration,
};

use k8s_openapi::{
    api::core::v1::Namespace,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kruise_tui::cluster::{
    demo::{DemoCluster, DemoOptions, cluster::demo_gates},
    server::EmbeddedCluster,
    sim::SimOptions,
};
use kube::{
    Api, Client,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The variable naming an existing cluster's kubeconfig.
pub const EXISTING: &str = "KRUISE_TUI_TEST_KUBECONFIG";

/// The existing cluster's kubeconfig, when the tests are to run there.
pub fn existing_kubeconfig() -> Option<PathBuf> {
    std::env::var_os(EXISTING)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// On an existing cluster: prints why this test does not run there and returns true (the test
/// then returns early). On the embedded cluster: false.
pub fn skip_on_existing_cluster(reason: &str) -> bool {
    if existing_kubeconfig().is_some() {
        eprintln!("skipped on {EXISTING}: {reason}");
        return true;
    }
    false
}

fn random(n: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf).expect("random bytes");
    buf.iter()
        .map(|b| CHARS[*b as usize % CHARS.len()] as char)
        .collect()
}

/// A cluster for one test, with a namespace of its own.
pub struct Testbed {
    pub client: Client,
    ns: String,
    kubeconfig: PathBuf,
    embedded: Option<(DemoCluster, tempfile::TempDir)>,
}

impl Testbed {
    /// The embedded cluster (empty, with simulated nodes, controllers and Kruise webhooks), or
    /// the existing one with this process's simulated nodes and controllers; a fresh namespace.
    pub async fn start() -> Testbed {
        let ns = format!("e2e-{}", random(8));
        let (client, kubeconfig, embedded) = match existing_kubeconfig() {
            Some(path) => {
                shared_on_existing(&path);
                (client_for(&path, &ns).await, path, None)
            }
            None => {
                let dir = tempfile::tempdir().expect("tempdir");
                let kubeconfig = dir.path().join("kubeconfig");
                let demo = DemoCluster::start(DemoOptions {
                    listen: "127.0.0.1:0".parse().expect("addr"),
                    kubeconfig_out: kubeconfig.clone(),
                    pods: None,
                    seed: false,
                    nodes: true,
                    controllers: true,
                    kruise_webhooks: true,
                    remove_kubeconfig: true,
                })
                .await
                .expect("the embedded cluster starts");
                let c = demo.cluster();
                let mut config = kube::Config::new(c.url().parse().expect("a URL"));
                config.default_namespace = ns.clone();
                config.auth_info.token = Some(c.token().to_string().into());
                let client = Client::try_from(config).expect("client");
                (client, kubeconfig, Some((demo, dir)))
            }
        };
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let object: Namespace = serde_json::from_value(body).expect("a Namespace");
        namespaces
            .create(&PostParams::default(), &object)
            .await
            .expect("the test namespace is created");
        Testbed {
            client,
            ns,
            kubeconfig,
            embedded,
        }
    }

    /// The test's namespace (also `client`'s default namespace: `Api::default_namespaced`).
    pub fn ns(&self) -> &str {
        &self.ns
    }

    /// A kubeconfig that reaches the cluster (its context's namespace is not the test's: pass
    /// `-n` or use [`Testbed::kubectl`]).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The embedded cluster, when the test runs on it.
    pub fn embedded(&self) -> Option<&EmbeddedCluster> {
        self.embedded.as_ref().map(|(d, _)| d.cluster())
    }

    /// Namespaced typed API in the test's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// Deletes the namespace (existing cluster) or stops the embedded cluster.
    pub async fn shutdown(self) {
        match self.embedded {
            Some((demo, _dir)) => demo.shutdown().await,
            None => {
                let namespaces: Api<Namespace> = Api::all(self.client.clone());
                let _ = namespaces.delete(&self.ns, &DeleteParams::default()).await;
            }
        }
    }
}

/// A client of the kubeconfig's current context whose default namespace is `ns`.
async fn client_for(path: &Path, ns: &str) -> Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(path).expect("the kubeconfig reads");
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("the kubeconfig has a usable context");
    config.default_namespace = ns.to_string();
    Client::try_from(config).expect("a client")
}

/// Once per process on an existing cluster: the Kruise CRDs applied, then the simulated nodes and
/// the controllers running on a runtime of their own until the process ends.
fn shared_on_existing(path: &Path) {
    static STARTED: OnceLock<Result<(), String>> = OnceLock::new();
    let started = STARTED.get_or_init(|| {
        let path = path.to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), String>>();
        std::thread::spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(format!("no runtime: {e}")));
                    return;
                }
            };
            runtime.block_on(async move {
                let client = client_for(&path, "default").await;
                if let Err(e) = install_crds(&client).await {
                    let _ = tx.send(Err(e));
                    return;
                }
                let stop = CancellationToken::new();
                let sim = tokio::spawn(kruise_tui::cluster::sim::run(
                    client.clone(),
                    SimOptions::default(),
                    stop.clone(),
                ));
                let options = kruise_tui::controllers::Options {
                    gates: demo_gates(),
                    ..kruise_tui::controllers::Options::default()
                };
                let controllers =
                    tokio::spawn(kruise_tui::controllers::run(client, options, stop.clone()));
                let _ = tx.send(Ok(()));
                let _ = tokio::join!(sim, controllers);
            });
        });
        rx.recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|e| Err(format!("the shared fixture did not start: {e}")))
    });
    if let Err(e) = started {
        panic!("{EXISTING}: {e}");
    }
}

/// Server-side applies every upstream Kruise CRD and waits until each is established.
async fn install_crds(client: &Client) -> Result<(), String> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crds = kruise_tui::cluster::server::builtin::kruise_crds().map_err(|e| e.to_string())?;
    let params = PatchParams::apply("kruise-tui-tests").force();
    for crd in &crds {
        let name = crd["metadata"]["name"].as_str().unwrap_or("").to_string();
        api.patch(&name, &params, &Patch::Apply(crd))
            .await
            .map_err(|e| format!("applying CRD {name}: {e}"))?;
    }
    for crd in &crds {
        let name = crd["metadata"]["name"].as_str().unwrap_or("");
        let mut established = false;
        for _ in 0..100 {
            let got = api.get(name).await.map_err(|e| e.to_string())?;
            established = got
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if established {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if !established {
            return Err(format!("CRD {name} is not established"));
        }
    }
    Ok(())
}
