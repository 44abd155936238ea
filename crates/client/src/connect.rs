//! Building a kube-rs client from the usual kubeconfig flags.
//!
//! Order of precedence for the file: `--kubeconfig`, then `$KUBECONFIG` (which may list several
//! files, merged as kubectl does), then `~/.kube/config`.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use kube::{
    Client, Config,
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
    let client = Client::try_from(config).context("cannot build a Kubernetes client")?;
    Ok(Connection {
        client,
        context,
        contexts,
        default_namespace,
        cluster_url,
    })
}
