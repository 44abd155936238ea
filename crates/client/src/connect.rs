//! Building a kube-rs client from the usual kubeconfig flags.
//!
//! Order of precedence for the file: `--kubeconfig`, then `$KUBECONFIG` (which may list several
//! files, merged as kubectl does), then `~/.kube/config`.
//!
//! Every client built here counts its requests in one process-wide counter ([`requests_sent`]):
//! the console's measurements (`KRUISE_TUI_TIMINGS`) report it, so "no API load while nothing
//! changes" is a number, not a belief. An atomic add per request: always on.

use std::{
    path::PathBuf,
    sync::atomic::{AtomicU64, Ordering},
    task::{Context, Poll},
};

use anyhow::{Context as _, Result};
use kube::{
    Client, Config,
    client::ClientBuilder,
    config::{KubeConfigOptions, Kubeconfig},
};

/// Which kubeconfig and context to use: what the usual `--kubeconfig` and `--context` flags say
/// (the console's flags turn into this; nothing here knows about the command line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    /// The kubeconfig file (None: `$KUBECONFIG`, then `~/.kube/config`).
    pub kubeconfig: Option<PathBuf>,
    /// The context (None: the kubeconfig's current context).
    pub context: Option<String>,
}

/// A connected client plus what the console needs to know about where it points.
#[derive(Clone)]
pub struct Connection {
    pub client: Client,
    /// The context in use (None when the config came from in-cluster settings).
    pub context: Option<String>,
    /// All context names in the kubeconfig, for `:ctx`.
    pub contexts: Vec<String>,
    /// The namespace of the context (or "default").
    pub default_namespace: String,
    /// The cluster URL, for the header.
    pub cluster_url: String,
}

/// Reads the kubeconfig the flags point at.
pub fn load_kubeconfig(args: &Source) -> Result<Kubeconfig> {
    match &args.kubeconfig {
        Some(path) => Kubeconfig::read_from(path)
            .with_context(|| format!("cannot read kubeconfig {}", path.display())),
        None => Kubeconfig::read().context(
            "cannot read a kubeconfig (tried $KUBECONFIG and ~/.kube/config); pass --kubeconfig",
        ),
    }
}

/// Connects using the flags; `context_override` wins over `--context` (used by `:ctx`).
pub async fn connect(args: &Source, context_override: Option<&str>) -> Result<Connection> {
    let kubeconfig = load_kubeconfig(args)?;
    let contexts = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
    let context = context_override
        .map(str::to_owned)
        .or_else(|| args.context.clone())
        .or_else(|| kubeconfig.current_context.clone());
    let options = KubeConfigOptions {
        context: context.clone(),
        ..Default::default()
    };
    let config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .with_context(|| match &context {
            Some(name) => format!("cannot use kubeconfig context {name:?}"),
            None => "the kubeconfig has no current context; pass --context".to_owned(),
        })?;
    let default_namespace = config.default_namespace.clone();
    let cluster_url = config.cluster_url.to_string();
    let client = ClientBuilder::try_from(config)
        .context("cannot build a Kubernetes client")?
        .with_layer(&CountRequests)
        .build();
    Ok(Connection {
        client,
        context,
        contexts,
        default_namespace,
        cluster_url,
    })
}

/// Requests sent so far by every client [`connect`] built in this process (watches, lists,
/// reads, writes, log streams). A request kube's retry layer repeats (429/503/504) counts once:
/// the counter sits outside kube's default stack.
pub fn requests_sent() -> u64 {
    REQUESTS.load(Ordering::Relaxed)
}

static REQUESTS: AtomicU64 = AtomicU64::new(0);

/// The tower layer that counts requests into [`requests_sent`].
#[derive(Debug, Clone, Copy)]
pub struct CountRequests;

impl<S> tower::Layer<S> for CountRequests {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        Counted(inner)
    }
}

/// A service whose every call adds one to [`requests_sent`].
#[derive(Debug, Clone)]
pub struct Counted<S>(S);

impl<S, R> tower::Service<R> for Counted<S>
where
    S: tower::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> S::Future {
        REQUESTS.fetch_add(1, Ordering::Relaxed);
        self.0.call(req)
    }
}
