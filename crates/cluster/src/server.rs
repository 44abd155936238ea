//! The embedded Kubernetes API server: plain HTTP on loopback with a bearer token, serving the
//! built-in kinds and every CRD in its store (all upstream Kruise CRDs built in), with watch,
//! every patch type, schema validation, admission hooks and garbage collection. kubectl and
//! kube-rs use it as they would a real API server.
//!
//! - One loopback port speaks plain HTTP ([`EmbeddedCluster::url`], what [`EmbeddedCluster::client`]
//!   uses) and TLS with a fresh self-signed certificate ([`EmbeddedCluster::https_url`], what the
//!   kubeconfig uses: client-go never sends a bearer token to an `http://` server). Both need
//!   the bearer token.
//! - [`EmbeddedCluster::store`] seeds and reads objects in-process as `serde_json::Value`
//!   (no admission, no validation): `store.create(pod_json)`, `update`, `get_value`,
//!   `list_values`, `delete_value`.
//! - [`EmbeddedCluster::admission`] registers [`AdmissionHook`]s (mutating, validating) that
//!   every HTTP write passes through, including `pods/eviction` and the status/scale subresources.
//! - A pod bound to a node is deleted gracefully: the delete sets its deletionTimestamp (now +
//!   grace period) and the kubelet deletes it with grace 0 when it ends; an unbound pod, or a
//!   delete with grace 0, removes it at once; objects with finalizers wait with a deletionTimestamp; ownerReferences cascade (Background, Foreground,
//!   Orphan).
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use kruise_cluster::server::{EmbeddedCluster, ServerOptions};
//! let cluster = EmbeddedCluster::start(ServerOptions::default()).await?;
//! let client = cluster.client().await?;
//! std::fs::write("/tmp/kubeconfig", cluster.kubeconfig_yaml("embedded", "default"))?;
//! # let _ = client; Ok(()) }
//! ```

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use crate::kruise::KruiseVersion;
use anyhow::{Context, bail};
use base64::{Engine, engine::general_purpose::STANDARD};
use tokio::{net::TcpListener, task::JoinHandle};
use tokio_util::sync::CancellationToken;

pub mod admission;
pub mod auth;
pub mod authz;
pub mod builtin;
pub mod convert;
pub mod decode;
pub mod defaults;
pub mod discovery;
pub mod exec;
pub mod gc;
pub mod http;
pub mod jsonpath;
pub mod listopts;
pub mod managed;
pub mod meta;
pub mod metrics;
pub mod nsinit;
pub mod objectmeta;
pub mod openapi;
pub mod patch;
pub mod podadmit;
pub mod poddefaults;
pub mod podlog;
pub mod podupdate;
pub mod protobuf;
pub mod read;
pub mod remove;
pub mod requests;
pub mod resources;
pub mod routes;
pub mod schema;
pub mod selector;
pub mod status;
pub mod store;
pub mod subresource;
pub mod table;
pub mod tls;
pub mod typed;
pub mod write;

pub use admission::{Admission, AdmissionHook, AdmissionRequest, Operation, Verdict};
pub use status::ApiError;
pub use store::Store;

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Must be a loopback address; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The bearer token clients must send; None picks a random one.
    pub token: Option<String>,
    /// Which Kruise release's CRDs (and conversion and admission rules) to serve.
    pub kruise_version: KruiseVersion,
    /// Whether Kruise Rollout's CRDs (`rollouts.kruise.io`) are served.
    pub kruise_rollout: bool,
    /// Whether watches may stream their initial list (`sendInitialEvents`, the `WatchList` gate:
    /// on in v1.32 and from v1.34). Off, such a watch is refused with 422 as v1.33 refuses it.
    pub streaming_lists: bool,
    /// Whether the resource metrics API (`metrics.k8s.io`, what metrics-server serves) answers,
    /// from the simulated containers' usage. Off, the cluster answers as one without
    /// metrics-server.
    pub metrics: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: None,
            kruise_version: KruiseVersion::V1_9,
            kruise_rollout: true,
            streaming_lists: true,
            metrics: true,
        }
    }
}

struct Serving {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

/// A running embedded cluster.
pub struct EmbeddedCluster {
    shared: Arc<http::Shared>,
    tls: tls::Tls,
    serving: Mutex<Option<Serving>>,
    gc: JoinHandle<()>,
    /// ClusterRole aggregation (kube-controller-manager's job on a real cluster).
    aggregation: JoinHandle<()>,
}

impl EmbeddedCluster {
    /// Create the store (default namespaces, Kruise CRDs) and serve it on `opts.listen`.
    pub async fn start(opts: ServerOptions) -> anyhow::Result<EmbeddedCluster> {
        if !opts.listen.ip().is_loopback() {
            bail!(
                "refusing to serve the embedded cluster on {}: only loopback addresses (127.0.0.1, ::1) are allowed",
                opts.listen
            );
        }
        let listener = TcpListener::bind(opts.listen)
            .await
            .with_context(|| format!("cannot listen on {}", opts.listen))?;
        let addr = listener.local_addr()?;
        let store = Store::with_crds(opts.kruise_version, opts.kruise_rollout)?;
        authz::bootstrap::install(&store)?;
        // Before aggregation: its ClusterRole aggregates into view, edit and admin.
        if opts.metrics {
            metrics::install(&store)?;
        }
        authz::aggregation::aggregate(&store);
        let token = opts.token.unwrap_or_else(|| meta::random_suffix(40));
        let tls = tls::Tls::generate()?;
        let ca_pem = tls.cert_pem().to_owned();
        nsinit::populate_all(&store, &ca_pem);
        let shared = Arc::new(http::Shared {
            store: store.clone(),
            admission: Admission::default(),
            auth: auth::Authenticator::new(token.clone())?,
            token,
            addr,
            requests: Default::default(),
            ca_pem,
            watch_list: listopts::WatchListGate::new(opts.streaming_lists),
            metrics: metrics::MetricsApi::new(opts.metrics),
        });
        let aggregation = authz::aggregation::spawn(store.clone());
        let gc = gc::spawn(store);
        let cluster = EmbeddedCluster {
            shared,
            tls,
            serving: Mutex::new(None),
            gc,
            aggregation,
        };
        cluster.serve_on(listener);
        Ok(cluster)
    }

    fn serve_on(&self, listener: TcpListener) {
        let stop = CancellationToken::new();
        let acceptor = tokio_rustls::TlsAcceptor::from(self.tls.config.clone());
        let task = tokio::spawn(http::serve(
            listener,
            self.shared.clone(),
            stop.clone(),
            acceptor,
        ));
        if let Ok(mut s) = self.serving.lock() {
            *s = Some(Serving { stop, task });
        }
    }

    /// The `WatchList` gate: switch streaming lists on or off while serving, count the
    /// watch-list requests received and refused.
    pub fn watch_list(&self) -> &listopts::WatchListGate {
        &self.shared.watch_list
    }

    /// The resource metrics API: switch it on or off while serving.
    pub fn metrics_api(&self) -> &metrics::MetricsApi {
        &self.shared.metrics
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.shared.addr)
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// The bearer token.
    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// `https://127.0.0.1:PORT`: the same port over TLS (what the kubeconfig uses).
    pub fn https_url(&self) -> String {
        format!("https://{}", self.shared.addr)
    }

    /// The server's self-signed certificate (PEM), the CA in the kubeconfig.
    pub fn ca_pem(&self) -> String {
        self.tls.cert_pem().to_owned()
    }

    /// A kubeconfig for kubectl and kube-rs, with one context. It uses the TLS side of the port
    /// (client-go sends tokens only over https) and trusts the server's certificate.
    pub fn kubeconfig_yaml(&self, context: &str, namespace: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {context}\n  cluster:\n    server: {url}\n    \
             certificate-authority-data: {ca}\nusers:\n- name: {context}\n  user:\n    token: {token}\n\
             contexts:\n- name: {context}\n  context:\n    cluster: {context}\n    user: {context}\n    \
             namespace: {namespace}\ncurrent-context: {context}\n",
            url = self.https_url(),
            ca = STANDARD.encode(self.tls.cert_pem()),
            token = self.shared.token,
        )
    }

    /// A kube-rs client connected with the token (default namespace `default`).
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        let mut config = kube::Config::new(self.url().parse()?);
        config.default_namespace = "default".into();
        config.auth_info.token = Some(self.shared.token.clone().into());
        Ok(kube::Client::try_from(config)?)
    }

    /// The object store, for fast in-process seeding (no admission, no validation).
    pub fn store(&self) -> Arc<Store> {
        self.shared.store.clone()
    }

    /// The mutating requests received (method, path, User-Agent).
    pub fn requests(&self) -> &requests::RequestLog {
        &self.shared.requests
    }

    /// The admission chains: register mutating/validating hooks here.
    pub fn admission(&self) -> Admission {
        self.shared.admission.clone()
    }

    /// Close the listener and drop every connection and watch; the store stays.
    pub async fn stop_serving(&self) {
        let serving = self.serving.lock().ok().and_then(|mut s| s.take());
        if let Some(s) = serving {
            s.stop.cancel();
            let _ = s.task.await;
        }
    }

    /// Listen again on the same address (after [`stop_serving`](Self::stop_serving)).
    pub async fn start_serving(&self) -> anyhow::Result<()> {
        if self.serving.lock().map(|s| s.is_some()).unwrap_or(false) {
            return Ok(());
        }
        let listener = TcpListener::bind(self.shared.addr)
            .await
            .with_context(|| format!("cannot listen again on {}", self.shared.addr))?;
        self.serve_on(listener);
        Ok(())
    }

    /// Stop serving and stop the background tasks.
    pub async fn shutdown(self) {
        self.stop_serving().await;
        self.gc.abort();
        self.aggregation.abort();
    }
}

impl Drop for EmbeddedCluster {
    fn drop(&mut self) {
        if let Ok(mut s) = self.serving.lock()
            && let Some(s) = s.take()
        {
            s.stop.cancel();
        }
        self.gc.abort();
        self.aggregation.abort();
    }
}
