//! Lists for the image pre-download views (`:imagepulljobs`, `:imagelistpulljobs`,
//! `:nodeimages`) and for the rollout view's next-image mark, answered as typed objects.

use kube::{Api, Client, api::ListParams};

use crate::{
    api::{ImageListPullJob, ImagePullJob, NodeImage},
    app::images::{ImageKind, Listing},
    kube::errors::text as describe,
};

fn api<K>(client: Client, namespace: &Option<String>) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    }
}

/// The NodeImages (cluster-scoped: one per node).
async fn node_images(client: Client) -> Result<Vec<NodeImage>, String> {
    Api::<NodeImage>::all(client)
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .map_err(|e| format!("nodeimages: {}", describe(&e)))
}

async fn pull_jobs(
    client: Client,
    namespace: &Option<String>,
) -> Result<Vec<ImagePullJob>, String> {
    api::<ImagePullJob>(client, namespace)
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .map_err(|e| format!("imagepulljobs: {}", describe(&e)))
}

/// `Listing::Images`: the objects of `kind` in `namespace` (or every namespace) and the
/// NodeImages. For the job lists a NodeImage list that fails is kept as its error (the lists
/// still show; the detail says why it has no nodes); for `:nodeimages` it is the answer's error.
pub async fn list(
    client: Client,
    namespace: Option<String>,
    kind: ImageKind,
) -> Result<Listing, String> {
    match kind {
        ImageKind::NodeImages => Ok(Listing {
            node_images: Ok(node_images(client).await?),
            ..Listing::default()
        }),
        ImageKind::PullJobs => {
            let pull_jobs = pull_jobs(client.clone(), &namespace).await?;
            Ok(Listing {
                pull_jobs,
                node_images: node_images(client).await,
                ..Listing::default()
            })
        }
        ImageKind::ListPullJobs => {
            let list_jobs = api::<ImageListPullJob>(client.clone(), &namespace)
                .list(&ListParams::default())
                .await
                .map_err(|e| format!("imagelistpulljobs: {}", describe(&e)))?
                .items;
            // The ImagePullJobs the list jobs created (one per image).
            let pull_jobs = pull_jobs(client.clone(), &namespace).await?;
            Ok(Listing {
                pull_jobs,
                list_jobs,
                node_images: node_images(client).await,
            })
        }
    }
}
