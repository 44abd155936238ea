//! The writes the controllers make, conflict-safe: every update carries the resourceVersion it
//! was computed from (a 409 means the cache was stale: requeue and decide again), every delete
//! the UID it meant, and every create is idempotent on AlreadyExists where the caller says so.

use std::fmt::Debug;

use kube::{
    Api, Resource,
    api::{DeleteParams, PostParams, Preconditions},
};
use serde::{Serialize, de::DeserializeOwned};

/// An API error as one line: the server's Status message, never the Debug form.
pub use crate::errors::text as describe;

/// The HTTP status of an API error.
pub fn code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// The object after a write: its name and new resourceVersion (for expectations).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub name: String,
    pub resource_version: String,
}

fn written<K: Resource>(obj: &K) -> Written {
    Written {
        name: obj.meta().name.clone().unwrap_or_default(),
        resource_version: obj.meta().resource_version.clone().unwrap_or_default(),
    }
}

/// Creates `obj`.
pub async fn create<K>(api: &Api<K>, obj: &K) -> Result<Written, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    api.create(&PostParams::default(), obj)
        .await
        .map(|o| written(&o))
}

/// Replaces `obj` (its metadata.resourceVersion is the precondition).
pub async fn replace<K>(api: &Api<K>, obj: &K) -> Result<Written, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    let name = obj.meta().name.clone().unwrap_or_default();
    api.replace(&name, &PostParams::default(), obj)
        .await
        .map(|o| written(&o))
}

/// Replaces `obj`'s status (its metadata.resourceVersion is the precondition).
pub async fn replace_status<K>(api: &Api<K>, obj: &K) -> Result<Written, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    let name = obj.meta().name.clone().unwrap_or_default();
    api.replace_status(&name, &PostParams::default(), obj)
        .await
        .map(|o| written(&o))
}

/// Deletes `name` if it still has `uid`; gone already counts as done.
pub async fn delete<K>(api: &Api<K>, name: &str, uid: &str) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let params = DeleteParams {
        preconditions: (!uid.is_empty()).then(|| Preconditions {
            uid: Some(uid.to_owned()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match api.delete(name, &params).await {
        Ok(_) => Ok(()),
        Err(err) if code(&err) == Some(404) => Ok(()),
        Err(err) => Err(err),
    }
}
