//! The kinds the product handles: every Kruise CRD (names, scope, served versions, as in
//! `crds/`) plus the built-in kinds the console names, and [`parse_kind`] for the `KIND` the
//! command line and the `:` command accept (`cloneset|clone|cs`, `asts|statefulset.apps.kruise.io`,
//! plural names, `kind.group`, ...).

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

/// Whether objects of a kind live in a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Namespaced,
    Cluster,
}

/// One kind: its REST names, where it is served, how the product names it and what the
/// product does with it. This is the one identity of a kind: the console, the action layer, the
/// planner and the guards all hold a `&'static KindInfo` (one of the constants below) and match
/// on it or on its fields, never on a name. Names are compared only where a kind is read from
/// outside: typed by a user ([`parse_kind`]) or decoded from an object ([`find`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KindInfo {
    pub kind: &'static str,
    /// API group; `""` is the core group.
    pub group: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    /// Short names declared by the CRD (or by Kubernetes for built-ins).
    pub short_names: &'static [&'static str],
    /// Extra spellings the product accepts: `cs` and `ppm` (PRODUCT §2), `npp` and `pps` by analogy.
    pub aliases: &'static [&'static str],
    pub scope: Scope,
    /// Served versions, the preferred (storage) version first.
    pub versions: &'static [&'static str],
    /// How messages name one (`CloneSet`, `Advanced StatefulSet`).
    pub title: &'static str,
    /// How the console names a list of them (`CloneSets`, `Advanced StatefulSets`).
    pub titles: &'static str,
    /// The workloads whose rollout the console walks, and how.
    pub workload: Option<WorkloadKind>,
    /// Whether Kruise's deletion protection guards a DELETE of it, and which rule.
    pub protected: Option<ProtectedKind>,
}

/// The workload kinds whose rollouts the console walks and the planner predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    CloneSet,
    AdvancedStatefulSet,
    AdvancedDaemonSet,
}

impl WorkloadKind {
    /// The kind's description.
    pub fn info(self) -> &'static KindInfo {
        match self {
            Self::CloneSet => &CLONESET,
            Self::AdvancedStatefulSet => &ADVANCED_STATEFULSET,
            Self::AdvancedDaemonSet => &ADVANCED_DAEMONSET,
        }
    }

    /// Parses a kind as typed by a user (any spelling [`parse_kind`] accepts), if it is a
    /// workload.
    pub fn parse(kind: &str) -> Option<Self> {
        parse_kind(kind).ok().and_then(|k| k.workload)
    }

    /// The name users read.
    pub fn display(self) -> &'static str {
        self.info().title
    }

    /// The short column name of the workload lists (`CS`, `ASTS`, `ADS`).
    pub const fn abbreviation(self) -> &'static str {
        match self {
            Self::CloneSet => "CS",
            Self::AdvancedStatefulSet => "ASTS",
            Self::AdvancedDaemonSet => "ADS",
        }
    }

    /// Upstream's default update strategy type when the spec names none: a CloneSet recreates
    /// pods (`ReCreate`); the Advanced StatefulSet and DaemonSet roll (`RollingUpdate`).
    pub const fn default_strategy(self) -> &'static str {
        match self {
            Self::CloneSet => "ReCreate",
            Self::AdvancedStatefulSet | Self::AdvancedDaemonSet => "RollingUpdate",
        }
    }

    /// Upstream's default `maxUnavailable`: 20% for a CloneSet, 1 for the others.
    pub const fn default_max_unavailable(self) -> &'static str {
        match self {
            Self::CloneSet => "20%",
            Self::AdvancedStatefulSet | Self::AdvancedDaemonSet => "1",
        }
    }

    /// Upstream's default `maxSurge` (None: the kind has no surge).
    pub const fn default_max_surge(self) -> Option<&'static str> {
        match self {
            Self::CloneSet | Self::AdvancedDaemonSet => Some("0"),
            Self::AdvancedStatefulSet => None,
        }
    }

    /// The Advanced StatefulSet's default `podUpdatePolicy` and the Advanced DaemonSet's default
    /// `rollingUpdateType`; None for a CloneSet, whose strategy type says it.
    pub const fn default_update_policy(self) -> Option<&'static str> {
        match self {
            Self::CloneSet => None,
            Self::AdvancedStatefulSet => Some("ReCreate"),
            Self::AdvancedDaemonSet => Some("Standard"),
        }
    }

    /// True when the partition may be a percent: a CloneSet's, and an Advanced DaemonSet's from
    /// Kruise v1.9.0 (an int-or-string there; v1.8.4's schema refuses a string, which the
    /// server then says).
    pub const fn partition_percent(self) -> bool {
        matches!(self, Self::CloneSet | Self::AdvancedDaemonSet)
    }

    /// True when the console scales it (a DaemonSet's size is its nodes').
    pub const fn scalable(self) -> bool {
        !matches!(self, Self::AdvancedDaemonSet)
    }
}

/// The kinds whose DELETE Kruise's webhooks guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtectedKind {
    /// core/v1 Namespace.
    Namespace,
    /// apiextensions.k8s.io CustomResourceDefinition (v1 and v1beta1).
    CustomResourceDefinition,
    /// apps.kruise.io CloneSet.
    CloneSet,
    /// apps.kruise.io StatefulSet (Advanced StatefulSet).
    AdvancedStatefulSet,
    /// apps.kruise.io UnitedDeployment.
    UnitedDeployment,
    /// apps/v1 Deployment.
    Deployment,
    /// apps/v1 ReplicaSet.
    ReplicaSet,
    /// apps/v1 StatefulSet.
    StatefulSet,
    /// core/v1 Service.
    Service,
    /// networking.k8s.io Ingress (v1 and v1beta1).
    Ingress,
}

impl KindInfo {
    /// The preferred version (the storage version for CRDs).
    pub fn preferred_version(&self) -> &'static str {
        self.versions.first().copied().unwrap_or("v1")
    }

    /// `group/version` (or `version` for the core group) of the preferred version.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.preferred_version().to_string()
        } else {
            format!("{}/{}", self.group, self.preferred_version())
        }
    }

    /// True for the Kruise CRDs (groups `apps.kruise.io` and `policy.kruise.io`).
    pub fn is_kruise(&self) -> bool {
        self.group.ends_with(".kruise.io")
    }

    /// The spelling the product shows: the singular name when unambiguous and short, else the
    /// shortest unambiguous short name or alias (`asts`, `ppm`, `crr`), else the singular name
    /// if unambiguous, else `singular.group`.
    pub fn display_name(&self) -> String {
        let unambiguous = |name: &str| matches(name).count() == 1;
        if self.singular.len() <= 10 && unambiguous(self.singular) {
            return self.singular.to_string();
        }
        let short = self
            .short_names
            .iter()
            .chain(self.aliases.iter())
            .filter(|n| unambiguous(n))
            .min_by_key(|n| n.len());
        match short {
            Some(name) => name.to_string(),
            None if unambiguous(self.singular) => self.singular.to_string(),
            None => format!("{}.{}", self.singular, self.group),
        }
    }

    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        [self.kind, self.plural, self.singular]
            .into_iter()
            .chain(self.short_names.iter().copied())
            .chain(self.aliases.iter().copied())
    }
}

const APPS_KRUISE: &str = "apps.kruise.io";
const ROLLOUTS_KRUISE: &str = "rollouts.kruise.io";

macro_rules! kind {
    ($kind:literal, $group:expr, $plural:literal, $singular:literal, [$($short:literal),*],
     [$($alias:literal),*], $scope:ident, [$($version:literal),+], $title:literal, $titles:literal,
     $workload:expr, $protected:expr) => {
        KindInfo {
            kind: $kind,
            group: $group,
            plural: $plural,
            singular: $singular,
            short_names: &[$($short),*],
            aliases: &[$($alias),*],
            scope: Scope::$scope,
            versions: &[$($version),+],
            title: $title,
            titles: $titles,
            workload: $workload,
            protected: $protected,
        }
    };
}

use ProtectedKind as P;
use WorkloadKind as W;

// Every Kruise CRD (v1.9.0; the first version is the one our types follow, and v1.9.0 stores
// seven kinds at v1beta1, which `api::conversion` maps) and the built-in kinds the product names.
#[rustfmt::skip]
pub const CLONESET: KindInfo = kind!("CloneSet", APPS_KRUISE, "clonesets", "cloneset", ["clone"], ["cs"], Namespaced, ["v1alpha1"], "CloneSet", "CloneSets", Some(W::CloneSet), Some(P::CloneSet));
#[rustfmt::skip]
pub const ADVANCED_STATEFULSET: KindInfo = kind!("StatefulSet", APPS_KRUISE, "statefulsets", "statefulset", ["sts", "asts"], [], Namespaced, ["v1beta1", "v1alpha1"], "Advanced StatefulSet", "Advanced StatefulSets", Some(W::AdvancedStatefulSet), Some(P::AdvancedStatefulSet));
#[rustfmt::skip]
pub const ADVANCED_DAEMONSET: KindInfo = kind!("DaemonSet", APPS_KRUISE, "daemonsets", "daemonset", ["daemon", "ads"], [], Namespaced, ["v1alpha1", "v1beta1"], "Advanced DaemonSet", "Advanced DaemonSets", Some(W::AdvancedDaemonSet), None);
#[rustfmt::skip]
pub const SIDECARSET: KindInfo = kind!("SidecarSet", APPS_KRUISE, "sidecarsets", "sidecarset", [], [], Cluster, ["v1alpha1", "v1beta1"], "SidecarSet", "SidecarSets", None, None);
#[rustfmt::skip]
pub const POD_PROBE_MARKER: KindInfo = kind!("PodProbeMarker", APPS_KRUISE, "podprobemarkers", "podprobemarker", [], ["ppm"], Namespaced, ["v1alpha1"], "PodProbeMarker", "PodProbeMarkers", None, None);
#[rustfmt::skip]
pub const NODE_POD_PROBE: KindInfo = kind!("NodePodProbe", APPS_KRUISE, "nodepodprobes", "nodepodprobe", [], ["npp"], Cluster, ["v1alpha1"], "NodePodProbe", "NodePodProbes", None, None);
#[rustfmt::skip]
pub const CONTAINER_RECREATE_REQUEST: KindInfo = kind!("ContainerRecreateRequest", APPS_KRUISE, "containerrecreaterequests", "containerrecreaterequest", ["crr"], [], Namespaced, ["v1alpha1"], "ContainerRecreateRequest", "ContainerRecreateRequests", None, None);
#[rustfmt::skip]
pub const POD_UNAVAILABLE_BUDGET: KindInfo = kind!("PodUnavailableBudget", "policy.kruise.io", "podunavailablebudgets", "podunavailablebudget", ["pub"], [], Namespaced, ["v1alpha1"], "PodUnavailableBudget", "PodUnavailableBudgets", None, None);
#[rustfmt::skip]
pub const PERSISTENT_POD_STATE: KindInfo = kind!("PersistentPodState", APPS_KRUISE, "persistentpodstates", "persistentpodstate", [], ["pps"], Namespaced, ["v1alpha1"], "PersistentPodState", "PersistentPodStates", None, None);
#[rustfmt::skip]
pub const WORKLOAD_SPREAD: KindInfo = kind!("WorkloadSpread", APPS_KRUISE, "workloadspreads", "workloadspread", ["ws"], [], Namespaced, ["v1alpha1"], "WorkloadSpread", "WorkloadSpreads", None, None);
#[rustfmt::skip]
pub const UNITED_DEPLOYMENT: KindInfo = kind!("UnitedDeployment", APPS_KRUISE, "uniteddeployments", "uniteddeployment", ["ud"], [], Namespaced, ["v1alpha1"], "UnitedDeployment", "UnitedDeployments", None, Some(P::UnitedDeployment));
#[rustfmt::skip]
pub const BROADCAST_JOB: KindInfo = kind!("BroadcastJob", APPS_KRUISE, "broadcastjobs", "broadcastjob", ["bcj"], [], Namespaced, ["v1alpha1", "v1beta1"], "BroadcastJob", "BroadcastJobs", None, None);
#[rustfmt::skip]
pub const ADVANCED_CRONJOB: KindInfo = kind!("AdvancedCronJob", APPS_KRUISE, "advancedcronjobs", "advancedcronjob", ["acj"], [], Namespaced, ["v1alpha1", "v1beta1"], "AdvancedCronJob", "AdvancedCronJobs", None, None);
#[rustfmt::skip]
pub const IMAGE_PULL_JOB: KindInfo = kind!("ImagePullJob", APPS_KRUISE, "imagepulljobs", "imagepulljob", [], [], Namespaced, ["v1alpha1", "v1beta1"], "ImagePullJob", "ImagePullJobs", None, None);
#[rustfmt::skip]
pub const IMAGE_LIST_PULL_JOB: KindInfo = kind!("ImageListPullJob", APPS_KRUISE, "imagelistpulljobs", "imagelistpulljob", [], [], Namespaced, ["v1alpha1", "v1beta1"], "ImageListPullJob", "ImageListPullJobs", None, None);
#[rustfmt::skip]
pub const NODE_IMAGE: KindInfo = kind!("NodeImage", APPS_KRUISE, "nodeimages", "nodeimage", [], [], Cluster, ["v1alpha1", "v1beta1"], "NodeImage", "NodeImages", None, None);
#[rustfmt::skip]
pub const RESOURCE_DISTRIBUTION: KindInfo = kind!("ResourceDistribution", APPS_KRUISE, "resourcedistributions", "resourcedistribution", ["distributor"], [], Cluster, ["v1alpha1"], "ResourceDistribution", "ResourceDistributions", None, None);
#[rustfmt::skip]
pub const EPHEMERAL_JOB: KindInfo = kind!("EphemeralJob", APPS_KRUISE, "ephemeraljobs", "ephemeraljob", ["ejob"], [], Namespaced, ["v1alpha1"], "EphemeralJob", "EphemeralJobs", None, None);
#[rustfmt::skip]
pub const ROLLOUT: KindInfo = kind!("Rollout", ROLLOUTS_KRUISE, "rollouts", "rollout", [], ["ro"], Namespaced, ["v1beta1", "v1alpha1"], "Rollout", "Rollouts", None, None);
#[rustfmt::skip]
pub const BATCH_RELEASE: KindInfo = kind!("BatchRelease", ROLLOUTS_KRUISE, "batchreleases", "batchrelease", [], ["br"], Namespaced, ["v1beta1", "v1alpha1"], "BatchRelease", "BatchReleases", None, None);
#[rustfmt::skip]
pub const POD: KindInfo = kind!("Pod", "", "pods", "pod", ["po"], [], Namespaced, ["v1"], "Pod", "Pods", None, None);
#[rustfmt::skip]
pub const NAMESPACE: KindInfo = kind!("Namespace", "", "namespaces", "namespace", ["ns"], [], Cluster, ["v1"], "Namespace", "Namespaces", None, Some(P::Namespace));
#[rustfmt::skip]
pub const NODE: KindInfo = kind!("Node", "", "nodes", "node", ["no"], [], Cluster, ["v1"], "Node", "Nodes", None, None);
#[rustfmt::skip]
pub const EVENT: KindInfo = kind!("Event", "", "events", "event", ["ev"], [], Namespaced, ["v1"], "Event", "Events", None, None);
#[rustfmt::skip]
pub const PERSISTENT_VOLUME_CLAIM: KindInfo = kind!("PersistentVolumeClaim", "", "persistentvolumeclaims", "persistentvolumeclaim", ["pvc"], [], Namespaced, ["v1"], "PersistentVolumeClaim", "PersistentVolumeClaims", None, None);
#[rustfmt::skip]
pub const SERVICE: KindInfo = kind!("Service", "", "services", "service", ["svc"], [], Namespaced, ["v1"], "Service", "Services", None, Some(P::Service));
#[rustfmt::skip]
pub const CONTROLLER_REVISION: KindInfo = kind!("ControllerRevision", "apps", "controllerrevisions", "controllerrevision", [], [], Namespaced, ["v1"], "ControllerRevision", "ControllerRevisions", None, None);
#[rustfmt::skip]
pub const DEPLOYMENT: KindInfo = kind!("Deployment", "apps", "deployments", "deployment", ["deploy"], [], Namespaced, ["v1"], "Deployment", "Deployments", None, Some(P::Deployment));
#[rustfmt::skip]
pub const REPLICASET: KindInfo = kind!("ReplicaSet", "apps", "replicasets", "replicaset", ["rs"], [], Namespaced, ["v1"], "ReplicaSet", "ReplicaSets", None, Some(P::ReplicaSet));
#[rustfmt::skip]
pub const STATEFULSET: KindInfo = kind!("StatefulSet", "apps", "statefulsets", "statefulset", ["sts"], [], Namespaced, ["v1"], "StatefulSet", "StatefulSets", None, Some(P::StatefulSet));
#[rustfmt::skip]
pub const DAEMONSET: KindInfo = kind!("DaemonSet", "apps", "daemonsets", "daemonset", ["ds"], [], Namespaced, ["v1"], "DaemonSet", "DaemonSets", None, None);
#[rustfmt::skip]
pub const INGRESS: KindInfo = kind!("Ingress", "networking.k8s.io", "ingresses", "ingress", ["ing"], [], Namespaced, ["v1"], "Ingress", "Ingresses", None, Some(P::Ingress));
#[rustfmt::skip]
pub const CUSTOM_RESOURCE_DEFINITION: KindInfo = kind!("CustomResourceDefinition", "apiextensions.k8s.io", "customresourcedefinitions", "customresourcedefinition", ["crd", "crds"], [], Cluster, ["v1"], "CustomResourceDefinition", "CustomResourceDefinitions", None, Some(P::CustomResourceDefinition));

/// Every kind in the table above.
pub const KINDS: &[KindInfo] = &[
    CLONESET,
    ADVANCED_STATEFULSET,
    ADVANCED_DAEMONSET,
    SIDECARSET,
    POD_PROBE_MARKER,
    NODE_POD_PROBE,
    CONTAINER_RECREATE_REQUEST,
    POD_UNAVAILABLE_BUDGET,
    PERSISTENT_POD_STATE,
    WORKLOAD_SPREAD,
    UNITED_DEPLOYMENT,
    BROADCAST_JOB,
    ADVANCED_CRONJOB,
    IMAGE_PULL_JOB,
    IMAGE_LIST_PULL_JOB,
    NODE_IMAGE,
    RESOURCE_DISTRIBUTION,
    EPHEMERAL_JOB,
    ROLLOUT,
    BATCH_RELEASE,
    POD,
    NAMESPACE,
    NODE,
    EVENT,
    PERSISTENT_VOLUME_CLAIM,
    SERVICE,
    CONTROLLER_REVISION,
    DEPLOYMENT,
    REPLICASET,
    STATEFULSET,
    DAEMONSET,
    INGRESS,
    CUSTOM_RESOURCE_DEFINITION,
];

/// The kind of an object read from outside, by its API group and kind name (`apps.kruise.io`,
/// `CloneSet`); None for a kind the product does not name.
pub fn find(group: &str, kind: &str) -> Option<&'static KindInfo> {
    KINDS.iter().find(|k| k.kind == kind && k.group == group)
}

/// The kind an owner reference names (decoded by its apiVersion and kind).
pub fn of_owner(owner: &OwnerReference) -> Option<&'static KindInfo> {
    find_by_api_version(&owner.api_version, &owner.kind)
}

/// The owner reference in `owners` that is the controller and of `kind`.
pub fn controller_of<'a>(
    owners: Option<&'a [OwnerReference]>,
    kind: &KindInfo,
) -> Option<&'a OwnerReference> {
    owners?
        .iter()
        .find(|o| o.controller == Some(true) && of_owner(o) == Some(kind))
}

/// [`find`] by an object's `apiVersion` (`apps.kruise.io/v1beta1`, `v1`) and kind.
pub fn find_by_api_version(api_version: &str, kind: &str) -> Option<&'static KindInfo> {
    find(group_of(api_version), kind)
}

/// The API group of an `apiVersion` (`apps.kruise.io/v1alpha1` → `apps.kruise.io`, `v1` → the
/// core group `""`).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// Why a `KIND` spelling was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    #[error("unknown kind {input:?}; known kinds: {known}")]
    Unknown { input: String, known: String },
    #[error("kind {input:?} is ambiguous: use {}", .candidates.join(" or "))]
    Ambiguous {
        input: String,
        candidates: Vec<String>,
    },
    #[error("empty kind")]
    Empty,
}

fn matches(name: &str) -> impl Iterator<Item = &'static KindInfo> + '_ {
    KINDS
        .iter()
        .filter(move |k| k.names().any(|n| n.eq_ignore_ascii_case(name)))
}

/// Resolves a kind as typed by a user: a kind name, plural, singular, short name or product
/// alias (case-insensitive), optionally qualified as `name.group` or `name.version.group`.
/// Names shared by a Kruise and a built-in kind (`sts`, `statefulset`, `daemonset`) must be
/// qualified (`asts`, `statefulset.apps.kruise.io`, `statefulset.apps`).
pub fn parse_kind(input: &str) -> Result<&'static KindInfo, KindError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(KindError::Empty);
    }
    let found: Vec<&'static KindInfo> = match trimmed.split_once('.') {
        None => matches(trimmed).collect(),
        Some((name, qualifier)) => matches(name)
            .filter(|k| {
                qualifier.eq_ignore_ascii_case(k.group)
                    || k.versions
                        .iter()
                        .any(|v| qualifier.eq_ignore_ascii_case(&format!("{v}.{}", k.group)))
            })
            .collect(),
    };
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(KindError::Unknown {
            input: trimmed.to_string(),
            known: KINDS
                .iter()
                .map(KindInfo::display_name)
                .collect::<Vec<_>>()
                .join(", "),
        }),
        many => Err(KindError::Ambiguous {
            input: trimmed.to_string(),
            candidates: many.iter().map(|k| k.display_name()).collect(),
        }),
    }
}

impl fmt::Display for KindInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

mod watched;

pub use watched::Kind;

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(input: &str) -> (&'static str, &'static str) {
        let k = parse_kind(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        (k.kind, k.group)
    }

    #[test]
    fn product_spellings_resolve() {
        for s in [
            "cloneset",
            "clone",
            "cs",
            "clonesets",
            "CloneSet",
            "CS",
            "clonesets.apps.kruise.io",
        ] {
            assert_eq!(kind_of(s), ("CloneSet", APPS_KRUISE), "{s}");
        }
        for s in [
            "asts",
            "statefulset.apps.kruise.io",
            "statefulsets.v1alpha1.apps.kruise.io",
        ] {
            assert_eq!(kind_of(s), ("StatefulSet", APPS_KRUISE), "{s}");
        }
        for s in ["ads", "daemon", "daemonset.apps.kruise.io"] {
            assert_eq!(kind_of(s), ("DaemonSet", APPS_KRUISE), "{s}");
        }
        assert_eq!(kind_of("sidecarset").0, "SidecarSet");
        assert_eq!(kind_of("sidecarsets").0, "SidecarSet");
        assert_eq!(kind_of("ppm").0, "PodProbeMarker");
        assert_eq!(kind_of("crr").0, "ContainerRecreateRequest");
        assert_eq!(kind_of("pub"), ("PodUnavailableBudget", "policy.kruise.io"));
        for s in ["pods", "pod", "po", "Pod"] {
            assert_eq!(kind_of(s), ("Pod", ""), "{s}");
        }
        assert_eq!(kind_of("statefulset.apps"), ("StatefulSet", "apps"));
        assert_eq!(kind_of("ns").0, "Namespace");
    }

    #[test]
    fn shared_names_are_ambiguous_with_a_clear_error() {
        let err = parse_kind("sts").unwrap_err();
        let KindError::Ambiguous { candidates, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            candidates,
            &vec!["asts".to_string(), "statefulset.apps".to_string()]
        );
        assert!(
            err.to_string().contains("asts or statefulset.apps"),
            "{err}"
        );
        assert!(matches!(
            parse_kind("daemonset"),
            Err(KindError::Ambiguous { .. })
        ));
    }

    #[test]
    fn unknown_kinds_are_rejected() {
        let err = parse_kind("clonest").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("unknown kind \"clonest\""), "{msg}");
        assert!(
            msg.contains("cloneset") && msg.contains("asts") && msg.contains("pub"),
            "{msg}"
        );
        assert!(parse_kind("cloneset.apps").is_err());
        assert!(parse_kind("cloneset.v1beta1.apps.kruise.io").is_err());
        assert_eq!(parse_kind("  "), Err(KindError::Empty));
    }

    #[test]
    fn table_helpers() {
        let asts = parse_kind("asts").unwrap();
        assert_eq!(asts.api_version(), "apps.kruise.io/v1beta1");
        assert!(asts.is_kruise());
        assert_eq!(parse_kind("pod").unwrap().api_version(), "v1");
        assert_eq!(parse_kind("ads").unwrap().display_name(), "ads");
        assert_eq!(parse_kind("cs").unwrap().display_name(), "cloneset");
        assert_eq!(parse_kind("sidecarset").unwrap().scope, Scope::Cluster);
        assert_eq!(asts.to_string(), "StatefulSet.apps.kruise.io");
    }
}
