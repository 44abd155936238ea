//! Reading and writing Kruise objects in tests at the version the cluster stores them, mapped
//! into our types, as the controllers and the console do: Kruise v1.9 stores Advanced
//! DaemonSets and SidecarSets at v1beta1, and a cluster without kruise-manager's conversion
//! webhook (an existing cluster under `KRUISE_TUI_TEST_KUBECONFIG`, where only our
//! controllers run) prunes from a v1alpha1 read what v1alpha1 lacks (`status.updateRevision`).
#![allow(dead_code)]

use kruise_tui::{
    api::{DaemonSet, SidecarSet, kinds::Kind},
    kube::discovery::{discover_kruise, mapped_version},
};
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
};
use serde_json::Value;

/// The resource `kind` is read and written at: its stored version when that is not v1alpha1.
pub async fn resource(client: &Client, kind: Kind) -> ApiResource {
    let apis = discover_kruise(client).await.expect("discovery");
    mapped_version(&apis, kind)
        .cloned()
        .unwrap_or_else(|| match kind {
            Kind::SidecarSet => ApiResource::erase::<SidecarSet>(&()),
            _ => ApiResource::erase::<DaemonSet>(&()),
        })
}

fn api(client: &Client, ar: &ApiResource, namespaced: bool) -> Api<DynamicObject> {
    if namespaced {
        Api::default_namespaced_with(client.clone(), ar)
    } else {
        Api::all_with(client.clone(), ar)
    }
}

/// The Advanced DaemonSet `name` in the client's namespace, read at its stored version.
pub async fn daemonset(client: &Client, name: &str) -> Option<DaemonSet> {
    let ar = resource(client, Kind::DaemonSet).await;
    let obj = api(client, &ar, true).get(name).await.ok()?;
    let value = serde_json::to_value(obj).ok()?;
    kruise_tui::api::daemonset::from_served_json(&ar.version, value).ok()
}

/// The SidecarSet `name`, read at its stored version.
pub async fn sidecarset(client: &Client, name: &str) -> Option<SidecarSet> {
    let ar = resource(client, Kind::SidecarSet).await;
    let obj = api(client, &ar, false).get(name).await.ok()?;
    let value = serde_json::to_value(obj).ok()?;
    kruise_tui::api::sidecarset::from_served_json(&ar.version, value).ok()
}

/// A merge patch of the Advanced DaemonSet `name` at its stored version (the spec paths a test
/// patches are the same in both versions).
pub async fn patch_daemonset(client: &Client, name: &str, patch: Value) {
    let ar = resource(client, Kind::DaemonSet).await;
    api(client, &ar, true)
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("the Advanced DaemonSet is patched");
}
