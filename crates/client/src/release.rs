//! Which Kruise release a cluster runs: the image tag of its kruise-manager when the console can
//! read the Deployment, else what the installed CRDs tell (v1.9 serves Advanced DaemonSet and
//! SidecarSet at v1beta1; v1.8 does not), else the current release, assumed.

use k8s_openapi::api::{apps::v1::Deployment, coordination::v1::Lease};
use kruise_core::kruise::{
    KruiseVersion,
    release::{ClusterRelease, ReleaseSource, image_tag, version_of_name},
};
use kube::{Api, Client};

use crate::{
    detect::{KRUISE_NAMESPACE, MANAGER_DEPLOYMENT},
    discovery::KruiseApis,
    lease,
};

/// The tag of the kruise-manager image (`kruise-system/kruise-controller-manager`, container
/// `manager`, else its first container). None when the Deployment cannot be read (absent, or no
/// rights) or its image has no tag.
pub async fn manager_image_tag(client: &Client) -> Option<String> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), KRUISE_NAMESPACE);
    let d = deployments.get_opt(MANAGER_DEPLOYMENT).await.ok()??;
    let containers = d.spec?.template.spec?.containers;
    let container = containers
        .iter()
        .find(|c| c.name == "manager")
        .or_else(|| containers.first())?;
    image_tag(container.image.as_deref()?).map(str::to_owned)
}

/// The release whose CRDs are installed: v1.9 when Advanced DaemonSet or SidecarSet is served
/// at v1beta1, v1.8 when they are served at v1alpha1 only, None without them.
pub fn version_from_apis(apis: &KruiseApis) -> Option<KruiseVersion> {
    let served = |kind: &str, version: &str| {
        apis.served
            .iter()
            .any(|s| s.kind == kind && s.version == version && s.resource.group == "apps.kruise.io")
    };
    if served("DaemonSet", "v1beta1") || served("SidecarSet", "v1beta1") {
        Some(KruiseVersion::V1_9)
    } else if served("DaemonSet", "v1alpha1") || served("SidecarSet", "v1alpha1") {
        Some(KruiseVersion::V1_8)
    } else {
        None
    }
}

/// The release `kruise-tui controllers` follow, when they lead here (their fresh Lease says).
pub async fn embedded_controllers_version(client: &Client) -> Option<KruiseVersion> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), lease::NAMESPACE);
    let l = leases.get_opt(lease::NAME).await.ok()??;
    lease::fresh_holder(&l, jiff::Timestamp::now())?;
    let name = l
        .metadata
        .annotations?
        .get(lease::VERSION_ANNOTATION)?
        .clone();
    version_of_name(&name)
}

/// The cluster's release: the manager's tag, else the embedded controllers', else the CRDs',
/// else assumed.
pub async fn detect(client: &Client, apis: &KruiseApis) -> ClusterRelease {
    if let Some(release) = manager_image_tag(client)
        .await
        .and_then(|tag| ClusterRelease::from_image_tag(&tag))
    {
        return release;
    }
    if let Some(version) = embedded_controllers_version(client).await {
        return ClusterRelease {
            version,
            tag: None,
            source: ReleaseSource::EmbeddedControllers,
        };
    }
    from_apis(apis)
}

/// The release the CRDs tell, else the current release, assumed.
pub fn from_apis(apis: &KruiseApis) -> ClusterRelease {
    match version_from_apis(apis) {
        Some(version) => ClusterRelease {
            version,
            tag: None,
            source: ReleaseSource::Crds,
        },
        None => ClusterRelease::default(),
    }
}
