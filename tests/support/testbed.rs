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
    server::{EmbeddedCluster, meta::random_suffix},
    sim::SimOptions,
};
use kruise_tui::kruise::KruiseVersion;
use kube::{
    Api, Client,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The variable naming an existing cluster's kubeconfig.
pub const EXISTING: &str = "KRUISE_TUI_TEST_KUBECONFIG";

/// The variable naming the Kruise release the tests' cluster is (`1.9`, the default, or `1.8`):
/// on the embedded cluster, the CRDs, webhooks and controllers it runs; on an existing one, the
/// CRDs the fixture installs and the rules the controllers follow.
pub const KRUISE_VERSION: &str = "KRUISE_TUI_TEST_KRUISE_VERSION";

/// The Kruise release the tests run against by default.
pub fn kruise_version() -> KruiseVersion {
    match std::env::var(KRUISE_VERSION).ok().as_deref().map(str::trim) {
        Some("1.8" | "v1.8" | "1.8.4" | "v1.8.4") => KruiseVersion::V1_8,
        Some("" | "1.9" | "v1.9" | "1.9.0" | "v1.9.0") | None => KruiseVersion::V1_9,
        Some(other) => panic!("{KRUISE_VERSION}={other}: expected 1.9 or 1.8"),
    }
}

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

/// Whether template changes of Rollout-controlled workloads are intercepted here: always on the
/// embedded cluster (in-process), on an existing one only where kruise-rollout's webhooks are
/// registered (our controllers do not serve webhooks). Otherwise prints why the test stops.
pub async fn rollout_webhooks(client: &Client, what: &str) -> bool {
    if existing_kubeconfig().is_none()
        || kruise_tui::kube::detect::kruise_rollout_webhook(client).await
    {
        return true;
    }
    eprintln!("skipped on {EXISTING}: {what} needs Kruise Rollout's webhooks (not registered)");
    false
}

/// A cluster for one test, with a namespace of its own.
pub struct Testbed {
    pub client: Client,
    ns: String,
    kubeconfig: PathBuf,
    /// A kubeconfig like `kubeconfig` whose current context's namespace is the test's.
    kubeconfig_in_ns: PathBuf,
    scratch: tempfile::TempDir,
    embedded: Option<(DemoCluster, tempfile::TempDir)>,
    version: KruiseVersion,
}

/// What to start on the embedded cluster.
#[derive(Clone, Copy)]
enum Embedded {
    /// Simulated nodes, controllers and Kruise webhooks; empty.
    Full,
    /// The server and the Kruise webhooks only (the test runs nodes and controllers beside it).
    Bare,
    /// Full, with the demo story (namespace `demo`).
    Story,
}

impl Testbed {
    /// The embedded cluster (empty, with simulated nodes, controllers and Kruise webhooks), or
    /// the existing one with this process's simulated nodes and controllers; a fresh namespace.
    pub async fn start() -> Testbed {
        Testbed::start_as(Embedded::Full, kruise_version()).await
    }

    /// Like [`Testbed::start`], as a cluster of Kruise `version`: the embedded cluster is
    /// started so; an existing cluster is used only when it is that release
    /// ([`KRUISE_VERSION`]), else None (the test says it is skipped and returns).
    pub async fn start_at(version: KruiseVersion) -> Option<Testbed> {
        if existing_kubeconfig().is_some() && kruise_version() != version {
            eprintln!(
                "skipped on {EXISTING}: it is Kruise {}, this test wants {}",
                kruise_version().name(),
                version.name()
            );
            return None;
        }
        Some(Testbed::start_as(Embedded::Full, version).await)
    }

    /// The Kruise release the cluster is.
    pub fn kruise_version(&self) -> KruiseVersion {
        self.version
    }

    /// The embedded server with its Kruise webhooks but no simulated nodes and no controllers
    /// (the test runs them beside it, as `kruise-tui sim-nodes` and `kruise-tui controllers`
    /// run against any server); on an existing cluster the same as [`Testbed::start`], whose
    /// nodes and controllers already run beside the server, in this process.
    pub async fn start_bare() -> Testbed {
        Testbed::start_as(Embedded::Bare, kruise_version()).await
    }

    /// The demo story (`kruise-tui --demo`) on the embedded cluster, in its namespace `demo`.
    /// Embedded only: call [`skip_on_existing_cluster`] first.
    pub async fn start_story() -> Testbed {
        assert!(
            existing_kubeconfig().is_none(),
            "the demo story runs on the embedded cluster only: skip_on_existing_cluster first"
        );
        Testbed::start_as(Embedded::Story, kruise_version()).await
    }

    async fn start_as(what: Embedded, version: KruiseVersion) -> Testbed {
        let ns = match what {
            Embedded::Story => kruise_tui::cluster::demo::NAMESPACE.to_owned(),
            Embedded::Full | Embedded::Bare => format!("e2e-{}", random_suffix(8)),
        };
        let (client, kubeconfig, embedded) = match existing_kubeconfig() {
            Some(path) => {
                shared_on_existing(&path);
                (client_for(&path, &ns).await, path, None)
            }
            None => {
                let dir = tempfile::tempdir().expect("tempdir");
                let kubeconfig = dir.path().join("kubeconfig");
                let full = !matches!(what, Embedded::Bare);
                let demo = DemoCluster::start(DemoOptions {
                    listen: "127.0.0.1:0".parse().expect("addr"),
                    kubeconfig_out: kubeconfig.clone(),
                    pods: None,
                    seed: matches!(what, Embedded::Story),
                    nodes: full,
                    controllers: full,
                    kruise_webhooks: true,
                    remove_kubeconfig: true,
                    kruise_version: version,
                    kruise_rollout: true,
                    streaming_lists: true,
                    metrics: true,
                })
                .await
                .expect("the embedded cluster starts");
                let client =
                    Client::try_from(embedded_config(demo.cluster(), &ns)).expect("client");
                (client, kubeconfig, Some((demo, dir)))
            }
        };
        if !matches!(what, Embedded::Story) {
            let namespaces: Api<Namespace> = Api::all(client.clone());
            let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            let object: Namespace = serde_json::from_value(body).expect("a Namespace");
            namespaces
                .create(&PostParams::default(), &object)
                .await
                .expect("the test namespace is created");
        }
        let scratch = tempfile::tempdir().expect("tempdir");
        let kubeconfig_in_ns = scratch.path().join("kubeconfig-in-ns");
        write_kubeconfig(&kubeconfig, &kubeconfig_in_ns, |config| {
            current_context(config).namespace = Some(ns.clone());
        });
        Testbed {
            client,
            ns,
            kubeconfig,
            kubeconfig_in_ns,
            scratch,
            embedded,
            version,
        }
    }

    /// The test's namespace (also `client`'s default namespace: `Api::default_namespaced`).
    pub fn ns(&self) -> &str {
        &self.ns
    }

    /// A kubeconfig that reaches the cluster (its context's namespace is not the test's: pass
    /// `-n`, use `Kubectl::at(kubeconfig, ns)` or [`Testbed::kubeconfig_in_ns`]).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// A kubeconfig that reaches the cluster with the test's namespace as its current
    /// context's, for the `kruise-tui` binary (which then needs no `-n`).
    pub fn kubeconfig_in_ns(&self) -> &Path {
        &self.kubeconfig_in_ns
    }

    /// A kubeconfig like [`Testbed::kubeconfig_in_ns`] whose user is `token` alone (e.g. a
    /// ServiceAccount's, from `kubectl create token`), written as `name` in a scratch dir.
    pub fn kubeconfig_with_token(&self, name: &str, token: &str) -> PathBuf {
        let path = self.scratch.path().join(name);
        write_kubeconfig(&self.kubeconfig_in_ns, &path, |config| {
            let user = current_context(config).user.clone().unwrap_or_default();
            let auth = config
                .auth_infos
                .iter_mut()
                .find(|a| a.name == user)
                .expect("the current context's user is in the kubeconfig");
            auth.auth_info = Some(kube::config::AuthInfo {
                token: Some(token.to_owned().into()),
                ..kube::config::AuthInfo::default()
            });
        });
        path
    }

    /// A fresh client configuration for the cluster (default namespace the test's), to add
    /// headers or change the credentials before building a client.
    pub async fn config(&self) -> kube::Config {
        match self.embedded() {
            Some(c) => embedded_config(c, &self.ns),
            None => config_for(&self.kubeconfig, &self.ns).await,
        }
    }

    /// A client of its own (a connection pool apart from `client`).
    pub async fn new_client(&self) -> Client {
        Client::try_from(self.config().await).expect("a client")
    }

    /// The kubeconfig's current context.
    pub fn context(&self) -> String {
        let config = kube::config::Kubeconfig::read_from(&self.kubeconfig).expect("kubeconfig");
        config.current_context.unwrap_or_default()
    }

    /// The URL the kubeconfig reaches the server at.
    pub async fn cluster_url(&self) -> String {
        match self.embedded() {
            Some(c) => c.https_url(),
            None => self.config().await.cluster_url.to_string(),
        }
    }

    /// The embedded cluster, when the test runs on it.
    pub fn embedded(&self) -> Option<&EmbeddedCluster> {
        self.embedded.as_ref().map(|(d, _)| d.cluster())
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

/// A client configuration for the embedded cluster (plain HTTP, the token).
fn embedded_config(c: &EmbeddedCluster, ns: &str) -> kube::Config {
    let mut config = kube::Config::new(c.url().parse().expect("a URL"));
    config.default_namespace = ns.to_owned();
    config.auth_info.token = Some(c.token().to_string().into());
    config
}

/// Reads the kubeconfig at `from`, changes it with `edit` and writes it to `to` (as JSON, which
/// is YAML; relative paths in it are made absolute by the reading).
fn write_kubeconfig(from: &Path, to: &Path, edit: impl FnOnce(&mut kube::config::Kubeconfig)) {
    let mut config = kube::config::Kubeconfig::read_from(from).expect("the kubeconfig reads");
    edit(&mut config);
    let text = serde_json::to_string_pretty(&config).expect("the kubeconfig serializes");
    std::fs::write(to, text).expect("the kubeconfig is written");
}

/// The kubeconfig's current context.
fn current_context(config: &mut kube::config::Kubeconfig) -> &mut kube::config::Context {
    let name = config.current_context.clone().unwrap_or_default();
    config
        .contexts
        .iter_mut()
        .find(|c| c.name == name)
        .and_then(|c| c.context.as_mut())
        .expect("the kubeconfig's current context exists")
}

/// A client of the kubeconfig's current context whose default namespace is `ns`.
async fn client_for(path: &Path, ns: &str) -> Client {
    Client::try_from(config_for(path, ns).await).expect("a client")
}

/// The configuration of the kubeconfig's current context, with `ns` as default namespace.
async fn config_for(path: &Path, ns: &str) -> kube::Config {
    let kubeconfig = kube::config::Kubeconfig::read_from(path).expect("the kubeconfig reads");
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("the kubeconfig has a usable context");
    config.default_namespace = ns.to_string();
    config
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
                    SimOptions {
                        kruise_version: kruise_version(),
                        ..SimOptions::default()
                    },
                    stop.clone(),
                ));
                // Where kruise-rollout runs, its manager owns the Rollouts: ours stay out.
                let kruise_rollout = kruise_tui::kube::detect::kruise_rollout_signs(&client)
                    .await
                    .is_empty();
                let options = kruise_tui::controllers::Options {
                    gates: demo_gates(),
                    version: kruise_version(),
                    kruise_rollout,
                    ..kruise_tui::controllers::Options::default()
                };
                let identity = options.identity.clone();
                let controllers = tokio::spawn(kruise_tui::controllers::run(
                    client.clone(),
                    options,
                    stop.clone(),
                ));
                // The previous test process's controllers held the leader Lease until they
                // stopped; the tests start once this process's have taken it over.
                let _ = tx.send(leading(&client, &identity).await);
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

/// Waits (up to a minute, the Lease's duration and then some) until `identity` holds the
/// controllers' leader Lease.
async fn leading(client: &Client, identity: &str) -> Result<(), String> {
    use k8s_openapi::api::coordination::v1::Lease;
    use kruise_tui::controllers::lease::{NAME, NAMESPACE};
    let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    for _ in 0..600 {
        if let Ok(l) = leases.get(NAME).await
            && l.spec.and_then(|s| s.holder_identity).as_deref() == Some(identity)
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!(
        "this process's controllers ({identity}) never took the leader Lease over"
    ))
}

/// Server-side applies every upstream Kruise and Kruise Rollout CRD and waits until each is
/// established.
async fn install_crds(client: &Client) -> Result<(), String> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut crds = kruise_tui::cluster::server::builtin::kruise_crds(kruise_version())
        .map_err(|e| e.to_string())?;
    crds.extend(
        kruise_tui::cluster::server::builtin::kruise_rollout_crds().map_err(|e| e.to_string())?,
    );
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
