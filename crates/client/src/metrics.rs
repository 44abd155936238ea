//! Reading the resource metrics API (`metrics.k8s.io/v1beta1`, served by metrics-server or the
//! embedded cluster): whether the cluster serves it, and the PodMetrics of all namespaces or one,
//! read in pages (`limit` + `continue`, as k9s learned to do, k9s#3987) and kept in a compact
//! form: interned namespaces and container names, CPU in millicores and memory in bytes.
//!
//! A cluster without the API is not an error: [`served`] says no and the callers show nothing.

mod parse;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use kube::{Client, api::ListParams};

pub use parse::{ContainerUsage, Page, PodUsage, go_duration_seconds, parse_page};

/// The group version read.
pub const GROUP_VERSION: &str = "metrics.k8s.io/v1beta1";

/// Items asked for per page (20 pages for 10,000 pods).
pub const PAGE_SIZE: u32 = 500;

/// Whether a discovery list of [`GROUP_VERSION`] offers listing PodMetrics. Pure, for tests.
pub fn served_in(list: &APIResourceList) -> bool {
    list.resources
        .iter()
        .any(|r| r.name == "pods" && r.verbs.iter().any(|v| v == "list"))
}

/// Whether the cluster serves PodMetrics. An error the server answers (the group is missing:
/// 404; its APIService is unavailable: 503) means not served: the callers then show no usage
/// and no error. A request that got no answer is the error itself (`top` says so).
pub async fn served(client: &Client) -> Result<bool, kube::Error> {
    match client.list_api_group_resources(GROUP_VERSION).await {
        Ok(list) => Ok(served_in(&list)),
        // The server answered (404, 503 from an aggregated API that is down): not served.
        Err(kube::Error::Api(status)) => {
            tracing::debug!(code = status.code, "{GROUP_VERSION} not served");
            Ok(false)
        }
        // No answer at all: the server, not the metrics API, is the problem.
        Err(err) => Err(err),
    }
}

/// What one read of the PodMetrics holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// Every pod with figures, in the order the server listed them.
    pub pods: Vec<PodUsage>,
    /// The longest collection window of the items, in seconds (metrics-server's resolution:
    /// 15 s by default); what a caller paces its next read by.
    pub window_seconds: Option<f64>,
    /// Pages read.
    pub pages: u32,
}

/// The longer of two collection windows, either of which may be unknown: what reads put
/// together (pages, namespaces) are paced by.
pub fn longest_window(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Lists the PodMetrics of `namespace` (None: all namespaces), optionally only the pods
/// `selector` selects, [`PAGE_SIZE`] at a time.
pub async fn pod_usage(
    client: &Client,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> Result<Usage, kube::Error> {
    let path = match namespace {
        Some(ns) => format!("/apis/{GROUP_VERSION}/namespaces/{ns}/pods"),
        None => format!("/apis/{GROUP_VERSION}/pods"),
    };
    let mut usage = Usage::default();
    let mut token: Option<String> = None;
    loop {
        let params = ListParams {
            label_selector: selector.map(str::to_owned),
            limit: Some(PAGE_SIZE),
            continue_token: token.take(),
            ..ListParams::default()
        };
        let request = kube::core::Request::new(&path)
            .list(&params)
            .map_err(kube::Error::BuildRequest)?;
        let text = client.request_text(request).await?;
        let page = parse_page(&text).map_err(kube::Error::SerdeError)?;
        usage.pages += 1;
        usage.pods.extend(page.pods);
        usage.window_seconds = longest_window(usage.window_seconds, page.window_seconds);
        match page.continue_token {
            Some(next) if !next.is_empty() => token = Some(next),
            _ => return Ok(usage),
        }
    }
}
