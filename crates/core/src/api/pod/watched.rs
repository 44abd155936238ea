//! `WatchedPod`: a pod as the watch reads it. kube-runtime's watcher needs a kube `Resource`
//! (an `ObjectMeta` it reads the resourceVersion from); the store wants only the `SlimPod`.
//! This carries both for the short way from the JSON to the store: the `ObjectMeta` holds just
//! the name, namespace, UID and resourceVersion, and [`WatchedPod::into_pod`] drops it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserializer, Serializer};

use super::SlimPod;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchedPod {
    /// Name, namespace, UID and resourceVersion (copies of the pod's).
    pub metadata: ObjectMeta,
    pub pod: SlimPod,
}

crate::impl_resource!(
    WatchedPod,
    group = "",
    version = "v1",
    kind = "Pod",
    plural = "pods",
    scope = NamespaceResourceScope
);

impl From<SlimPod> for WatchedPod {
    fn from(pod: SlimPod) -> Self {
        let m = &pod.metadata;
        let s = |v: &Option<super::Str>| v.as_ref().map(|v| v.to_string());
        WatchedPod {
            metadata: ObjectMeta {
                name: s(&m.name),
                namespace: s(&m.namespace),
                uid: s(&m.uid),
                resource_version: s(&m.resource_version),
                ..ObjectMeta::default()
            },
            pod,
        }
    }
}

impl WatchedPod {
    pub fn into_pod(self) -> SlimPod {
        self.pod
    }

    // The inherent (de)serializers `impl_resource!` wraps: the pod's own JSON.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        SlimPod::serialize(&self.pod, s)
    }

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SlimPod::deserialize(d).map(WatchedPod::from)
    }
}
