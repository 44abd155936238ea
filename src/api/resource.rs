//! `impl_resource!`: the k8s-openapi `Resource` + `Metadata` impls for a Kruise type.

/// Implements `k8s_openapi::Resource` and `k8s_openapi::Metadata` for a struct with a
/// `metadata: ObjectMeta` field. `group = ""` is the core group, whose apiVersion is the bare
/// version (`v1`, not `/v1`).
#[macro_export]
macro_rules! impl_resource {
    ($ty:ty, group = "", version = $version:literal, kind = $kind:literal,
     plural = $plural:literal, scope = $scope:ident) => {
        $crate::impl_resource!(@impl $ty, "", $version, $version, $kind, $plural, $scope);
    };
    ($ty:ty, group = $group:literal, version = $version:literal, kind = $kind:literal,
     plural = $plural:literal, scope = $scope:ident) => {
        $crate::impl_resource!(
            @impl $ty, $group, $version, concat!($group, "/", $version), $kind, $plural, $scope
        );
    };
    (@impl $ty:ty, $group:literal, $version:literal, $api_version:expr, $kind:literal,
     $plural:literal, $scope:ident) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = $api_version;
            const GROUP: &'static str = $group;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = k8s_openapi::$scope;
        }
        impl k8s_openapi::Metadata for $ty {
            type Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use k8s_openapi::Resource;

    use crate::api::{CloneSet, PodUnavailableBudget, SlimPod};

    #[test]
    fn api_versions_match_kubernetes_conventions() {
        assert_eq!(
            SlimPod::API_VERSION,
            k8s_openapi::api::core::v1::Pod::API_VERSION
        );
        assert_eq!(SlimPod::API_VERSION, "v1");
        assert_eq!(CloneSet::API_VERSION, "apps.kruise.io/v1alpha1");
        assert_eq!(
            PodUnavailableBudget::API_VERSION,
            "policy.kruise.io/v1alpha1"
        );
    }
}
