//! Our API types work with kube-rs as they are (through k8s-openapi's `Resource` + `Metadata`
//! and kube's blanket impls), and kube's view of each agrees with the kinds table.

use std::fmt::Debug;

use kruise_tui::api::{self, kinds};
use serde::{Serialize, de::DeserializeOwned};

/// The bounds `kube::Api<K>` and a reflector `Store<K>` place on K.
fn check<K>()
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + Debug
        + DeserializeOwned
        + Serialize
        + Send
        + Sync
        + 'static,
{
    let info = kinds::KINDS
        .iter()
        .find(|k| k.kind == K::kind(&()) && k.group == K::group(&()))
        .unwrap_or_else(|| panic!("{} not in kinds table", K::kind(&())));
    assert_eq!(K::plural(&()), info.plural);
    assert!(
        info.versions.contains(&K::version(&()).as_ref()),
        "{}",
        info.kind
    );
    assert_eq!(
        K::api_version(&()),
        format!("{}/{}", K::group(&()), K::version(&())).trim_start_matches('/')
    );
    // A reflector store for the type can be built without IO.
    let (reader, _writer) = kube::runtime::reflector::store::<K>();
    assert!(reader.is_empty());
}

#[test]
fn every_type_is_a_kube_resource_matching_the_kinds_table() {
    check::<api::CloneSet>();
    check::<api::StatefulSet>();
    check::<api::DaemonSet>();
    check::<api::SidecarSet>();
    check::<api::PodProbeMarker>();
    check::<api::NodePodProbe>();
    check::<api::ContainerRecreateRequest>();
    check::<api::PodUnavailableBudget>();
    check::<api::PersistentPodState>();
    check::<api::WorkloadSpread>();
    check::<api::UnitedDeployment>();
    check::<api::BroadcastJob>();
    check::<api::AdvancedCronJob>();
    check::<api::ImagePullJob>();
    check::<api::ImageListPullJob>();
    check::<api::NodeImage>();
    check::<api::ResourceDistribution>();
    check::<api::pod::WatchedPod>();
}

#[test]
fn the_preferred_version_is_the_one_the_types_use() {
    // StatefulSet is read as v1beta1 (storage); everything else has one version.
    let asts = kinds::parse_kind("asts").unwrap();
    assert_eq!(
        asts.preferred_version(),
        <api::StatefulSet as kube::Resource>::version(&())
    );
    let cs = kinds::parse_kind("cs").unwrap();
    assert_eq!(
        cs.api_version(),
        <api::CloneSet as kube::Resource>::api_version(&())
    );
}
