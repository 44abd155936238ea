//! The built-in kinds as k8s-openapi's `v1_33` types define them: group, version, kind, plural and
//! scope from its `Resource` trait, and the OpenAPI v3 schemas from its `schemars` impls, collected
//! once per process into one set of `components.schemas` definitions (`io.k8s.api.core.v1.Pod`, ...).
//!
//! The list holds every kind a default v1.33 kube-apiserver serves: the GA versions (beta and alpha
//! APIs are off by default since v1.24), minus the review kinds (authentication, authorization),
//! which are not stored and whose semantics live with the authorizer.

use std::sync::{Arc, OnceLock};

use k8s_openapi::{
    ClusterResourceScope, NamespaceResourceScope, Resource,
    api::{
        admissionregistration::v1 as admissionregistration, apps::v1 as apps,
        autoscaling::v1 as autoscaling_v1, autoscaling::v2 as autoscaling, batch::v1 as batch,
        certificates::v1 as certificates, coordination::v1 as coordination, core::v1 as core,
        discovery::v1 as discovery, events::v1 as events, flowcontrol::v1 as flowcontrol,
        networking::v1 as networking, node::v1 as node, policy::v1 as policy, rbac::v1 as rbac,
        scheduling::v1 as scheduling, storage::v1 as storage,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions,
    kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration,
    schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings},
};
use serde_json::{Map, Value};

/// Whether a k8s-openapi scope marker is namespaced.
pub trait Scope {
    const NAMESPACED: bool;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// One built-in kind, as its Rust type describes it.
#[derive(Debug, Clone)]
pub struct Kind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    /// Its schema's name in `components.schemas` (`io.k8s.api.core.v1.Pod`).
    pub definition: Arc<str>,
    /// Its schema has a `status` property (served as the `/status` subresource).
    pub status: bool,
}

/// The built-in kinds and every schema they reference.
#[derive(Debug)]
pub struct Catalog {
    pub kinds: Vec<Kind>,
    pub definitions: Map<String, Value>,
}

impl Catalog {
    /// A definition by name, or the target of a `#/components/schemas/NAME` reference.
    pub fn definition(&self, name_or_ref: &str) -> Option<&Value> {
        let name = name_or_ref
            .strip_prefix("#/components/schemas/")
            .unwrap_or(name_or_ref);
        self.definitions.get(name)
    }

    /// Follows `$ref` and single-entry `allOf` to the schema itself, with the name of the last
    /// definition it went through.
    pub fn resolve<'s>(&'s self, mut s: &'s Value) -> (&'s Value, Option<&'s str>) {
        let mut name = None;
        for _ in 0..16 {
            if let Some(r) = s.get("$ref").and_then(Value::as_str) {
                match self.definition(r) {
                    Some(d) => {
                        name = Some(r.rsplit('/').next().unwrap_or(r));
                        s = d;
                        continue;
                    }
                    None => break,
                }
            }
            match s.get("allOf").and_then(Value::as_array) {
                Some(all) if all.len() == 1 => s = &all[0],
                _ => break,
            }
        }
        (s, name)
    }
}

fn describe<T>(generator: &mut SchemaGenerator) -> Kind
where
    T: Resource + JsonSchema,
    T::Scope: Scope,
{
    // Registers T and everything it references in the generator's definitions.
    generator.subschema_for::<T>();
    Kind {
        group: T::GROUP,
        version: T::VERSION,
        kind: T::KIND,
        plural: T::URL_PATH_SEGMENT,
        namespaced: <T::Scope as Scope>::NAMESPACED,
        definition: Arc::from(T::schema_name().as_ref()),
        status: false,
    }
}

/// `kinds!(generator; Type, ...)`: describe each listed k8s-openapi type.
macro_rules! kinds {
    ($generator:ident; $($t:ty),* $(,)?) => {
        vec![$(describe::<$t>(&mut $generator)),*]
    };
}

fn build() -> Catalog {
    let mut g = SchemaSettings::openapi3().into_generator();
    let mut kinds = kinds![g;
        core::Namespace, core::Node, core::Pod, core::Event, core::Service, core::ConfigMap,
        core::Secret, core::ServiceAccount, core::PersistentVolumeClaim, core::PersistentVolume,
        core::Endpoints, core::LimitRange, core::PodTemplate, core::ReplicationController,
        core::ResourceQuota, core::ComponentStatus,
        apps::Deployment, apps::ReplicaSet, apps::StatefulSet, apps::DaemonSet,
        apps::ControllerRevision,
        batch::Job, batch::CronJob,
        autoscaling::HorizontalPodAutoscaler, autoscaling_v1::HorizontalPodAutoscaler,
        policy::PodDisruptionBudget,
        networking::Ingress, networking::IngressClass, networking::NetworkPolicy,
        networking::IPAddress, networking::ServiceCIDR,
        rbac::Role, rbac::RoleBinding, rbac::ClusterRole, rbac::ClusterRoleBinding,
        coordination::Lease,
        discovery::EndpointSlice,
        events::Event,
        scheduling::PriorityClass,
        node::RuntimeClass,
        storage::StorageClass, storage::CSIDriver, storage::CSINode, storage::CSIStorageCapacity,
        storage::VolumeAttachment,
        certificates::CertificateSigningRequest,
        admissionregistration::MutatingWebhookConfiguration,
        admissionregistration::ValidatingWebhookConfiguration,
        admissionregistration::ValidatingAdmissionPolicy,
        admissionregistration::ValidatingAdmissionPolicyBinding,
        flowcontrol::FlowSchema, flowcontrol::PriorityLevelConfiguration,
        apiextensions::CustomResourceDefinition,
        apiregistration::APIService,
    ];
    // Transforms apply here: a `$ref` with siblings becomes `allOf: [{$ref}]`, as in the real
    // server's documents (kubectl explain reads both forms).
    let definitions = g.take_definitions(true);
    for k in &mut kinds {
        k.status = definitions
            .get(k.definition.as_ref())
            .and_then(|d| d["properties"].get("status"))
            .is_some();
    }
    Catalog { kinds, definitions }
}

/// The process-wide catalog (built on first use).
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(build)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_types() {
        let c = catalog();
        let pod = c.kinds.iter().find(|k| k.kind == "Pod").unwrap();
        assert_eq!((pod.group, pod.version, pod.plural), ("", "v1", "pods"));
        assert!(pod.namespaced && pod.status);
        assert_eq!(&*pod.definition, "io.k8s.api.core.v1.Pod");
        let crb = c
            .kinds
            .iter()
            .find(|k| k.kind == "ClusterRoleBinding")
            .unwrap();
        assert_eq!(crb.group, "rbac.authorization.k8s.io");
        assert!(!crb.namespaced && !crb.status);
        let job = c.kinds.iter().find(|k| k.kind == "Job").unwrap();
        assert!(job.status);
        let spec = c.definition("io.k8s.api.core.v1.PodSpec").unwrap();
        assert!(spec["properties"]["containers"]["items"].is_object());
        // Every reference resolves.
        let text = serde_json::to_string(&c.definitions).unwrap();
        for r in text.split("\"$ref\":\"").skip(1) {
            let name = r.split('"').next().unwrap();
            assert!(c.definition(name).is_some(), "dangling {name}");
        }
    }
}
