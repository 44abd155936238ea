//! Writing a Kruise object at the version the server stores it (Advanced DaemonSet and
//! SidecarSet at v1beta1 since Kruise v1.9), so that a cluster without Kruise's conversion
//! webhook (CRDs only, `kruise-tui controllers` in place of kruise-manager) loses no field to
//! the schema of another version: `status.daemonSetHash` has no place in a v1beta1 DaemonSet.

use kube::{
    Api, Resource,
    api::{ApiResource, DynamicObject},
};

use crate::{runner::ReconcileError, write};

/// Maps a model into the JSON served at a version.
pub type ToServed<K> = fn(&str, &K) -> Result<serde_json::Value, serde_json::Error>;
/// Maps the JSON served at a version into a model.
pub type FromServed<K> = fn(&str, serde_json::Value) -> Result<K, serde_json::Error>;

fn api(client: &kube::Client, ar: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    }
}

/// `ar`, else the Rust type's own version.
fn resource<K: Resource<DynamicType = ()>>(ar: Option<&ApiResource>) -> ApiResource {
    ar.cloned().unwrap_or_else(|| ApiResource::erase::<K>(&()))
}

fn error(e: serde_json::Error) -> ReconcileError {
    ReconcileError::new(e.to_string())
}

/// Replaces the status of `obj` at `ar` (mapped with `to_served`), else at the Rust type's own
/// version.
pub async fn replace_status<K>(
    client: &kube::Client,
    ar: Option<&ApiResource>,
    obj: &K,
    to_served: ToServed<K>,
) -> Result<write::Written, ReconcileError>
where
    K: Resource<DynamicType = ()>,
{
    let ar = resource::<K>(ar);
    let value = to_served(&ar.version, obj).map_err(error)?;
    let dynamic: DynamicObject = serde_json::from_value(value).map_err(error)?;
    let api = api(client, &ar, obj.meta().namespace.as_deref());
    Ok(write::replace_status(&api, &dynamic).await?)
}

/// Reads `name` (in `namespace`, None for a cluster-scoped kind) at `ar` (mapped with
/// `from_served`), else at the Rust type's own version.
pub async fn get<K>(
    client: &kube::Client,
    ar: Option<&ApiResource>,
    namespace: Option<&str>,
    name: &str,
    from_served: FromServed<K>,
) -> Result<K, ReconcileError>
where
    K: Resource<DynamicType = ()>,
{
    let ar = resource::<K>(ar);
    let obj = api(client, &ar, namespace).get(name).await?;
    let value = serde_json::to_value(obj).map_err(error)?;
    from_served(&ar.version, value).map_err(error)
}
