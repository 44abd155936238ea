//! The seeded demo scenario (PRODUCT §5), pure: (namespace, pods N, now) → the objects to create,
//! in creation order, with the statuses the Kruise controllers and the kubelet would have written.
//!
//! The embedded Kruise controllers do not run yet, so the scenario writes what they would have:
//! pods with ownerReferences and revision labels, ControllerRevisions, consistent workload status,
//! SidecarSet hash annotations, probe results, PUB status and CRR status. UIDs are assigned by the
//! server, so an object that points at another one's UID lists a `UidRef` the seeder fills in.

mod ops;
mod pods;
mod stateful;
mod workloads;

#[cfg(test)]
mod tests;

use jiff::{SignedDuration, Timestamp};
use kube::core::ApiResource;
use serde_json::{Value, json};

use crate::cluster::sim::{ids, nodes};

pub use pods::{PodChange, PodSeed, seeded_pod_status};

/// One object to create.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedObject {
    pub resource: ApiResource,
    pub namespaced: bool,
    /// The object as created (without status).
    pub object: Value,
    /// Places in `object` that need the UID of an object created earlier.
    pub uid_refs: Vec<UidRef>,
    /// What to write through the status subresource once created.
    pub status: SeedStatus,
}

/// "Put the UID of `kind` `namespace`/`name` (or a value derived from it) at JSON pointer
/// `pointer`."
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UidRef {
    pub pointer: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub derive: UidUse,
}

/// What goes at a `UidRef`'s pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UidUse {
    /// The UID itself.
    Uid,
    /// The containerID the simulated runtime gives that pod's container at that restart count.
    ContainerId {
        container: String,
        restart_count: i32,
    },
}

impl UidRef {
    /// The value to write, given the referenced object's UID.
    pub fn value(&self, uid: &str) -> String {
        match &self.derive {
            UidUse::Uid => uid.to_owned(),
            UidUse::ContainerId {
                container,
                restart_count,
            } => ids::container_id(uid, container, *restart_count),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum SeedStatus {
    None,
    /// Written as is.
    Fixed(Value),
    /// A pod's status, computed with the created pod's UID by running the simulated kubelet
    /// through the pod's history (`seeded_pod_status`).
    Pod(Box<PodSeed>),
}

impl SeedObject {
    pub fn name(&self) -> &str {
        self.object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn namespace(&self) -> Option<&str> {
        self.object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
    }
}

/// How many simulated nodes a scenario of about `pods` pods spreads over.
pub fn node_count(pods: Option<usize>) -> usize {
    3 + pods.unwrap_or(0) / 2000
}

/// The demo scenario in `namespace`, holding about `pods` pods in all (`None`: the base
/// scenario only), as of `now`.
pub fn scenario(namespace: &str, pods: Option<usize>, now: Timestamp) -> Vec<SeedObject> {
    // The API keeps whole seconds; so does every time the scenario computes with.
    let now = Timestamp::from_second(now.as_second()).unwrap_or(now);
    let ctx = Ctx {
        ns: namespace.to_owned(),
        now,
        nodes: node_count(pods),
    };
    let mut out = Vec::new();
    for index in 0..ctx.nodes {
        out.push(node_seed(index, now));
    }
    out.push(namespace_seed(namespace, &[("kruise-tui.io/demo", "true")]));
    out.push(namespace_seed("kruise-system", &[]));
    workloads::web(&ctx, &mut out);
    workloads::checkout(&ctx, &mut out);
    stateful::database(&ctx, &mut out);
    stateful::log_agent(&ctx, &mut out);
    let base = count_pods(&out);
    if let Some(total) = pods {
        workloads::bulk(&ctx, total.saturating_sub(base), &mut out);
    }
    out
}

/// How many pods `objects` create.
pub fn count_pods(objects: &[SeedObject]) -> usize {
    objects.iter().filter(|o| o.resource.kind == "Pod").count()
}

/// What every builder needs.
pub(crate) struct Ctx {
    pub ns: String,
    pub now: Timestamp,
    pub nodes: usize,
}

impl Ctx {
    pub fn ago(&self, secs: i64) -> Timestamp {
        self.now - SignedDuration::from_secs(secs)
    }

    /// The node pod number `i` of a workload lands on (round-robin).
    pub fn node_for(&self, i: usize) -> usize {
        i % self.nodes.max(1)
    }
}

pub(crate) fn rfc3339(t: Timestamp) -> String {
    jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", t).unwrap_or_else(|_| t.to_string())
}

/// apimachinery's `rand.SafeEncodeString` alphabet.
const SAFE: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A stable, Kubernetes-looking short hash (`len` characters of the safe alphabet).
pub(crate) fn safe_hash(parts: &[&str], len: usize) -> String {
    ids::digest_hex(parts)
        .bytes()
        .take(len)
        .map(|b| char::from(SAFE[usize::from(b) % SAFE.len()]))
        .collect()
}

pub(crate) fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.to_owned(),
        plural: plural.to_owned(),
    }
}

/// An object whose only cross-reference is its controller ownerReference.
pub(crate) fn owned(
    resource: ApiResource,
    mut object: Value,
    owner: Option<(&ApiResource, &str, &str)>,
    status: SeedStatus,
) -> SeedObject {
    let mut uid_refs = Vec::new();
    if let Some((owner_res, owner_ns, owner_name)) = owner {
        object["metadata"]["ownerReferences"] = json!([{
            "apiVersion": owner_res.api_version,
            "kind": owner_res.kind,
            "name": owner_name,
            "uid": "",
            "controller": true,
            "blockOwnerDeletion": true,
        }]);
        uid_refs.push(UidRef {
            pointer: "/metadata/ownerReferences/0/uid".to_owned(),
            kind: owner_res.kind.clone(),
            namespace: (!owner_ns.is_empty()).then(|| owner_ns.to_owned()),
            name: owner_name.to_owned(),
            derive: UidUse::Uid,
        });
    }
    SeedObject {
        namespaced: object.pointer("/metadata/namespace").is_some(),
        resource,
        object,
        uid_refs,
        status,
    }
}

/// A Namespace to create.
pub fn namespace_seed(name: &str, labels: &[(&str, &str)]) -> SeedObject {
    let labels: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    owned(
        resource("", "v1", "Namespace", "namespaces"),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}),
        None,
        SeedStatus::None,
    )
}

fn node_seed(index: usize, now: Timestamp) -> SeedObject {
    let node = nodes::node_object(index, now);
    let mut object = serde_json::to_value(&node).unwrap_or_default();
    let status = object
        .as_object_mut()
        .and_then(|o| o.remove("status"))
        .map_or(SeedStatus::None, SeedStatus::Fixed);
    object["apiVersion"] = json!("v1");
    object["kind"] = json!("Node");
    owned(resource("", "v1", "Node", "nodes"), object, None, status)
}
