//! `impl_resource!`: the k8s-openapi `Resource` + `Metadata` impls for a Kruise type, and its
//! serde impls: like k8s-openapi's own types, a Kruise object always serializes with its
//! `apiVersion` and `kind` first, so no write can send a body a real API server refuses as
//! `Object 'Kind' is missing`.

use serde::ser::{SerializeMap, SerializeStruct, Serializer};

/// A serializer that writes `apiVersion` and `kind` first into the object (struct or map) a
/// value serializes as; anything else passes through unchanged. The resource types derive their
/// field serialization with `#[serde(remote = "Self")]` and serialize through this.
pub struct WithTypeMeta<S> {
    inner: S,
    api_version: &'static str,
    kind: &'static str,
}

impl<S> WithTypeMeta<S> {
    pub fn new(inner: S, api_version: &'static str, kind: &'static str) -> Self {
        WithTypeMeta {
            inner,
            api_version,
            kind,
        }
    }
}

macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(self, $($arg: $ty),*) -> Result<$ret, Self::Error> {
            self.inner.$name($($arg),*)
        })*
    };
}

impl<S: Serializer> Serializer for WithTypeMeta<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = S::SerializeSeq;
    type SerializeTuple = S::SerializeTuple;
    type SerializeTupleStruct = S::SerializeTupleStruct;
    type SerializeTupleVariant = S::SerializeTupleVariant;
    type SerializeMap = S::SerializeMap;
    type SerializeStruct = S::SerializeStruct;
    type SerializeStructVariant = S::SerializeStructVariant;

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, Self::Error> {
        let mut st = self.inner.serialize_struct(name, len + 2)?;
        st.serialize_field("apiVersion", self.api_version)?;
        st.serialize_field("kind", self.kind)?;
        Ok(st)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, Self::Error> {
        let mut map = self.inner.serialize_map(len.map(|l| l + 2))?;
        map.serialize_entry("apiVersion", self.api_version)?;
        map.serialize_entry("kind", self.kind)?;
        Ok(map)
    }

    forward! {
        serialize_bool(v: bool) -> S::Ok;
        serialize_i8(v: i8) -> S::Ok;
        serialize_i16(v: i16) -> S::Ok;
        serialize_i32(v: i32) -> S::Ok;
        serialize_i64(v: i64) -> S::Ok;
        serialize_u8(v: u8) -> S::Ok;
        serialize_u16(v: u16) -> S::Ok;
        serialize_u32(v: u32) -> S::Ok;
        serialize_u64(v: u64) -> S::Ok;
        serialize_f32(v: f32) -> S::Ok;
        serialize_f64(v: f64) -> S::Ok;
        serialize_char(v: char) -> S::Ok;
        serialize_str(v: &str) -> S::Ok;
        serialize_bytes(v: &[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(name: &'static str) -> S::Ok;
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> S::Ok;
        serialize_seq(len: Option<usize>) -> S::SerializeSeq;
        serialize_tuple(len: usize) -> S::SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> S::SerializeTupleStruct;
        serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeTupleVariant;
        serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + serde::Serialize>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.inner.serialize_some(value)
    }

    fn serialize_newtype_struct<T: ?Sized + serde::Serialize>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner.serialize_newtype_struct(name, value)
    }

    fn serialize_newtype_variant<T: ?Sized + serde::Serialize>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner
            .serialize_newtype_variant(name, index, variant, value)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

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
        // The type's fields are derived with `#[serde(remote = "Self")]` (inherent
        // `serialize`/`deserialize`); the trait impls add the type meta on the way out.
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$ty>::serialize(
                    self,
                    $crate::api::resource::WithTypeMeta::new(s, $api_version, $kind),
                )
            }
        }
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$ty>::deserialize(d)
            }
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

    /// A default `K` serializes with `K`'s apiVersion and kind.
    fn typed<K: Resource + Default + serde::Serialize>() {
        let v = serde_json::to_value(K::default()).expect("serializes");
        assert_eq!(v["apiVersion"], K::API_VERSION, "{}", K::KIND);
        assert_eq!(v["kind"], K::KIND);
    }

    #[test]
    fn every_resource_type_writes_its_type_meta() {
        use crate::api::*;
        typed::<AdvancedCronJob>();
        typed::<BroadcastJob>();
        typed::<CloneSet>();
        typed::<ContainerRecreateRequest>();
        typed::<DaemonSet>();
        typed::<ImageListPullJob>();
        typed::<ImagePullJob>();
        typed::<NodeImage>();
        typed::<NodePodProbe>();
        typed::<PersistentPodState>();
        typed::<SlimPod>();
        typed::<PodProbeMarker>();
        typed::<PodUnavailableBudget>();
        typed::<ResourceDistribution>();
        typed::<SidecarSet>();
        typed::<StatefulSet>();
        typed::<UnitedDeployment>();
        typed::<WorkloadSpread>();
    }

    #[test]
    fn every_kruise_object_serializes_with_its_type_meta() {
        let v = serde_json::to_value(CloneSet::default()).expect("serializes");
        assert_eq!(v["apiVersion"], "apps.kruise.io/v1alpha1");
        assert_eq!(v["kind"], "CloneSet");
        let text = serde_json::to_string(&PodUnavailableBudget::default()).expect("serializes");
        assert!(
            text.starts_with(
                r#"{"apiVersion":"policy.kruise.io/v1alpha1","kind":"PodUnavailableBudget""#
            ),
            "{text}"
        );
        // Reading back ignores them (and a body without them still reads).
        let back: CloneSet = serde_json::from_value(v).expect("deserializes");
        assert_eq!(back, CloneSet::default());
        let bare: CloneSet = serde_json::from_str(r#"{"metadata":{"name":"a"}}"#).expect("reads");
        assert_eq!(bare.metadata.name.as_deref(), Some("a"));
    }

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
